#!/bin/bash
# uname.sh STATE HOST ARGV0 ARGS...: uname as the host's current persona answers it.
S=$1 H=$2
shift 3
persona=$(cat "$S/hosts/$H/persona" 2>/dev/null)
[ -n "$persona" ] && [ -d "$S/personas/$persona" ] || persona=ubuntu
P=$S/personas/$persona
f() { cat "$P/uname.$1"; }
all() { sed "s/@HOST@/$H/" "$P/uname.a"; }
want=""
while [ $# -gt 0 ]; do
	case $1 in
	--all) want="${want}a" ;;
	--kernel-name) want="${want}s" ;;
	--nodename) want="${want}n" ;;
	--kernel-release) want="${want}r" ;;
	--kernel-version) want="${want}v" ;;
	--machine) want="${want}m" ;;
	--processor) want="${want}p" ;;
	--hardware-platform) want="${want}i" ;;
	--operating-system) want="${want}o" ;;
	--help) echo "Usage: uname [OPTION]..."; exit 0 ;;
	--version) echo "uname (GNU coreutils) 9.4"; exit 0 ;;
	-*) want="$want${1#-}" ;;
	*) echo "uname: extra operand '$1'" >&2; exit 1 ;;
	esac
	shift
done
[ -n "$want" ] || want=s
case $want in *a*) all; exit 0 ;; esac
out=""
for k in $(echo "$want" | grep -o . ); do
	case "snrvmpioKUb" in *$k*) ;; *) if [ "$persona" = freebsd ]; then echo "uname: illegal option -- $k" >&2; echo "usage: uname [-abiKmnoprsUv]" >&2; else echo "uname: invalid option -- '$k'" >&2; echo "Try 'uname --help' for more information." >&2; fi; exit 1 ;; esac
done
# print in the system's fixed order
if [ "$persona" = freebsd ]; then order="s n r v m p i K U b"; else order="s n r v m p i o"; fi
for k in $order; do
	case $want in *$k*) ;; *) continue ;; esac
	if [ "$k" = n ]; then v=$H; else v=$(f "$k" 2>/dev/null); fi
	out="${out:+$out }$v"
done
printf '%s\n' "$out"

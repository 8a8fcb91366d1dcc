#!/bin/bash
# uname.sh STATE HOST ARGV0 ARGS...: uname as the host's current persona answers it.
# Bash builtins only (read, case, substrings): no fork, so that it costs about
# what the real uname does (a probe and every metadata script run it).
S=$1 H=$2
shift 3
persona=
read -r persona 2>/dev/null <"$S/hosts/$H/persona"
[ -n "$persona" ] && [ -d "$S/personas/$persona" ] || persona=ubuntu
P=$S/personas/$persona
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
case $want in
*a*)
	read -r line <"$P/uname.a"
	printf '%s\n' "${line//@HOST@/$H}"
	exit 0 ;;
esac
for ((i = 0; i < ${#want}; i++)); do
	k=${want:i:1}
	case "snrvmpioKUb" in *$k*) ;; *) if [ "$persona" = freebsd ]; then echo "uname: illegal option -- $k" >&2; echo "usage: uname [-abiKmnoprsUv]" >&2; else echo "uname: invalid option -- '$k'" >&2; echo "Try 'uname --help' for more information." >&2; fi; exit 1 ;; esac
done
# print in the system's fixed order
if [ "$persona" = freebsd ]; then order="s n r v m p i K U b"; else order="s n r v m p i o"; fi
out=""
for k in $order; do
	case $want in *$k*) ;; *) continue ;; esac
	v=
	if [ "$k" = n ]; then v=$H; else read -r v 2>/dev/null <"$P/uname.$k"; fi
	out="${out:+$out }$v"
done
printf '%s\n' "$out"

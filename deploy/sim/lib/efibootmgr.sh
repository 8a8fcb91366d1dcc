#!/bin/bash
# efibootmgr.sh STATE HOST ARGV0 ARGS...: efibootmgr of a simulated host, as the
# persona that runs answers it, on the host's "NVRAM" (DIR/hosts/H/nvram: the
# firmware's variables, outside the personas' trees; hostctl.sh, the firmware,
# honours BootNext once at the next boot and clears it).
#
# NVRAM lines: Timeout=N, BootOrder=XXXX,YYYY, BootCurrent=XXXX, BootNext=XXXX
# (only while set), BootXXXX=label (active).
#
# Linux (efibootmgr 18, rhboot): `efibootmgr` prints
#   BootNext: 0002            (only while set)
#   BootCurrent: 0001
#   Timeout: 1 seconds
#   BootOrder: 0001,0002
#   Boot0001* ubuntu
#   Boot0002* FreeBSD
# `-n XXXX` / `--bootnext XXXX` sets BootNext, `-N` / `--delete-bootnext` deletes
# it, each then printing the above (-q: nothing).
# FreeBSD (efibootmgr(8), 13+): `-n` is a flag and the entry comes with `-b`
# (`efibootmgr -n -b 0002`), `-N` deletes; it prints
#   BootNext : 0002           (only while set; %04x)
#   BootCurrent: 0001
#   Timeout    : 1 seconds
#   BootOrder  : 0001, 0002
#   +Boot0001* ubuntu         (+: the entry booted now)
#    Boot0002* FreeBSD
# Both need root to change a variable (a person's shell gets "Permission denied").
S=$1 H=$2 name=${3##*/}
shift 3
HD=$S/hosts/$H
NV=$HD/nvram
persona=$(cat "$HD/persona" 2>/dev/null)

get() { sed -n "s/^$1=//p" "$NV" 2>/dev/null | head -1; }
put() {	# name value ("": delete)
	local t=$NV.tmp.$$
	{ grep -v "^$1=" "$NV" 2>/dev/null; if [ -n "$2" ]; then printf '%s=%s\n' "$1" "$2"; fi; } >"$t" && mv -f "$t" "$NV"
}
die() { echo "$name: $*" >&2; exit "${RC:-1}"; }
hex4() {	# XXXX as the firmware stores it (upper case), or fail
	case $1 in [0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f][0-9A-Fa-f]) printf '%s' "$1" | tr a-f A-F ;; *) return 1 ;; esac
}

[ -f "$NV" ] || die "EFI variables are not supported on this system."
set_next="" del_next=0 quiet=0 bnum="" nflag=0
if [ "$persona" = freebsd ]; then
	while [ $# -gt 0 ]; do
		case $1 in
		-n|--bootnext) nflag=1 ;;
		-N|--delete-bootnext) del_next=1 ;;
		-b|--bootnum) [ $# -ge 2 ] || die "option requires an argument -- b"; bnum=$2; shift ;;
		-b*) bnum=${1#-b} ;;
		-nb) nflag=1; [ $# -ge 2 ] || die "option requires an argument -- b"; bnum=$2; shift ;;
		-v|--verbose) ;;
		*) die "   [-aAnB -b bootnum] [-N] [-t timeout] [-T] [-o bootorder] [-O] [--verbose] [--help] (the sim's stand-in knows -n -b, -N, -v)" ;;
		esac
		shift
	done
	[ "$nflag" = 0 ] || [ -n "$bnum" ] || die "       efibootmgr [-n | -N] -b bootnum"
	[ "$nflag" = 1 ] && set_next=$bnum
else
	while [ $# -gt 0 ]; do
		case $1 in
		-n|--bootnext) [ $# -ge 2 ] || die "option requires an argument -- 'n'"; set_next=$2; shift ;;
		-n*) set_next=${1#-n} ;;
		--bootnext=*) set_next=${1#*=} ;;
		-N|--delete-bootnext) del_next=1 ;;
		-q|--quiet) quiet=1 ;;
		-v|--verbose) ;;
		*) die "invalid option '$1' (the sim's stand-in knows -n XXXX, -N, -q, -v)" ;;
		esac
		shift
	done
fi
if [ -n "$set_next" ] || [ "$del_next" = 1 ]; then
	if [ "$(id -u)" != 0 ]; then
		[ "$persona" = freebsd ] && die "set_bootvar: Operation not permitted"
		die "Could not set BootNext: Permission denied"
	fi
fi
if [ "$del_next" = 1 ]; then
	if [ -z "$(get BootNext)" ]; then
		[ "$persona" = freebsd ] && die "efi_del_variable: No such file or directory"
		RC=10 die "Could not delete BootNext: No such file or directory"
	fi
	put BootNext ""
fi
if [ -n "$set_next" ]; then
	n=$(hex4 "$set_next") || die "Invalid BootNext value $set_next"
	[ -n "$(get "Boot$n")" ] || RC=12 die "Boot entry $n does not exist"
	put BootNext "$n"
fi
[ "$quiet" = 1 ] && exit 0
next=$(get BootNext) cur=$(get BootCurrent) order=$(get BootOrder) t=$(get Timeout)
if [ "$persona" = freebsd ]; then
	[ -n "$next" ] && printf 'BootNext : %s\n' "$(printf '%s' "$next" | tr A-F a-f)"
	printf 'BootCurrent: %s\n' "$(printf '%s' "${cur:-0000}" | tr A-F a-f)"
	[ -n "$t" ] && printf 'Timeout    : %s seconds\n' "$t"
	printf 'BootOrder  : %s\n' "$(printf '%s' "$order" | sed 's/,/, /g')"
	for b in $(printf '%s' "$order" | tr , ' '); do
		mark=" "; [ "$b" = "$cur" ] && mark=+
		printf '%sBoot%s* %s\n' "$mark" "$b" "$(get "Boot$b")"
	done
else
	[ -n "$next" ] && printf 'BootNext: %s\n' "$next"
	[ -n "$cur" ] && printf 'BootCurrent: %s\n' "$cur"
	[ -n "$t" ] && printf 'Timeout: %s seconds\n' "$t"
	printf 'BootOrder: %s\n' "$order"
	for b in $(printf '%s' "$order" | tr , ' '); do
		printf 'Boot%s* %s\n' "$b" "$(get "Boot$b")"
	done
fi
exit 0

#!/bin/bash
# power.sh STATE HOST ARGV0 ARGS...: the persona's reboot / poweroff / halt /
# shutdown / systemctl, bind-mounted over the real ones in the host's mount
# namespace.  They never act on the machine: they ask the host's hostd.
S=$1 H=$2 name=${3##*/}
shift 3
HD=$S/hosts/$H
persona=$(cat "$HD/persona" 2>/dev/null)
act=""

die() { echo "$name: $*" >&2; exit 1; }
need_root() {
	[ "$(id -u)" = 0 ] && return 0
	if [ "$persona" = freebsd ]; then die "Operation not permitted"; fi
	echo "Call to ${1:-Reboot} failed: Access denied" >&2
	exit 1
}

case $name in
reboot)
	need_root Reboot; act=reboot ;;
poweroff)
	need_root PowerOff; act=off ;;
halt)
	need_root Halt; act=off ;;
shutdown)
	need_root PowerOff
	mode=""; when=""
	while [ $# -gt 0 ]; do
		case $1 in
		-r|--reboot) mode=reboot ;;
		-p|-P|--poweroff|-h|-H|--halt|-o) mode=off ;;
		-c) echo "$name: no shutdown pending" >&2; exit 0 ;;
		-k) echo "$name: warning only, nothing done"; exit 0 ;;
		-*) [ "$persona" = freebsd ] && die "illegal option -- ${1#-}" ;;
		*) [ -z "$when" ] && when=$1 ;;
		esac
		shift
	done
	if [ "$persona" = freebsd ]; then
		[ -n "$when" ] || { echo "usage: shutdown [-] [-c | -f | -h | -p | -r | -k] [-o [-n]] [-q] time [warning-message ...]" >&2; exit 1; }
		[ -n "$mode" ] || die "single-user mode is not simulated (use -r, -p or -h)"
	else
		[ -n "$mode" ] || mode=off
	fi
	case ${when:-now} in
	now|+0|0|0:00|00:00) ;;
	*) echo "$name: time \"$when\" taken as now (the simulated host does not schedule)" >&2 ;;
	esac
	act=$mode ;;
systemctl)
	case ${1:-} in
	reboot|kexec|soft-reboot) need_root Reboot; act=reboot ;;
	poweroff|halt) need_root PowerOff; act=off ;;
	is-system-running) echo running; exit 0 ;;
	*) echo "System has not been booted with systemd as init system (PID 1). Can't operate." >&2
	   echo "Failed to connect to bus: Host is down" >&2
	   exit 1 ;;
	esac ;;
*)
	die "unknown power tool" ;;
esac

# hostd keeps the FIFO open for reading: opening it read-write never blocks
exec 3<>"$HD/ctl" || die "cannot reach the host's power controller"
printf '%s\n' "$act" >&3
exit 0

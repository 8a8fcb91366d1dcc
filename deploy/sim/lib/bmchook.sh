#!/bin/bash
# bmchook.sh STATE HOST MC get power|get boot|set power 0|1|set reset 1|set shutdown 1|set boot X
# ipmi_sim's chassis_control hook for a simulated host.  It runs synchronously inside
# the single-threaded ipmi_sim, so it only reads state or queues a command for the
# host's hostd (which does the slow work) and returns at once.
S=$1 H=$2
shift 3
HD=$S/hosts/$H
send() { exec 3<>"$HD/ctl" && printf '%s\n' "$1" >&3; }
case "$1 $2" in
"get power")
	case $(cat "$HD/power" 2>/dev/null) in off) echo "power:0" ;; *) echo "power:1" ;; esac ;;
"get boot")
	echo "boot:$(cat "$HD/bmc-boot" 2>/dev/null || echo default)" ;;
"set power")
	if [ "$3" = 1 ]; then send on; else send off; fi ;;
"set reset")
	send reset ;;
"set shutdown")
	send soft ;;
"set boot")
	printf '%s\n' "$3" >"$HD/bmc-boot" ;;
*)
	exit 1 ;;
esac
exit 0

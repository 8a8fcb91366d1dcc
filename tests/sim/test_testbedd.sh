#!/bin/sh
# testbedd against the simulated testbed, end to end: the daemon reads the
# inventory the sim wrote, its prober finds which OS persona of each machine
# answers, tbctl and the API show it, and a reboot into FreeBSD through GRUB
# (done by hand over ssh, as the reference testbed's owner did) shows up as
# "left answers freebsd" without anyone telling testbedd.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_testbedd tbtd 239 1

wait_answers() {	# machine os [seconds]
	for _ in $(seq $((${3:-30} * 2))); do
		[ "$(answers "$1")" = "$2" ] && return 0
		sleep 0.5
	done
	diag "$1 answers $(answers "$1"), expected $2"
	return 1
}

check "left answers as ubuntu" wait_answers left ubuntu
check "right answers as ubuntu" wait_answers right ubuntu
check "the router answers as freebsd" wait_answers router freebsd
check "the relay answers as openwrt" wait_answers relay openwrt
out=$("$BIN/tbctl" hosts)
echo "$out" | sed 's/^/# /'
check "tbctl hosts lists the four machines" test "$(echo "$out" | grep -cE '^(left|right|router|relay) ')" = 4
check "the API never shows the BMC password file" sh -c "! curl -s -H \"Authorization: Bearer \$(cat $DD/state/admin.token)\" $TESTBEDD_URL/api/v1/hosts | grep -q 'bmc-left.pass'"

b=$(boots left)
check "grub-reboot 4 and reboot over ssh" sshc root@$NET.11 'grub-reboot 4 && reboot'
check "left boots" wait_boot left "$b" $NET.10
check "testbedd sees left answer as freebsd" wait_answers left freebsd
b=$(boots left)
check "a plain reboot from FreeBSD" sshc root@$NET.10 reboot
check "left boots again" wait_boot left "$b" $NET.11
check "testbedd sees left back in ubuntu" wait_answers left ubuntu

sshc root@$NET.21 poweroff
check "right powered off: testbedd says down" wait_answers right down
check "the log names the transitions" grep -q 'left: up as freebsd' "$DD/log"
check "the log never holds the admin token" sh -c "! grep -q \"\$(cat $DD/state/admin.token)\" $DD/log"
daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

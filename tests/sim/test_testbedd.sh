#!/bin/sh
# testbedd against the simulated testbed, end to end: the daemon reads the
# inventory the sim wrote, its prober finds which OS persona of each machine
# answers, tbctl and the API show it, and a reboot into FreeBSD through GRUB
# (done by hand over ssh, as the reference testbed's owner did) shows up as
# "left answers freebsd" without anyone telling testbedd.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

BIN=${TB_BINARY_DIR:-$TOP/build}
D=$(mktemp -d /tmp/tbtd-XXXXXX)
DPID=""
stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=""
}
trap 'stop_daemon; sim_down; rm -rf "$D"' EXIT

sim_up tbtd 239 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"

"$BIN/testbedd" --inventory "$S/inventory.yaml" --state-dir "$D/state" --port 0 --port-file "$D/port" \
	--probe-interval 1 >"$D/log" 2>&1 &
DPID=$!
for _ in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.1; done
check "testbedd starts on the sim's inventory" test -s "$D/port"
export TESTBEDD_URL="http://127.0.0.1:$(cat "$D/port")" TESTBEDD_TOKEN_FILE="$D/state/admin.token"

answers() {	# machine: the OS that answers, as tbctl --json says
	"$BIN/tbctl" --json host "$1" 2>/dev/null | python3 -c 'import json,sys; s=json.load(sys.stdin)["host"]["state"]; print(s["os"] if s["reachability"]=="up" else "down")'
}
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
check "the API never shows the BMC password file" sh -c "! curl -s -H \"Authorization: Bearer \$(cat $D/state/admin.token)\" $TESTBEDD_URL/api/v1/hosts | grep -q 'bmc-left.pass'"

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
check "the log names the transitions" grep -q 'left: up as freebsd' "$D/log"
check "the log never holds the admin token" sh -c "! grep -q \"\$(cat $D/state/admin.token)\" $D/log"
stop_daemon
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $D/log"
finish

#!/bin/sh
# Power and boot through testbedd, end to end on the simulated testbed, with
# tbctl as a person would use it: boot left into FreeBSD and back (verified by
# the persona that answers), power right off over ssh and on by Wake-on-LAN,
# power left off through its BMC and boot it from off into FreeBSD, one holder
# per host (409), roles, cancel, a refused make-default, and the BMC password
# nowhere in replies, events, the audit log or the daemon's log.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
scratch_dir
sim_testbedd tbpb 237 2
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && [ "$(answers right)" = ubuntu ] && break; sleep 0.5; done
check "left and right answer as ubuntu" test "$(answers left)/$(answers right)" = ubuntu/ubuntu

# --- the GRUB menu, read from the host
tb boot-entries left >"$D/entries" 2>&1
check "boot-entries lists FreeBSD as entry 4 with its id" grep -qE '^4 +freebsd +FreeBSD' "$D/entries"
check "boot-entries maps the inventory's freebsd to 4" grep -qE '^4 .*freebsd$' "$D/entries"

# --- boot into FreeBSD and back
t0=$(date +%s.%N)
tb boot left freebsd --wait >"$D/boot1" 2>&1
rc=$?
t1=$(date +%s.%N)
sed 's/^/# /' "$D/boot1"
check "boot left freebsd --wait exits 0" test $rc = 0
check "the steps show the exact grub-reboot command" grep -q '\$ ssh root@198.18.237.11 grub-reboot freebsd' "$D/boot1"
check "grubenv was read back" grep -q 'grubenv now says next_entry=freebsd' "$D/boot1"
check "verified by uname -s" grep -q 'verified (uname -s: FreeBSD)' "$D/boot1"
check "left answers as freebsd" test "$(answers left)" = freebsd
diag "ubuntu -> freebsd took $(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s"
tb boot left ubuntu --wait >"$D/boot2" 2>&1
check "boot left ubuntu --wait exits 0 (plain reboot from FreeBSD)" test $? = 0
check "FreeBSD has no grub-reboot: a plain reboot" grep -q 'a plain reboot returns to GRUB' "$D/boot2"
check "left answers as ubuntu" test "$(answers left)" = ubuntu

# --- right: off over ssh, on by Wake-on-LAN
tb power right off --wait >"$D/off" 2>&1
check "power right off --wait exits 0" test $? = 0
check "right has no BMC: systemctl poweroff over ssh" grep -q 'systemctl poweroff' "$D/off"
check "right is down" test "$(answers right)" = down
tb power right on --wait >"$D/on" 2>&1
rc=$?
sed 's/^/# /' "$D/on"
check "power right on --wait exits 0" test $rc = 0
check "Wake-on-LAN through the relay ran etherwake" grep -q 'etherwake -i mgmt0 02:18:ed:00:00:02' "$D/on"
check "right answers as ubuntu again" test "$(answers right)" = ubuntu

# --- left: off through the BMC, boot from off into FreeBSD
tb power left off --wait >"$D/loff" 2>&1
rc=$?
check "power left off --wait exits 0" test $rc = 0
check "through ipmitool with -E (no password on the command line)" grep -q 'ipmitool .*-I lanplus .* -E .*chassis power off' "$D/loff"
tb boot left freebsd --wait >"$D/boot3" 2>&1
check "boot left freebsd from off exits 0" test $? = 0
check "it powered left on first" grep -q 'is off: powering it on first' "$D/boot3"
check "left answers as freebsd" test "$(answers left)" = freebsd

# --- one holder per host, roles, cancel, refusals
out=$(tb boot left ubuntu 2>&1)
id=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
check "boot without --wait prints the action id" test -n "$id"
out=$(tb power left on 2>&1); rc=$?
check "a second action on a held host exits 2" test $rc = 2
check "the refusal names the holder" sh -c "echo \"\$0\" | grep -q \"action $id\"" "$out"
check "cancel the running boot" tb action cancel "$id"
tb action "$id" --wait >"$D/cancel" 2>&1; rc=$?
check "the canceled action ends canceled (exit 6)" test $rc = 6
check "make-default freebsd on right (no way back) is refused" sh -c "! tb boot right freebsd --make-default 2>&1 | grep -q started"
umask 077
tb token create viewer1 --role viewer >"$D/viewer.token" 2>/dev/null
check "a viewer may not power a host (exit 4)" sh -c "TESTBEDD_TOKEN_FILE=$D/viewer.token timeout 20 $BIN/tbctl power left on; test \$? = 4"
check "no token: 401" test "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d '{"action":"on"}' "$TESTBEDD_URL/api/v1/hosts/left/power")" = 401
for _ in $(seq 120); do [ "$(answers left)" != down ] && break; sleep 0.5; done

# --- the BMC password is nowhere
pw=$(cat "$S/bmc-left.pass")
tb --json actions >"$D/a.json" 2>&1
for i in $(tb --json actions | python3 -c 'import json,sys; print(" ".join(str(a["id"]) for a in json.load(sys.stdin)["actions"]))'); do
	tb --json action "$i" >>"$D/a.json"
done
timeout 3 "$BIN/tbctl" events --since 0 --json >"$D/events.json" 2>/dev/null
tb --json audit --limit 1000 >"$D/audit.json" 2>&1
check "actions were recorded" grep -q 'chassis power off' "$D/a.json"
check "the BMC password is in no action reply" sh -c "! grep -qF '$pw' $D/a.json"
check "... in no event" sh -c "! grep -qF '$pw' $D/events.json"
check "... not in the audit log" sh -c "! grep -qF '$pw' $D/audit.json"
check "... not in the daemon's log" sh -c "! grep -qF '$pw' $DD/log"
check "events carried the steps" grep -q '"type":"action.step"' "$D/events.json"
daemon_down
finish

#!/bin/sh
# GRUB over the serial console (issue 18 items 7 and 4) on the simulated
# testbed: left's GRUB menu waits 5 s (DIR/hosts/left/grub-timeout) reading
# its console; FreeBSD, made GRUB's default, has no grub-reboot, so a boot
# into ubuntu chooses the entry on the menu over the console: the steps show
# the menu seen and the keys sent (Up x4, Enter), the console's lease names
# the action while it types, left comes up as ubuntu, verified by uname.  A
# person holding the lease makes that boot fail naming them, without a
# reboot.  A slow boot (past 1.5 times the host's mean) and a boot that hangs
# at a driver's line (console-hang) and times out get the console's last
# lines as a step, as plain text.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
command -v ser2net >/dev/null || { echo "1..0 # SKIP no ser2net (deploy/setup installs it)"; exit 0; }
scratch_dir
sim_testbedd tbcy 254 2
cstate() {	# host expr: an expression of console_state c
	api GET "/api/v1/hosts/$1" | jq_ "(lambda c: $2)(d['host']['console_state'])" 2>/dev/null
}
wait_cstate() {	# host expr value [seconds]
	for _ in $(seq $((${4:-20} * 5))); do [ "$(cstate "$1" "$2")" = "$3" ] && return 0; sleep 0.2; done
	diag "$1: console_state $2 is $(cstate "$1" "$2"), wanted $3"
	return 1
}
steps() {	# action id: its steps' what, one a line
	api GET "/api/v1/actions/$1" | jq_ '"\n".join(s["what"] for s in d["action"]["steps"])'
}
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && break; sleep 0.5; done
check "left answers as ubuntu" test "$(answers left)" = ubuntu
check "left's console is connected" wait_cstate left 'c["connected"]' True

# ---- FreeBSD as GRUB's default, the menu waiting 5 s for keys ----
echo 5 >"$S/hosts/left/grub-timeout"
tb boot left freebsd --make-default --wait >"$D/mkdef" 2>&1
check "boot left freebsd --make-default succeeds" test $? = 0 || diag "$(tail -3 "$D/mkdef")"
check "left answers as freebsd" test "$(answers left)" = freebsd
check "the sim's GRUB menu waited 5 s for keys" grep -q 'grub: menu waits 5s for keys' "$S/hosts/left/log"

# ---- a person holds the console's lease: the boot fails naming them, no reboot ----
api POST /api/v1/hosts/left/console/lease '{}' >"$D/lease"
ADMIN=$(jq_ 'd["lease"]["holder"]' <"$D/lease")
n0=$(boots left)
tb boot left ubuntu --wait >"$D/leased" 2>&1
rc=$?
sed 's/^/# /' "$D/leased" | tail -2
check "a boot into ubuntu while $ADMIN holds the console's lease fails" test $rc != 0
check "... naming the holder, saying it takes no lease over" sh -c 'grep -q "cannot choose ubuntu on GRUB.s menu: the console of left is leased to $1" "$2" && grep -q "takes no lease over" "$2"' _ "$ADMIN" "$D/leased"
check "... without a reboot" test "$(boots left)" = "$n0"
check "... and the lease is still $ADMIN's" test "$(cstate left 'c["lease"]["holder"]')" = "$ADMIN"
api DELETE /api/v1/hosts/left/console/lease >/dev/null

# ---- the console path: the menu, the keys, the OS that answers ----
out=$(tb boot left ubuntu 2>&1)
A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
check "a boot of left into ubuntu starts (action $A)" test -n "$A"
check "while it types, the console's lease names action $A" wait_cstate left '(c["lease"] or {}).get("holder")' "action $A" 20
tb action "$A" --wait >"$D/cb" 2>&1
check "the boot succeeds" test $? = 0 || diag "$(tail -5 "$D/cb")"
check "left answers as ubuntu" test "$(answers left)" = ubuntu
steps "$A" >"$D/steps"
sed 's/^/#   /' "$D/steps"
check "a step says the console path was chosen (no grub-reboot on freebsd)" grep -q "freebsd has no grub-reboot: choosing ubuntu on GRUB's menu over the console" "$D/steps"
check "a step shows the menu seen: 5 entries, FreeBSD highlighted, choosing 0 'Ubuntu'" grep -q "menu seen on the console: 5 entries, 'FreeBSD 14.1' highlighted, timeout 5 s; choosing 0 'Ubuntu'" "$D/steps"
check "a step shows the keys: Up Up Up Up Enter" grep -q "^sent: Up Up Up Up Enter (on the console, as action $A)" "$D/steps"
check "the boot is verified by uname" grep -q "left runs ubuntu: verified (uname -s: Linux)" "$D/steps"
check "the sim's GRUB read 4 Ups and an Enter and booted entry 0" sh -c 'test "$(grep -c "grub: key Up" "$1")" -ge 4 && grep -q "grub: key Enter" "$1" && grep -q "grub: booting entry 0 (chosen)" "$1"' _ "$S/hosts/left/log"
check "the lease is given back" wait_cstate left 'c["lease"]' None 5

# ---- the console path when the reboot outlasts the lease's idle time ----
# testbedd again (left runs ubuntu: GRUB's default, freebsd, is read there)
# with a console lease that lapses after 1 s without input: the action keeps
# its lease while the reboot and the menu take longer (it failed "nobody
# holds the console of left" when the keys went), then back to the usual
lease_again() {	# value of TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S ("" none)
	daemon_down
	if [ -n "$1" ]; then
		TESTBEDD_TEST_CONSOLE_LEASE_IDLE_S=$1 daemon_again "$S/inventory.yaml" --probe-interval 2 || return 1
	else
		daemon_again "$S/inventory.yaml" --probe-interval 2 || return 1
	fi
	wait_cstate left 'c["connected"]' True || return 1
	for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && return 0; sleep 0.5; done
	return 1
}
check "testbedd restarts on the same state, a console lease lapsing after 1 s; left answers as ubuntu" lease_again 1
tb boot left freebsd --wait >"$D/lf" 2>&1
check "a boot into freebsd (GRUB's default) succeeds" test $? = 0
tb boot left ubuntu --wait >"$D/lu" 2>&1
rc=$?
sed 's/^/# /' "$D/lu" | tail -2
check "a boot into ubuntu over the console, its lease held past 1 s, succeeds" test $rc = 0
check "left answers as ubuntu" test "$(answers left)" = ubuntu
L=$(api GET "/api/v1/actions?host=left" | jq_ 'max(a["id"] for a in d["actions"] if a["kind"] == "boot")')
steps "$L" >"$D/lsteps"
check "... its keys went on the console as action $L" grep -q "^sent: Up Up Up Up Enter (on the console, as action $L)" "$D/lsteps"
check "the lease is given back" wait_cstate left 'c["lease"]' None 5
check "testbedd restarts on the same state (the usual lease); left answers as ubuntu" lease_again ""

# ---- a slow boot (GRUB's menu waits 15 s, its boots took a few): the console's last lines ----
echo 15 >"$S/hosts/left/grub-timeout"
out=$(tb boot left freebsd 2>&1)
W=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
tb action "$W" --wait >"$D/slow" 2>&1
check "a boot into freebsd (GRUB's default: a plain reboot) that waits at the menu succeeds" test $? = 0
check "left answers as freebsd" test "$(answers left)" = freebsd
check "it was slow (past 1.5 times left's mean boot): its last step has the console's last lines" pyck "$(api GET "/api/v1/actions/$W")" '
s = d["action"]["steps"][-1]; o = s["output"] or ""
print("#", s["what"])
sys.exit(not (s["what"].startswith("last console lines of left since the action began (slow: ")
 and "FreeBSD/amd64 (left) (ttyu0)" in o and len(o.splitlines()) <= 20))'

# ---- a boot that hangs at a driver's line and times out: the console's last lines ----
echo 3 >"$S/hosts/left/grub-timeout"
python3 - "$S/inventory.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("  left:\n    role: host\n", "  left:\n    role: host\n    boot_timeout_s: 8\n", 1)
open(p, "w").write(s)
PY
check "the inventory is reloaded (left's boot times out after 8 s)" reload_inventory 1
echo once >"$S/hosts/left/console-hang"
out=$(tb boot left ubuntu 2>&1)
H=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
tb action "$H" --wait >"$D/hang" 2>&1
check "a boot into ubuntu (over the console) that hangs fails" test $? != 0
api GET "/api/v1/actions/$H" >"$D/hang.json"
check "its last step has the console's last lines since it began: the hung driver's line" pyck "$(cat "$D/hang.json")" '
s = d["action"]["steps"][-1]; o = s["output"] or ""
print("#", s["what"]); print("\n".join("#   " + l for l in o.splitlines()))
sys.exit(not (s["what"] == "last console lines of left since the action began (the boot failed)"
 and o.splitlines()[-1] == "[    1.431118] mlx4_en: mlx4_core0: Port 1: Using 16 TX rings" and 2 <= len(o.splitlines()) <= 20
 and "Booting `Ubuntu'"'"'" in o and "\x1b" not in o and "\r" not in o))'

# ---- a power cycle whose boot hangs and times out: the power action's last console lines too ----
api POST /api/v1/hosts/left/console/lease '{}' >/dev/null
api POST /api/v1/hosts/left/console/input '{"key":"ctrl-c"}' >/dev/null # the hung boot goes on
api DELETE /api/v1/hosts/left/console/lease >/dev/null
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && break; sleep 0.5; done
check "after Ctrl-C on the console left answers as ubuntu" test "$(answers left)" = ubuntu
echo 0 >"$S/hosts/left/grub-timeout"
echo once >"$S/hosts/left/console-hang"
tb power left cycle --wait >"$D/pcycle" 2>&1
check "a power cycle whose boot (GRUB's default, freebsd) hangs fails (no OS within left's 8 s)" test $? != 0
P=$(api GET "/api/v1/actions?host=left" | jq_ 'max(a["id"] for a in d["actions"] if a["kind"] == "power")')
check "... the power action's last step has the console's last lines: the hung driver's line" pyck "$(api GET "/api/v1/actions/$P")" '
s = d["action"]["steps"][-1]; o = s["output"] or ""
print("#", s["what"]); print("\n".join("#   " + l for l in o.splitlines()))
sys.exit(not (d["action"]["state"] == "failed"
 and s["what"] == "last console lines of left since the action began (the power action failed)"
 and o.splitlines()[-1] == "mlx4_core: Initializing mlx4_core"))'

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
check "... and no sanitizer report (an ASan build)" sh -c "! grep -q 'Sanitizer' $DD/log"
finish

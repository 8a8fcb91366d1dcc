#!/bin/sh
# Power and boot III on the simulated testbed.
# Who holds a host: during a boot action the host's state.held_by names the
# action and who started it (GET, the host.state events, tbctl hosts), tbctl
# power on the held host says who holds it before testbedd's 409; during a
# matrix held_by names the matrix; each clears when the hold ends.
# Times in ms: the action's created/started/finished_ms and each step's
# duration, in the JSON and in tbctl action.
# Faster switches: a plan after one boot estimates boots from it; the boot
# wait probes the persona GRUB will boot first and mostly only it, yet a
# GRUB entry that brings up the other OS is still seen and named.
# The saved default read back: the prober reads grubenv's saved_entry; after
# --make-default freebsd the host shows the mismatch (JSON, tbctl host) and a
# boot from FreeBSD into ubuntu is refused at once from grubenv's word, also
# after a restart of testbedd (the store kept it); with the saved default
# unknown the plain reboot lands in freebsd, the step says GRUB's default was
# freebsd and the boot goes on from there (one reboot, not three).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
scratch_dir
sim_testbedd tbbt 212 2
held() {	# host: "kind id by" of state.held_by, "-" when nobody holds it
	api GET "/api/v1/hosts/$1" | jq_ '(lambda b: "-" if b is None else "%s %s %s" % (b["kind"], b["id"], b["by"]))(d["host"]["state"]["held_by"])'
}
wait_held() {	# host want [seconds]
	for _ in $(seq $((${3:-30} * 5))); do
		[ "$(held "$1")" = "$2" ] && return 0
		sleep 0.2
	done
	diag "$1 is held by '$(held "$1")', wanted '$2'"
	return 1
}
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && [ "$(answers right)" = ubuntu ] && break; sleep 0.5; done
check "left and right answer as ubuntu" test "$(answers left)/$(answers right)" = ubuntu/ubuntu

# ---- held_by: an action ----
check "left is held by nobody" test "$(held left)" = "-"
out=$(tb boot left freebsd 2>&1)
A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
check "a boot of left starts (action $A)" test -n "$A"
check "while it runs, left's held_by names action $A by admin" wait_held left "action $A admin" 5
tb hosts >"$D/hosts" 2>&1
check "tbctl hosts shows HELD-BY" sh -c 'grep -q HELD-BY "$1" && grep -E "^left " "$1" | grep -q "action '"$A"' by admin since "' _ "$D/hosts" || diag "$(cat "$D/hosts")"
tb power left on >"$D/held" 2>&1
rc=$?
check "tbctl power on the held host exits 2 (409)" test $rc = 2
check "... and says who holds it first" sh -c 'head -1 "$1" | grep -q "left is held by action '"$A"' by admin since" && grep -q "busy" "$1"' _ "$D/held" || diag "$(cat "$D/held")"
tb action "$A" --wait >"$D/boot1" 2>&1
check "the boot succeeds" test $? = 0
check "held_by clears when the action ends" wait_held left "-" 5
tb action "$A" >"$D/act" 2>&1
check "tbctl action: each step to the ms with how long it took, and the whole run" sh -c '
	grep -Eq "^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}  .*grub-reboot.*\([0-9]+\.[0-9] s\)$|^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}  .*\([0-9]+\.[0-9] s\)$" "$1" &&
	grep -Eq "^ran [0-9:.]+ to [0-9:.]+: [0-9]+\.[0-9] s$" "$1"' _ "$D/act" || diag "$(cat "$D/act")"
check "the action JSON has its times in ms and each step a duration" pyck "$(api GET "/api/v1/actions/$A")" '
a = d["action"]; s = a["steps"]
print("#", a["created_ms"], a["started_ms"], a["finished_ms"], a["duration_ms"], [x["duration_ms"] for x in s])
sys.exit(not (a["created_ms"] <= a["started_ms"] <= s[0]["at_ms"] and s[-1]["at_ms"] <= a["finished_ms"]
 and a["duration_ms"] == a["finished_ms"] - a["started_ms"] and all(x["duration_ms"] is not None for x in s)
 and s[-1]["duration_ms"] == a["finished_ms"] - s[-1]["at_ms"]))'
timeout 3 curl -s -N -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" \
	"$TESTBEDD_URL/api/v1/events?since=0&type=host.state&host=left" >"$D/ev" 2>/dev/null
check "host.state events carried held_by: the action, then nobody" python3 - "$D/ev" "$A" <<'PY'
import json, sys
seen = []
for l in open(sys.argv[1]):
    if l.startswith("data:"):
        d = json.loads(l[5:])
        hb = d.get("data", d).get("held_by", "missing")
        seen.append(None if hb is None else ("missing" if hb == "missing" else (hb["kind"], hb["id"], hb["by"])))
a = int(sys.argv[2])
print("#", seen[-8:])
i = seen.index(("action", a, "admin")) if ("action", a, "admin") in seen else -1
sys.exit(not (i >= 0 and None in seen[i + 1:]))
PY

# ---- held_by: a matrix (left in freebsd, right in ubuntu: no boot needed) ----
M=$(api POST /api/v1/matrices '{"name":"held","pairs":[{"client":"left","server":"right"}],"duration_s":4}' | jq_ 'd["matrix"]["id"]')
both_held() { wait_held left "$1" "$2" && wait_held right "$1" 5; }
check "while matrix $M runs, left and right are held by it" both_held "matrix $M admin" 30
WAIT=120 check "matrix $M succeeds" wait_state "$M" succeeded
check "held_by clears after the matrix" both_held - 10

# ---- the estimate learns from the boots there are (one here, not ten) ----
body=$(api POST /api/v1/matrices/plan '{"name":"est","pairs":[{"client":"left","server":"right"}],"duration_s":2,
 "os":[{"left":"ubuntu"}],"os_after":"leave"}')
check "a plan after one boot of left estimates left's boot from it (not the 120 s default)" pyck "$body" '
b = d["plan"]["boots"]; print("#", [(x["machine"], x["from"], x["to"], x["estimated_s"]) for x in b])
sys.exit(not (len(b) == 1 and b[0]["machine"] == "left" and 0 < b[0]["estimated_s"] < 60))'

# ---- the boot wait probes the persona GRUB will boot, yet still sees another OS come up ----
tb boot left ubuntu --wait >"$D/back" 2>&1
check "left boots back into ubuntu" test "$(answers left)" = ubuntu
cp "$S/inventory.yaml" "$D/inventory.orig"
grub_entry left freebsd '1>0'
check "the inventory is reloaded (left's freebsd entry is one of Ubuntu's kernels)" reload_inventory 1
tb boot left freebsd --wait >"$D/wrong" 2>&1
rc=$?
sed 's/^/# /' "$D/wrong" | tail -4
check "a boot whose GRUB entry brings up ubuntu fails (exit 5)" test $rc = 5
check "... saying that left came up as ubuntu, not freebsd (the wait saw the other persona)" grep -q "came up as ubuntu, not freebsd" "$D/wrong"
cp "$D/inventory.orig" "$S/inventory.yaml"
kill -HUP "$DPID"
check "left answers as ubuntu" wait_up left

# ---- GRUB's saved default, read back from grubenv ----
sd() { api GET /api/v1/hosts/left | jq_ '(lambda s: "-" if s is None else "%s %s %s %s" % (s["entry"] or "none", s["os"], s["plans_from"], s["mismatch"]))(d["host"]["boot"]["saved_default"])'; }
wait_sd() { for _ in $(seq 50); do [ "$(sd)" = "$1" ] && return 0; sleep 0.2; done; diag "saved_default is '$(sd)', wanted '$1'"; return 1; }
check "the prober read left's grubenv: no saved_entry, the inventory's default" wait_sd "none None ubuntu False"
tb boot left freebsd --make-default --wait >"$D/mkdef" 2>&1
check "boot left freebsd --make-default succeeds (left has a BMC)" test $? = 0
check "left's saved default is now freebsd, a mismatch with the inventory" wait_sd "freebsd freebsd freebsd True"
tb host left >"$D/host" 2>&1
check "tbctl host says GRUB's saved default is freebsd" grep -q "GRUB's saved default (grubenv saved_entry=freebsd) is freebsd" "$D/host" || diag "$(grep boot "$D/host")"
n0=$(boots left)
tb boot left ubuntu --wait >"$D/nodef" 2>&1
rc=$?
sed 's/^/# /' "$D/nodef" | tail -3
check "a boot into ubuntu from FreeBSD, now GRUB's default, is refused from grubenv's word (exit 5)" test $rc = 5
check "... naming freebsd as GRUB's default, planned from grubenv" sh -c 'grep -q "saved default is freebsd" "$1" && grep -q "runs freebsd, which is GRUB.s default" "$1"' _ "$D/nodef"
check "... without a reboot into the wrong OS" test "$(boots left)" = "$n0"
# a restart of testbedd while left runs FreeBSD (which cannot read grubenv):
# the saved default is the one the store kept, and the boot plans from it
# (from freebsd, GRUB's default: GRUB's menu over the console, which this
# testbedd has not seen yet; not a plain reboot into a guessed ubuntu)
boot_steps() {	# tbctl boot args...: the action's exit status in $rc, its steps in $D/steps.N, its output in $D/out.N
	local out A
	out=$(tb boot "$@" 2>&1)
	A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
	tb action "$A" --wait >"$D/out.$A" 2>&1
	rc=$?
	api GET "/api/v1/actions/$A" | jq_ '"\n".join(s["what"] for s in d["action"]["steps"])' >"$D/steps.$A"
	sed 's/^/# /' "$D/steps.$A" | grep -v '#  *|' | tail -6
	LAST=$A
}
daemon_down
daemon_again "$S/inventory.yaml" --probe-interval 2
check "testbedd starts again on the same state dir" test -n "$DPID"
for _ in $(seq 60); do [ "$(answers left)" = freebsd ] && break; sleep 0.5; done
check "left answers as freebsd after the restart" test "$(answers left)" = freebsd
check "... and its saved default is still freebsd (kept in the store)" wait_sd "freebsd freebsd freebsd True"
boot_steps left ubuntu
check "after the restart a boot into ubuntu plans from GRUB's default freebsd" sh -c '
	grep -q "saved default is freebsd" "$1" && grep -q "^boot path: grub-console from freebsd into ubuntu" "$1"' _ "$D/steps.$LAST"
check "... not a plain reboot into a guessed ubuntu" sh -c '! grep -q "reboot-default\|plain reboot" "$1"' _ "$D/steps.$LAST"
# the saved default unknown (a store without it: the row removed while
# testbedd is down): the plan guesses the inventory's ubuntu, a plain reboot
# lands in freebsd, the step says GRUB's default was freebsd and the boot
# goes on from there (GRUB's menu over the console) rather than rebooting
# into the same default until MAX_SWITCHES
daemon_down
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM grub_saved"); c.commit()' "$DD/state/testbedd.db"
daemon_again "$S/inventory.yaml" --probe-interval 2
check "testbedd starts again without the saved default" test -n "$DPID"
for _ in $(seq 60); do [ "$(answers left)" = freebsd ] && break; sleep 0.5; done
check "left's saved default is unknown" wait_sd "-"
n1=$(boots left)
boot_steps left ubuntu
check "a boot into ubuntu planned from the inventory's default ubuntu: a plain reboot first" grep -q "^boot path: reboot-default from freebsd into ubuntu" "$D/steps.$LAST"
check "... a step says GRUB's default was freebsd after it" grep -q "^left came up as freebsd after a plain reboot: GRUB's default was freebsd, not ubuntu" "$D/steps.$LAST"
check "... and it goes on from freebsd: GRUB's menu over the console" sh -c '
	sed -n "/GRUB.s default was freebsd/,\$p" "$1" | grep -q "^boot path: grub-console from freebsd into ubuntu"' _ "$D/steps.$LAST"
diag "boots of left during it: $(($(boots left) - n1))"
check "... one plain reboot, not one per switch until the limit" test "$(grep -c "plain reboot returns" "$D/steps.$LAST")" = 1
# put it back as a person would (grubenv, then a power cycle through the BMC)
"$S/real-bin/grub-editenv" "$S/hosts/left/boot/grub/grubenv" unset saved_entry
tb power left cycle --wait >"$D/cycle" 2>&1
check "a power cycle brings left up as ubuntu" test "$(answers left)" = ubuntu
check "the next probe reads grubenv again: no saved_entry, no mismatch" wait_sd "none None ubuntu False"

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

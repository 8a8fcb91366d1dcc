#!/bin/sh
# Power and boot III on the simulated testbed.
# Who holds a host: during a boot action the host's state.held_by names the
# action and who started it (GET, the host.state events, tbctl hosts), tbctl
# power on the held host says who holds it before testbedd's 409; during a
# matrix held_by names the matrix; each clears when the hold ends.
# Times in ms: the action's created/started/finished_ms and each step's
# duration, in the JSON and in tbctl action.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
D=$(mktemp -d /tmp/tbscratch-XXXXXX)
trap 'daemon_clean; sim_down; rm -rf "$D"' EXIT

sim_up tbbt 212 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts" test -n "$DPID"
tb() { timeout 180 "$BIN/tbctl" "$@"; }
answers() {
	tb --json host "$1" 2>/dev/null | python3 -c 'import json,sys; s=json.load(sys.stdin)["host"]["state"]; print(s["os"] if s["reachability"]=="up" else "down")'
}
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

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

#!/bin/sh
# A schedule whose host is off (issue 22 item 3): on the simulated testbed
# left is powered off, then a library spec left -> right (1 s, 1 repeat)
# gets the schedule "* * * * *".  When it comes due testbedd powers left on
# first -- a power "on" action by the schedule's author with reason schedule,
# the wake schedule's way (wake.h tb_wake_power_on) -- waits for it in the
# schedule's ticker (no thread blocks), and only then starts the matrix, which
# succeeds.  Without the wake the matrix would start on a host that is off
# (and fail).  Before that, while alice (another token) reserves left, the
# schedule's time fails with a schedule.failed naming the reservation and left
# is not powered on; then the author reserves left itself, and its own
# reservation lets the schedule wake left and run.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_testbedd tbsw 223 2
both_answer

action_field() { api GET "/api/v1/actions/$1" | python3 -c "import json,sys; a=json.load(sys.stdin)['action']; print($2)"; }
action_is() { [ "$(action_field "$1" "a['state']")" = "$2" ]; }
sched_actions() {	# machine: ids of its actions for a schedule, oldest first
	api GET "/api/v1/actions?host=$1&limit=100" | python3 -c '
import json,sys
print(" ".join(str(a["id"]) for a in reversed(json.load(sys.stdin)["actions"]) if (a.get("params") or {}).get("reason") == "schedule"))'
}
until_() {	# seconds command...: true once command is
	local n=$1
	shift
	for _ in $(seq $((n * 5))); do "$@" && return 0; sleep 0.2; done
	return 1
}
failed_events() {	# the schedule.failed events' messages, one a line
	timeout 3 "$BIN/tbctl" events --since 0 --json 2>/dev/null | python3 -c '
import json,sys
for l in sys.stdin:
    try: e=json.loads(l)
    except Exception: continue
    if e.get("type") == "schedule.failed": print(e["data"]["error"]["message"])'
}
reserved_failed() { failed_events | grep -q 'left is off and is not powered on: left is reserved by alice'; }
reach_is() { api GET "/api/v1/hosts/$1" | jq_ 'd["host"]["state"]["reachability"]' 2>/dev/null | grep -qx "$2"; }

spec='{"name":"wakes","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":1,"repeats":1}'
body=$(api POST /api/v1/specs "$spec")
check "the spec is pushed (201)" test "$(st)" = 201

body=$(api POST /api/v1/hosts/left/power '{"action":"off"}')
P=$(echo "$body" | jq_ 'd["action"]["id"]')
check "power left off (202)" test "$(st)" = 202 -a -n "$P"
check "the power-off action succeeds" until_ 90 action_is "$P" succeeded
check "the sim's left is off" wait_power left off 10
check "testbedd sees left down" until_ 30 reach_is left down

api POST /api/v1/tokens '{"name":"alice","role":"operator"}' | jq_ 'd["secret"]' >"$DD/alice.token"
chmod 600 "$DD/alice.token"
out=$(TESTBEDD_TOKEN_FILE="$DD/alice.token" "$BIN/tbctl" reserve left --for 1h --note "sim test" 2>&1)
check "alice reserves left (off)" grep -q "left granted to alice until" <<<"$out"

body=$(api PUT /api/v1/specs/wakes/schedule '{"cron":"* * * * *","baseline":"latest-passing"}')
check "the schedule is set (200)" test "$(st)" = 200
AUTHOR=$(echo "$body" | jq_ 'd["schedule"]["author"]')
check "its time fails: a schedule.failed saying left is reserved by alice" \
	until_ 80 reserved_failed
failed_events | sed 's/^/# /'
check "... and left was not powered on: no action for the schedule" test -z "$(sched_actions left)"
check "GET /schedules keeps it as the schedule's last_failure, with its time" pyck "$(api GET /api/v1/schedules)" '
f = d["schedules"][0]["last_failure"]; print("#", f)
sys.exit(not (f and f["at"] and "left is reserved by alice" in f["message"]))'
out=$("$BIN/tbctl" schedules)
diag "$out"
check "tbctl schedules says it under the table" grep -q '^wakes: not started at 20.*: left is off and is not powered on: left is reserved by alice' <<<"$out"
check "alice releases left" env TESTBEDD_TOKEN_FILE="$DD/alice.token" "$BIN/tbctl" release
out=$("$BIN/tbctl" reserve left --for 1h --note "the author's own" 2>&1)
check "the schedule's author ($AUTHOR) reserves left itself" grep -q "left granted to $AUTHOR until" <<<"$out"

A=""
for _ in $(seq 1 400); do	# up to 80 s: the next minute
	A=$(sched_actions left) && [ -n "$A" ] && break
	sleep 0.2
done
A=${A%% *}
check "the schedule powers left on through its author's reservation: an action for it" test -n "$A"
check "... by the schedule's author, on whose behalf it acts" test "$(action_field "$A" "a['actor']")" = "$AUTHOR"
check "... a power on, saying the spec" \
	test "$(action_field "$A" "a['kind'] + ' ' + a['params']['action'] + ' ' + a['params']['reason'] + ' ' + a['params']['spec']")" = "power on schedule wakes"
check "... its first step says why" \
	test "$(action_field "$A" "'is off: powering it on' in a['steps'][0]['what']")" = True
check "the power-on action succeeds" until_ 120 action_is "$A" succeeded ||
	action_field "$A" "'\\n'.join('# %s %s' % (s['at'], s['what']) for s in a['steps']) + '\\n# ' + str(a['error'])"
check "the sim's left is on" wait_power left on 5

M=""
for _ in $(seq 1 300); do	# the next tick after the action, then a 1 s run
	M=$(api GET /api/v1/matrices | jq_ '[m["id"] for m in d["matrices"] if m["name"] == "wakes"][0]' 2>/dev/null) && break
	M=""
	sleep 0.2
done
check "the schedule started a matrix" test -n "$M"
WAIT=90 check "the matrix $M succeeds" wait_state "$M" succeeded
check "it started after left was up: created after the action finished" python3 -c "
import sys
m = '$(api GET "/api/v1/matrices/$M?runs=0" | jq_ 'd["matrix"]["created_at"]')'
a = '$(action_field "$A" "a['finished_at']")'
print('# matrix created', m, 'action finished', a)
sys.exit(not (a and m >= a))"
body=$(api GET "/api/v1/matrices/$M/gate")
check "GET /matrices/$M/gate: 200" test "$(st)" = 200
check "no schedule.failed after the reserved time" test "$(failed_events | wc -l)" = 1
check "the started matrix cleared last_failure" pyck "$(api GET /api/v1/schedules)" 'sys.exit(d["schedules"][0]["last_failure"] is not None)'
check "the log says the hosts were powered on first" grep -q 'wakes: "\* \* \* \* \*" is due: powering on 1 host first (left)' "$DD/log"
check "the author releases left" "$BIN/tbctl" release
body=$(api DELETE /api/v1/specs/wakes/schedule)
check "the schedule is deleted (204)" test "$(st)" = 204
finish

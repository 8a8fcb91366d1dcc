#!/bin/sh
# A schedule on the simulated testbed (issue 22 item 3): a library spec
# (1 s, 1 repeat) with the schedule "* * * * *" and the baseline policy
# latest-passing starts a matrix at the next minute through the runner (the
# schedule's author as its actor), compares it with the latest passing matrix
# of the same name (one started by hand first), stores the verdict with the
# matrix (GET /matrices/{id}/gate, GET /schedules' last verdicts) and
# publishes it as a matrix.gate event; a bad cron is a 400 naming cron.
# tbctl schedule set / schedules / schedule rm do the same from a shell.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_testbedd tbsc 218 2
both_answer

spec='{"name":"sched","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":1,"repeats":1}'
body=$(api POST /api/v1/specs "$spec")
check "the spec is pushed as version 1" test "$(st)" = 201 -a "$(echo "$body" | jq_ 'd["spec"]["version"]')" = 1
body=$(api POST /api/v1/matrices "$spec")
B=$(echo "$body" | jq_ 'd["matrix"]["id"]')
WAIT=60 check "the baseline matrix $B succeeds" wait_state "$B" succeeded

body=$(api PUT /api/v1/specs/sched/schedule '{"cron":"* * 31 2 x","baseline":"latest-passing"}')
check "a bad cron: 400 naming cron" test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"cron"')"

out=$(tb schedule set sched '* * *' 2>&1)
rc=$?
diag "$out"
check "tbctl schedule set with a bad cron: exit 2 and the server's reason" test $rc = 2 -a -n "$(echo "$out" | grep 'has 3 fields')"
out=$(tb schedule set sched '* * * * *' --baseline x1 2>&1)
check "tbctl schedule set --baseline x1: exit 1, nothing sent" test $? = 1 -a -n "$(echo "$out" | grep 'latest-passing or a matrix id')"

stamp_start matrix.gate
body=$(api PUT /api/v1/specs/sched/schedule '{"cron":"* * * * *","baseline":"latest-passing","metric":"receiver_bps","max_drop":95}')
check "the schedule is set (200) with a next time" pyck "$body" 'sys.exit(not (d["schedule"]["next_at"] and d["schedule"]["cron"] == "* * * * *"))'
out=$(tb schedule set sched '* * * * *' --baseline latest-passing --metric receiver_bps --max-drop 90)
diag "$out"
check "tbctl schedule set replaces it and says so" grep -q '^sched: "\* \* \* \* \*" against latest-passing, receiver_bps may drop 90%, next 20' <<<"$out"
check "... GET /schedules has max_drop 90" pyck "$(api GET /api/v1/schedules)" 'sys.exit(not (d["schedules"][0]["max_drop"] == 90))'

M=""
for _ in $(seq 1 400); do	# up to 80 s: the next minute, then a 1 s run
	M=$(api GET /api/v1/schedules | jq_ '[g["matrix"] for g in d["schedules"][0]["last"] if g["verdict"]][0]' 2>/dev/null) && break
	M=""
	sleep 0.2
done
check "a matrix started by the schedule was judged" test -n "$M"
body=$(api GET "/api/v1/matrices/$M/gate")
check "its gate is stored: compared with $B (latest passing), a verdict" pyck "$body" '
g = d["gate"]
print("# gate", json.dumps(g))
sys.exit(not (g["baseline"] == '"$B"' and g["verdict"] in ("pass", "fail") and g["detail"]["compared"] == 1 and g["version"] == 1))'
check "the scheduled matrix succeeded, started by the admin token" pyck "$(api GET "/api/v1/matrices/$M?runs=0")" \
	'sys.exit(not (d["matrix"]["state"] == "succeeded" and d["matrix"]["name"] == "sched"))'
sleep 1
stamp_stop
check "a matrix.gate event was published for it" python3 - "$DD/events.jsonl" "$M" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
g = [e["data"] for e in ev if e.get("event") == "matrix.gate"]
print("# %d gate events" % len(g))
sys.exit(not any(e["data"]["matrix"] == int(sys.argv[2]) and e["data"]["verdict"] in ("pass", "fail") for e in g))
PY
body=$(api GET /api/v1/matrices/$B/gate)
check "a matrix started by hand has no gate (404)" test "$(st)" = 404
out=$(tb schedules)
diag "$out"
OUT=$out check "tbctl schedules: sched, its cron, next time and its verdict letter, newest right" pyck "$(api GET "/api/v1/matrices/$M/gate")" '
import os; v = d["gate"]["verdict"]; out = os.environ["OUT"]
row = [l for l in out.splitlines() if l.startswith("sched ")]
sys.exit(not (row and "* * * * *" in row[0] and "latest-passing" in row[0] and
              ("P" if v == "pass" else "F") + "  (matrix '"$M"': " + v + ")" in row[0]))'
out=$(tb schedule rm sched)
check "tbctl schedule rm: deleted" test "$out" = "sched: no longer scheduled"
check "... GET /schedules is empty" pyck "$(api GET /api/v1/schedules)" 'sys.exit(len(d["schedules"]) != 0)'
check "tbctl schedules says there are none" grep -q '^no schedules' <<<"$(tb schedules)"
body=$(api DELETE /api/v1/specs/sched/schedule)
check "a second delete: 404" test "$(st)" = 404
finish

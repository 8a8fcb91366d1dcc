#!/bin/sh
# The idle check before each run (issue 20 item 5) on the simulated testbed:
# a stray `iperf3 -s -p 5999` in the right host's network namespace makes a
# 1-run matrix with "idle": {"wait_s": 3} fail as busy_host, naming right,
# the stray iperf3 and its pid; with the stray stopped (by its pid) the same
# matrix runs ok with nothing waited; a stray stopped 3 s into a run's wait
# (wait_s 20) lets the run go on: it succeeds and its summary says it
# waited and why, and a run.waiting event said so when the wait began.  "idle": false skips the check (a stray is ignored), a bad
# idle value is refused naming its field; on the router (the FreeBSD persona: pgrep and
# ps) a stray makes a left -> router run fail as busy_host naming it; a router whose metadata
# hangs 12 s (its pciconf made slow by this test) gets run 0's server started ahead stopped
# unused and the run its own.  No timing is asserted: "waited" is only said when a look found
# the host busy.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:-fast_unwind_on_malloc=0}
STRAY=""
stray_stop() { [ -z "$STRAY" ] || { kill "$STRAY" 2>/dev/null; wait "$STRAY" 2>/dev/null; }; STRAY=""; }
trap 'stray_stop; stamp_stop; daemon_clean; sim_down' EXIT
# a stray server on right: in right's network namespace, started by this
# test (its pid is the iperf3's: ip netns exec execs it)
stray_start() {
	ip netns exec "$PFX-right" iperf3 -s -p 5999 >/dev/null 2>&1 </dev/null &
	STRAY=$!
	for _ in $(seq 50); do
		ip netns exec "$PFX-right" ss -Hltn 'sport = :5999' | grep -q . && return 0
		sleep 0.1
	done
	return 1
}
start() {	# spec-extra: a 1-run matrix left -> right, its id on stdout
	api POST /api/v1/matrices '{"name":"idle","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],
 "directions":["forward"],"duration_s":2,"repeats":1'"$1"'}' | jq_ 'd["matrix"]["id"]'
}
run_of() { api GET "/api/v1/matrices/$1" | jq_ 'json.dumps(d["matrix"]["runs"][0]["id"])'; }

sim_testbedd tbic 216 2
both_answer

body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"idle":{"wait_s":-1}}')
check "a bad idle.wait_s is refused (400) naming idle.wait_s" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"idle.wait_s"')"
body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"idle":{"max_lod":1}}')
check "an unknown idle key is refused (400) naming it" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"idle.max_lod"')"

check "a stray iperf3 -s -p 5999 listens on right" stray_start
diag "stray pid $STRAY"
M=$(start ',"idle":{"wait_s":3}')
WAIT=60 check "matrix $M (idle wait_s 3, a stray on right) fails" wait_state "$M" failed
R=$(run_of "$M")
body=$(api GET "/api/v1/runs/$R")
diag "$(echo "$body" | jq_ 'd["run"]["error_class"] + ": " + d["run"]["error_message"]' 2>/dev/null)"
check "the run fails as busy_host naming right, the stray iperf3 and its pid" pyck "$body" '
r = d["run"]
sys.exit(not (r["error_class"] == "busy_host" and r["state"] == "failed"
              and r["error_message"].startswith("right: a stray iperf3 (pid '"$STRAY"': iperf3 -s -p 5999) is running")
              and r["summary"]["idle"]["waited_s"] >= 0 and r["client_command"] is None))'
check "the stored spec keeps idle" pyck "$(api GET "/api/v1/matrices/$M")" \
	'sys.exit(d["matrix"]["spec"].get("idle") != {"wait_s": 3})'
check "testbedd did not stop the stray (not its own)" kill -0 "$STRAY"

M=$(start ',"idle":false')
WAIT=60 check "with idle false the stray is ignored: matrix $M succeeds" wait_state "$M" succeeded

stray_stop
M=$(start ',"idle":{"wait_s":3}')
WAIT=60 check "with the stray stopped matrix $M succeeds" wait_state "$M" succeeded
R=$(run_of "$M")
check "... and its run did not wait" pyck "$(api GET "/api/v1/runs/$R")" \
	'sys.exit(not (d["run"]["state"] == "ok" and "idle" not in d["run"]["summary"]))'

# the stray stopped while the run waits for it
check "a stray iperf3 listens on right again" stray_start
check "the run.waiting events are recorded" stamp_start run.waiting
M=$(start ',"idle":{"wait_s":20}')
for _ in $(seq 100); do [ "$(mstate "$M")" = running ] && break; sleep 0.1; done
sleep 3
R=$(run_of "$M")
check "the run still waits (pending or running, no client yet)" pyck "$(api GET "/api/v1/runs/$R")" \
	'r = d["run"]; sys.exit(not (r["state"] in ("pending", "running") and r["client_command"] is None))'
stray_stop
WAIT=60 check "with the stray stopped during the wait matrix $M succeeds" wait_state "$M" succeeded
R=$(run_of "$M")
body=$(api GET "/api/v1/runs/$R")
diag "$(echo "$body" | jq_ 'd["run"]["summary"].get("idle")')"
check "its summary says it waited, and for the stray iperf3 on right" pyck "$body" '
i = d["run"]["summary"].get("idle") or {}
sys.exit(not (d["run"]["state"] == "ok" and i.get("waited_s", 0) > 0
              and i.get("busy", "").startswith("right: a stray iperf3 (pid ")))'
check "a run.waiting event said run $R waits for the stray on right, up to 20 s" python3 - "$DD/events.jsonl" "$R" <<'PY'
import json, sys
ev = [e["data"]["data"] for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "run.waiting"]
print("#", ev)
sys.exit(not any(d["run"] == int(sys.argv[2]) and d["wait_s"] == 20 and d["busy"].startswith("right: a stray iperf3 (pid ")
                 for d in ev))
PY
stamp_stop
check "testbedd's log says the run waited" grep -q "waited .* s for idle hosts: right: a stray iperf3" "$DD/log"

# the FreeBSD persona's look (pgrep -x, ps; the router): a stray in the router's own
# namespace is seen, one on another host is not (FreeBSD's pgrep sees its own machine)
ip netns exec "$PFX-router" iperf3 -s -p 5999 >/dev/null 2>&1 </dev/null &
STRAY=$!
ip netns exec "$PFX-left" iperf3 -s -p 5997 >/dev/null 2>&1 </dev/null &
OTHER=$!
sleep 0.5
check "the router's pgrep -x 'iperf3|iperf|netperf|netserver' finds its stray, not left's" \
	test "$(sshc "root@$NET.50" "pgrep -x 'iperf3|iperf|netperf|netserver'")" = "$STRAY"
kill "$OTHER" 2>/dev/null
wait "$OTHER" 2>/dev/null
body=$(api POST /api/v1/matrices '{"name":"idle-bsd","pairs":[{"client":"left","server":"router"}],
 "protocols":["tcp"],"directions":["forward"],"duration_s":2,"repeats":1,"idle":{"wait_s":3}}')
M=$(echo "$body" | jq_ 'd["matrix"]["id"]') || diag "POST /api/v1/matrices: $(st) $body"
WAIT=60 check "matrix $M (left -> router, a stray on the router, as freebsd) fails" wait_state "$M" failed
check "... as busy_host naming the router, the stray iperf3 and its pid" pyck "$(api GET "/api/v1/runs/$(run_of "$M")")" '
r=d["run"]
sys.exit(not (r["error_class"] == "busy_host" and r["error_message"].startswith("router: a stray iperf3 (pid '"$STRAY"': iperf3 -s -p 5999) is running")))'
stray_stop

# a router whose metadata hangs (this test makes its pciconf sleep 12 s): run 0's server, started
# ahead as soon as left and right were ready, is not used after 10 s (its timeout(1) would end it
# during the test): it is stopped and the run starts its own
ahead() { curl -s -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" "$TESTBEDD_URL/metrics" |
	sed -n "s/^testbedd_run_servers_ahead_total{how=\"$1\"} //p"; }
stopped0=$(ahead stopped)
PCICONF=$S/personas/freebsd/bin/pciconf
cp "$PCICONF" "$S/pciconf.real"
printf '#!/bin/bash\nsleep 12\nexec %s "$@"\n' "$S/pciconf.real" >"$PCICONF"
M=$(start ',"idle":false')
WAIT=60 check "matrix $M (the router's metadata 12 s) succeeds" wait_state "$M" succeeded
cp "$S/pciconf.real" "$PCICONF"
stopped1=$(ahead stopped)
check "run 0's server started ahead was stopped unused after 10 s (metrics: stopped $stopped0 -> $stopped1)" \
	test "$stopped1" = $((stopped0 + 1))
check "... and run 0 ran ok with its own server, the router's metadata stored" pyck "[$(api GET "/api/v1/runs/$(run_of "$M")"), $(api GET "/api/v1/matrices/$M/hosts")]" '
r, h = d[0]["run"], d[1]["hosts"]; print("#", r["state"], [x["host"] for x in h])
sys.exit(not (r["state"] == "ok" and "router" in [x["host"] for x in h]))'
daemon_down
check "testbedd's log has no sanitizer report" bash -c "! grep -A30 'Sanitizer' '$DD/log'"
finish

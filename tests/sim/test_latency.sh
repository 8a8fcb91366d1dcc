#!/bin/sh
# Latency under load (issue 20 item 7) on the simulated testbed: with the
# router's link limited to 20 Mbit/s (`sim link --rate`, tbf whose queue
# holds up to 50 ms), a spec with "latency": "irtt" gets an irtt stream from
# left to right beside its TCP run; the idle RTT measured before the load is
# far below the RTT under it (the queue builds: bufferbloat).  Asserted as
# ratios of RTTs measured in the same run, no timing: the loaded median is
# at least 3 times the idle median and above the idle p95.  Also: run.rtt
# events (phase idle and load) during the run, GET /api/v1/runs/{id}/latency
# (summary, bins, tool irtt), no irtt left on a host, "latency": "ping" the
# same with ping, a bad "latency" refused naming the field; the run keeps
# the summary in its own (summary.latency), which GET /runs/ID/latency gives
# once the event store's retention took the run.rtt events; and a spec
# without it measures nothing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
# a sanitizer build: whole stacks in its report (jansson has no frame pointers)
export ASAN_OPTIONS=${ASAN_OPTIONS:-fast_unwind_on_malloc=0}
sim_testbedd tblt 219 2
both_answer

body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"latency":"owamp"}')
check "a bad latency tool is refused (400) naming latency" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"latency"')"

check "sim link --rate 20mbit" "$SIM" link --prefix "$PFX" --rate 20mbit
stamp_start run.rtt,run.interval
spec='{"name":"bloat","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],
 "duration_s":5,"repeats":1,"latency":"irtt"}'
body=$(api POST /api/v1/matrices "$spec")
M=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "start: 201" test "$(st)" = 201 -a -n "$M"
WAIT=90 check "matrix $M succeeds" wait_state "$M" succeeded
sleep 1
stamp_stop
R=$(api GET "/api/v1/matrices/$M" | jq_ 'd["matrix"]["runs"][0]["id"]')
check "the stored spec keeps latency" pyck "$(api GET "/api/v1/matrices/$M")" 'sys.exit(d["matrix"]["spec"].get("latency") != "irtt")'

check "run.rtt events arrived during the run, idle then load, from irtt" python3 - "$DD/events.jsonl" "$R" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
run = int(sys.argv[2])
r = [e["data"]["data"] for e in ev if e.get("event") == "run.rtt" and e["data"]["data"]["run"] == run]
phases = [x["phase"] for x in r]
print("# %d run.rtt events: %d idle, %d load; tools %s" % (len(r), phases.count("idle"), phases.count("load"), sorted({x["tool"] for x in r})))
first_load = phases.index("load") if "load" in phases else -1
sys.exit(not (phases.count("idle") >= 2 and phases.count("load") >= 4 and "idle" not in phases[first_load:]
              and {x["tool"] for x in r} == {"irtt"} and all(x["host"] == "left" and x["server"] == "right" for x in r)))
PY

body=$(api GET "/api/v1/runs/$R/latency")
check "GET /runs/$R/latency: 200" test "$(st)" = 200
diag "$(echo "$body" | jq_ '"idle %s, load %s, median ratio %s" % (d["summary"]["idle"], d["summary"]["load"], d["summary"]["median_ratio"])')"
check "the RTT under the rate-limited TCP run is clearly above the idle RTT" pyck "$body" '
s = d["summary"]; i = s["idle"]; l = s["load"]
ok = d["tool"] == "irtt" and d["client"] == "left" and d["server"] == "right"
ok = ok and i["n"] >= 10 and l["n"] >= 30
ok = ok and l["median"] >= 3 * i["median"] and l["median"] > i["p95"] and s["median_ratio"] >= 3
sys.exit(not ok)'
check "bins: one a second, each with n, lost, min <= median <= max, and no packet lists" pyck "$body" '
b = d["bins"]["load"]
ok = len(b) >= 4 and all("rtt" not in x and x["n"] + x["lost"] >= 1 for x in b)
ok = ok and all(x["min"] <= x["median"] <= x["max"] for x in b if x["n"])
ok = ok and [x["t"] for x in b] == sorted(x["t"] for x in b) and all("at_ms" in x for x in b)
sys.exit(not ok)'
printf '%s' "$body" >"$DD/lat1.json"
api GET "/api/v1/runs/$R" >"$DD/run.json"
check "the run keeps the same summary in its own (summary.latency)" python3 - "$DD/run.json" "$DD/lat1.json" <<'PY'
import json, sys
k = json.load(open(sys.argv[1]))["run"]["summary"]["latency"]; s = json.load(open(sys.argv[2]))["summary"]
sys.exit(not (k["idle"] == s["idle"] and k["load"] == s["load"] and k["median_ratio"] == s["median_ratio"]
              and k["tool"] == "irtt" and k["client"] == "left"))
PY
# the event store's retention takes the run.rtt events (here: by hand): the summary stays
sqlite3 "$DD/state/testbedd.db" "DELETE FROM events WHERE type = 'run.rtt'"
api GET "/api/v1/runs/$R/latency" >"$DD/lat2.json"
check "its run.rtt events gone, GET /runs/$R/latency still has the summary (no bins)" python3 - "$DD/lat2.json" "$DD/lat1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))["summary"]
print("#", d["summary"])
sys.exit(not (d["summary"] == s and d["bins"] == {"idle": [], "load": []} and d["tool"] == "irtt"
              and d["client"] == "left" and d["server"] == "right"))
PY
check "no irtt is left on a host" bash -c '
for _ in $(seq 20); do
	n=0
	for ns in left right; do
		for p in $(ip netns pids "'"$PFX"'-$ns" 2>/dev/null); do
			grep -q "irtt" "/proc/$p/cmdline" 2>/dev/null && n=$((n + 1))
		done
	done
	[ $n = 0 ] && exit 0
	sleep 0.2
done
exit 1'
# "ping": the same with ping every 200 ms (the fallback where irtt is missing)
body=$(api POST /api/v1/matrices '{"name":"pinged","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":3,"repeats":1,"latency":"ping"}')
M3=$(echo "$body" | jq_ 'd["matrix"]["id"]')
WAIT=60 check "matrix $M3 (latency ping) succeeds" wait_state "$M3" succeeded
R3=$(api GET "/api/v1/matrices/$M3" | jq_ 'd["matrix"]["runs"][0]["id"]')
body=$(api GET "/api/v1/runs/$R3/latency")
diag "ping: $(echo "$body" | jq_ '"idle %s, load %s, median ratio %s" % (d["summary"]["idle"], d["summary"]["load"], d["summary"]["median_ratio"])')"
check "with ping: tool ping, idle and loaded RTTs, the loaded median clearly above the idle one" pyck "$body" '
s = d["summary"]
sys.exit(not (d["tool"] == "ping" and s["idle"]["n"] >= 5 and s["load"]["n"] >= 10 and s["median_ratio"] >= 3))'
check "no ping is left on the client" bash -c '
for _ in $(seq 20); do
	n=0
	for p in $(ip netns pids "'"$PFX"'-left" 2>/dev/null); do
		tr "\0" " " <"/proc/$p/cmdline" 2>/dev/null | grep -q "^ping " && n=$((n + 1))
	done
	[ $n = 0 ] && exit 0
	sleep 0.2
done
exit 1'
body=$(api GET "/api/v1/runs/999999/latency")
check "an unknown run: 404" test "$(st)" = 404

# a spec without "latency": nothing measured
"$SIM" link --prefix "$PFX" --rate none >/dev/null
body=$(api POST /api/v1/matrices '{"name":"plain","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":2,"repeats":1}')
M2=$(echo "$body" | jq_ 'd["matrix"]["id"]')
WAIT=60 check "matrix $M2 succeeds" wait_state "$M2" succeeded
R2=$(api GET "/api/v1/matrices/$M2" | jq_ 'd["matrix"]["runs"][0]["id"]')
check "a run without latency has none" pyck "$(api GET "/api/v1/runs/$R2/latency")" \
	'sys.exit(not (d["bins"] == {"idle": [], "load": []} and d["summary"]["idle"]["n"] == 0 and d["tool"] is None))'
# stopped here so that a sanitizer build's report (leaks come at exit) is in the log
daemon_down
check "testbedd's log has no sanitizer report" bash -c "! grep -A30 'Sanitizer' '$DD/log'"
finish

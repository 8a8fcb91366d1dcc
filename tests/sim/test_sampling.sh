#!/bin/sh
# CPU and memory sampling during runs (issue 20 item 1) on the simulated
# testbed: a spec with "sample" gets run.sample events from both ends while
# its run is in progress, lined up with the run's intervals (each server
# interval has a sample of the server within 1 s of it), kept and served by
# GET /api/v1/runs/{id}/samples with a summary per host; the readers are
# stopped with the run (no sampling loop left on a host); a bad "sample" is
# refused naming the field; a spec without it samples nothing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_testbedd tbex 210 2
both_answer

body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"sample":["cpu","disk"]}')
check "a bad sample kind is refused (400) naming sample[1]" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"sample\[1\]"')"

stamp_start run.sample,run.interval
spec='{"name":"sampled","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],
 "duration_s":5,"repeats":1,"sample":["cpu","mem"]}'
body=$(api POST /api/v1/matrices "$spec")
M=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "start: 201" test "$(st)" = 201 -a -n "$M"
WAIT=90 check "matrix $M succeeds" wait_state "$M" succeeded
sleep 1
stamp_stop
R=$(api GET "/api/v1/matrices/$M" | jq_ 'd["matrix"]["runs"][0]["id"]')
check "the stored spec keeps sample" pyck "$(api GET "/api/v1/matrices/$M")" 'sys.exit(d["matrix"]["spec"].get("sample") != ["cpu", "mem"])'

check "run.sample events arrived from both ends during the run" python3 - "$DD/events.jsonl" "$R" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
run = int(sys.argv[2])
s = [e["data"] for e in ev if e.get("event") == "run.sample" and e["data"]["data"]["run"] == run]
sides = {e["data"]["side"] for e in s}
print("# %d samples, sides %s" % (len(s), sorted(sides)))
sys.exit(not (len(s) >= 4 and sides == {"client", "server"} and all(len(e["data"]["sample"]["cpu"]) >= 1 for e in s)))
PY
check "each server interval has a sample of the server within 1 s" python3 - "$DD/events.jsonl" "$R" <<'PY'
import json, sys
from datetime import datetime, timezone
ev = [json.loads(l)["data"] for l in open(sys.argv[1]) if l.strip() and '"stream"' not in l.split('"data"')[0]]
run = int(sys.argv[2])
at = lambda e: datetime.strptime(e["at"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
mine = [e for e in ev if isinstance(e, dict) and e.get("data", {}).get("run") == run and e["data"].get("side") == "server"]
samples = [at(e) for e in mine if e["type"] == "run.sample"]
intervals = [at(e) for e in mine if e["type"] == "run.interval"]
gaps = [min(abs(t - s) for s in samples) for t in intervals] if samples else []
print("# %d server intervals, %d server samples, largest gap %.2f s" % (len(intervals), len(samples), max(gaps or [99])))
sys.exit(not (len(intervals) >= 3 and gaps and max(gaps) <= 1.0))
PY
body=$(api GET "/api/v1/runs/$R/samples")
check "GET /runs/$R/samples: 200" test "$(st)" = 200
check "samples of left (client) and right (server), with a summary each" pyck "$body" '
h = d["hosts"]
ok = set(h) == {"left", "right"} and h["left"]["side"] == "client" and h["right"]["side"] == "server"
for x in h.values():
    s = x["samples"]; m = x["summary"]
    ok = ok and len(s) >= 2 and s[0]["mem"]["total_kib"] > 0 and "at" in s[0] and len(s[0]["cpu"]) >= 1
    ok = ok and m["samples"] == len(s) and 0 <= m["busiest"] < len(m["cpu"]) and m["mem_used_max_pct"] > 0
sys.exit(not ok)'
check "no sampling loop is left on a host" bash -c '
for _ in $(seq 20); do
	n=0
	for ns in left right; do
		for p in $(ip netns pids "'"$PFX"'-$ns" 2>/dev/null); do
			grep -q "tb-sample" "/proc/$p/cmdline" 2>/dev/null && n=$((n + 1))
		done
	done
	[ $n = 0 ] && exit 0
	sleep 0.2
done
exit 1'
body=$(api GET "/api/v1/runs/999999/samples")
check "an unknown run: 404" test "$(st)" = 404

# a spec without "sample": no samples
body=$(api POST /api/v1/matrices '{"name":"plain","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":2,"repeats":1}')
M2=$(echo "$body" | jq_ 'd["matrix"]["id"]')
WAIT=60 check "matrix $M2 succeeds" wait_state "$M2" succeeded
R2=$(api GET "/api/v1/matrices/$M2" | jq_ 'd["matrix"]["runs"][0]["id"]')
check "a run without sample has none" pyck "$(api GET "/api/v1/runs/$R2/samples")" 'sys.exit(d["hosts"] != {})'
finish

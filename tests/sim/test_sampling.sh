#!/bin/sh
# CPU and memory sampling during runs (issue 20 item 1) on the simulated
# testbed: a spec with "sample" gets run.sample events from both ends (and
# the router on the path, its FreeBSD persona's kern.cp_times) while
# its run is in progress, lined up with the run's intervals (each server
# interval has a sample of the server within 1 s of it), kept and served by
# GET /api/v1/runs/{id}/samples with a summary per host; the readers are
# stopped with the run (no sampling loop left on a host); a bad "sample" is
# refused naming the field; a spec without it samples nothing; the samples
# are kept in table run_samples and outlive their events; the run's summary
# (per end and router, and latency idle and loaded: "latency": "irtt") is in
# results, both CSVs and the A/B view.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_testbedd tbex 210 2
both_answer
check "router answers" wait_up router

# The router's FreeBSD persona answers kern.cp_times and vm.stats from the
# sim's kernel (deploy/sim/lib/freebsd/sysctl: user nice system interrupt
# idle per CPU from /proc/stat), as FreeBSD prints them.
check "the FreeBSD persona's kern.cp_times: five counters per CPU" \
	sh -c 'test $(( $(echo "$1" | wc -w) % 5 )) = 0 && test $(echo "$1" | wc -w) -ge 5' _ "$(sshc root@$NET.50 sysctl -n kern.cp_times)"

body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"sample":["cpu","disk"]}')
check "a bad sample kind is refused (400) naming sample[1]" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"sample\[1\]"')"

stamp_start run.sample,run.interval
spec='{"name":"sampled","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],
 "duration_s":5,"repeats":1,"sample":["cpu","mem"],"latency":"irtt"}'
body=$(api POST /api/v1/matrices "$spec")
M=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "start: 201" test "$(st)" = 201 -a -n "$M"
WAIT=90 check "matrix $M succeeds" wait_state "$M" succeeded
sleep 1
stamp_stop
R=$(api GET "/api/v1/matrices/$M" | jq_ 'd["matrix"]["runs"][0]["id"]')
check "the stored spec keeps sample" pyck "$(api GET "/api/v1/matrices/$M")" 'sys.exit(d["matrix"]["spec"].get("sample") != ["cpu", "mem"])'

check "run.sample events arrived from both ends and the router during the run" python3 - "$DD/events.jsonl" "$R" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
run = int(sys.argv[2])
s = [e["data"] for e in ev if e.get("event") == "run.sample" and e["data"]["data"]["run"] == run]
sides = {e["data"]["side"] for e in s}
print("# %d samples, sides %s" % (len(s), sorted(sides)))
sys.exit(not (len(s) >= 4 and sides == {"client", "server", "router"} and all(len(e["data"]["sample"]["cpu"]) >= 1 for e in s)))
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
ok = set(h) == {"left", "right", "router"} and h["left"]["side"] == "client" and h["right"]["side"] == "server"
for x in h.values():
    s = x["samples"]; m = x["summary"]
    ok = ok and len(s) >= 2 and s[0]["mem"]["total_kib"] > 0 and "at" in s[0] and len(s[0]["cpu"]) >= 1
    ok = ok and m["samples"] == len(s) and 0 <= m["busiest"] < len(m["cpu"]) and m["mem_used_max_pct"] > 0
sys.exit(not ok)'
check "the router on the path (FreeBSD kern.cp_times) is sampled too, with a summary" pyck "$body" '
r = d["hosts"].get("router", {}); s = r.get("samples", []); m = r.get("summary") or {}
print("# router: side %s, %d samples, %d cores" % (r.get("side"), len(s), len(s[0]["cpu"]) if s else 0))
sys.exit(not (r.get("side") == "router" and len(s) >= 2 and len(s[0]["cpu"]) == '"$(nproc)"'
              and s[0]["mem"]["total_kib"] == '"$(awk '/^MemTotal:/ { printf "%d", int($2 / 4) * 4 }' /proc/meminfo)"'
              and m.get("samples") == len(s)))'
check "no sampling loop is left on a host" bash -c '
for _ in $(seq 20); do
	n=0
	for ns in left right router; do
		for p in $(ip netns pids "'"$PFX"'-$ns" 2>/dev/null); do
			grep -q "tb-sample" "/proc/$p/cmdline" 2>/dev/null && n=$((n + 1))
		done
	done
	[ $n = 0 ] && exit 0
	sleep 0.2
done
exit 1'
# the summary in results, the CSV export and the A/B view (run_load.c)
check "results: the run's load (each end, the router, latency idle and loaded) and the cell's medians" pyck "$(api GET "/api/v1/matrices/$M/results")" '
r = d["runs"][0]["load"]; c = d["cells"][0]["load"]
print("# run load:", {k: v for k, v in r.items() if k != "hosts"})
figs = ["%s_%s" % (h, f) for h in ("client", "server", "router") for f in ("busiest_mean", "busiest_max", "busy_mean", "interrupt_share")]
figs += ["latency_idle_median_ms", "latency_idle_p95_ms", "latency_load_median_ms", "latency_load_p95_ms"]
ok = all(isinstance(r.get(f), (int, float)) for f in figs) and r["router"] == "router" and set(r["hosts"]) == {"left", "right", "router"}
ok = ok and r["client_busiest_max"] >= r["client_busiest_mean"] and all(c[f] == r[f] for f in figs)
sys.exit(not ok)'
csv=$(api GET "/api/v1/matrices/$M/results?format=csv&view=runs")
check "CSV (runs): load.* columns with the run's figures" python3 -c '
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
r = rows[0]
cols = ["load.client_busiest_mean", "load.server_interrupt_share", "load.router", "load.router_busiest_max", "load.latency_idle_median_ms", "load.latency_load_p95_ms"]
print("#", {c: r.get(c) for c in cols})
sys.exit(not (len(rows) == 1 and all(r.get(c) for c in cols) and r["load.router"] == "router"))' "$csv"
csv=$(api GET "/api/v1/matrices/$M/results?format=csv&view=cells")
check "CSV (cells): load.* medians" python3 -c '
import csv, io, sys
r = list(csv.DictReader(io.StringIO(sys.argv[1])))[0]
sys.exit(not all(r.get(c) for c in ["load.client_busiest_mean", "load.router_busy_mean", "load.latency_load_median_ms"]))' "$csv"
check "A/B: each compared cell carries its load and the baseline's" pyck "$(api GET "/api/v1/matrices/$M/compare?baseline=$M")" '
c = d["compare"]["cells"][0]
sys.exit(not (c["load"]["server_busiest_mean"] == c["baseline_load"]["server_busiest_mean"] and "latency_load_median_ms" in c["load"]))'
csv=$(api GET "/api/v1/matrices/$M/compare?baseline=$M&format=csv")
check "A/B CSV: load.* and baseline_load.* columns" python3 -c '
import csv, io, sys
r = list(csv.DictReader(io.StringIO(sys.argv[1])))[0]
sys.exit(not (r.get("load.client_busiest_mean") and r.get("load.client_busiest_mean") == r.get("baseline_load.client_busiest_mean") and r.get("baseline_load.latency_idle_p95_ms")))' "$csv"

body=$(api GET "/api/v1/runs/999999/samples")
check "an unknown run: 404" test "$(st)" = 404

# a spec without "sample": no samples
body=$(api POST /api/v1/matrices '{"name":"plain","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":2,"repeats":1}')
M2=$(echo "$body" | jq_ 'd["matrix"]["id"]')
WAIT=60 check "matrix $M2 succeeds" wait_state "$M2" succeeded
R2=$(api GET "/api/v1/matrices/$M2" | jq_ 'd["matrix"]["runs"][0]["id"]')
check "a run without sample has none" pyck "$(api GET "/api/v1/runs/$R2/samples")" 'sys.exit(d["hosts"] != {})'

# the samples are kept in their own table: the event retention deleting the
# run.sample events (done here by hand, testbedd stopped) loses none of them
before=$(api GET "/api/v1/runs/$R/samples")
check "the run's samples are in table run_samples, in batches" \
	test "$(sqlite3 "$DD/state/testbedd.db" "SELECT count(*) FROM run_samples WHERE run_id = $R")" -ge 4
daemon_down
sqlite3 "$DD/state/testbedd.db" "DELETE FROM events WHERE type = 'run.sample'"
check "testbedd starts again on the same state" daemon_again "$S/inventory.yaml" --probe-interval 2
after=$(api GET "/api/v1/runs/$R/samples")
check "GET /runs/$R/samples after the events went: 200" test "$(st)" = 200
check "the same samples and summaries as before, read from the table" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
n = {h: len(x["samples"]) for h, x in b["hosts"].items()}
print("# samples per host after:", n)
sys.exit(not (a["hosts"] == b["hosts"] and set(n) == {"left", "right", "router"} and min(n.values()) >= 2))' "$before" "$after"
check "results still carry the run's CPU load (from the table)" pyck "$(api GET "/api/v1/matrices/$M/results")" '
sys.exit(not isinstance(d["runs"][0]["load"].get("router_busiest_mean"), (int, float)))'
finish

#!/bin/sh
# tests/bench/flame_overhead.sh: what a flame graph costs a run (issue 20 item
# 2), on a simulated testbed of its own (deploy/sim, prefix tbfo, block 195):
# the same TCP run left -> right (ubuntu personas) as matrices without and with
# "profile": {"side": "sender"} (perf record -a -g -F 99 on left, then perf
# script over ssh), alternated ROUNDS times (default 3, DUR s each, default
# 5), then once at -F 997.  Prints the median receiver bitrate of each kind and
# its ratio to the unprofiled median of the same run, and how much longer a
# profiled run takes from start to stored result (the perf script after the
# client).  Nothing is a timed assertion: figures only (exit 1 when a run
# fails).  Root (the sim).  TB_BINARY_DIR: the build holding testbedd.
#
#   ROUNDS=3 DUR=5 TB_BINARY_DIR=build/x tests/bench/flame_overhead.sh
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/../sim/lib.sh"
ROUNDS=${ROUNDS:-3} DUR=${DUR:-5}
sim_testbedd tbfo 195 2
both_answer
out=$(mktemp /tmp/tbflame-bench-XXXXXX)
one() {	# kind profile-json-or-empty
	local spec body m
	spec='{"name":"'$1'","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],
	 "duration_s":'$DUR',"repeats":1,"os":[{"left":"ubuntu","right":"ubuntu"}]'${2:+,\"profile\":$2}'}'
	body=$(api POST /api/v1/matrices "$spec")
	m=$(echo "$body" | jq_ 'd["matrix"]["id"]')
	WAIT=120 wait_state "$m" succeeded || return 1
	r=$(api GET "/api/v1/matrices/$m" | jq_ 'd["matrix"]["runs"][0]["id"]')
	api GET "/api/v1/runs/$r" | python3 -c '
import json, sys, datetime, statistics
d = json.load(sys.stdin)["run"]
t = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
def bps(iv):	# the sum of an interval (or its first number of that name)
    if isinstance(iv, dict):
        if isinstance(iv.get("bits_per_second"), (int, float)): return iv["bits_per_second"]
        for v in iv.values():
            x = bps(v)
            if x is not None: return x
    return None
ivs = [bps(i) for i in d["intervals"]["server"]]
ivs = [x for x in ivs if x]
print(sys.argv[1], d["receiver_bps"], round(t(d["finished_at"]) - t(d["started_at"]), 3),
      ivs[0] if ivs else 0, statistics.median(ivs[1:]) if len(ivs) > 1 else 0)' "$1" >>"$out"
}
for i in $(seq "$ROUNDS"); do
	check "round $i: plain" one plain ""
	check "round $i: profiled -F 99" one profiled '{"side":"sender"}'
done
check "profiled -F 997" one profiled997 '{"side":"sender","frequency":997}'
python3 - "$out" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for k, bps, wall, first, rest in rows:
    by.setdefault(k, []).append((float(bps), float(wall), float(first), float(rest)))
base = st.median(x[0] for x in by["plain"])
wbase = st.median(x[1] for x in by["plain"])
fbase = st.median(x[2] for x in by["plain"])
rbase = st.median(x[3] for x in by["plain"])
for k in ("plain", "profiled", "profiled997"):
    if k not in by:
        continue
    b, w, f, r = (st.median(x[i] for x in by[k]) for i in range(4))
    print("# %-12s n=%d  receiver %.2f Gbit/s  ratio to plain %.3f  (first second %.3f, later seconds %.3f)"
          "  run start->stored %.2f s (+%.2f s)" % (k, len(by[k]), b / 1e9, b / base, f / fbase, r / rbase, w, w - wbase))
PY
rm -f "$out"
daemon_down
finish

#!/bin/sh
# Views II, A/B of two matrices on the simulated testbed: a tcp/udp x
# forward/reverse x 3 matrix at 10 Mbit/s (TCP paced by -b as UDP is: an
# unpaced TCP stream through a lossy link halves and varies by itself, see
# test_iperf.sh), then the same spec under a 5 % loss profile on the router.
# The compare endpoint, with metric lost_percent, flags exactly the UDP cells
# (dropped, and beyond the spread: their interquartile ranges apart from the
# baseline's and a change over max_drop) and no TCP cell; with the receiver
# bitrate at max_drop 3, both UDP cells are dropped (5 % of their datagrams
# lost) and every row's verdict and beyond_spread follow its numbers (a TCP
# cell is not required to hold: a 2 s stream through 5 % loss may sit out a
# 200 ms retransmission timeout, -10 %, as CI saw on 2026-12-05); the CSV has
# a row per cell; tbctl matrix compare --metric
# lost_percent --spread --junit FILE exits 7 and the JUnit file has a
# testcase per cell with a failure for each UDP cell; the A/B report has the
# comparison and no script.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
trap 'daemon_clean; sim_down' EXIT

sim_up tbab 202 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts on the sim's inventory" test -n "$DPID"
TBCTL="$TB_BINARY_DIR/tbctl"
check "left answers" wait_up left
check "right answers" wait_up right

spec='{"name":"ab","pairs":[{"client":"left","server":"right"}],"protocols":["tcp","udp"],
 "directions":["forward","reverse"],"duration_s":2,"repeats":3,"order":"interleaved",
 "iperf":{"bitrate":"10M","udp_bitrate":"10M"}}'
body=$(api POST /api/v1/matrices "$spec")
A=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "baseline: 201 with an id" test "$(st)" = 201 -a -n "$A"
WAIT=150 check "baseline $A succeeds" wait_state "$A" succeeded

check "link --loss 5 on the router" "$SIM" link --prefix "$PFX" --loss 5
body=$(api POST /api/v1/matrices "$spec")
B=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "the same spec under loss: 201" test "$(st)" = 201 -a -n "$B"
# 5 % loss also hits iperf3's control connection: a run may fail (its
# matrix then ends failed); the comparison needs 2 ok runs a cell
WAIT=150 check "matrix $B ends" wait_state "$B" succeeded failed
"$SIM" link --prefix "$PFX" --loss 0 >/dev/null
body=$(api GET "/api/v1/matrices/$B")
diag "runs that failed under loss: $(echo "$body" | jq_ '[(r["cell"], r["error_class"], (r["error_message"] or "")[:80]) for r in d["matrix"]["runs"] if r["state"] != "ok"]')"
check "every cell has at least 2 ok runs under loss" pyck "$(api GET "/api/v1/matrices/$B/results")" '
sys.exit(not all(c["n"] >= 2 for c in d["cells"]))'

res=$(api GET "/api/v1/matrices/$B/results")
echo "$res" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for c in d["cells"]:
    r, l = c["receiver_bps"] or {}, c["lost_percent"] or {}
    print("# cell %d %s %s: receiver median %s IQR %s..%s, lost median %s values %s" % (c["cell"], c["protocol"],
        c["direction"], r.get("median"), r.get("q1"), r.get("q3"), l.get("median"), l.get("values")))'

# ---- lost_percent: exactly the UDP cells ----
cmp=$(api GET "/api/v1/matrices/$B/compare?baseline=$A&metric=lost_percent&max_drop=5")
check "compare lost_percent: 200, higher is worse" test "$(st)" = 200 -a "$(echo "$cmp" | jq_ 'd["compare"]["higher_is_worse"]')" = True
UDP=$(echo "$cmp" | jq_ 'sorted(r["cell"] for r in d["compare"]["cells"] if r["protocol"] == "udp")')
TCP=$(echo "$cmp" | jq_ 'sorted(r["cell"] for r in d["compare"]["cells"] if r["protocol"] == "tcp")')
diag "udp cells $UDP, tcp cells $TCP"
echo "$cmp" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["compare"]["cells"]:
    print("# lost_percent cell %s %s %s: %s -> %s (IQR %s..%s -> %s..%s) overlap %s %s" % (r["cell"], r["protocol"],
        r["direction"], r["baseline_median"], r["median"], r["baseline_q1"], r["baseline_q3"], r["q1"], r["q3"],
        r["overlap"], r["verdict"]))'
check "four cells: two UDP, two TCP" test "$(echo "$cmp" | jq_ 'len(d["compare"]["cells"])')" = 4 -a "$(echo "$UDP" | tr -cd , )" = ","
check "dropped (loss rose) is exactly the UDP cells" test "$(echo "$cmp" | jq_ 'sorted(d["compare"]["dropped"])')" = "$UDP"
check "beyond the spread is exactly the UDP cells" test "$(echo "$cmp" | jq_ 'sorted(d["compare"]["beyond_spread"])')" = "$UDP"
check "every TCP cell: no loss to compare (no_baseline), no verdict against it" pyck "$cmp" '
sys.exit(not all(r["verdict"] == "no_baseline" and r["overlap"] is None for r in d["compare"]["cells"] if r["protocol"] == "tcp"))'
check "the gate fails" test "$(echo "$cmp" | jq_ 'd["compare"]["pass"]')" = False

# ---- receiver bitrate: no TCP cell dropped or beyond the spread ----
cmp=$(api GET "/api/v1/matrices/$B/compare?baseline=$A&metric=receiver_bps&max_drop=3")
echo "$cmp" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["compare"]["cells"]:
    print("# receiver_bps cell %s %s %s: %s -> %s (%s %%) IQR %s..%s -> %s..%s overlap %s %s" % (r["cell"], r["protocol"],
        r["direction"], r["baseline_median"], r["median"], r["change_pct"], r["baseline_q1"], r["baseline_q3"], r["q1"],
        r["q3"], r["overlap"], r["verdict"]))'
check "receiver bitrate at max drop 3 %: both UDP cells dropped" pyck "$cmp" '
sys.exit(not all(r["verdict"] == "dropped" for r in d["compare"]["cells"] if r["protocol"] == "udp"))'
check "every row: dropped iff the change is below -3 %, beyond the spread iff IQRs apart and |change| > 3 %" pyck "$cmp" '
rows = d["compare"]["cells"]
ok = all((r["verdict"] == "dropped") == (r["change_pct"] < -3) and
         r["beyond_spread"] == (r["overlap"] is False and abs(r["change_pct"]) > 3) for r in rows)
ok = ok and sorted(d["compare"]["dropped"]) == sorted(r["cell"] for r in rows if r["verdict"] == "dropped")
sys.exit(not ok)'
check "both spreads in every row (q1 <= median <= q3)" pyck "$cmp" '
ok = all(r[p + "q1"] <= r[p + "median"] <= r[p + "q3"] for r in d["compare"]["cells"] for p in ("", "baseline_"))
sys.exit(not ok)'

csv=$(curl -s -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" "$TESTBEDD_URL/api/v1/matrices/$B/compare?baseline=$A&metric=lost_percent&format=csv")
check "compare as CSV: a header and 4 rows, the UDP ones dropped" sh -c '
test "$(printf "%s" "$1" | grep -c .)" = 5 && printf "%s" "$1" | head -n 1 | grep -q "^cell,baseline_cell," &&
test "$(printf "%s" "$1" | grep -c ",udp,.*,false,true,dropped")" = 2' _ "$csv"

# ---- tbctl: --metric, --spread, --junit ----
out=$("$TBCTL" matrix compare "$B" --baseline "$A" --metric lost_percent --spread --junit "$DD/junit.xml" 2>&1)
rc=$?
diag "$(echo "$out" | tail -n 3)"
check "tbctl matrix compare --metric lost_percent exits 7" test "$rc" = 7
check "its table has the spread columns and says 2 worse" sh -c '
printf "%s\n" "$1" | head -n 1 | grep -q "BASE IQR *NOW IQR *OVERLAP" &&
printf "%s\n" "$1" | grep -q "2 worse or without a result: FAIL"' _ "$out"
check "JUnit: 4 testcases, a failure for each UDP cell and none for TCP" python3 - "$DD/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root.find("testsuite")
cases = suite.findall("testcase")
failed = [c.get("name") for c in cases if c.find("failure") is not None]
print("#", suite.attrib, failed)
sys.exit(not (len(cases) == 4 and suite.get("tests") == "4" and suite.get("failures") == "2" and len(failed) == 2
              and all(" udp " in n for n in failed)))
EOF
"$TBCTL" matrix compare "$B" --baseline "$A" --max-drop 3 --junit "$DD/junit2.xml" >/dev/null 2>&1
rc=$?
diag "receiver_bps gate at 3 %: exit $rc"
check "the bitrate gate fails (exit 7): the UDP cells dropped" test "$rc" = 7
DROPPED=$(echo "$cmp" | jq_ 'sorted(d["compare"]["dropped"])')
check "JUnit of the bitrate gate: a failure for exactly the cells compare calls dropped" python3 - "$DD/junit2.xml" "$DROPPED" <<'EOF'
import sys, ast, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().find("testsuite").findall("testcase")
bad = sorted(int(c.get("name").split(":")[0].split()[1]) for c in cases if c.find("failure") is not None)
print("#", bad, sys.argv[2])
sys.exit(not (len(cases) == 4 and bad == ast.literal_eval(sys.argv[2])))
EOF

# ---- the A/B report ----
"$TBCTL" matrix report "$B" --baseline "$A" >"$DD/report.html"
check "tbctl matrix report --baseline: HTML with the A/B table and chart, no script" sh -c '
grep -q "id=\"ab\"" "$1" && grep -q "id=\"chart-ab\"" "$1" && grep -q "id=\"hosts-diff\"" "$1" && ! grep -qi "<script" "$1"' _ "$DD/report.html"
"$TBCTL" matrix report "$B" --format md >"$DD/report.md"
check "the Markdown report has the cells table" grep -q "^| cell | client → server |" "$DD/report.md"
check "no iperf3 left" no_iperf_left
finish

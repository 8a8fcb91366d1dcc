#!/bin/sh
# A nightly regression check that catches a change of the path (issue 22,
# Tests): a library spec (TCP and UDP at 10 Mbit/s, 1 s, 1 repeat) scheduled
# every minute with the baseline policy latest-passing and the gate on
# lost_percent (max 5).  The first scheduled matrix is judged against a
# baseline run by hand and passes; then 10 % loss is put on the router's link
# (`sim link --loss`), and the next scheduled matrix, judged against the first
# (the latest passing one), fails its gate naming exactly the UDP cells (TCP
# has no loss figure to compare).  Takes two minutes of the clock.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_testbedd tbsg 220 2
both_answer

spec='{"name":"nightly","pairs":[{"client":"left","server":"right"}],"protocols":["tcp","udp"],"directions":["forward"],
 "duration_s":1,"repeats":1,"iperf":{"bitrate":"10M","udp_bitrate":"10M"}}'
api POST /api/v1/specs "$spec" >/dev/null
check "the spec is pushed (201)" test "$(st)" = 201
B=$(api POST /api/v1/matrices "$spec" | jq_ 'd["matrix"]["id"]')
WAIT=60 check "the baseline matrix $B (by hand) succeeds" wait_state "$B" succeeded

gate_after() {	# matrix-id-to-skip: the id of the next scheduled matrix with a verdict (up to 100 s)
	local m
	for _ in $(seq 1 500); do
		m=$(api GET /api/v1/schedules | jq_ '[g["matrix"] for g in d["schedules"][0]["last"] if g["verdict"] and g["matrix"] > '"$1"'][0]' 2>/dev/null) &&
			{ echo "$m"; return 0; }
		sleep 0.2
	done
	return 1
}
body=$(api PUT /api/v1/specs/nightly/schedule '{"cron":"* * * * *","baseline":"latest-passing","metric":"lost_percent","max_drop":5}')
check "the schedule is set (200)" test "$(st)" = 200

M1=$(gate_after "$B")
check "a first scheduled matrix was judged ($M1)" test -n "$M1"
g1=$(api GET "/api/v1/matrices/$M1/gate")
echo "$g1" | jq_ 'd["gate"]' | sed 's/^/# first gate: /'
check "its gate: against $B, pass, nothing dropped" pyck "$g1" '
g = d["gate"]
sys.exit(not (g["baseline"] == '"$B"' and g["verdict"] == "pass" and g["detail"]["dropped"] == []))'

check "10 % loss on the router's link" "$SIM" link --prefix "$PFX" --loss 10
M2=$(gate_after "$M1")
"$SIM" link --prefix "$PFX" --loss 0 >/dev/null
check "a second scheduled matrix was judged ($M2)" test -n "$M2"
g2=$(api GET "/api/v1/matrices/$M2/gate")
echo "$g2" | jq_ 'd["gate"]' | sed 's/^/# second gate: /'
UDP=$(api GET "/api/v1/matrices/$M2/results" | jq_ 'sorted(c["cell"] for c in d["cells"] if c["protocol"] == "udp")')
check "its gate: against $M1 (the latest passing), fail, the dropped cells are the UDP ones ($UDP)" pyck "$g2" '
g = d["gate"]
sys.exit(not (g["baseline"] == '"$M1"' and g["verdict"] == "fail" and sorted(g["detail"]["dropped"]) == '"$UDP"'
 and len('"$UDP"') == 1))'
check "the schedule's last verdicts read pass then fail" pyck "$(api GET /api/v1/schedules)" '
v = [(g["matrix"], g["verdict"]) for g in d["schedules"][0]["last"] if g["verdict"]]
print("#", v)
sys.exit(not ((int('"$M1"'), "pass") in v and (int('"$M2"'), "fail") in v))'
api DELETE /api/v1/specs/nightly/schedule >/dev/null
check "the schedule is deleted (204)" test "$(st)" = 204
finish

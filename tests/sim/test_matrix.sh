#!/bin/sh
# Matrices I on the simulated testbed, end to end through the API: a
# tcp/udp x forward/reverse x 2 matrix completes with every result stored and
# intervals arriving on the event stream while the runs are in progress; a
# cancel mid-run keeps the partial result; kill -9 of testbedd mid-run, a
# restart and a resume complete the matrix with no completed run lost or
# repeated and no iperf3 left on any host; sshd stopped on a host mid-run
# fails that run as ssh_error and the matrix goes on; a loss profile on the
# router shows up as UDP loss; each host's metadata (kernel, NIC, TCP
# settings, the router's forwarding) is stored once per matrix, and a
# congestion control changed between two matrices shows in their diff;
# two disjoint pairs run in rounds, at once.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_up tbmx 231 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"
# a second pair for the rounds (section 6): the router and the relay, over the management network
python3 - "$S/inventory.yaml" "$NET" <<'PY'
import sys
p, net = sys.argv[1], sys.argv[2]
s = open(p).read()
s = s.replace("        ifname: {freebsd: ix1}\n", "        ifname: {freebsd: ix1}\n      mgmt:\n        address: %s.50/24\n" % net, 1)
s = s.replace('  relay:\n    role: relay\n', '  relay:\n    role: relay\n    links:\n      mgmt:\n        address: %s.2/24\n' % net, 1)
open(p, "w").write(s)
PY
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts on the sim's inventory" test -n "$DPID"
TOK=$(cat "$TESTBEDD_TOKEN_FILE")
TBCTL="$TB_BINARY_DIR/tbctl"

check "left answers" wait_up left
check "right answers" wait_up right
check "the router answers" wait_up router

# ---- bad input: nothing runs ----
body=$(api POST /api/v1/matrices '{"name":"bad","pairs":[{"client":"left","server":"nosuch"}]}')
check "a spec naming an unknown machine is refused (400) naming the field" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"pairs\[0\].server"')"
check "nothing was created" test "$(api GET /api/v1/matrices | jq_ 'len(d["matrices"])')" = 0

# ---- 1. tcp/udp x forward/reverse x 2, live intervals ----
# the stream's first record ("stream": where it starts) says it is subscribed
stamp_start run.,matrix.
check "the event stream starts with where it starts" grep -q '"event": "stream"' "$DD/events.jsonl"
spec='{"name":"basic","pairs":[{"client":"left","server":"right"}],"protocols":["tcp","udp"],
 "directions":["forward","reverse"],"duration_s":2,"repeats":2,"order":"interleaved","iperf":{"udp_bitrate":"200M"}}'
body=$(api POST /api/v1/matrices/plan "$spec")
check "plan: 200 with 8 runs" test "$(st)" = 200 -a "$(echo "$body" | jq_ 'd["plan"]["runs"]')" = 8
body=$(api POST /api/v1/matrices "$spec")
M1=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "start: 201 with an id" test "$(st)" = 201 -a -n "$M1"
WAIT=90 check "matrix $M1 succeeds" wait_state "$M1" succeeded
stamp_stop
body=$(api GET "/api/v1/matrices/$M1")
check "8 runs, all ok" test "$(echo "$body" | jq_ 'sum(1 for r in d["matrix"]["runs"] if r["state"] == "ok")')" = 8
R=$(echo "$body" | jq_ 'd["matrix"]["runs"][0]["id"]')
run=$(api GET "/api/v1/runs/$R")
diag "client: $(echo "$run" | jq_ 'd["run"]["client_command"]')"
diag "server: $(echo "$run" | jq_ 'd["run"]["server_command"]')"
check "the run shows the client command exactly (iperf3 -c to right's data address)" \
	pyck "$run" 'c=d["run"]["client_command"]; sys.exit(not ("iperf3 -c 198.19.20.2" in c and "timeout" in c))'
check "the run stores personas, versions, cookie, exit codes" pyck "$run" '
r=d["run"]
ok = r["client_os"] == "ubuntu" and r["server_os"] == "ubuntu" and r["client_version"].startswith("3.") \
  and len(r["cookie"] or "") == 36 and r["client_exit"] == 0 and r["server_exit"] == 0
sys.exit(not ok)'
check "the run stores intervals of both sides" pyck "$run" '
r=d["run"]; i=r["intervals"]
sys.exit(not (len(i["client"]) >= 2 and len(i["server"]) >= 2 and i["client"][0]["sum"]["bits_per_second"] > 0))'
check "the end summary keeps sender and receiver apart" pyck "$run" '
e=d["run"]["summary"]["client"]
sys.exit(not (e["sender"]["bits_per_second"] > 0 and e["receiver"]["bits_per_second"] > 0 and "cpu" in e))'
raw=$(curl -s -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/api/v1/runs/$R/raw?side=server")
check "the raw server output is iperf3's text" test -n "$(echo "$raw" | grep -E 'bits/sec')"
live=$(python3 - "$DD/events.jsonl" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
first, end = {}, {}
for e in ev:
    d = e.get("data", {}).get("data", {})
    if e["event"] == "run.interval":
        first.setdefault((d["run"], d["side"]), e["t"])
    if e["event"] == "run.state" and d.get("state") == "ok":
        end[d["run"]] = e["t"]
# a run of 2 s: its first interval must arrive well before the run ends
live = [r for r in end if min(first.get((r, "client"), 1e18), first.get((r, "server"), 1e18)) < end[r] - 0.5]
print(len(end), len(live), len({k for k in first if k[1] == "server"}))
EOF
)
diag "runs ended, runs with intervals seen live, runs with server intervals: $live"
check "intervals arrived on the event stream while every run was in progress" test "$(echo "$live" | cut -d' ' -f1-2)" = "8 8"
res=$(api GET "/api/v1/matrices/$M1/results")
check "results: 4 cells with n = 2 and medians" pyck "$res" '
c=d["cells"]
sys.exit(not (len(c) == 4 and all(x["n"] == 2 and x["receiver_bps"]["median"] > 0 for x in c)))'
csv=$(curl -s -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/api/v1/matrices/$M1/results?format=csv")
check "results as CSV: a header and 8 rows" test "$(echo "$csv" | grep -c .)" = 9
check "no iperf3 left after the matrix" no_iperf_left
# runs 1-7 started in the standby shells the run before opened on their ends (run_ahead.h)
sb=$(curl -s -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/metrics" | sed -n 's/^testbedd_ssh_standby_commands_total //p')
diag "commands started in a standby shell: $sb"
check "the later runs' commands started in standby shells (metrics: $sb >= 7)" test "${sb:-0}" -ge 7
# each run's idle check was made by its own two commands (run_idle.h): none apart.  A look in the
# commands that never reports falls back to separate looks after 8 s: every run still passes, so
# only this count shows it
lk=$(curl -s -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/metrics")
lin=$(echo "$lk" | sed -n 's/^testbedd_run_idle_looks_total{how="in_commands"} //p')
lap=$(echo "$lk" | sed -n 's/^testbedd_run_idle_looks_total{how="apart"} //p')
check "the 8 runs' idle checks were made in their own commands (metrics: in_commands $lin = 8, apart $lap = 0)" \
	test "${lin:-x}" = 8 -a "${lap:-x}" = 0
# runs 1-7: each one's server started in the last second of the run before (run_early.h), run 0's
# as soon as left and right were ready (the router's metadata still being taken); none unused
ahu=$(echo "$lk" | sed -n 's/^testbedd_run_servers_ahead_total{how="used"} //p')
ahs=$(echo "$lk" | sed -n 's/^testbedd_run_servers_ahead_total{how="stopped"} //p')
check "the 8 runs used their servers started ahead (metrics: used $ahu = 8, stopped $ahs = 0)" \
	test "${ahu:-x}" = 8 -a "${ahs:-x}" = 0
# a pause between runs: run 1's server is not started ahead (it would wait out the pause); run 0's is
body=$(api POST /api/v1/matrices '{"name":"paused","pairs":[{"client":"left","server":"right"}],"duration_s":1,"repeats":2,"pause_s":1}')
MP=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "matrix $MP (pause_s 1, two runs of 1 s) succeeds" wait_state "$MP" succeeded
ahu=$(curl -s -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/metrics" | sed -n 's/^testbedd_run_servers_ahead_total{how="used"} //p')
check "with a pause only its run 0 used a server started ahead (metrics: used $ahu = 9)" test "${ahu:-x}" = 9

# ---- 1b. what each host was: the metadata snapshot ----
hosts=$(api GET "/api/v1/matrices/$M1/hosts")
check "hosts: 200 with left and right as ubuntu and the router as freebsd" pyck "$hosts" '
got = sorted((h["host"], h["os"]) for h in d["hosts"]); print("#", got)
sys.exit(got != [("left", "ubuntu"), ("right", "ubuntu"), ("router", "freebsd")])'
check "left: kernel, OS release, CPU, memory, NIC data0 (veth), TCP settings" pyck "$hosts" '
h = [h for h in d["hosts"] if h["host"] == "left"][0]; m = h["metadata"]; n = m.get("nic", {}); t = m.get("tcp", {})
print("#", m.get("release"), m.get("os"), m.get("cpu"), n.get("driver"), n.get("mtu"), t.get("congestion_control"))
sys.exit(not (m["kind"] == "linux" and m["release"] == "6.8.0-134-generic" and m["os"]["name"] == "Ubuntu 24.04.4 LTS"
 and m["cpu"]["count"] >= 1 and m["memory_bytes"] > 0 and h["interface"] == "data0" and n["interface"] == "data0"
 and n["driver"] == "veth" and n["mtu"] > 0 and t["congestion_control"] in t["congestion_available"]
 and len(t["rmem"]) == 3 and m["forwarding"]["ipv4"] is False
 and h["command"].startswith("ssh root@") and "sh -c" in h["command"] and "ethtool -i" in h["command"]))'
# taken in the same exec as the tools' versions before the first run (the command shown is the one that ran)
check "left's metadata came with its iperf3 --version, in one command" pyck "$hosts" '
h = [h for h in d["hosts"] if h["host"] == "left"][0]; print("#", h["command"][:160])
sys.exit(not ("iperf3 --version" in h["command"] and "@@testbedd-metadata" in h["command"]))'
check "the router: FreeBSD 14.1, forwarding on, its NIC and socket-buffer sysctls" pyck "$hosts" '
h = [h for h in d["hosts"] if h["host"] == "router"][0]; m = h["metadata"]; t = m.get("tcp", {})
print("#", m.get("release"), m.get("forwarding"), m.get("nic", {}).get("interface"), t)
sys.exit(not (m["kind"] == "freebsd" and m["release"] == "14.1-RELEASE-p5" and m["forwarding"]["ipv4"] is True
 and m["freebsd_version"]["kernel"] == "14.1-RELEASE-p5" and t["maxsockbuf"] > 0 and t["congestion_control"]
 and m["nic"]["interface"] == "ix0" and m["nic"]["mtu"] > 0))'
raw=$(api GET "/api/v1/matrices/$M1/hosts/raw?host=router&os=freebsd")
check "the raw output of a snapshot, section by section" sh -c "test '$(st)' = 200 && printf '%s' \"\$1\" | grep -q '^@@testbedd-section sysctl'" _ "$raw"
check "the raw output starts with the kind the host's uname picked" sh -c "printf '%s' \"\$1\" | head -n 1 | grep -qx '@@testbedd-kind freebsd'" _ "$raw"
raw=$(api GET "/api/v1/matrices/$M1/hosts/raw?host=left&os=ubuntu")
check "left's raw output: its metadata only (no versions before the kind line)" sh -c "printf '%s' \"\$1\" | head -n 1 | grep -qx '@@testbedd-kind linux' && ! printf '%s' \"\$1\" | grep -q '^iperf 3'" _ "$raw"
api GET "/api/v1/matrices/$M1/hosts/raw?host=router&os=ubuntu" >/dev/null
check "raw of a host and OS the matrix did not see: 404" test "$(st)" = 404
api GET "/api/v1/matrices/999999/hosts" >/dev/null
check "hosts of an unknown matrix: 404" test "$(st)" = 404
out=$("$TBCTL" matrix hosts "$M1" 2>&1)
diag "$(echo "$out" | head -n 2)"
check "tbctl matrix hosts: a row per host and OS with release, NIC driver and congestion control" sh -c '
printf "%s\n" "$1" | head -n 1 | grep -q "^HOST  *OS  *RELEASE" &&
printf "%s\n" "$1" | grep -Eq "^left +ubuntu +6\.8\.0-134-generic .* data0 +veth " &&
printf "%s\n" "$1" | grep -Eq "^router +freebsd +14\.1-RELEASE-p5 .* ix0 " &&
test "$(printf "%s\n" "$1" | wc -l)" = 4' _ "$out"
"$TBCTL" matrix hosts 999999 >/dev/null 2>&1
check "tbctl matrix hosts of an unknown matrix exits 2" test $? = 2

# ---- 2. cancel mid-run keeps the partial result ----
body=$(api POST /api/v1/matrices '{"name":"cancel","pairs":[{"client":"left","server":"right"}],"duration_s":8,"repeats":2}')
M2=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "matrix $M2 runs" wait_run "$M2" 0 running
sleep 3
api POST "/api/v1/matrices/$M2/cancel" >/dev/null
check "cancel: 200" test "$(st)" = 200
check "matrix $M2 ends canceled" wait_state "$M2" canceled
body=$(api GET "/api/v1/matrices/$M2")
R=$(echo "$body" | jq_ 'd["matrix"]["runs"][0]["id"]')
run=$(api GET "/api/v1/runs/$R")
check "the canceled run is kept, marked canceled, with its partial intervals" pyck "$run" '
r=d["run"]
sys.exit(not (r["state"] == "canceled" and r["error_class"] == "canceled" and 1 <= len(r["intervals"]["client"]) < 8))'
check "the run not started stays pending" test "$(run_state "$M2" 1)" = pending
check "no iperf3 left after the cancel" no_iperf_left

# a cancel in a run's last second, after the next run's server started ahead (two iperf3
# servers on right: this run's and the next one's): that one is stopped by pid, nothing left
servers_on_right() {	# iperf3 servers in right's namespace: one fork (ip), the rest bash builtins
	local p n=0 av
	for p in $(ip netns pids "$PFX-right" 2>/dev/null); do
		mapfile -d '' -t av 2>/dev/null </proc/$p/cmdline || continue
		[ "${av[0]:-}" = iperf3 ] && [ "${av[1]:-}" = -s ] && n=$((n + 1))
	done
	echo $n
}
# until both run 0's server and the one started ahead for run 1 are there: only in run 0's
# last second (the kick comes at its 7th server interval of 8; run 1, the last, has none)
two_servers() {
	for _ in $(seq 500); do # about 12 s: run 0 is 8 s
		[ "$(servers_on_right)" -ge 2 ] && return 0
		sleep 0.02
	done
	diag "run 0 is $(run_state "$M2B" 0); iperf3 servers on right: $(servers_on_right)"
	return 1
}
body=$(api POST /api/v1/matrices '{"name":"cancel-ahead","pairs":[{"client":"left","server":"right"}],"duration_s":8,"repeats":2}')
M2B=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "matrix $M2B runs" wait_run "$M2B" 0 running
check "in run 0's last second the next run's server listens beside its own on right" two_servers
api POST "/api/v1/matrices/$M2B/cancel" >/dev/null
check "matrix $M2B ends canceled" wait_state "$M2B" canceled
check "run 1 never ran: pending" test "$(run_state "$M2B" 1)" = pending
ahs=$(curl -s -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/metrics" | sed -n 's/^testbedd_run_servers_ahead_total{how="stopped"} //p')
check "the server started ahead for run 1 was stopped unused (metrics: stopped $ahs = 1)" test "${ahs:-x}" = 1
check "no iperf3 left after that cancel" no_iperf_left

# ---- 3. kill -9 mid-run, restart, resume ----
body=$(api POST /api/v1/matrices '{"name":"crash","pairs":[{"client":"left","server":"right"}],"directions":["forward","reverse"],"duration_s":3,"repeats":2}')
M3=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "matrix $M3: the second run starts" wait_run "$M3" 1 running 30
sleep 1.5
before=$(api GET "/api/v1/matrices/$M3" | jq_ '[(r["id"], r["state"], r["finished_at"]) for r in d["matrix"]["runs"]]')
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
check "testbedd restarts on the same state" daemon_again "$S/inventory.yaml" --probe-interval 2
check "the matrix is interrupted" test "$(mstate "$M3")" = interrupted
check "the run in flight is interrupted, the completed one kept" \
	test "$(run_state "$M3" 0)/$(run_state "$M3" 1)" = ok/interrupted
check "no iperf3 left on any host after the restart" no_iperf_left
api POST "/api/v1/matrices/$M3/resume" >/dev/null
check "resume: 200" test "$(st)" = 200
check "matrix $M3 completes" wait_state "$M3" succeeded
after=$(api GET "/api/v1/matrices/$M3" | jq_ '[(r["id"], r["state"], r["finished_at"]) for r in d["matrix"]["runs"]]')
diag "before: $before"
diag "after:  $after"
check "same run ids, 4 runs, all ok" test "$(echo "$after" | grep -o "'ok'" | wc -l)" = 4
check "the run completed before the crash was not repeated" test \
	"$(echo "$before" | python3 -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read())[0])')" = \
	"$(echo "$after" | python3 -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read())[0])')"
check "no iperf3 left after the resume" no_iperf_left

# ---- 4. a loss profile on the router shows up as UDP loss ----
# (a UDP test whose setup datagram is dropped moves no data: such a run fails,
# so three repeats and the median of those that ran)
"$SIM" link --prefix "$PFX" --loss 3 >/dev/null
body=$(api POST /api/v1/matrices '{"name":"loss","pairs":[{"client":"left","server":"right"}],"protocols":["udp"],"duration_s":3,"repeats":3,"iperf":{"udp_bitrate":"10M"}}')
M4=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "matrix $M4 ends" wait_state "$M4" succeeded failed
loss=$(api GET "/api/v1/matrices/$M4/results" | jq_ 'd["cells"][0]["lost_percent"]["median"]')
diag "UDP 10 Mbit/s through a 3 % loss profile: median lost_percent $loss"
check "UDP loss shows the profile (1..6 %)" awk -v l="${loss:-0}" 'BEGIN { exit !(l >= 1 && l <= 6) }'
"$SIM" link --prefix "$PFX" --loss 0 >/dev/null

# ---- 4b. the CI gate: a loss profile lowers the UDP cell against its baseline ----
GSPEC="$DD/gate.json"
echo '{"name":"gate","pairs":[{"client":"left","server":"right"}],"protocols":["udp"],"duration_s":2,"repeats":2,"iperf":{"udp_bitrate":"40M"}}' >"$GSPEC"
GA=$(api POST /api/v1/matrices "$(cat "$GSPEC")" | jq_ 'd["matrix"]["id"]')
check "baseline matrix $GA succeeds" wait_state "$GA" succeeded
"$TBCTL" matrix run "$GSPEC" --wait --quiet --baseline "$GA" --max-drop 5 >"$DD/gate-pass.out" 2>&1
rc=$?
diag "$(tail -n 3 "$DD/gate-pass.out")"
check "tbctl matrix run --baseline: the same testbed passes the gate (exit 0)" test "$rc" = 0
GB=$(head -n 1 "$DD/gate-pass.out")
# what changed between two matrices: right's congestion control, set behind testbedd's back
cc_before=$(ip netns exec "$PFX-right" sysctl -n net.ipv4.tcp_congestion_control)
ip netns exec "$PFX-right" sysctl -qw net.ipv4.tcp_congestion_control=reno
GR=$(api POST /api/v1/matrices "$(cat "$GSPEC")" | jq_ 'd["matrix"]["id"]')
check "matrix $GR succeeds with right on reno" wait_state "$GR" succeeded
ip netns exec "$PFX-right" sysctl -qw net.ipv4.tcp_congestion_control="$cc_before"
body=$(api GET "/api/v1/matrices/$GR/hosts/diff?other=$GA")
check "hosts diff: right's congestion control differs (reno vs $cc_before), nothing else of left or right" pyck "$body" '
h = {(x["host"], x["os"]): x for x in d["diff"]["hosts"]}; print("#", h.get(("right", "ubuntu")))
r = h[("right", "ubuntu")]; l = h[("left", "ubuntu")]
sys.exit(not (r["in"] == "both" and r["differences"] == [{"path": "tcp.congestion_control", "matrix": "reno", "other": "'"$cc_before"'"}]
 and l["differences"] == [] and d["diff"]["matrix"] == '"$GR"' and d["diff"]["other"] == '"$GA"'))'
out=$("$TBCTL" matrix hosts "$GR" --diff "$GA" 2>&1)
diag "$out"
check "tbctl matrix hosts --diff: the one difference, both values" sh -c '
printf "%s\n" "$1" | grep -Eq "^right +ubuntu +tcp\.congestion_control +reno +$2" &&
printf "%s\n" "$1" | tail -n 1 | grep -q "1 difference$"' _ "$out" "$cc_before"
api GET "/api/v1/matrices/$GR/hosts/diff" >/dev/null
check "hosts diff without other: 400" test "$(st)" = 400
api GET "/api/v1/matrices/$GR/hosts/diff?other=999999" >/dev/null
check "hosts diff with an unknown other: 404" test "$(st)" = 404
body=$(api GET "/api/v1/matrices/$GB/compare?baseline=$GA&max_drop=5")
check "compare (curl): 200, pass, one cell compared, verdict ok" pyck "$body" '
c=d["compare"]; r=c["cells"][0]
sys.exit(not (c["pass"] is True and c["compared"] == 1 and c["dropped"] == [] and r["verdict"] == "ok"
 and r["cell"] == 0 and r["baseline_cell"] == 0 and abs(r["change_pct"]) < 5))'
"$SIM" link --prefix "$PFX" --loss 25 >/dev/null
"$TBCTL" matrix run "$GSPEC" --wait --quiet --baseline "$GA" --max-drop 5 >"$DD/gate-fail.out" 2>&1
rc=$?
"$SIM" link --prefix "$PFX" --loss 0 >/dev/null
diag "$(tail -n 3 "$DD/gate-fail.out")"
check "tbctl matrix run --baseline: under 25 % loss the gate fails (exit 7) and lists the cell" \
	sh -c "test $rc = 7 && grep -Eq 'dropped|failed' '$DD/gate-fail.out' && grep -q FAIL '$DD/gate-fail.out'"
GC=$(head -n 1 "$DD/gate-fail.out")
body=$(api GET "/api/v1/matrices/$GC/compare?baseline=$GA&max_drop=5")
check "compare (curl): the cell dropped by about the loss" pyck "$body" '
c=d["compare"]; r=c["cells"][0]; print("#", r["verdict"], r["change_pct"], r["median"], r["baseline_median"])
sys.exit(not (c["pass"] is False and c["dropped"] == [0] and (r["verdict"] == "failed" or -75 < r["change_pct"] < -10)))'
"$TBCTL" matrix compare "$GB" --baseline "$GA" --max-drop 5 >/dev/null 2>&1
check "tbctl matrix compare: exit 0 for the passing matrix" test $? = 0
api GET "/api/v1/matrices/$GB/compare?baseline=999999" >/dev/null
check "compare against an unknown baseline: 404" test "$(st)" = 404
api GET "/api/v1/matrices/$GB/compare?baseline=$GA&max_drop=abc" >/dev/null
check "compare with a bad max_drop: 400" test "$(st)" = 400

# ---- 6. rounds: two disjoint pairs run at once, each on its own port ----
RSPEC='{"name":"rounds","pairs":[{"client":"left","server":"right"},{"client":"router","server":"relay","link":"mgmt"}],"duration_s":3,"repeats":2}'
body=$(api POST /api/v1/matrices/plan "$RSPEC")
check "plan: 4 runs in 2 rounds, a timeline of 2 rounds of 2 runs, estimated as 2 runs" pyck "$body" '
p = d["plan"]; print("#", p["rounds"], p["estimated_s"], p["timeline"])
sys.exit(not (p["runs"] == 4 and p["rounds"] == 2 and [r["round"] for r in p["plan"]] == [0, 0, 1, 1]
 and [t["runs"] for t in p["timeline"]] == [[0, 1], [2, 3]] and abs(p["estimated_s"] - 2 * 3.6) < 1e-6))'
MR=$(api POST /api/v1/matrices "$RSPEC" | jq_ 'd["matrix"]["id"]')
check "matrix $MR succeeds" wait_state "$MR" succeeded
body=$(api GET "/api/v1/matrices/$MR")
check "the runs of a round ran at the same time, on different ports; rounds one after the other" pyck "$body" '
rs = sorted(d["matrix"]["runs"], key=lambda r: r["seq"])
for r in rs: print("#", r["seq"], r["round"], r["client"], r["server"], r["state"], r["started_at"], r["finished_at"])
ok = all(r["state"] == "ok" for r in rs) and [r["round"] for r in rs] == [0, 0, 1, 1]
for a, b in ((rs[0], rs[1]), (rs[2], rs[3])):
    ok = ok and a["started_at"] < b["finished_at"] and b["started_at"] < a["finished_at"]
ok = ok and max(rs[0]["finished_at"], rs[1]["finished_at"]) <= min(rs[2]["started_at"], rs[3]["started_at"])
sys.exit(not ok)'
ports=$(for seq in 0 1; do api GET "/api/v1/runs/$(api GET "/api/v1/matrices/$MR" | jq_ "[r['id'] for r in d['matrix']['runs'] if r['seq'] == $seq][0]")" | jq_ 'd["run"]["port"]'; done | sort -u | wc -l)
check "the two runs of round 0 used two server ports" test "$ports" = 2
check "no iperf3 left after the rounds" no_iperf_left

# ---- 6b. concurrency "pairs": a server of two clients at once (fan-in), each on its own port ----
FSPEC='{"name":"fanin","pairs":[{"client":"left","server":"right"},{"client":"router","server":"right"}],"duration_s":3,"concurrency":"pairs"}'
body=$(api POST /api/v1/matrices/plan "$FSPEC")
check "plan: right is the server of both runs of one round" pyck "$body" '
p = d["plan"]; print("#", p["concurrency"], p["rounds"], [(r["client"], r["server"], r["round"]) for r in p["plan"]])
sys.exit(not (p["concurrency"] == "pairs" and p["rounds"] == 1 and [r["server"] for r in p["plan"]] == ["right", "right"]))'
MF=$(api POST /api/v1/matrices "$FSPEC" | jq_ 'd["matrix"]["id"]')
check "matrix $MF succeeds" wait_state "$MF" succeeded
body=$(api GET "/api/v1/matrices/$MF")
check "both clients ran to right at the same time" pyck "$body" '
rs = sorted(d["matrix"]["runs"], key=lambda r: r["seq"])
for r in rs: print("#", r["seq"], r["client"], r["server"], r["state"], r["started_at"], r["finished_at"])
a, b = rs
sys.exit(not (a["state"] == b["state"] == "ok" and a["started_at"] < b["finished_at"] and b["started_at"] < a["finished_at"]))'
ports=$(for seq in 0 1; do api GET "/api/v1/runs/$(api GET "/api/v1/matrices/$MF" | jq_ "[r['id'] for r in d['matrix']['runs'] if r['seq'] == $seq][0]")" | jq_ 'd["run"]["port"]'; done | sort -u | wc -l)
check "... on two server ports of right" test "$ports" = 2
check "no iperf3 left after the fan-in" no_iperf_left

# ---- 4b. right's iperf3 cannot listen: every port the runs take is held ----
# (iperf3's "Server listening on PORT" line is the listen signal; a server that exits
# before it says so is a server that did not listen, and "in use" tries another port)
ip netns exec "$PFX-right" python3 -c '
import socket, time
held = []
for port in range(5201, 6001):
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the earlier runs TIME_WAIT
    s.bind(("::", port))
    s.listen(1)
    held.append(s)
print("held", flush=True)
time.sleep(90)' >"$S/ports-held" 2>&1 &
HOLD=$!
for _ in $(seq 50); do grep -q held "$S/ports-held" && break; sleep 0.1; done
check "ports 5201-6000 of right are held" grep -q held "$S/ports-held"
M4=$(api POST /api/v1/matrices '{"name":"nolisten","pairs":[{"client":"left","server":"right"}],"duration_s":2}' | jq_ 'd["matrix"]["id"]')
check "matrix $M4 ends failed" wait_state "$M4" failed
check "its run failed as iperf_error after 4 tries: the server did not listen, in iperf3's words" pyck "$(api GET "/api/v1/matrices/$M4")" '
r = d["matrix"]["runs"][0]; print("#", r["attempts"], r["error_message"])
sys.exit(not (r["error_class"] == "iperf_error" and r["attempts"] == 4 and "did not listen on port" in r["error_message"]
              and "Address already in use" in r["error_message"]))'
R4=$(api GET "/api/v1/matrices/$M4" | jq_ 'd["matrix"]["runs"][0]["id"]')
check "the server command polls nothing: iperf3 says when it listens" pyck "$(api GET "/api/v1/runs/$R4")" '
c = d["run"]["server_command"]; print("#", c)
sys.exit(not ("iperf3 -s" in c and "ss -H" not in c and "until" not in c))'
kill "$HOLD"
wait "$HOLD" 2>/dev/null
check "no iperf3 left after the failed starts" no_iperf_left

# ---- 5. sshd stopped on the server mid-run: ssh_error, the matrix goes on ----
# (8 s runs: the kill lands mid-run even when the machine is loaded; with 4 s a
# slow poll and a slow walk over the namespace's pids once came after the run)
body=$(api POST /api/v1/matrices '{"name":"sshd","pairs":[{"client":"left","server":"right"},{"client":"left","server":"router","link":"lan10"}],"duration_s":8}')
M5=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "matrix $M5 runs" wait_run "$M5" 0 running
sleep 1.5
for p in $(ip netns pids "$PFX-right"); do
	[ "$(ps -o comm= -p "$p" 2>/dev/null)" = sshd ] && kill -TERM "$p"
done
check "matrix $M5 ends failed" wait_state "$M5" failed
body=$(api GET "/api/v1/matrices/$M5")
check "the run on right failed as ssh_error with the reason" pyck "$body" '
r=d["matrix"]["runs"]; print("#", r[0]["error_message"])
sys.exit(not (r[0]["state"] == "failed" and r[0]["error_class"] == "ssh_error" and r[0]["error_message"]))'
check "the matrix went on: the run on the router is ok" test "$(run_state "$M5" 1)" = ok
daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

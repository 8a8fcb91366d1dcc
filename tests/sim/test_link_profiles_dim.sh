#!/bin/sh
# Link profiles as a matrix dimension (issue 20 item 4) on the simulated
# testbed: a matrix sweeps [{"name": "20M", "rate": "20M"}, null] on left ->
# right through the router (its FreeBSD persona's ipfw stand-in: dummynet
# pipe 1 = a tc tbf on its ports).  The plan lists the router, each profile
# with its commands and the removal; a delay is refused in the plan naming
# link_profiles[0].delay_ms (this kernel has no netem).  The 20M cell's TCP
# run is capped near 20 Mbit/s while pipe 1 is in force (read on the router
# while it runs), the unshaped cell's is not (no pipe; more than twice the
# shaped run's rate, measured in the same matrix), each run stores its
# profile, and pipe 1 is gone afterwards.  A cancel mid-cell removes it too,
# and after kill -9 mid-cell the restarted testbedd removes it from its journal.
# Without a rule in the router's ruleset that sends packets into pipe 1 the
# run fails saying so (the pipe alone would shape nothing).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
# a sanitizer build: whole stacks in its report (jansson has no frame pointers)
export ASAN_OPTIONS=${ASAN_OPTIONS:-fast_unwind_on_malloc=0}

sim_testbedd tblp 211 2
both_answer
check "the router answers" wait_up router
R=$NET.50
pipe() { sshc "root@$R" ipfw pipe show; }
check "no pipe before the matrix" test -z "$(pipe)"

LP='[{"name":"20M","rate":"20M"},null]'
SPEC='{"name":"lp","pairs":[{"client":"left","server":"right"}],"duration_s":8,"link_profiles":'$LP'}'

# ---- the plan ----
body=$(api POST /api/v1/matrices/plan "$SPEC")
check "plan: 200" test "$(st)" = 200
check "plan: 2 runs, one per profile; the router, the commands, the removal" pyck "$body" '
p = d["plan"]; l = p["link_profiles"]; print("#", l["profiles"])
sys.exit(not (p["runs"] == 2 and [x["link_profile"] for x in p["plan"]] == [0, 1] and l["routers"] == ["router"]
 and l["profiles"][0]["profile"]["name"] == "20M" and l["profiles"][1]["profile"] is None
 and l["profiles"][0]["commands"][0] == "ipfw -q pipe 1 config bw 20000000bit/s"
 and "delete" in l["profiles"][1]["commands"][0] and "delete" in l["remove"]
 and [(x["first_seq"], x["last_seq"]) for x in l["profiles"]] == [(0, 0), (1, 1)]))'
bad=$(api POST /api/v1/matrices/plan '{"name":"x","pairs":[{"client":"left","server":"right"}],"link_profiles":[{"name":"geo","rate":"50M","loss_percent":0.5,"delay_ms":600}]}')
diag "$bad"
check "a delay: 400 naming link_profiles[0].delay_ms, with the reason (no netem)" pyck "$bad" '
e = d["error"]; sys.exit(not (e["field"] == "link_profiles[0].delay_ms" and "netem" in e["message"]))'
check "... the status is 400" test "$(st)" = 400
api POST /api/v1/matrices/plan '{"name":"x","pairs":[{"client":"left","server":"right"}],"link_profiles":[{"name":"a","bogus":1}]}' >/dev/null
check "an unknown field: 400" test "$(st)" = 400

# ---- run it, reading pipe 1 on the router while each run runs ----
M=$(api POST /api/v1/matrices "$SPEC" | jq_ 'd["matrix"]["id"]')
pipe_line() { pipe | head -n 1 | tr -s ' '; }
watch_runs "$M" pipe_line "$DD/seen" 600
diag "seen: $(sort -u "$DD/seen" | tr '\n' ';')"
check "matrix $M succeeded" test "$(mstate "$M")" = succeeded
check "while run 0 ran: pipe 1 at 20 Mbit/s on the router" grep -q "^0 00001: 20.000 Mbit/s" "$DD/seen"
check "while run 1 ran: no pipe" sh -c "grep -q '^1' '$DD/seen' && ! grep -q '^1 00001' '$DD/seen'"
# a run after one with a link profile gets no server started ahead (run_early.h: the profile
# is changed between the runs)
ahu=$(curl -s -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" "$TESTBEDD_URL/metrics" | sed -n 's/^testbedd_run_servers_ahead_total{how="used"} //p')
check "run 1 (after a link profile's run) had no server started ahead (metrics: used $ahu = 0)" test "${ahu:-x}" = 0
check "afterwards: no pipe on the router" test -z "$(pipe)"
check "afterwards: sim status says rate none" test "$("$SIM" status --prefix "$PFX" --json | jq_ 'd["link"]["rate"]')" = none
ids=$(api GET "/api/v1/matrices/$M" | jq_ '" ".join(str(r["id"]) for r in sorted(d["matrix"]["runs"], key=lambda r: r["seq"]))')
read -r R0 R1 <<<"$ids"
check "run 0 (20M) capped near 20 Mbit/s; run 1 (unshaped) more than twice as fast; each stores its profile" pyck "[$(api GET "/api/v1/runs/$R0"), $(api GET "/api/v1/runs/$R1")]" '
r = [x["run"] for x in d]; a, b = r[0]["receiver_bps"], r[1]["receiver_bps"]
p0, p1 = r[0]["params"].get("link_profile"), r[1]["params"].get("link_profile"); print("#", a, b, p0, p1)
sys.exit(not (10e6 < a <= 21e6 and b > 2 * a and p0["name"] == "20M" and p0["rate_bps"] == 20e6
 and p0["routers"] == ["router"] and p1["name"] is None and p1["index"] == 1))'

# ---- a cancel mid-cell: pipe 1 goes with the matrix ----
M2=$(api POST /api/v1/matrices '{"name":"lpc","pairs":[{"client":"left","server":"right"}],"duration_s":20,"link_profiles":[{"name":"10M","rate":"10M","loss_percent":1}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M2 run 0 runs" wait_run "$M2" 0 running
out=$(pipe)
diag "$(printf '%s\n' "$out" | head -n 2 | tr '\n' ';')"
check "pipe 1 at 10 Mbit/s, plr 0.01 while it runs" sh -c 'printf "%s\n" "$1" | grep -q "^00001:  10.000 Mbit/s" && printf "%s\n" "$1" | grep -q "plr 0.010000"' _ "$out"
api POST "/api/v1/matrices/$M2/cancel" >/dev/null
check "matrix $M2 ends canceled" wait_state "$M2" canceled
check "after the cancel: no pipe on the router" test -z "$(pipe)"

# ---- kill -9 mid-cell, restart: the journal's row removes the pipe ----
M3=$(api POST /api/v1/matrices '{"name":"lpk","pairs":[{"client":"left","server":"right"}],"duration_s":20,"link_profiles":[{"name":"20M","rate":"20M"}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M3 run 0 runs" wait_run "$M3" 0 running
check "pipe 1 at 20 Mbit/s mid-cell" sh -c 'printf "%s\n" "$1" | grep -q "^00001:  20.000 Mbit/s"' _ "$(pipe)"
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
check "after kill -9 the pipe is still there" test -n "$(pipe)"
check "testbedd restarts on the same state" daemon_again "$S/inventory.yaml" --probe-interval 2
for _ in $(seq 100); do [ -z "$(pipe)" ] && break; sleep 0.2; done
check "after the restart: no pipe on the router (from the journal)" test -z "$(pipe)"
check "testbedd logged the removal after the crash" grep -q "the link profile of matrix $M3 removed on router after a crash" "$DD/log"
# ---- the router's ruleset sends nothing into pipe 1: the run fails saying so ----
check "the router's ruleset has its two pipe 1 rules" test "$(sshc "root@$R" ipfw list | grep -c ' pipe 1 ')" = 2
sshc "root@$R" ipfw -q delete 100 110
M4=$(api POST /api/v1/matrices '{"name":"lpr","pairs":[{"client":"left","server":"right"}],"duration_s":1,"link_profiles":[{"name":"20M","rate":"20M"}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M4 ends failed" wait_state "$M4" failed
body=$(api GET "/api/v1/runs/$(api GET "/api/v1/matrices/$M4" | jq_ 'd["matrix"]["runs"][0]["id"]')")
diag "$(echo "$body" | jq_ 'd["run"]["error_class"] + ": " + d["run"]["error_message"]')"
check "its run failed as link_profile_error: no ipfw rule sends packets into pipe 1" pyck "$body" '
r = d["run"]; sys.exit(not (r["error_class"] == "link_profile_error" and "no ipfw rule sends packets into pipe 1" in r["error_message"]))'
check "after it: no pipe on the router" test -z "$(pipe)"
sshc "root@$R" ipfw -q add 100 pipe 1 ip from any to any out xmit ix0
check "no iperf3 left on the hosts" no_iperf_left
# stopped here so that a sanitizer build's report (leaks come at exit) is in the log
daemon_down
check "testbedd's log has no sanitizer report" bash -c "! grep -A30 'Sanitizer' '$DD/log'"
finish

#!/bin/sh
# Link profiles on a Linux router (issue 20 item 4: "tc (tbf, netem) on a
# Linux one"): the sim comes up with --router-linux, so its router answers
# as Ubuntu and testbedd shapes it with the real tc on its link interfaces
# (ix0, ix1).  The plan lists each interface's tc command and the read back;
# a delay is refused in the plan with the inventory's reason (the sim writes
# cannot_delay where the kernel has no netem).  A rate-only profile is a tbf
# on both ports while its run runs (read on the router) and caps TCP near
# its rate, the unshaped cell is not capped, nothing of ours is left after
# the matrix.  A loss profile needs netem: on a kernel without it the run
# fails as link_profile_error quoting tc, and on one with it the netem is in
# force (the test asks the kernel which it is).  kill -9 mid-cell: the
# restarted testbedd removes the qdiscs from its journal.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:-fast_unwind_on_malloc=0}

sim_up tblq 185 --router-linux || { nok "sim up"; finish; }
ok "sim up --router-linux (prefix $PFX)"
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts on the sim's inventory" test -n "$DPID"
both_answer
check "the router answers" wait_up router
check "... as ubuntu" test "$(answers router)" = ubuntu
R=$NET.50
qd() { sshc "root@$R" tc qdisc show; }
ours() { qd | grep -E '^qdisc (tbf|netem) ' || true; }
check "no qdisc of ours before the matrix" test -z "$(ours)"

SPEC='{"name":"lpl","pairs":[{"client":"left","server":"right"}],"duration_s":3,"link_profiles":[{"name":"20M","rate":"20M"},null]}'

# ---- the plan ----
body=$(api POST /api/v1/matrices/plan "$SPEC")
check "plan: 200" test "$(st)" = 200
check "plan: the router, tc on ix0 and ix1 with the read back, the removal" pyck "$body" '
l = d["plan"]["link_profiles"]; c = l["profiles"][0]["commands"]; n = l["profiles"][1]["commands"]; print("#", c, n)
sys.exit(not (l["routers"] == ["router"]
 and c[0] == "router: tc qdisc replace dev ix0 root handle 1: tbf rate 20000000bit burst 32768 limit 108468"
 and c[1].startswith("router: tc qdisc replace dev ix1 root handle 1: tbf") and c[2].startswith("router: tc qdisc show")
 and n[0] == "router: tc qdisc del dev ix0 root" and "tc qdisc del" in l["remove"]))'
check "GET /hosts/router gives the inventory's cannot_delay (the sim's kernel has no netem)" pyck "$(api GET /api/v1/hosts/router)" '
sys.exit(not "netem" in (d["host"].get("cannot_delay") or ""))'
bad=$(api POST /api/v1/matrices/plan '{"name":"x","pairs":[{"client":"left","server":"right"}],"link_profiles":[null,{"name":"geo","rate":"50M","loss_percent":0.5,"delay_ms":600}]}')
diag "$bad"
check "a delay: 400 naming link_profiles[1].delay_ms, with the inventory's reason" pyck "$bad" '
e = d["error"]; sys.exit(not (e["field"] == "link_profiles[1].delay_ms" and "cannot delay" in e["message"]
 and "netem" in e["message"] and "router" in e["message"]))'

# ---- run it, reading the qdiscs on the router while each run runs ----
M=$(api POST /api/v1/matrices "$SPEC" | jq_ 'd["matrix"]["id"]')
ours_line() { ours | tr -s ' ' | tr '\n' '|'; }
watch_runs "$M" ours_line "$DD/seen" 600
diag "seen: $(sort -u "$DD/seen" | tr '\n' ';')"
check "matrix $M succeeded" test "$(mstate "$M")" = succeeded
check "while run 0 ran: a 20 Mbit/s tbf on ix0 and on ix1" grep -q "^0 qdisc tbf 1: dev ix0 root refcnt [0-9]* rate 20Mbit .*|qdisc tbf 1: dev ix1 root refcnt [0-9]* rate 20Mbit" "$DD/seen"
check "while run 1 ran: nothing of ours" sh -c "grep -q '^1' '$DD/seen' && ! grep -q '^1 qdisc' '$DD/seen'"
check "afterwards: nothing of ours on the router" test -z "$(ours)"
ids=$(api GET "/api/v1/matrices/$M" | jq_ '" ".join(str(r["id"]) for r in sorted(d["matrix"]["runs"], key=lambda r: r["seq"]))')
read -r R0 R1 <<<"$ids"
check "run 0 (20M) capped near 20 Mbit/s; run 1 (unshaped) more than twice as fast" pyck "[$(api GET "/api/v1/runs/$R0"), $(api GET "/api/v1/runs/$R1")]" '
r = [x["run"] for x in d]; a, b = r[0]["receiver_bps"], r[1]["receiver_bps"]; print("#", a, b)
sys.exit(not (10e6 < a <= 21e6 and b > 2 * a and r[0]["params"]["link_profile"]["name"] == "20M"))'

# ---- a loss profile: netem, where the kernel has it ----
if unshare --net sh -c 'ip link set lo up && tc qdisc add dev lo root netem delay 1ms' >/dev/null 2>&1; then netem=1; else netem=0; fi
diag "this kernel has netem: $netem"
M2=$(api POST /api/v1/matrices '{"name":"lpn","pairs":[{"client":"left","server":"right"}],"duration_s":2,"link_profiles":[{"name":"l1","rate":"50M","loss_percent":1}]}' | jq_ 'd["matrix"]["id"]')
if [ "$netem" = 0 ]; then
	check "matrix $M2 ends failed" wait_state "$M2" failed
	r0=$(api GET "/api/v1/matrices/$M2" | jq_ 'd["matrix"]["runs"][0]["id"]')
	body=$(api GET "/api/v1/runs/$r0")
	diag "$(echo "$body" | jq_ 'd["run"]["error_class"] + ": " + d["run"]["error_message"]')"
	check "its run failed as link_profile_error naming the profile and quoting tc" pyck "$body" '
r = d["run"]; sys.exit(not (r["error_class"] == "link_profile_error" and "link_profiles[0] (l1)" in r["error_message"]
 and "tc qdisc exited with 2" in r["error_message"] and "Specified qdisc kind is unknown" in r["error_message"]))'
else
	check "matrix $M2 run 0 runs" wait_run "$M2" 0 running
	check "a netem with loss 1% and rate 50Mbit on ix0" sh -c 'printf "%s\n" "$1" | grep -q "netem 1: dev ix0 root .*loss 1% .*rate 50Mbit"' _ "$(ours)"
	check "matrix $M2 ends" wait_state "$M2" succeeded
fi
check "after it: nothing of ours on the router" test -z "$(ours)"

# ---- kill -9 mid-cell, restart: the journal's row removes the qdiscs ----
M3=$(api POST /api/v1/matrices '{"name":"lpk","pairs":[{"client":"left","server":"right"}],"duration_s":20,"link_profiles":[{"name":"20M","rate":"20M"}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M3 run 0 runs" wait_run "$M3" 0 running
check "a tbf on both ports mid-cell" test "$(ours | grep -c '^qdisc tbf 1: dev ix[01] root')" = 2
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
check "after kill -9 the tbfs are still there" test -n "$(ours)"
check "testbedd restarts on the same state" daemon_again "$S/inventory.yaml" --probe-interval 2
for _ in $(seq 100); do [ -z "$(ours)" ] && break; sleep 0.2; done
check "after the restart: nothing of ours on the router (from the journal)" test -z "$(ours)"
check "testbedd logged the removal after the crash" grep -q "the link profile of matrix $M3 removed on router after a crash" "$DD/log"
check "no iperf3 left on the hosts" no_iperf_left
daemon_down
check "testbedd's log has no sanitizer report" bash -c "! grep -A30 'Sanitizer' '$DD/log'"
finish

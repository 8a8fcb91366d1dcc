#!/bin/sh
# The router's link profile on the simulated testbed, and testbedd seeing it
# change (issue 20 item 4).  One mechanism: `sim link` writes dummynet pipe 1
# of the router's FreeBSD persona, which its `ipfw` stand-in shows in
# dummynet's format, and `ipfw pipe 1 config` over ssh sets what `sim
# status` shows and what tc/nft do on the router's data-plane ports (queue N:
# the tbf's limit, N full-size frames); delay is refused (this kernel has no
# netem).  Then two tiny UDP matrices with
# `sim link --loss 2` between them: the hosts diff of the second names the
# router's pipe, plr 0.02 (before the shaping section: "nothing changed").
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_testbedd tblk 251 2
both_answer
check "the router answers" wait_up router
R=$NET.50
ipfw_r() { sshc "root@$R" ipfw "$@"; }
nft_rule() { ip netns exec "$PFX-router" nft list table ip tbsim_link 2>/dev/null | grep -o 'mod 1000 < [0-9]*'; }
tbf_rate() { ip netns exec "$PFX-router" tc qdisc show dev "$1" | sed -n 's/^qdisc tbf .* rate \([^ ]*\) .*/\1/p'; }
status_link() { "$SIM" status --prefix "$PFX" --json | jq_ '(d["link"]["rate"], d["link"]["loss_pct"], d["link"]["delay_ms"])'; }

# ---- the stand-in and sim link: one pipe ----
check "kldstat -q -m dummynet: loaded on the router" sshc "root@$R" kldstat -q -m dummynet
check "no pipe before any profile" test -z "$(ipfw_r pipe show)"
check "sim link --rate 20mbit --loss 2" "$SIM" link --prefix "$PFX" --rate 20mbit --loss 2
out=$(ipfw_r pipe show)
diag "$(printf '%s\n' "$out" | head -n 2)"
check "ipfw pipe show: pipe 1 at 20 Mbit/s, plr 0.02, in dummynet's layout" sh -c '
printf "%s\n" "$1" | sed -n 1p | grep -qx "00001:  20.000 Mbit/s    0 ms burst 0" &&
printf "%s\n" "$1" | sed -n 2p | grep -q "^q131073  50 sl.plr 0.020000 0 flows (1 buckets) sched 65537 "' _ "$out"
check "ipfw pipe 1 show: the same" test "$(ipfw_r pipe 1 show)" = "$out"
check "ipfw pipe 2 show: nothing" test -z "$(ipfw_r pipe 2 show)"
check "ipfw -q pipe 1 config bw 10Mbit/s plr 0.05 (over ssh, as root)" ipfw_r -q pipe 1 config bw 10Mbit/s plr 0.05
check "sim status: the stand-in's profile (rate 10000000bit, loss 5, delay 0)" test "$(status_link)" = "('10000000bit', 5, 0)"
check "tc: a tbf at 10Mbit on ix0 and ix1" test "$(tbf_rate ix0) $(tbf_rate ix1)" = "10Mbit 10Mbit"
check "nft: the drop rule at 50 per mille" test "$(nft_rule)" = "mod 1000 < 50"
err=$(ipfw_r pipe 1 config bw 10Mbit/s delay 300 2>&1)
rc=$?
diag "$err"
check "ipfw pipe 1 config ... delay 300: refused (non-zero), naming netem" sh -c '[ "$1" != 0 ] && printf "%s" "$2" | grep -q "delay 300: refused: .*no netem"' _ "$rc" "$err"
check "... and the profile is as before" test "$(status_link)" = "('10000000bit', 5, 0)"
check "ipfw pipe 2 config: refused (the router has one profile, pipe 1)" test "$(ipfw_r pipe 2 config bw 1Mbit/s >/dev/null 2>&1; echo $?)" != 0
check "ipfw pipe 1 config plr 2: refused" test "$(ipfw_r pipe 1 config plr 2 >/dev/null 2>&1; echo $?)" != 0
check "ipfw pipe 1 config bw 10Mbit/s queue 20" ipfw_r pipe 1 config bw 10Mbit/s queue 20
check "ipfw pipe show: a 20-slot queue" sh -c 'printf "%s\n" "$1" | sed -n 2p | grep -q "^q131073  20 sl. 0 flows "' _ "$(ipfw_r pipe show)"
tbf_lat() { ip netns exec "$PFX-router" tc -j qdisc show dev "$1" | python3 -c 'import json,sys; print([q["options"]["lat"] for q in json.load(sys.stdin) if q["kind"] == "tbf"][0])'; }
check "tc: the tbf holds 20 full-size frames beyond its burst (latency 20 x 1514 B at 10 Mbit/s)" sh -c '
for d in "$@"; do [ $(( $d - 20 * 1514 * 8 * 1000000 / 10000000 )) -le 1 ] && [ $(( $d - 20 * 1514 * 8 * 1000000 / 10000000 )) -ge -1 ] || exit 1; done' _ "$(tbf_lat ix0)" "$(tbf_lat ix1)"
check "ipfw pipe 1 config queue 101: refused (2..100 slots)" test "$(ipfw_r pipe 1 config queue 101 >/dev/null 2>&1; echo $?)" != 0
check "ipfw pipe 1 delete" ipfw_r pipe 1 delete
check "after delete: ipfw pipe show is empty" test -z "$(ipfw_r pipe show)"
check "after delete: no tbf and no drop rule" test -z "$(tbf_rate ix0)$(nft_rule)"
check "after delete: sim status says rate none, loss 0" test "$(status_link)" = "('none', 0, 0)"
check "ipfw pipe 1 delete again: no such pipe (non-zero)" test "$(ipfw_r pipe 1 delete >/dev/null 2>&1; echo $?)" != 0

# ---- testbedd sees the profile change between two matrices ----
spec='{"name":"lp","pairs":[{"client":"left","server":"right"}],"protocols":["udp"],"duration_s":1,"repeats":1,"iperf":{"udp_bitrate":"5M"}}'
A=$(api POST /api/v1/matrices "$spec" | jq_ 'd["matrix"]["id"]')
check "matrix $A (no profile) succeeds" wait_state "$A" succeeded
check "sim link --loss 2" "$SIM" link --prefix "$PFX" --loss 2
B=$(api POST /api/v1/matrices "$spec" | jq_ 'd["matrix"]["id"]')
# 2 % loss may hit iperf3's control connection: the snapshot is taken either way
check "matrix $B (2 % loss) ends" wait_state "$B" succeeded failed
"$SIM" link --prefix "$PFX" --loss 0 >/dev/null
body=$(api GET "/api/v1/matrices/$B/hosts/diff?other=$A")
check "hosts diff: 200" test "$(st)" = 200
check "hosts diff: the router's one difference, pipe 1 with plr 0.02 (no pipe before)" pyck "$body" '
h = {(x["host"], x["os"]): x for x in d["diff"]["hosts"]}; r = h[("router", "freebsd")]; print("#", r)
x = r["differences"]
sys.exit(not (r["in"] == "both" and len(x) == 1 and x[0]["path"] == "shaping.pipes.1" and x[0]["other"] is None
 and abs(x[0]["matrix"]["plr"] - 0.02) < 1e-9 and x[0]["matrix"]["bw_bps"] == 0))'
check "hosts diff: left and right (Linux: tc qdisc show) unchanged" pyck "$body" '
sys.exit(not all(x["differences"] == [] for x in d["diff"]["hosts"] if x["host"] != "router"))'
snap=$(api GET "/api/v1/matrices/$B/hosts")
check "matrix $B's router snapshot: shaping.pipes.1 (bw unlimited, plr 0.02)" pyck "$snap" '
m = [h for h in d["hosts"] if h["host"] == "router"][0]["metadata"]; p = m["shaping"]["pipes"]["1"]; print("#", p)
sys.exit(not (p["bw_bps"] == 0 and abs(p["plr"] - 0.02) < 1e-9 and "errors" not in m))'
finish

#!/bin/sh
# A UDP run whose connect datagram is lost (the demo's `-u -b 0` matrix after
# `sim link --loss 2`): iperf3's TCP control connection connects, its UDP
# "connect" datagram (or the reply) is dropped, so no stream connects and the
# client waits until the run's remote timeout(1) stops it (exit 124).  The run
# must say so, error class timeout, "stopped by timeout ... with no stream
# connected" and iperf3's own words, not a parse error of iperf3's empty sums
# (0 bytes in 0 s, bits_per_second null).  Nothing was measured and one
# datagram lost on a lossy link is chance: the run is tried once more
# (attempts 2); when the loss was passing, the second attempt is the result.
#
# Only UDP is dropped (an nftables table of this test's own in the sim's
# router namespace, gone with the sim): `sim link --loss 100` would drop the
# TCP control connection too, and that is iperf3's "unable to connect to
# server: Connection timed out" after --connect-timeout, a different failure.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_testbedd tbul 252 2
both_answer
udp_drop() { ip netns exec "$PFX-router" nft -f - <<'NFT'
table ip tbul_udp { chain udplost { type filter hook forward priority 0; policy accept; meta l4proto udp counter drop; }; }
NFT
}
udp_dropped() { ip netns exec "$PFX-router" nft list table ip tbul_udp | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p'; }
udp_undrop() { ip netns exec "$PFX-router" nft delete table ip tbul_udp; }
wait_dropped() {	# the first UDP datagram (iperf3's connect) was dropped
	for _ in $(seq 300); do [ "$(udp_dropped)" -gt 0 ] 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
spec='{"name":"udplost","pairs":[{"client":"left","server":"right"}],"protocols":["udp"],"duration_s":2,"repeats":1,"iperf":{"udp_bitrate":"0"}}'

# ---- the same matrix on a clean link: ok ----
A=$(api POST /api/v1/matrices "$spec" | jq_ 'd["matrix"]["id"]')
check "matrix $A (clean link) succeeds" wait_state "$A" succeeded

# ---- UDP dropped on the router: no stream connects ----
check "the router drops every forwarded UDP packet" udp_drop
B=$(api POST /api/v1/matrices "$spec" | jq_ 'd["matrix"]["id"]')
WAIT=90 check "matrix $B (UDP dropped) fails" wait_state "$B" failed
body=$(api GET "/api/v1/matrices/$B")
R=$(echo "$body" | jq_ 'd["matrix"]["runs"][0]["id"]')
run=$(api GET "/api/v1/runs/$R")
diag "client: $(echo "$run" | jq_ 'd["run"]["client_command"]')"
diag "error: $(echo "$run" | jq_ '(d["run"]["error_class"], d["run"]["error_message"])')"
check "the client was stopped by its timeout(1): client_exit 124" \
	test "$(echo "$run" | jq_ 'd["run"]["client_exit"]')" = 124
check "error_class timeout (not parse_error)" test "$(echo "$run" | jq_ 'd["run"]["error_class"]')" = timeout
msg=$(echo "$run" | jq_ 'd["run"]["error_message"]')
check "the message says stopped by timeout with no stream connected" \
	sh -c 'printf "%s" "$1" | grep -q "stopped by timeout after [0-9]* s (exit 124) with no stream connected"' _ "$msg"
check "... and iperf3's own words" \
	sh -c 'printf "%s" "$1" | grep -q "iperf3: interrupt - the client has terminated"' _ "$msg"
check "the run's summary keeps iperf3's error" \
	test "$(echo "$run" | jq_ 'd["run"]["summary"]["error"]')" = "interrupt - the client has terminated"
check "it was tried twice (attempts 2)" test "$(echo "$run" | jq_ 'd["run"]["attempts"]')" = 2
check "no iperf3 left on the hosts" no_iperf_left

# ---- a passing loss: the connect datagram of the first attempt is lost ----
check "UDP passes" udp_undrop
check "UDP dropped again (the counter from 0)" udp_drop
C=$(api POST /api/v1/matrices "$spec" | jq_ 'd["matrix"]["id"]')
check "the first attempt's connect datagram is dropped" wait_dropped
check "then UDP passes again" udp_undrop
WAIT=90 check "matrix $C succeeds" wait_state "$C" succeeded
run=$(api GET "/api/v1/runs/$(api GET "/api/v1/matrices/$C" | jq_ 'd["matrix"]["runs"][0]["id"]')")
diag "$(echo "$run" | jq_ '(d["run"]["state"], d["run"]["attempts"], d["run"]["receiver_bps"])')"
check "its run is ok on the second attempt, with a rate" \
	test "$(echo "$run" | jq_ '(d["run"]["state"], d["run"]["attempts"], d["run"]["receiver_bps"] > 0)')" = "('ok', 2, True)"
check "no iperf3 left on the hosts" no_iperf_left
finish

#!/bin/sh
# A matrix's preparation asks each host in the OS it answered as last (no
# probe first: server/run_host.c): when that persona no longer answers
# (left rebooted into FreeBSD behind testbedd's back, and no probe since:
# --probe-interval 3600), the exec there fails, a probe finds the persona
# that answers, and the matrix runs there (its run stored as freebsd), in
# bounded time, not hanging on the old address.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_testbedd tbpf 187 3600
both_answer
check "testbedd sees left as ubuntu" test "$(answers left)" = ubuntu

# left to FreeBSD, testbedd not told (its prober sleeps for an hour)
b=$(boots left)
sshc root@$NET.11 'grub-reboot freebsd && reboot' >/dev/null 2>&1
check "left came up as FreeBSD at $NET.10" wait_boot left $b $NET.10 30
check "testbedd still says ubuntu (no probe since)" test "$(answers left)" = ubuntu

t0=$SECONDS
M=$(api POST /api/v1/matrices '{"name":"fallback","pairs":[{"client":"left","server":"right"}],"duration_s":1}' |
	jq_ 'd["matrix"]["id"]')
WAIT=90 check "matrix $M succeeds" wait_state "$M" succeeded
diag "the matrix took $((SECONDS - t0)) s"
body=$(api GET "/api/v1/matrices/$M")
check "its run ran with left as freebsd, the persona that answers" pyck "$body" '
r = d["matrix"]["runs"]; print("#", [(x["state"], x["client_os"], x["server_os"], x.get("error_message")) for x in r])
sys.exit(not (len(r) == 1 and r[0]["state"] == "ok" and r[0]["client_os"] == "freebsd" and r[0]["server_os"] == "ubuntu"))'
check "testbedd now sees left as freebsd (the probe the fallback made)" test "$(answers left)" = freebsd
finish

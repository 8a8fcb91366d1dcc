#!/bin/sh
# Wake-on-LAN is lossy: a host whose listener ignores the first magic packets
# still comes up through testbedd, because the packet is resent while the
# action waits for an OS to answer; the action succeeds only once ssh answers.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_up tbpr 234 --off --wol-ignore 4 || { nok "sim up"; finish; }
ok "sim up with hosts off, the first 4 magic packets ignored (prefix $PFX)"
daemon_up "$S/inventory.yaml" --probe-interval 5
check "testbedd starts" test -n "$DPID"
out=$(timeout 120 "$BIN/tbctl" power right on --wait 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
check "power right on --wait exits 0" test $rc = 0
check "the magic packets went out more than once" test "$(echo "$out" | grep -c 'UDP magic packet for')" -ge 4
check "it ended when right answered ssh" sh -c "echo \"\$0\" | grep -q 'right answers as ubuntu after'" "$out"
check "the sim saw more than 4 packets for right" test "$(grep -c 'magic packet' "$S/hosts/right/log" 2>/dev/null || echo 0)" -ge 5
daemon_down
finish

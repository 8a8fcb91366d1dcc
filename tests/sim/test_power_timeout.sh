#!/bin/sh
# Bounded waits: a host that never answers (its Wake-on-LAN listener ignores
# every packet) makes "power on" fail after the machine's boot_timeout_s with
# a sentence saying so, having resent the magic packet while it waited; a BMC
# that does not answer fails within its timeout with a clear message.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
D=$(mktemp -d /tmp/tbscratch-XXXXXX)
trap 'daemon_clean; sim_down; rm -rf "$D"' EXIT


sim_up tbpt 235 --off --wol-ignore 1000 --bmc-dead || { nok "sim up"; finish; }
ok "sim up with hosts off, WoL ignored, the BMC dead (prefix $PFX)"
# short waits for this test: right 8 s to boot, left's BMC is dead anyway
python3 - "$S/inventory.yaml" "$D/inventory.yaml" <<'PY'
import sys
text = open(sys.argv[1]).read()
for host in ("left", "right"):
    text = text.replace("  %s:\n    role: host\n" % host, "  %s:\n    role: host\n    boot_timeout_s: 8\n" % host, 1)
open(sys.argv[2], "w").write(text)
PY
check "the inventory got short boot timeouts" test "$(grep -c 'boot_timeout_s: 8' "$D/inventory.yaml")" = 2
daemon_up "$D/inventory.yaml" --probe-interval 5
check "testbedd starts" test -n "$DPID"

t0=$(date +%s)
timeout 120 "$BIN/tbctl" power right on --wait >"$D/on" 2>&1
rc=$?
t1=$(date +%s)
sed 's/^/# /' "$D/on"
check "power on a host that never answers exits 5 (failed)" test $rc = 5
check "the reason names boot_timeout_s" grep -q 'did not answer ssh within 8 s (boot_timeout_s)' "$D/on"
check "the magic packet was resent while waiting" test "$(grep -c 'UDP magic packet for' "$D/on")" -ge 3
check "it gave up after about 8 s, not later ($((t1 - t0)) s)" test $((t1 - t0)) -le 30

timeout 120 "$BIN/tbctl" power left on --wait >"$D/bmc" 2>&1
rc=$?
sed 's/^/# /' "$D/bmc"
check "power on through a dead BMC fails (exit 5)" test $rc = 5
check "the BMC was retried with backoff" grep -q 'retrying in' "$D/bmc"
check "then Wake-on-LAN was tried" grep -q 'trying Wake-on-LAN' "$D/bmc"
daemon_down
finish

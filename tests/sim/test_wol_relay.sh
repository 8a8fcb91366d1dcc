#!/bin/sh
# Wake-on-LAN through a relay, by testbedd, logs in to the relay as the daemon's
# other ssh paths do:
#  - with the OS persona the prober saw answer: here the relay has two personas, a
#    first one ("ubuntu", on a port where nothing listens: that OS is not running)
#    and openwrt, which answers; the wake goes through openwrt, not the first;
#  - with the pin in force: the relay's host key changes (re-installed and
#    rebooted), the wake is refused until an admin trusts the new key through the
#    API, and then wakes right through the relay.
# right has only the relay way, so nothing else can wake it.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_up tbwk 225 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX, $NET.0/24)"

RK=$S/hosts/relay/ssh_host_ed25519_key.openwrt
kfp() { ssh-keygen -lf "$1" | awk '{ print $2 }'; }
OLD=$(kfp "$RK.pub") OTHER=$(kfp "$S/hosts/left/ssh_host_ed25519_key.ubuntu.pub")
INV=$S/inventory-wk.yaml
python3 - "$S/inventory.yaml" "$INV" "$NET" "$OTHER" <<'EOF'
import re, sys
src, dst, net, other = sys.argv[1:]
t = open(src).read()
# right: only the relay way (drop its broadcast and directed methods)
head, rest = t.split("\n  right:\n", 1)
right, tail = rest.split("\n  router:\n", 1)
right = re.sub(r"      - driver: wol\n        via: (broadcast|directed)\n(        \S.*\n)*", "", right + "\n")[:-1]
t = head + "\n  right:\n" + right + "\n  router:\n" + tail
# the relay: a first persona that is never up (the discard port: refused at once)
# (the relay's block may have other keys, e.g. a console, between role and os)
m = re.search(r"\n  relay:\n    role: relay\n(    (?!os:)\S.*\n)*    os:\n", t)
assert m, "the relay's os: block"
t = t[:m.end()] + '      ubuntu:\n        address: %s.2\n        port: 9\n        host_key: "%s"\n' % (net, other) + t[m.end():]
open(dst, "w").write(t)
EOF
inv_ok() {
	[ "$(grep -c 'via: relay' "$INV")" = 2 ] && ! grep -q 'via: \(broadcast\|directed\)' "$INV" &&
		"$BIN/testbedd" --check-config --inventory "$INV" >/dev/null
}
check "the inventory: right wakes only through the relay, which has a first persona that is never up" inv_ok

daemon_up "$INV" --probe-interval 2
check "testbedd starts" test -n "$DPID"
relay_os() { api GET /api/v1/hosts/relay | jq_ 'd["host"]["state"]["os"]' 2>/dev/null; }
presented() { api GET /api/v1/hosts/relay | jq_ '(d["host"]["state"]["presented_host_key"] or {}).get("fingerprint")' 2>/dev/null; }
relay_is_openwrt() { [ "$(relay_os)" = openwrt ]; }
new_presented() { [ "$(presented)" = "$NEW" ]; }
wait_for() {	# seconds command...: until the command succeeds
	local end=$((SECONDS + $1))
	shift
	while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.5; done
	return 1
}
check "the prober sees the relay up as openwrt (its second persona)" wait_for 30 relay_is_openwrt

wake() {	# the output of tbctl power right on --wait; its status in $DD/wake.rc
	timeout 120 "$BIN/tbctl" power right on --wait >"$DD/wake.out" 2>&1
	echo $? >"$DD/wake.rc"
	sed 's/^/# /' "$DD/wake.out"
}

# 1. through the persona that answers
sshc root@$NET.21 poweroff
check "right is off" wait_power right off
wake
check "power right on --wait exits 0 (woken through the relay's openwrt persona)" test "$(cat "$DD/wake.rc")" = 0
check "the step is etherwake over ssh on the relay" grep -q "through the relay relay (etherwake)" "$DD/wake.out"
check "right answers ssh" wait_ssh $NET.21

# 2. the relay's host key changes: refused until trusted, then used
sshc root@$NET.21 poweroff
wait_power right off
rm -f "$RK" "$RK.pub"
ssh-keygen -q -t ed25519 -N '' -C relay-openwrt-new -f "$RK"
NEW=$(kfp "$RK.pub")
check "the relay has a new host key" test -n "$NEW" -a "$NEW" != "$OLD"
# reboot it (its ssh sessions end), logging in once without a pin: the test's own step
ssh -F /dev/null -i "$S/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes -o UserKnownHostsFile=/dev/null \
	-o StrictHostKeyChecking=no -o ConnectTimeout=3 -o LogLevel=ERROR root@$NET.2 reboot
check "testbedd sees the relay present the new key" wait_for 40 new_presented
wake
check "before it is trusted, the wake through the relay is refused" test "$(cat "$DD/wake.rc")" != 0
# (the prober sees no persona answer now, so the wake tries the relay's first one)
check "right stayed off" test "$(power right)" = off
out=$(timeout 30 "$BIN/tbctl" host trust relay --os openwrt --fingerprint "$NEW" 2>&1)
rc=$?
echo "$out" | sed 's/^/# /'
check "an admin trusts the relay's new key (tbctl host trust)" test $rc = 0
check "the relay is up again as openwrt" wait_for 30 relay_is_openwrt
wake
check "power right on --wait exits 0 through the relay with its trusted new key" test "$(cat "$DD/wake.rc")" = 0
check "right answers ssh again" wait_ssh $NET.21
daemon_down
finish

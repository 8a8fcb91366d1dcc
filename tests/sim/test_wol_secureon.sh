#!/bin/sh
# Wake-on-LAN with a SecureOn password, by testbedd: etherwake on a relay can only
# take the password on its command line (visible in the relay's process list), so
#  - a machine that also has a way from this machine onto its segment (right: a
#    bound broadcast) is woken that way, and the relay is not used (a note says why);
#  - a machine with only the relay way is still woken through it, and the step says
#    that the password is on etherwake's command line there (the command shows ***).
# The sim's hosts ignore magic packets without the right password.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

PW=0a:0b:0c:0d:0e:0f
sim_up tbws 226 --off --secureon $PW || { nok "sim up"; finish; }
ok "sim up with the hosts off and SecureOn $PW (prefix $PFX)"
check "right's Wake-on-LAN ways: relay, broadcast, directed, each with the SecureOn file" \
	test "$(grep -c "secureon_file: $S/secureon.pass" "$S/inventory.yaml")" -ge 4

wake() {	# the output of tbctl power right on --wait into $DD/wake.out; exit status
	timeout 120 "$BIN/tbctl" power right on --wait >"$DD/wake.out" 2>&1
	local rc=$?
	sed 's/^/# /' "$DD/wake.out"
	return $rc
}

# 1. a way on right's segment exists: the relay is not used
daemon_up "$S/inventory.yaml"
check "testbedd starts" test -n "$DPID"
check "power right on --wait exits 0" wake
check "the magic packet went out as a UDP broadcast with the password" \
	grep -q "UDP magic packet (with SecureOn password) for $MAC_right to $NET.255" "$DD/wake.out"
check "no step went through the relay" sh -c "! grep -q 'for $MAC_right through the relay' '$DD/wake.out'"
check "a note says why the relay was not used" grep -q "not through the relay relay: etherwake would show the SecureOn password" "$DD/wake.out"
check "right answers ssh" wait_ssh $NET.21
daemon_down
sshc root@$NET.21 poweroff
check "right is off again" wait_power right off

# 2. only the relay way: used, and the step says where the password shows
INV=$S/inventory-ws.yaml
python3 - "$S/inventory.yaml" "$INV" <<'EOF'
import re, sys
src, dst = sys.argv[1:]
t = open(src).read()
head, rest = t.split("\n  right:\n", 1)
right, tail = rest.split("\n  router:\n", 1)
right = re.sub(r"      - driver: wol\n        via: (broadcast|directed)\n(        \S.*\n)*", "", right + "\n")[:-1]
open(dst, "w").write(head + "\n  right:\n" + right + "\n  router:\n" + tail)
EOF
daemon_up "$INV"
check "testbedd starts on an inventory where right wakes only through the relay" test -n "$DPID"
check "power right on --wait exits 0 through the relay" wake
check "the step says the password is on etherwake's command line on the relay" \
	grep -q "through the relay relay (etherwake); the SecureOn password is on etherwake's command line on the relay" "$DD/wake.out"
check "the command shown hides it" grep -q -- "etherwake -i mgmt0 -p '\\?\*\*\*'\\? $MAC_right" "$DD/wake.out"
check "... and never shows it" sh -c "! grep -qi '$PW' '$DD/wake.out'"
check "right answers ssh" wait_ssh $NET.21
daemon_down
finish

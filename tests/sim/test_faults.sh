#!/bin/sh
# Fault options: --off (hosts start powered off), --wol-ignore N (the first N magic
# packets are ignored), --secureon (a wrong or missing SecureOn password is ignored),
# --boot-slow N (boots take N times the boot delay), --bmc-dead (the BMC address exists
# but nothing answers).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_up tbtf 250 --off --wol-ignore 1 --secureon 0a:0b:0c:0d:0e:0f --boot-slow 3 --boot-delay 0.5 --bmc-dead || { nok "sim up"; finish; }
ok "sim up with --off --wol-ignore 1 --secureon --boot-slow 3 --bmc-dead"

check "--off: left starts off" test "$(power left)" = off
check "--off: right starts off" test "$(power right)" = off
check "--off: left refuses ssh" ssh_refused $NET.11
check "the router and the relay are on" sshc root@$NET.2 true

sshc root@$NET.2 "etherwake -i mgmt0 $MAC_right"
sleep 1
check "a magic packet without the SecureOn password is ignored" test "$(power right)" = off
sshc root@$NET.2 "etherwake -i mgmt0 -p 01:02:03:04:05:06 $MAC_right"
sleep 1
check "a magic packet with a wrong SecureOn password is ignored" test "$(power right)" = off
sshc root@$NET.2 "etherwake -i mgmt0 -p 0a:0b:0c:0d:0e:0f $MAC_right"
sleep 1
check "--wol-ignore 1: the first good magic packet is ignored" test "$(power right)" = off
check "... and the WoL log says so" grep -q "ignored (fault option)" "$S/hosts/right/log"
t0=$(date +%s.%N)
sshc root@$NET.2 "etherwake -i mgmt0 -p 0a:0b:0c:0d:0e:0f $MAC_right"
check "the second good magic packet powers right on" wait_ssh $NET.21 15
t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
diag "boot took $t s (delay 0.5 s x 3)"
check "--boot-slow 3: the boot took at least 3 x 0.5 s" awk -v t="$t" 'BEGIN { exit !(t >= 1.5) }'
check "the inventory names the SecureOn file" grep -q "secureon_file: $S/secureon.pass" "$S/inventory.yaml"

check "--bmc-dead: the BMC address exists" grep -q "$NET.12/32" <<<"$(ip -4 addr show dev ${PFX}br)"
check "--bmc-dead: no ipmi_sim runs for this sim" test -z "$(grep ipmi_sim "$S/pids")"
out=$(timeout 10 ipmitool -I lanplus -H $NET.12 -U ADMIN -E -C 3 -R 1 -N 1 chassis power status 2>&1)
check "--bmc-dead: ipmitool gets no answer (exit != 0)" test $? != 0
check "left is still off" test "$(power left)" = off
finish

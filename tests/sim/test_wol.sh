#!/bin/sh
# Wake-on-LAN with the real client tools powers a simulated host on, in every form:
# wakeonlan to the subnet broadcast, wakeonlan unicast to the host's address, and
# etherwake over ssh on the relay; a host that is off refuses ssh.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_up tbtw 241 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX, $NET.0/24)"

check "right answers ssh as ubuntu" test "$(sshc root@$NET.21 uname -s)" = Linux
sshc root@$NET.21 poweroff
check "poweroff over ssh powers right off" wait_power right off
check "an off host refuses ssh" ssh_refused $NET.21
check "an off host runs nothing but its WoL listener" test "$(ip netns pids $PFX-right | wc -l)" = 1
check "an off host has no management address" test -z "$(ip -n $PFX-right -4 addr show dev mgmt0)"

wakeonlan -i $NET.255 "$MAC_right" >/dev/null
check "wakeonlan to the subnet broadcast $NET.255 powers right on" wait_ssh $NET.21

sshc root@$NET.21 systemctl poweroff
check "systemctl poweroff powers right off" wait_power right off
wakeonlan -i $NET.21 "$MAC_right" >/dev/null
check "wakeonlan unicast to $NET.21 powers right on" wait_ssh $NET.21

sshc root@$NET.21 'shutdown -h now'
check "shutdown -h now powers right off" wait_power right off
wakeonlan -i $NET.255 02:18:00:00:00:99 >/dev/null
sleep 1.5
check "a magic packet for another MAC does nothing" test "$(power right)" = off
check "etherwake over ssh on the relay exits 0" sshc root@$NET.2 "etherwake -i mgmt0 $MAC_right"
check "etherwake from the relay powers right on" wait_ssh $NET.21

sshc root@$NET.21 poweroff
wait_power right off
sshc root@$NET.2 "wakeonlan -p 7 $MAC_right" >/dev/null
check "wakeonlan from the relay to 255.255.255.255, UDP port 7, powers right on" wait_ssh $NET.21

sshc root@$NET.11 poweroff
wait_power left off
wakeonlan -i $NET.255 "$MAC_left" >/dev/null
check "wakeonlan powers left on too" wait_ssh $NET.11
check "left's WoL log saw the packet" grep -q "magic packet" "$S/hosts/left/log"
finish

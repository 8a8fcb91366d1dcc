#!/bin/sh
# The BMC of left (OpenIPMI ipmi_sim) with the real ipmitool: chassis power
# status/on/off/cycle/soft work and change the host; the BMC answers while the host
# is off; a wrong password is refused.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_up tbti 242 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX, BMC at $NET.12:623)"

check "the BMC password file is 0600" test "$(stat -c %a "$S/bmc-left.pass")" = 600
check "power status: on" test "$(ipmi chassis power status)" = "Chassis Power is on"
check "power off exits 0" ipmi chassis power off
check "power off powers left off" wait_power left off
check "left refuses ssh after IPMI power off" ssh_refused $NET.11
check "power status while off: off (the BMC works while the host is off)" test "$(ipmi chassis power status)" = "Chassis Power is off"
check "power on exits 0" ipmi chassis power on
check "power on brings left up (ssh answers)" wait_ssh $NET.11
check "power status: on again" test "$(ipmi chassis power status)" = "Chassis Power is on"

boot_before=$(grep -c 'booting ubuntu' "$S/hosts/left/log")
check "power cycle exits 0" ipmi chassis power cycle
check "power cycle takes left down" wait_power left off 5
check "power cycle brings left back" wait_ssh $NET.11 15
check "left booted once more after the cycle" test "$(grep -c 'booting ubuntu' "$S/hosts/left/log")" -gt "$boot_before"

check "power soft exits 0" ipmi chassis power soft
check "power soft shuts left down" wait_power left off
check "status after soft: off" test "$(ipmi chassis power status)" = "Chassis Power is off"
ipmi chassis power on >/dev/null
check "power on after soft brings left up" wait_ssh $NET.11
b=$(boots left)
check "power reset exits 0" ipmi chassis power reset
check "power reset reboots left" wait_boot left $b $NET.11

out=$(IPMI_PASSWORD=wrong timeout 10 ipmitool -I lanplus -H $NET.12 -U ADMIN -E -C 3 -R 1 -N 1 chassis power status 2>&1)
rc=$?
check "a wrong password is refused" test $rc != 0
finish

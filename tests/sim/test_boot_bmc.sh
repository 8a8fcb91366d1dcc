#!/bin/sh
# Boot paths (issue 21 item 1): the BMC's one-shot boot device through IPMI
# against ipmi_sim (a real IPMI 2.0 BMC over lanplus; ipmitool as
# power_ipmi.c runs it).  The sim, up with --bmc-boot (not --efi), gives left
# boot.bmc {freebsd: pxe}: left netboots FreeBSD.  The test takes left's GRUB
# entry for freebsd out of the inventory, so the only way into FreeBSD is the
# BMC: from ubuntu (GRUB's default) a boot into freebsd takes ONE reboot by
# `chassis bootdev pxe options=efiboot` (read back with `chassis bootparam get
# 5`), ipmi_sim's hook records the device, the sim's firmware boots the
# persona it maps to once and clears it; the plan names the path and its
# estimate; back into ubuntu a plain reboot (the device used once).  Without
# boot.bmc the same boot is refused (no GRUB entry): the first check pair.
# Redfish's one-shot override (tb_redfish_boot_once) is tested against the
# mock BMC in tests/integration/test_power_redfish (no real Redfish BMC runs here).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
scratch_dir
sim_up tbbm 191 --bmc-boot || { nok "sim up"; finish; }
ok "sim up --bmc-boot (prefix $PFX)"
check "the sim's inventory gives left boot.bmc {freebsd: pxe}" grep -q '^      bmc: {freebsd: "pxe"}$' "$S/inventory.yaml"
# left's GRUB entry for freebsd out: the first `freebsd: "freebsd"` (left's entries)
python3 - "$S/inventory.yaml" "$D/inv-bmc.yaml" "$D/inv-none.yaml" <<'PY'
import sys
s = open(sys.argv[1]).read()
s = s.replace('        freebsd: "freebsd"\n', '', 1)
open(sys.argv[2], "w").write(s)
open(sys.argv[3], "w").write(s.replace('      bmc: {freebsd: "pxe"}\n', '', 1))
PY
steps() {	# action id: its steps' what (and command, after " $ "), one a line
	api GET "/api/v1/actions/$1" | jq_ '"\n".join(s["what"] + (" $ " + s["command"] if s.get("command") else "") for s in d["action"]["steps"])'
}

# ---- without boot.bmc: no way into freebsd ----
daemon_up "$D/inv-none.yaml" --probe-interval 2
check "testbedd starts on the inventory without boot.bmc" test -n "$DPID"
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && break; sleep 0.5; done
tb boot left freebsd >"$D/none" 2>&1
check "without boot.bmc a boot of left into freebsd is refused (no GRUB entry)" sh -c '
	test "$1" != 0 && grep -q "no GRUB entry for freebsd" "$2"' _ $? "$D/none"
daemon_down

# ---- with boot.bmc: through the BMC, one reboot ----
daemon_again "$D/inv-bmc.yaml" --probe-interval 2
check "testbedd starts on the inventory with boot.bmc" test -n "$DPID"
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && break; sleep 0.5; done
check "left answers as ubuntu" test "$(answers left)" = ubuntu
body=$(api POST /api/v1/matrices/plan '{"name":"bmc","pairs":[{"client":"left","server":"right"}],"duration_s":2,
 "os":[{"left":"freebsd"}],"os_after":"restore"}')
check "the plan: left ubuntu -> freebsd by bmc-bootdev (with an estimate), back by a plain reboot" pyck "$body" '
b = d["plan"]["boots"]; print("#", [(x["machine"], x["from"], x["to"], x["path"], x["estimated_s"]) for x in b])
sys.exit(not ([(x["machine"], x["from"], x["to"], x["path"]) for x in b] ==
 [("left", "ubuntu", "freebsd", "bmc-bootdev"), ("left", "freebsd", "ubuntu", "reboot-default")]
 and all(x["estimated_s"] > 0 for x in b)))'

n0=$(boots left)
out=$(tb boot left freebsd 2>&1)
A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
tb action "$A" --wait >"$D/boot" 2>&1
check "boot left freebsd through the BMC succeeds (action $A)" test $? = 0
steps "$A" >"$D/steps"
sed 's/^/#   /' "$D/steps"
check "a step names the path: bmc-bootdev from ubuntu into freebsd, 1 reboot" grep -q "^boot path: bmc-bootdev from ubuntu into freebsd (1 reboot: " "$D/steps"
check "ipmitool chassis bootdev pxe options=efiboot ran, the password not in it" sh -c '
	grep -q "^IPMI chassis bootdev pxe options=efiboot for left \\$ ipmitool .* -E .*chassis bootdev pxe options=efiboot$" "$1" &&
	! grep -qF "$2" "$1"' _ "$D/steps" "$(cat "$S/bmc-left.pass")"
check "the boot device was read back (chassis bootparam get 5)" grep -q "^IPMI chassis bootparam get 5 (the boot device) for left" "$D/steps"
check "a step says the BMC boots left once from pxe" grep -q "^the BMC boots left once from pxe (boot.bmc.freebsd)" "$D/steps"
check "the boot is verified by uname" grep -q "left runs freebsd: verified (uname -s: FreeBSD)" "$D/steps"
check "the sim recorded one boot, not two" test "$(boots left)" = $((n0 + 1))
check "the sim's firmware took the BMC's device (hostctl's log)" grep -q "firmware: BMC boot device pxe -> freebsd, cleared" "$S/hosts/left/log"
check "the device is used once: gone after the boot" test ! -e "$S/hosts/left/bmc-boot"

n0=$(boots left)
tb boot left ubuntu --wait >"$D/back" 2>&1
check "back into ubuntu (GRUB's default): a plain reboot, one boot" sh -c 'test "$1" = 0 && test "$2" = "$3"' _ $? "$(boots left)" $((n0 + 1))

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

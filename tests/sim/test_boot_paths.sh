#!/bin/sh
# Boot paths as a table (issue 21 item 1) on the simulated testbed, up with
# --efi: the inventory gives left and right boot.efi (ubuntu Boot0001, freebsd
# Boot0002), the sim's firmware keeps its variables in DIR/hosts/H/nvram and
# honours BootNext once.  efibootmgr answers in each persona's own format.
# With FreeBSD made GRUB's default (--make-default), a boot from FreeBSD into
# ubuntu takes one reboot through UEFI BootNext (`efibootmgr -n -b 0001`, read
# back) where without boot.efi it is refused (test_boot3): the step names the
# path, the sim recorded one boot, BootNext is gone after it, GRUB's default is
# untouched.  A plan says which path each boot takes.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
scratch_dir
sim_up tbbp 209 --efi || { nok "sim up"; finish; }
ok "sim up --efi (prefix $PFX)"
check "the sim's inventory gives left and right boot.efi" test "$(grep -c 'efi: {ubuntu: "0001", freebsd: "0002"}' "$S/inventory.yaml")" = 2
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts on the sim's inventory" test -n "$DPID"
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && break; sleep 0.5; done
check "left answers as ubuntu" test "$(answers left)" = ubuntu
nv() { sed -n "s/^$2=//p" "$S/hosts/$1/nvram"; }
steps() {	# action id: its steps' what (and command, after " $ "), one a line
	api GET "/api/v1/actions/$1" | jq_ '"\n".join(s["what"] + (" $ " + s["command"] if s.get("command") else "") for s in d["action"]["steps"])'
}

# ---- efibootmgr in the ubuntu persona: Linux's format ----
sshc "root@$NET.11" efibootmgr >"$D/lin" 2>&1
sed 's/^/#   /' "$D/lin"
check "efibootmgr on ubuntu prints BootCurrent, Timeout, BootOrder and the entries, no BootNext" sh -c '
	grep -qx "BootCurrent: 0001" "$1" && grep -qx "Timeout: 1 seconds" "$1" && grep -qx "BootOrder: 0001,0002" "$1" &&
	grep -qx "Boot0001\* ubuntu" "$1" && grep -qx "Boot0002\* FreeBSD" "$1" && ! grep -q BootNext "$1"' _ "$D/lin"
sshc "root@$NET.11" efibootmgr -n 0002 >"$D/set" 2>&1
check "efibootmgr -n 0002 sets BootNext (printed, and in the sim's NVRAM)" sh -c 'grep -qx "BootNext: 0002" "$1" && test "$2" = 0002' _ "$D/set" "$(nv left BootNext)"
sshc "tbuser@$NET.11" efibootmgr -n 0001 >"$D/user" 2>&1
check "a user that is not root cannot set it" sh -c 'grep -q "Permission denied" "$1" && test "$2" = 0002' _ "$D/user" "$(nv left BootNext)"
sshc "root@$NET.11" efibootmgr -N >/dev/null 2>&1
check "efibootmgr -N deletes it" test -z "$(nv left BootNext)"
sshc "root@$NET.11" efibootmgr -n 0007 >"$D/bad" 2>&1
check "efibootmgr -n of an entry that is not there fails" sh -c '! sshc "root@$1" efibootmgr -n 0007 >/dev/null 2>&1 && grep -q "Boot entry 0007 does not exist" "$2"' _ "$NET.11" "$D/bad"

# ---- FreeBSD made GRUB's default (from Linux: grub-set-default), left in FreeBSD ----
tb boot left freebsd --make-default --wait >"$D/mkdef" 2>&1
check "boot left freebsd --make-default succeeds" test $? = 0
check "left answers as freebsd" test "$(answers left)" = freebsd
check "grubenv says saved_entry=freebsd" grep -q "^saved_entry=freebsd" "$S/hosts/left/boot/grub/grubenv"
sshc "root@$NET.10" efibootmgr >"$D/bsd" 2>&1
sed 's/^/#   /' "$D/bsd"
check "efibootmgr on freebsd prints FreeBSD's format (BootOrder  : 0001, 0002; +Boot0001* current)" sh -c '
	grep -qx "BootCurrent: 0001" "$1" && grep -qx "Timeout    : 1 seconds" "$1" && grep -qx "BootOrder  : 0001, 0002" "$1" &&
	grep -qx "+Boot0001\* ubuntu" "$1" && grep -qx " Boot0002\* FreeBSD" "$1"' _ "$D/bsd"
check "FreeBSD's efibootmgr takes the entry with -b, not after -n" sh -c '! sshc "root@$1" efibootmgr -n 0001 >/dev/null 2>&1' _ "$NET.10"

# ---- a plan says which path each boot takes ----
body=$(api POST /api/v1/matrices/plan '{"name":"paths","pairs":[{"client":"left","server":"right"}],"duration_s":2,
 "os":[{"left":"ubuntu"}],"os_after":"restore"}')
check "the plan: left freebsd -> ubuntu by efi-bootnext, back by a plain reboot into GRUB's default" pyck "$body" '
b = d["plan"]["boots"]; print("#", [(x["machine"], x["from"], x["to"], x["path"]) for x in b])
sys.exit(not ([(x["machine"], x["from"], x["to"], x["path"]) for x in b] ==
 [("left", "freebsd", "ubuntu", "efi-bootnext"), ("left", "ubuntu", "freebsd", "reboot-default")]))'

# ---- from FreeBSD, GRUB's default, into ubuntu: one reboot by BootNext ----
n0=$(boots left)
out=$(tb boot left ubuntu 2>&1)
A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
tb action "$A" --wait >"$D/boot" 2>&1
check "boot left ubuntu from FreeBSD (GRUB's default) succeeds (action $A)" test $? = 0
steps "$A" >"$D/steps"
sed 's/^/#   /' "$D/steps"
check "a step names the path: efi-bootnext from freebsd into ubuntu, 1 reboot" grep -q "^boot path: efi-bootnext from freebsd into ubuntu (1 reboot: " "$D/steps"
check "a step says BootNext was read back as 0001" grep -q "^UEFI BootNext now says 0001 (boot.efi.ubuntu; BootCurrent 0001)" "$D/steps"
check "FreeBSD's form of the command was run (efibootmgr -n -b 0001)" grep -q "^ran on the host \\$ ssh root@$NET.10 efibootmgr -n -b 0001$" "$D/steps"
check "the boot is verified by uname" grep -q "left runs ubuntu: verified (uname -s: Linux)" "$D/steps"
check "the sim recorded one boot, not two" test "$(boots left)" = $((n0 + 1))
check "the firmware used BootNext (hostctl's log)" grep -q "firmware: BootNext=0001 (ubuntu) -> ubuntu, BootNext deleted" "$S/hosts/left/log"
check "BootNext is gone afterwards, BootCurrent is 0001" sh -c 'test -z "$1" && test "$2" = 0001' _ "$(nv left BootNext)" "$(nv left BootCurrent)"
sshc "root@$NET.11" efibootmgr >"$D/after" 2>&1
check "... as efibootmgr on ubuntu says too" sh -c '! grep -q BootNext "$1" && grep -qx "BootCurrent: 0001" "$1"' _ "$D/after"
check "GRUB's default is still freebsd (BootNext changed nothing of GRUB's)" grep -q "^saved_entry=freebsd" "$S/hosts/left/boot/grub/grubenv"

# ---- back into FreeBSD: GRUB's default, a plain reboot ----
n0=$(boots left)
tb boot left freebsd --wait >"$D/back" 2>&1
check "boot left freebsd succeeds" test $? = 0
check "... by a plain reboot into GRUB's default, one boot" sh -c 'test "$1" = "$2"' _ "$(boots left)" $((n0 + 1))

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

#!/bin/sh
# Boot paths (issue 21 item 1): GRUB's environment block on the EFI system
# partition, written from FreeBSD, which has no grub-reboot.  The sim, up with
# --esp-grubenv (not --efi: no boot.efi, no BootNext), gives left and right
# boot.esp_grubenv /boot/efi/grubenv in both OSes; the ESP (DIR/hosts/H/esp) is
# mounted there for both personas and the sim's GRUB loads its next_entry
# once and clears it, as grub.cfg's `load_env -f (esp)/grubenv` does.  With
# FreeBSD made GRUB's default, a boot from FreeBSD into ubuntu (the non-default
# entry) takes ONE reboot through grubenv-esp (without it: refused or a
# console, test_boot3 / test_console_boot); the plan names the path and its
# estimate; the block written is a valid 1024-byte GRUB environment block
# (grub-editenv lists it) that keeps its other variables; back into FreeBSD a
# plain reboot.  A matrix switching left into ubuntu and back needs one reboot
# per switch and its boot rows keep the path each took.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
scratch_dir
sim_up tbge 190 --esp-grubenv || { nok "sim up"; finish; }
ok "sim up --esp-grubenv (prefix $PFX)"
check "the sim's inventory gives left and right boot.esp_grubenv, no boot.efi" sh -c '
	test "$(grep -c "esp_grubenv: {ubuntu: \"/boot/efi/grubenv\", freebsd: \"/boot/efi/grubenv\"}" "$1")" = 2 && ! grep -q " efi: " "$1"' _ "$S/inventory.yaml"
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts on the sim's inventory" test -n "$DPID"
for _ in $(seq 60); do [ "$(answers left)" = ubuntu ] && break; sleep 0.5; done
check "left answers as ubuntu" test "$(answers left)" = ubuntu
steps() {	# action id: its steps' what (and command, after " $ "), one a line
	api GET "/api/v1/actions/$1" | jq_ '"\n".join(s["what"] + (" $ " + s["command"] if s.get("command") else "") for s in d["action"]["steps"])'
}
ESP=$S/hosts/left/esp/grubenv
"$S/real-bin/grub-editenv" "$ESP" set keep_me=1

# ---- the ESP is one partition both personas see at /boot/efi ----
sshc "root@$NET.11" cat /boot/efi/grubenv >"$D/esp.ubuntu" 2>&1
check "ubuntu sees the ESP's block at /boot/efi/grubenv" grep -qx "keep_me=1" "$D/esp.ubuntu"

# ---- FreeBSD made GRUB's default (from Linux: grub-set-default), left in FreeBSD ----
tb boot left freebsd --make-default --wait >"$D/mkdef" 2>&1
check "boot left freebsd --make-default succeeds" test $? = 0
check "left answers as freebsd" test "$(answers left)" = freebsd
sshc "root@$NET.10" cat /boot/efi/grubenv >"$D/esp.freebsd" 2>&1
check "freebsd sees the same block at /boot/efi/grubenv" grep -qx "keep_me=1" "$D/esp.freebsd"
sshc "root@$NET.10" grub-editenv - list >/dev/null 2>&1
check "FreeBSD has no grub-editenv (the write must not need it)" test $? != 0

# ---- a plan says which path and its estimate ----
body=$(api POST /api/v1/matrices/plan '{"name":"esp","pairs":[{"client":"left","server":"right"}],"duration_s":2,
 "os":[{"left":"ubuntu"}],"os_after":"restore"}')
check "the plan: left freebsd -> ubuntu by grubenv-esp (with an estimate), back by a plain reboot" pyck "$body" '
b = d["plan"]["boots"]; print("#", [(x["machine"], x["from"], x["to"], x["path"], x["estimated_s"]) for x in b])
sys.exit(not ([(x["machine"], x["from"], x["to"], x["path"]) for x in b] ==
 [("left", "freebsd", "ubuntu", "grubenv-esp"), ("left", "ubuntu", "freebsd", "reboot-default")]
 and all(x["estimated_s"] > 0 for x in b)))'

# ---- from FreeBSD, GRUB's default, into ubuntu: one reboot by the ESP's block ----
n0=$(boots left)
out=$(tb boot left ubuntu 2>&1)
A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
tb action "$A" --wait >"$D/boot" 2>&1
check "boot left ubuntu from FreeBSD (GRUB's default) succeeds (action $A)" test $? = 0
steps "$A" >"$D/steps"
sed 's/^/#   /' "$D/steps"
check "a step names the path: grubenv-esp from freebsd into ubuntu, 1 reboot" grep -q "^boot path: grubenv-esp from freebsd into ubuntu (1 reboot: " "$D/steps"
check "the block was written by sh on FreeBSD (no grub-editenv), the entry an argument" grep -q "^ran on the host \\$ ssh root@$NET.10 sh -c .* tb-grubenv /boot/efi/grubenv 0$" "$D/steps"
check "a step says the block read back says next_entry=0" grep -q "^GRUB's environment block on the ESP (/boot/efi/grubenv) now says next_entry=0" "$D/steps"
check "the boot is verified by uname" grep -q "left runs ubuntu: verified (uname -s: Linux)" "$D/steps"
check "the sim recorded one boot, not two" test "$(boots left)" = $((n0 + 1))
check "the sim's GRUB took next_entry from the ESP (hostctl's log)" grep -q "grub: the ESP's grubenv says next_entry=\"0\" (cleared there)" "$S/hosts/left/log"
check "the ESP's block is 1024 bytes, next_entry cleared, keep_me kept" sh -c '
	test "$(wc -c <"$1")" = 1024 && "$2" "$1" list >"$3" && grep -qx "keep_me=1" "$3" && ! grep -q "^next_entry=." "$3"' _ "$ESP" "$S/real-bin/grub-editenv" "$D/envlist"
check "GRUB's default is still freebsd" grep -q "^saved_entry=freebsd" "$S/hosts/left/boot/grub/grubenv"

# ---- back into FreeBSD: GRUB's default, a plain reboot ----
n0=$(boots left)
tb boot left freebsd --wait >"$D/back" 2>&1
check "boot left freebsd succeeds, one boot" sh -c 'test "$1" = 0 && test "$2" = "$3"' _ $? "$(boots left)" $((n0 + 1))

# ---- a matrix: left freebsd -> ubuntu by the ESP's block, back by a plain reboot; each boot row keeps its path ----
n0=$(boots left)
M=$(api POST /api/v1/matrices '{"name":"esp","pairs":[{"client":"left","server":"right"}],"duration_s":2,
 "os":[{"left":"ubuntu"}],"os_after":"restore"}' | jq_ 'd["matrix"]["id"]')
check "a matrix that switches left into ubuntu and back starts" test -n "$M"
WAIT=120 check "the matrix succeeds" wait_state "$M" succeeded
body=$(api GET "/api/v1/matrices/$M?runs=0")
check "its boot rows keep the path: grubenv-esp into ubuntu, reboot-default back" pyck "$body" '
b = d["matrix"]["boots"]; print("#", [(x["host"], x["from"], x["to"], x["path"], x["state"]) for x in b])
sys.exit(not [(x["host"], x["from"], x["to"], x["path"], x["state"]) for x in b] ==
 [("left", "freebsd", "ubuntu", "grubenv-esp", "succeeded"), ("left", "ubuntu", "freebsd", "reboot-default", "succeeded")])'
check "one reboot per switch: two boots for the matrix" test "$(boots left)" = $((n0 + 2))

# ---- a block that would not fit is refused, nothing rebooted ----
# 25 (header) + 10 (keep_me=1) + 985 (big=x...): fits; with next_entry=0 it would not
big=$(head -c 980 /dev/zero | tr '\0' x)
"$S/real-bin/grub-editenv" "$ESP" unset next_entry
"$S/real-bin/grub-editenv" "$ESP" set "big=$big"
n0=$(boots left)
out=$(tb boot left ubuntu 2>&1)
A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
tb action "$A" --wait >"$D/full" 2>&1
check "a full ESP block: the boot fails saying why, no reboot" sh -c '
	test "$1" != 0 && grep -q "more than GRUB.s 1024" "$2" && test "$3" = "$4"' _ $? "$D/full" "$(boots left)" "$n0"

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

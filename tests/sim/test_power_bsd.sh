#!/bin/sh
# Power from FreeBSD's side (issue 21 item 7) on the simulated testbed: a
# reboot is proven by the persona's boot id, not by a probe missing the host.
# testbedd reads FreeBSD's kern.boottime (Linux's kernel.random.boot_id) before
# it sends the reboot and again when the same OS answers: a new value is the
# proof (a step says both), the same value is an OS that did not reboot.  The
# sim's personas have both, new at each boot (hostctl.sh boot_ids); its
# reboot-fake fault drops every session and restarts sshd without a boot,
# which testbedd took for a reboot before.  A FreeBSD without shutdown(8) on
# its PATH is reset with reboot and powered off with poweroff (issue 21 item
# 7), the steps showing the command as it ran.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
scratch_dir
sim_testbedd tbpf 215 2
for _ in $(seq 60); do [ "$(answers right)" = ubuntu ] && break; sleep 0.5; done
check "right answers as ubuntu" test "$(answers right)" = ubuntu
steps() {	# action id: its steps' what (and command, after " $ "), one a line
	api GET "/api/v1/actions/$1" | jq_ '"\n".join(s["what"] + (" $ " + s["command"] if s.get("command") else "") for s in d["action"]["steps"])'
}
reset_right() {	# -> A: the action id; its steps in $D/steps, its exit in rc
	local out
	out=$(tb power right reset 2>&1)
	A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
	tb action "$A" --wait >"$D/act" 2>&1
	rc=$?
	steps "$A" >"$D/steps"
	sed 's/^/#   /' "$D/steps"
}

# ---- from Linux: the boot id ----
id0=$(sshc "root@$NET.21" cat /proc/sys/kernel/random/boot_id)
check "the ubuntu persona has a boot id of its own (not the machine's)" sh -c 'test -n "$1" && test "$1" != "$(cat /proc/sys/kernel/random/boot_id)"' _ "$id0"
n0=$(boots right)
reset_right
check "power right reset (a reboot by the OS, right has no BMC) succeeds" test $rc = 0
check "the boot id was read before the reboot" grep -q "^ran on the host \$ ssh root@$NET.21 sysctl -n kernel.random.boot_id$" "$D/steps"
id1=$(sshc "root@$NET.21" cat /proc/sys/kernel/random/boot_id)
check "a step proves the reboot: the boot id was $id0, now another" grep -q "^right rebooted: its boot id was $id0, now $id1$" "$D/steps"
check "... one boot" test "$(boots right)" = $((n0 + 1))

# ---- from FreeBSD: kern.boottime (FreeBSD GRUB's default, so a reboot returns to it) ----
"$S/real-bin/grub-editenv" "$S/hosts/right/boot/grub/grubenv" set saved_entry=freebsd
tb boot right freebsd --wait >"$D/bsd" 2>&1
check "right boots into freebsd, GRUB's default" test "$(answers right)" = freebsd
t0=$(sshc "root@$NET.20" sysctl -n kern.boottime)
check "FreeBSD's kern.boottime reads as FreeBSD prints it" sh -c 'echo "$1" | grep -Eq "^\{ sec = [0-9]+, usec = [0-9]+ \} [A-Z][a-z]{2} [A-Z][a-z]{2} [ 0-9][0-9] [0-9:]{8} [0-9]{4}$"' _ "$t0"
n0=$(boots right)
reset_right
check "power right reset from FreeBSD succeeds" test $rc = 0
check "... by shutdown -r now" grep -q "^ran on the host \$ ssh root@$NET.20 shutdown -r now$" "$D/steps"
t1=$(sshc "root@$NET.20" sysctl -n kern.boottime)
check "a step proves the reboot: kern.boottime was $t0, now $t1" grep -qF "right rebooted: its kern.boottime was $t0, now $t1" "$D/steps"
check "... one boot, another kern.boottime" sh -c 'test "$1" = "$2" && test "$3" != "$4"' _ "$(boots right)" $((n0 + 1)) "$t0" "$t1"

# ---- FreeBSD without shutdown(8) on its PATH: poweroff and reboot ----
mv "$S/personas/freebsd/bin/shutdown" "$S/personas/freebsd/shutdown.away"
n0=$(boots right)
reset_right
check "a reset from a FreeBSD without shutdown succeeds" test $rc = 0
check "... by reboot" grep -q "^ran on the host \$ ssh root@$NET.20 reboot$" "$D/steps"
check "... proven by kern.boottime, one boot" sh -c 'test "$1" = "$2"' _ "$(boots right)" $((n0 + 1))
out=$(tb power right off 2>&1)
A=$(echo "$out" | sed -n 's/^action \([0-9]*\) started.*/\1/p')
tb action "$A" --wait >"$D/act" 2>&1
rc=$?
steps "$A" >"$D/steps"
check "power right off from a FreeBSD without shutdown succeeds" test $rc = 0
check "... by poweroff" grep -q "^ran on the host \$ ssh root@$NET.20 poweroff$" "$D/steps"
check "... right is off" wait_power right off
mv "$S/personas/freebsd/shutdown.away" "$S/personas/freebsd/bin/shutdown"
tb power right on --wait >"$D/on" 2>&1
check "power right on (Wake-on-LAN) brings FreeBSD back" test "$(answers right)" = freebsd
t1=$(sshc "root@$NET.20" sysctl -n kern.boottime)

# ---- an OS that drops its sessions but does not reboot: not taken for a reboot ----
python3 - "$S/inventory.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
i = s.index("  right:\n    role: host\n")
s = s[:i] + "  right:\n    role: host\n    boot_timeout_s: 8\n" + s[i + len("  right:\n    role: host\n"):]
open(p, "w").write(s)
PY
check "the inventory is reloaded (right's boot timeout 8 s)" reload_inventory 1
echo once >"$S/hosts/right/reboot-fake"
reset_right
check "a reset whose OS only restarted sshd fails (exit $rc)" test $rc != 0
check "... saying right did not reboot: its kern.boottime is still $t1" grep -qF "right answers as freebsd but did not reboot: its kern.boottime is still $t1 after 8 s" "$D/act"
check "... the sim did the fault (no boot)" grep -q "fault: reboot-fake: sessions dropped, sshd restarted, no boot" "$S/hosts/right/log"

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

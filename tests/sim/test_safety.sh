#!/bin/sh
# Nothing sent to a sim host acts on this machine: `ssh host sudo reboot` (as tbuser),
# `ssh host sudo grub-reboot 4`, `ssh host poweroff` act on the sim only.  This
# machine's /boot/grub/grubenv is unchanged (or still absent) and the machine is still
# up (same boot id); inside a host the power and GRUB tools are the persona's wrappers
# and /boot is the host's own.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

grubenv_state() {
	local f
	for f in /boot/grub/grubenv /boot/grub2/grubenv; do
		if [ -e "$f" ]; then sha256sum "$f"; else echo "absent $f"; fi
	done
}
boot_id=$(cat /proc/sys/kernel/random/boot_id)
env_before=$(grubenv_state)
boot_before=$(ls -la --time-style=+%s /boot 2>&1 | sha256sum)
systemctl_before=$(sha256sum /usr/bin/systemctl)
diag "this machine: boot_id $boot_id; $(echo $env_before)"

sim_up tbts 246 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"

# inside the host: the wrappers and the private /boot
for t in /usr/sbin/reboot /usr/sbin/poweroff /usr/sbin/shutdown /usr/sbin/halt /sbin/reboot /usr/bin/systemctl \
	/usr/sbin/grub-reboot /usr/sbin/grub-set-default /usr/bin/grub-editenv; do
	check "in the host, $t is the persona's wrapper" grep -q "$S/lib/" <<<"$(sshc root@$NET.11 "head -c 300 $t")"
done
check "in the host, /boot is the host's own (it has grub/grub.cfg)" sshc root@$NET.11 'test -f /boot/grub/grub.cfg'
check "in the host, sudo's secure_path reaches the wrapper too" grep -q "$S/lib/" <<<"$(sshc tbuser@$NET.11 'sudo sh -c "head -c 300 \$(command -v reboot)"')"
check "on this machine, /usr/bin/systemctl is untouched" test "$(sha256sum /usr/bin/systemctl)" = "$systemctl_before"

check "ssh tbuser@left sudo grub-reboot 4 exits 0" sshc tbuser@$NET.11 'sudo grub-reboot 4'
check "... it set next_entry=4 in the sim's grubenv" grep -qx 'next_entry=4' <<<"$(grub-editenv "$S/hosts/left/boot/grub/grubenv" list)"
check "... and left this machine's grubenv as it was" test "$(grubenv_state)" = "$env_before"
check "ssh tbuser@left sudo grub-editenv /boot/grub/grubenv set x=1 exits 0" sshc tbuser@$NET.11 'sudo grub-editenv /boot/grub/grubenv set x=1'
check "... it wrote the sim's grubenv" grep -qx 'x=1' <<<"$(grub-editenv "$S/hosts/left/boot/grub/grubenv" list)"
check "ssh tbuser@left sudo /usr/sbin/grub-reboot --boot-directory=/boot 4 stays in the sim" sshc tbuser@$NET.11 'sudo /usr/sbin/grub-reboot --boot-directory=/boot 4'
check "... this machine's grubenv is still as it was" test "$(grubenv_state)" = "$env_before"
check "... and this machine's /boot is unchanged" test "$(ls -la --time-style=+%s /boot 2>&1 | sha256sum)" = "$boot_before"

b=$(boots left)
out=$(sshc tbuser@$NET.11 reboot 2>&1)
check "reboot as tbuser without sudo is refused" test $? != 0
check "ssh tbuser@left sudo reboot exits 0" sshc tbuser@$NET.11 'sudo reboot'
check "... the sim's left rebooted (into FreeBSD, as GRUB's next_entry said)" wait_boot left $b $NET.10
check "... this machine is still up (same boot id)" test "$(cat /proc/sys/kernel/random/boot_id)" = "$boot_id"
sshc root@$NET.10 poweroff
check "ssh root@left poweroff (FreeBSD) powers the sim's left off" wait_power left off
sshc tbuser@$NET.21 'sudo systemctl poweroff'
check "ssh tbuser@right sudo systemctl poweroff powers the sim's right off" wait_power right off
sshc root@$NET.50 'shutdown -p now'
check "ssh root@router shutdown -p now powers the sim's router off" wait_power router off
sshc root@$NET.2 'halt'
check "ssh root@relay halt powers the sim's relay off" wait_power relay off
sleep 1
check "this machine is still up (same boot id, this test still running)" test "$(cat /proc/sys/kernel/random/boot_id)" = "$boot_id"
check "this machine's grubenv unchanged at the end" test "$(grubenv_state)" = "$env_before"
check "this machine's /boot unchanged at the end" test "$(ls -la --time-style=+%s /boot 2>&1 | sha256sum)" = "$boot_before"
check "every address of the sim is in 198.18.0.0/15" test -z "$(grep -oE '(address|target|source): [0-9.]+' "$S/inventory.yaml" | grep -vE ': 198\.1[89]\.')"
finish

#!/bin/sh
# Dual boot through GRUB: `grub-reboot 4` over ssh then `reboot` brings left up as
# FreeBSD once, at its FreeBSD address, with csh as root's shell; the next reboot
# brings Ubuntu back.  The personas answer as their OS does.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_up tbtg 243 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"

# ubuntu persona
check "ubuntu: uname -s is Linux" test "$(sshc root@$NET.11 uname -s)" = Linux
check "ubuntu: uname -r is Ubuntu's" test "$(sshc root@$NET.11 uname -r)" = 6.8.0-134-generic
check "ubuntu: /etc/os-release says Ubuntu" sshc root@$NET.11 'grep -q "^ID=ubuntu" /etc/os-release'
check "ubuntu: root's shell is bash" test "$(sshc root@$NET.11 'echo $0')" = bash
check "ubuntu: ip and ss are there" sshc root@$NET.11 'command -v ip >/dev/null && command -v ss >/dev/null'
check "ubuntu: grub.cfg has FreeBSD as entry 4 with --id freebsd" \
	test "$(sshc root@$NET.11 "grep -E '^(menuentry|submenu) ' /boot/grub/grub.cfg | sed -n 5p" | grep -c -- '--id freebsd')" = 1
check "ubuntu: tbuser has passwordless sudo" test "$(sshc tbuser@$NET.11 sudo -n id -u)" = 0

# to FreeBSD once
check "grub-reboot 4 over ssh exits 0" sshc root@$NET.11 'grub-reboot 4'
check "grubenv has next_entry=4" test "$(sshc root@$NET.11 'grub-editenv list' | grep '^next_entry=')" = next_entry=4
b=$(boots left)
check "reboot over ssh exits 0" sshc root@$NET.11 reboot
check "left comes up as FreeBSD at its FreeBSD address $NET.10" wait_boot left $b $NET.10
check "freebsd: uname -s is FreeBSD" test "$(sshc root@$NET.10 uname -s)" = FreeBSD
check "freebsd: uname -r" test "$(sshc root@$NET.10 uname -r)" = 14.1-RELEASE-p5
check "freebsd: root's shell is csh" test "$(sshc root@$NET.10 'echo $shell')" = /bin/csh
check "freebsd: freebsd-version -ku prints kernel and userland" test "$(sshc root@$NET.10 'freebsd-version -ku' | tr '\n' ' ')" = "14.1-RELEASE-p5 14.1-RELEASE-p6 "
check "freebsd: no ip, ss, ethtool, grub-reboot on PATH" sshc root@$NET.10 'sh -c "! command -v ip && ! command -v ss && ! command -v ethtool && ! command -v grub-reboot"'
check "freebsd: sysctl prints name: value" test "$(sshc root@$NET.10 'sysctl hw.ncpu')" = "hw.ncpu: 32"
check "freebsd: sysctl -n" test "$(sshc root@$NET.10 'sysctl -n net.inet.tcp.cc.algorithm')" = cubic
out=$(sshc root@$NET.10 "sh -c 'sysctl no.such.oid 2>&1; echo rc=\$?'")
check "freebsd: unknown oid -> sysctl: unknown oid, exit 1" test "$out" = "$(printf "sysctl: unknown oid 'no.such.oid'\nrc=1")"
check "freebsd: ifconfig data0 shows the data address" grep -q "inet 198.19.10.2 netmask 0xffffff00 broadcast 198.19.10.255" <<<"$(sshc root@$NET.10 'ifconfig data0')"
check "freebsd: pciconf -lv lists NICs" grep -q "^ix0@pci" <<<"$(sshc root@$NET.10 'pciconf -lv')"
check "freebsd: vmstat prints FreeBSD columns" grep -q "avm  fre" <<<"$(sshc root@$NET.10 vmstat)"
sshc root@$NET.10 'sh -c "timeout 10 iperf3 -s -1 -p 5301 >/dev/null 2>&1 </dev/null &"'
sleep 0.5
check "freebsd: sockstat -l -P tcp -p 5301 shows the listening iperf3" grep -q "iperf3 .*:5301" <<<"$(sshc root@$NET.10 'sockstat -l -P tcp -p 5301')"
check "freebsd: sockstat -l -P tcp -p 5302 shows nothing listening" test "$(sshc root@$NET.10 'sockstat -l -P tcp -p 5302' | wc -l)" = 1
check "the ubuntu address is gone while left runs FreeBSD" ssh_refused $NET.11
check "GRUB left next_entry empty after the one-shot boot" \
	test "$(grub-editenv "$S/hosts/left/boot/grub/grubenv" list | grep '^next_entry=')" = next_entry=

# back to Ubuntu with a plain reboot
b=$(boots left)
check "shutdown -r now over ssh exits 0" sshc root@$NET.10 'shutdown -r now'
check "the next reboot brings Ubuntu back at $NET.11" wait_boot left $b $NET.11
check "ubuntu again: uname -s is Linux" test "$(sshc root@$NET.11 uname -s)" = Linux

# saved_entry (GRUB_DEFAULT=saved) and an unknown entry
b=$(boots left)
sshc root@$NET.11 'grub-set-default freebsd && reboot'
check "grub-set-default freebsd: reboot -> FreeBSD" wait_boot left $b $NET.10
b=$(boots left)
sshc root@$NET.10 reboot
check "saved_entry stays: the next reboot is FreeBSD again" wait_boot left $b $NET.10
"$SIM" status --prefix $PFX | grep -q 'saved_entry=freebsd'
check "status shows saved_entry=freebsd" test $? = 0
grub-editenv "$S/hosts/left/boot/grub/grubenv" set saved_entry=nosuchentry
b=$(boots left)
sshc root@$NET.10 reboot
check "an unknown entry falls back to entry 0 (Ubuntu)" wait_boot left $b $NET.11
finish

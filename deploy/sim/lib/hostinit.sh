#!/bin/bash
# hostinit.sh STATE HOST: runs as `ip netns exec NS unshare --mount --uts
# --propagation private hostinit.sh ...`: sets up the host's private mount namespace
# (persona wrappers over the power and GRUB tools, private /boot and /etc files),
# its host name, then becomes hostd (the WoL listener and power controller).
set -eu
S=$1 H=$2
. "$S/conf"
. "$S/hosts/$H/conf"
HD=$S/hosts/$H
hostname "$H"
mount --make-rprivate /
mount --bind "$HD/boot" /boot
# the EFI system partition, one for both personas, at /boot/efi (where FreeBSD mounts its
# msdosfs ESP and Ubuntu its vfat one): a GRUB environment block on it (hostctl.sh grub_pick)
if [ -d "$HD/esp" ] && [ -d /boot/efi ]; then mount --bind "$HD/esp" /boot/efi; fi
# the real tools stay reachable to the wrappers only, at $S/real/NAME
for t in /usr/bin/grub-editenv /usr/sbin/grub-reboot /usr/sbin/grub-set-default /usr/bin/uname; do
	n=${t##*/}
	mount --bind "$t" "$S/real/$n"
	mount --bind "$HD/w/$n" "$t"
done
# the boot id a persona reads: the host's own, new at each boot (hostctl.sh boot_ids)
[ -f "$HD/boot_id" ] || cat /proc/sys/kernel/random/uuid >"$HD/boot_id"
mount --bind "$HD/boot_id" /proc/sys/kernel/random/boot_id
# a real efibootmgr on the machine would write the machine's NVRAM: the sim's over it
for t in /usr/bin/efibootmgr /usr/sbin/efibootmgr /bin/efibootmgr /sbin/efibootmgr; do
	[ -e "$t" ] && [ ! -L "$t" ] && mount --bind "$HD/w/efibootmgr" "$t"
done
# power: reboot, poweroff, shutdown, halt and systemctl (on Debian the first four are
# symlinks to systemctl; bind over every distinct real file)
done_list=" "
for t in /usr/bin/systemctl /usr/sbin/reboot /usr/sbin/poweroff /usr/sbin/shutdown /usr/sbin/halt \
	/sbin/reboot /sbin/poweroff /sbin/shutdown /sbin/halt /bin/systemctl; do
	[ -e "$t" ] || continue
	r=$(readlink -f "$t")
	case $done_list in *" $r "*) continue ;; esac
	mount --bind "$HD/w/power" "$r"
	done_list="$done_list$r "
done
mount --bind "$HD/os-release" "$(readlink -f /etc/os-release)"
for f in passwd shadow group sudoers hosts hostname; do
	[ -e "/etc/$f" ] || continue
	mount --bind "$HD/etc/$f" "/etc/$f"
done
# login records (sshd writes them for sessions with a terminal): the host's own
mkdir -p "$HD/var"
for f in /var/log/wtmp /var/log/btmp /var/log/lastlog /run/utmp /var/run/utmp; do
	[ -f "$f" ] || continue
	p=$HD/var/${f//\//_}
	: >"$p"
	mount --bind "$p" "$f"
done
touch "$HD/ready"
start=boot
[ "${START_OFF:-0}" = 1 ] && [ "$ROLE" = host ] && start=""
exec "$S/bin/hostd" -i mgmt0 -m "$MAC" -f "$HD/ctl" -n "${WOL_IGNORE:-0}" ${SECUREON:+-s "$SECUREON"} \
	${start:+-c "$start"} -t "$HD/con" -- /bin/bash "$S/lib/hostctl.sh" "$S" "$H"

#!/bin/bash
# hostctl.sh STATE HOST COMMAND: power and boot logic of one simulated host.
# Run by hostd (the host's "hardware", inside the host's network and mount
# namespace), one command at a time: boot | wake | on | off | soft | reboot | reset | cycle.
S=$1 H=$2 CMD=$3
. "$S/conf"
. "$S/hosts/$H/conf"
HD=$S/hosts/$H
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

# the serial console: what we print goes to hostd (DIR/hosts/H/con/out), which
# copies it to the host's pty (ser2net serves it); opening a FIFO read-write never blocks
if [ -p "$HD/con/out" ]; then exec 3<>"$HD/con/out"; else exec 3>/dev/null; fi
con() { printf '%s\r\n' "$@" >&3; }

log() { printf '%s hostctl %s: %s\n' "$(date -u +%H:%M:%S.%3N)" "$H" "$*" >>"$HD/log"; }
setpower() { printf '%s\n' "$1" >"$HD/power.tmp" && mv -f "$HD/power.tmp" "$HD/power"; log "power $1"; }
power() { cat "$HD/power" 2>/dev/null || echo off; }

# pid -> "state ppid starttime" from /proc/PID/stat (no fork)
pstat() {
	local line
	read -r line 2>/dev/null <"/proc/$1/stat" || return 1
	line=${line##*) }
	set -- $line
	printf '%s %s %s\n' "$1" "$2" "${20}"
}

record_pid() {	# pid label
	local st
	st=$(pstat "$1") || return 0
	set -- "$1" "$2" $st
	printf '%s %s %s\n' "$1" "$5" "$2" >>"$S/pids"
}

# Stop every process of this host except hostd (our parent) and ourselves.
kill_host() {
	local sig p st ppid state i alive victims=""
	for p in $(ip netns pids "$NS" 2>/dev/null); do
		[ "$p" = $$ ] && continue
		[ "$p" = "$PPID" ] && continue
		st=$(pstat "$p") || continue
		set -- $st
		[ "$2" = $$ ] && continue	# our own command substitutions
		case $1 in Z*) continue ;; esac
		victims="$victims $p"
	done
	[ -n "$victims" ] || return 0
	log "stopping:$victims"
	kill -TERM $victims 2>/dev/null
	for i in $(seq 1 30); do
		alive=""
		for p in $victims; do
			st=$(pstat "$p") || continue
			case $st in Z*) continue ;; esac
			alive="$alive $p"
		done
		[ -n "$alive" ] || return 0
		sleep 0.05
	done
	log "killing:$alive"
	kill -KILL $alive 2>/dev/null
	sleep 0.05
}

net_down() {
	ip addr flush dev mgmt0 scope global 2>/dev/null
	if [ -n "${DATAIF:-}" ]; then
		ip addr flush dev "$DATAIF" scope global 2>/dev/null
	fi
}

# The firmware (UEFI boot manager) on DIR/hosts/H/nvram (lib/efibootmgr.sh): BootNext,
# when set, is used once and deleted before the entry starts, as UEFI does; its
# entry boots its own OS (FreeBSD's loader.efi, a Linux's own entry: the label
# names the persona) without GRUB's menu.  Else BootOrder's first: GRUB (shim),
# whose next_entry/saved_entry choose.  Prints the persona BootNext chose, or
# nothing; BootCurrent gets the entry started.
fw_pick() {
	local nv=$HD/nvram next order label p
	[ -f "$nv" ] || return 0
	next=$(sed -n 's/^BootNext=//p' "$nv")
	order=$(sed -n 's/^BootOrder=//p' "$nv")
	if [ -z "$next" ]; then
		nv_set BootCurrent "${order%%,*}"
		return 0
	fi
	nv_set BootNext ""
	nv_set BootCurrent "$next"
	label=$(sed -n "s/^Boot$next=//p" "$nv")
	case $(printf '%s' "$label" | tr A-Z a-z) in
	*freebsd*) p=freebsd ;;
	*ubuntu*) p=ubuntu ;;
	*) p=none ;;
	esac
	log "firmware: BootNext=$next ($label) -> $p, BootNext deleted"
	con "BdsDxe: loading Boot$next \"$label\"" "BdsDxe: starting Boot$next \"$label\""
	printf '%s\n' "$p"
}
nv_set() {	# name value ("": delete)
	local nv=$HD/nvram t=$HD/nvram.tmp.$$
	{ grep -v "^$1=" "$nv"; if [ -n "$2" ]; then printf '%s=%s\n' "$1" "$2"; fi; } >"$t" && mv -f "$t" "$nv"
}

# The BMC's one-shot boot device (DIR/hosts/H/bmc-boot, written by bmchook.sh at IPMI
# `chassis bootdev DEV`): used once and cleared, as the firmware does with the boot
# flags; BMC_DEVICES (the host's conf, "pxe:freebsd ...") says which persona a device
# brings up.  Prints it, or nothing (no device set, or one that goes to GRUB).
fw_bmc() {
	local f=$HD/bmc-boot dev m p=""
	[ -f "$f" ] || return 0
	dev=$(cat "$f")
	rm -f "$f"
	dev=${dev%% *}
	case $dev in "" | default | none) return 0 ;; esac
	for m in ${BMC_DEVICES:-}; do
		[ "${m%%:*}" = "$dev" ] && p=${m#*:}
	done
	log "firmware: BMC boot device $dev -> ${p:-GRUB}, cleared"
	[ -n "$p" ] && con "BdsDxe: the BMC's boot device $dev (once)"
	printf '%s\n' "$p"
}

# GRUB: next_entry once (then left empty), else saved_entry, else 0; unknown -> 0.
# First the environment block on the EFI system partition (DIR/hosts/H/esp/grubenv, at
# /boot/efi for both personas): its next_entry wins once and is cleared there, as a
# grub.cfg with `load_env -f (esp)/grubenv next_entry` ... `save_env -f ...` does.
grub_pick() {
	local f=$HD/boot/grub/grubenv env next saved entry espnext=""
	if [ -f "$HD/esp/grubenv" ]; then
		espnext=$("$S/real/grub-editenv" "$HD/esp/grubenv" list 2>/dev/null | sed -n 's/^next_entry=//p')
		[ -n "$espnext" ] && "$S/real/grub-editenv" "$HD/esp/grubenv" set next_entry=
	fi
	env=$("$S/real/grub-editenv" "$f" list 2>/dev/null)
	next=$(printf '%s\n' "$env" | sed -n 's/^next_entry=//p')
	saved=$(printf '%s\n' "$env" | sed -n 's/^saved_entry=//p')
	if [ -n "$espnext" ]; then
		entry=$espnext
		log "grub: the ESP's grubenv says next_entry=\"$espnext\" (cleared there)"
		[ -n "$next" ] && "$S/real/grub-editenv" "$f" set next_entry=	# 00_header's, cleared before
	elif [ -n "$next" ]; then
		entry=$next
		"$S/real/grub-editenv" "$f" set next_entry=
	elif [ -n "$saved" ]; then
		entry=$saved
	else
		entry=0
	fi
	entry=${entry%%>*}
	# top-level entries of grub.cfg: index, id, title -> persona (the id's os part)
	awk -v want="$entry" '
		/^(menuentry|submenu) / {
			title = $0; sub(/^[a-z]+ \047/, "", title); sub(/\047.*/, "", title)
			id = ""
			if (match($0, /--id [^ ]+/)) id = substr($0, RSTART + 5, RLENGTH - 5)
			else if (match($0, /\$menuentry_id_option \047[^\047]+\047/)) id = substr($0, RSTART + 22, RLENGTH - 23)
			os = "none"
			if (id ~ /ubuntu/) os = "ubuntu"; else if (id ~ /freebsd/) os = "freebsd"
			if (n == 0) first = os
			if ((want ~ /^[0-9]+$/ && want + 0 == n) || want == id || want == title) { print os, n; found = 1; exit }
			n++
		}
		END { if (!found) print first, 0 }' "$HD/boot/grub/grub.cfg"
	log "grub: next_entry=\"$next\" saved_entry=\"$saved\" -> entry \"$entry\""
}

# the persona of top-level entry N of grub.cfg (the id's os part, as grub_pick)
grub_persona() {	# index
	awk -v want="$1" '/^(menuentry|submenu) / {
			id = ""
			if (match($0, /--id [^ ]+/)) id = substr($0, RSTART + 5, RLENGTH - 5)
			else if (match($0, /\$menuentry_id_option \047[^\047]+\047/)) id = substr($0, RSTART + 22, RLENGTH - 23)
			os = "none"
			if (id ~ /ubuntu/) os = "ubuntu"; else if (id ~ /freebsd/) os = "freebsd"
			if (n == 0) first = os
			if (n == want + 0) { print os; found = 1; exit }
			n++ }
		END { if (!found) print first }' "$HD/boot/grub/grub.cfg"
}

# GRUB's menu box as it shows on a serial terminal: the top-level entries of
# grub.cfg, the highlighted one marked with '*'
con_box() {	# highlighted-index
	con " +----------------------------------------------------------------------------+"
	awk -v sel="$1" '/^(menuentry|submenu) / {
			title = $0; sub(/^[a-z]+ \047/, "", title); sub(/\047.*/, "", title)
			if ($1 == "submenu") title = title " >"
			printf " |%s%-75s|\r\n", (n == sel ? "*" : " "), title; n++ }' "$HD/boot/grub/grub.cfg" >&3
	con " +----------------------------------------------------------------------------+" ""
}

# GRUB's menu: banner, box, help, countdown.  With DIR/hosts/H/grub-timeout
# (seconds, default 0: no wait) it waits that long reading the console's input
# (hostd writes it to con/in while con/menu exists): Up/Down (VT100 ESC [ A / B
# or ESC O A / B) move the highlight and redraw the box, any key stops the
# countdown, Enter boots the highlighted entry, the timeout the default.
# CHOSEN gets the index booted.
con_grub() {	# default-index
	local t=0 sel=$1 n keys="" enter=0 tick=0 counting=1 redraw
	[ -f "$HD/grub-timeout" ] && t=$(tr -cd 0-9 <"$HD/grub-timeout")
	[ -n "$t" ] || t=0
	[ -d "$HD/con" ] || t=0
	CHOSEN=$sel
	# a menu left by a boot cut short (power off meanwhile) must not keep the keys
	rm -f "$HD/con/in" "$HD/con/menu"
	[ "$t" -gt 0 ] && : >"$HD/con/menu"
	con "" "                             GNU GRUB  version 2.12" ""
	con_box "$sel"
	con "      Use the ^ and v keys to select which entry is highlighted."
	con "      Press enter to boot the selected OS, \`e' to edit the commands"
	con "      before booting or \`c' for a command-line."
	con "   The highlighted entry will be executed automatically in ${t}s."
	[ "$t" -gt 0 ] || return 0
	n=$(grep -cE '^(menuentry|submenu) ' "$HD/boot/grub/grub.cfg")
	log "grub: menu waits ${t}s for keys"
	# at most 120 s after the last key (a real GRUB waits forever once a key stopped it)
	while [ "$enter" = 0 ] && [ "$tick" -lt 2400 ]; do
		sleep 0.05
		tick=$((tick + 1))
		if [ "$counting" = 1 ] && [ $((tick % 20)) = 0 ]; then
			t=$((t - 1))
			[ "$t" -le 0 ] && break
			con "   The highlighted entry will be executed automatically in ${t}s."
		fi
		if [ -s "$HD/con/in" ] && mv -f "$HD/con/in" "$HD/con/in.take" 2>/dev/null; then
			keys="$keys$(cat "$HD/con/in.take"; printf x)"
			keys=${keys%x}
			rm -f "$HD/con/in.take"
		fi
		redraw=0
		while [ -n "$keys" ]; do
			counting=0
			tick=0
			case $keys in
			$'\e[A'*|$'\eOA'*) [ "$sel" -gt 0 ] && sel=$((sel - 1)); keys=${keys:3}; redraw=1; log "grub: key Up" ;;
			$'\e[B'*|$'\eOB'*) [ "$sel" -lt $((n - 1)) ] && sel=$((sel + 1)); keys=${keys:3}; redraw=1; log "grub: key Down" ;;
			$'\r'*|$'\n'*) enter=1; keys=""; log "grub: key Enter" ;;
			$'\e'|$'\e['|$'\eO') break ;;	# the rest of the sequence is still coming
			*) keys=${keys:1} ;;
			esac
		done
		[ "$redraw" = 1 ] && [ "$enter" = 0 ] && con_box "$sel"
	done
	rm -f "$HD/con/menu" "$HD/con/in"
	CHOSEN=$sel
	log "grub: booting entry $sel ($([ "$enter" = 1 ] && echo chosen || echo timeout))"
}

# A fault (DIR/hosts/H/console-hang exists): the boot stops at a driver's line until
# Ctrl-C arrives on the console, as FreeBSD's mlx4en did; "once" in the file: only
# the next boot.  Power commands wait behind it (hostd runs one at a time).
con_hang() {	# line
	con "$1"
	[ -f "$HD/console-hang" ] || return 0
	grep -qx once "$HD/console-hang" 2>/dev/null && rm -f "$HD/console-hang"
	rm -f "$HD/con/intr"
	log "console: hung at a boot line, waiting for Ctrl-C"
	until [ -e "$HD/con/intr" ]; do sleep 0.05; done
	rm -f "$HD/con/intr"
	log "console: Ctrl-C, the boot goes on"
}

con_kernel() {	# persona
	case $1 in
	ubuntu)
		con "  Booting \`Ubuntu'" "" "Loading Linux 6.8.0-134-generic ..." "Loading initial ramdisk ..."
		con "[    0.000000] Linux version 6.8.0-134-generic (buildd@lcy02-amd64-080) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.3.0-6ubuntu2~24.04) 13.3.0) #134-Ubuntu SMP PREEMPT_DYNAMIC"
		con "[    0.000000] Command line: BOOT_IMAGE=/vmlinuz-6.8.0-134-generic root=UUID=5b1e4c2a-0d6f-4f8e-9a43-7d2c1b8e6f10 ro console=ttyS0,115200n8"
		con "[    0.412031] Serial: 8250/16550 driver, 32 ports, IRQ sharing enabled"
		con "[    0.413377] 00:04: ttyS0 at I/O 0x3f8 (irq = 4, base_baud = 115200) is a 16550A"
		con "[    1.208514] mlx4_core: Mellanox ConnectX core driver v4.0-0"
		con "[    1.208601] mlx4_core 0000:03:00.0: DMFS high rate steer mode is: disabled performance optimized steering"
		con_hang "[    1.431118] mlx4_en: mlx4_core0: Port 1: Using 16 TX rings"
		con "[    1.431240] mlx4_en 0000:03:00.0: Activating port:1"
		con "[    2.804713] systemd[1]: systemd 255.4-1ubuntu8.6 running in system mode"
		con "[  OK  ] Reached target multi-user.target - Multi-User System."
		con "" "Ubuntu 24.04.4 LTS $H ttyS0" ""
		printf '%s login: ' "$H" >&3 ;;
	freebsd)
		[ "$ROLE" = host ] && con "  Booting \`FreeBSD 14.1'" ""
		con "Consoles: serial port  " "BIOS drive C: is disk0" "FreeBSD/x86 bootstrap loader, Revision 1.1"
		con "Loading /boot/defaults/loader.conf" "/boot/kernel/kernel text=0x1b58d08 data=0x140 data=0x1d6e6c0 syms=[0x8+0x1d2e88+0x8+0x1c3264]"
		con "---<<BOOT>>---" "Copyright (c) 1992-2024 The FreeBSD Project." "FreeBSD 14.1-RELEASE-p5 GENERIC amd64"
		con "CPU: Intel(R) Xeon(R) CPU E5-2620 v4 @ 2.10GHz (2100.04-MHz K8-class CPU)"
		con "uart0: <16550 or compatible> port 0x3f8-0x3ff irq 4 flags 0x10 on acpi0" "uart0: console (115200,n,8,1)"
		con "mlx4_core0: <mlx4_core> mem 0xfb000000-0xfb0fffff,0xf8000000-0xf9ffffff irq 32 at device 0.0 on pci3"
		con_hang "mlx4_core: Initializing mlx4_core"
		con "mlx4en0: Ethernet address: 24:8a:07:5c:1d:40" "mlx4en0: link state changed to UP"
		con "Starting sshd." "" "FreeBSD/amd64 ($H) (ttyu0)" ""
		printf 'login: ' >&3 ;;
	openwrt)
		con "[    0.000000] Linux version 5.15.150 (builder@buildhost) (x86_64-openwrt-linux-musl-gcc (OpenWrt GCC 12.3.0)) #0 SMP"
		con "[    1.020000] init: Console is alive" "[    2.310000] procd: - init -"
		con_hang "[    2.900000] e1000e: Intel(R) PRO/1000 Network Driver"
		con "" "BusyBox v1.36.1 (2024-03-22 22:09:42 UTC) built-in shell (ash)" ""
		printf '%s login: ' "$H" >&3 ;;
	none)
		con "Memtest86+ v6.20 | Press F1 for help, Esc to exit" ;;
	esac
}

# What proves a boot happened, new at each: Linux's boot id (DIR/hosts/H/boot_id,
# bound over /proc/sys/kernel/random/boot_id by hostinit.sh; written in place, so
# the bind sees it) and FreeBSD's kern.boottime (the sysctl stand-in's per-host value).
boot_ids() {
	local now us
	cat /proc/sys/kernel/random/uuid >"$HD/boot_id"
	now=$EPOCHREALTIME us=${EPOCHREALTIME#*.}
	mkdir -p "$HD/sysctl"
	printf '{ sec = %s, usec = %s } %s' "${now%.*}" "$((10#$us))" "$(date -u -d "@${now%.*}" '+%a %b %e %H:%M:%S %Y')" >"$HD/sysctl/kern.boottime"
}

boot() {
	local persona addr i pick CHOSEN
	if [ -n "${SAME_BOOT:-}" ]; then
		persona=$SAME_BOOT	# the reboot-fake fault: the OS only restarted sshd
	elif [ "$ROLE" = host ] && persona=$(fw_bmc) && [ -n "$persona" ]; then
		:	# the BMC's one-shot boot device: that OS (a netboot, its own disk), GRUB not run
	elif [ "$ROLE" = host ] && persona=$(fw_pick) && [ -n "$persona" ]; then
		:	# UEFI BootNext: that OS's own entry, GRUB not run
	elif [ "$ROLE" = host ]; then
		pick=$(grub_pick)
		persona=${pick% *}
		con_grub "${pick#* }"
		[ "$CHOSEN" = "${pick#* }" ] || persona=$(grub_persona "$CHOSEN")
	else
		persona=$PERSONAS
	fi
	[ -n "$persona" ] || persona=none
	con_kernel "$persona"
	printf '%s\n' "$persona" >"$HD/persona"
	[ -n "${SAME_BOOT:-}" ] || boot_ids
	log "booting $persona"
	if [ "$persona" = none ]; then
		setpower on	# firmware screen or memtest: on, but no OS answers
		return 0
	fi
	cat "$S/personas/$persona/os-release" >"$HD/os-release"
	cat "$HD/etc/passwd.$persona" >"$HD/etc/passwd"
	eval "addr=\$ADDR_$persona"
	net_down
	ip addr add "$addr/24" dev mgmt0
	if [ -n "${DATAIF:-}" ]; then
		ip addr add "$DATA" dev "$DATAIF"
		ip route replace 198.19.0.0/16 via "$DATAGW" dev "$DATAIF"
		if [ -n "${DATA6:-}" ]; then	# IPv6 beside it, usable at once (no DAD wait)
			ip -6 addr add "$DATA6" dev "$DATAIF" nodad
			ip -6 route replace 2001:2::/48 via "$DATAGW6" dev "$DATAIF"
		fi
	fi
	setsid /usr/sbin/sshd -D -e -f "$HD/sshd-$persona.conf" </dev/null >>"$HD/sshd.log" 2>&1 3>&- &
	record_pid $! "sshd-$H-$persona"
	for i in $(seq 1 60); do
		ss -Hltn "sport = :22" | grep -q . && break
		sleep 0.05
	done
	setpower on
}

delay() {
	local d
	d=$(awk -v a="$BOOT_DELAY" -v b="${BOOT_SLOW:-1}" 'BEGIN { printf "%.3f", a * b }')
	log "boot delay ${d}s"
	sleep "$d"
}

down_host() {	# pre-sleep
	setpower stopping
	[ "$1" = 0 ] || sleep "$1"
	kill_host
	net_down
	rm -f "$HD/persona"
}

log "command $CMD (power $(power))"
case $CMD in
boot)	# at `sim up`: no boot delay
	[ "$(power)" = on ] || boot ;;
wake|on)
	if [ "$(power)" = off ]; then
		setpower booting; delay; boot
	fi ;;
off|poweroff|soft)
	if [ "$(power)" != off ]; then
		if [ "$CMD" = off ]; then down_host 0; else down_host 0.5; fi
		setpower off
	fi ;;
reboot|reset|cycle)
	if [ "$(power)" = off ]; then
		[ "$CMD" = cycle ] && { setpower booting; delay; boot; }
	elif [ "$CMD" = reboot ] && [ -f "$HD/reboot-fake" ]; then
		# a fault (DIR/hosts/H/reboot-fake, used once): the OS drops every session
		# and restarts sshd but does not reboot (the same boot id / kern.boottime)
		rm -f "$HD/reboot-fake"
		SAME_BOOT=$(cat "$HD/persona" 2>/dev/null)
		log "fault: reboot-fake: sessions dropped, sshd restarted, no boot"
		down_host 0.5; setpower booting; boot
	else
		if [ "$CMD" = reboot ]; then down_host 0.5; else down_host 0; fi
		setpower booting; delay; boot
	fi ;;
*)	log "unknown command $CMD"; exit 2 ;;
esac
exit 0

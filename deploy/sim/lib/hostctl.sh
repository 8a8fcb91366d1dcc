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

# GRUB: next_entry once (then left empty), else saved_entry, else 0; unknown -> 0.
grub_pick() {
	local f=$HD/boot/grub/grubenv env next saved entry
	env=$("$S/real/grub-editenv" "$f" list 2>/dev/null)
	next=$(printf '%s\n' "$env" | sed -n 's/^next_entry=//p')
	saved=$(printf '%s\n' "$env" | sed -n 's/^saved_entry=//p')
	if [ -n "$next" ]; then
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
			if ((want ~ /^[0-9]+$/ && want + 0 == n) || want == id || want == title) { print os; found = 1; exit }
			n++
		}
		END { if (!found) print first }' "$HD/boot/grub/grub.cfg"
	log "grub: next_entry=\"$next\" saved_entry=\"$saved\" -> entry \"$entry\""
}

boot() {
	local persona addr i
	if [ "$ROLE" = host ]; then
		persona=$(grub_pick)
	else
		persona=$PERSONAS
	fi
	[ -n "$persona" ] || persona=none
	printf '%s\n' "$persona" >"$HD/persona"
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
	fi
	setsid /usr/sbin/sshd -D -e -f "$HD/sshd-$persona.conf" </dev/null >>"$HD/sshd.log" 2>&1 &
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
	else
		if [ "$CMD" = reboot ]; then down_host 0.5; else down_host 0; fi
		setpower booting; delay; boot
	fi ;;
*)	log "unknown command $CMD"; exit 2 ;;
esac
exit 0

#!/usr/bin/env bash
# tests/bench/boot_switch.sh: how long testbedd takes to switch a dual-boot
# host between its OSes (a boot action, ubuntu -> freebsd through grub-reboot
# and back through GRUB's default), against a hand-written script doing the
# same on the same simulated testbed (deploy/sim, prefix tbbs, block 196), for
# one or two testbedd binaries in the same run (before and after a change).
# tests/bench/README.md ("6. Boot switch") has the figures.
#
#   tests/bench/boot_switch.sh [--before PATH] [--after PATH] [--switches N]
#                              [--summary FILE] [--keep]
#
#   --after PATH   the testbedd measured (default $TESTBEDD, else build/bench/testbedd)
#   --before PATH  another testbedd measured the same way first (optional)
#   --switches N   round trips per binary and for the script (default 3)
#   --summary FILE append "name|testbedd|reference|ratio|goal|result" rows
#   --keep         keep the work directory (logs, state)
#
# Reference (R): per switch, one ssh `grub-reboot freebsd; reboot` (or
# `shutdown -r now` from FreeBSD), then `ssh true` to the persona that should
# come up, tried every 100 ms (ConnectTimeout 1) until it answers: the sim's
# own switch time with nothing waiting in between.  testbedd (T): POST
# /api/v1/hosts/left/boot, GET the action every 100 ms until it ends (it must
# succeed); wall time from the POST.  Ratio T/R per direction; the goal is
# T/R <= 1.5.  Nothing is a timed assertion: a ratio short of its goal says
# BELOW GOAL and the exit status stays 0.  Exit 1 when something could not
# run; 77 when not root.  Everything started here is stopped by pid; the sim
# is taken down in the EXIT trap.
set -u
export LC_ALL=C
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
SIM=$top/deploy/sim/sim
PFX=tbbs BLK=196

after=${TESTBEDD:-$top/build/bench/testbedd}
before="" switches=3 summary="" keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--after) after=${2:?}; shift ;;
	--before) before=${2:?}; shift ;;
	--switches) switches=${2:?}; shift ;;
	--summary) summary=${2:?}; shift ;;
	--keep) keep=1 ;;
	-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "boot_switch: unknown option $1 (see --help)" >&2; exit 1 ;;
	esac
	shift
done
[ "$(id -u)" = 0 ] || { echo "boot_switch: the sim needs root: skipped"; exit 77; }
for b in "$after" $before; do [ -x "$b" ] || { echo "boot_switch: no testbedd at $b" >&2; exit 1; }; done

W=$(mktemp -d /tmp/tbbench-boot-XXXXXX)
S="" DPID=""
stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=""
}
cleanup() {
	stop_daemon
	[ -n "$S" ] && "$SIM" down --prefix "$PFX" >/dev/null 2>&1
	[ "$keep" = 1 ] && echo "boot_switch: kept $W" || rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

S=$("$SIM" up --prefix "$PFX" --block "$BLK") || { echo "boot_switch: sim up failed" >&2; exit 1; }
NET=198.18.$BLK
UBU=$NET.11 BSD=$NET.10   # left's personas (deploy/sim's inventory)
sshc() {
	ssh -F /dev/null -i "$S/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes \
		-o UserKnownHostsFile="$S/known_hosts" -o StrictHostKeyChecking=yes \
		-o ConnectTimeout=1 -o LogLevel=ERROR "$@"
}
now() { date +%s.%N; }
wait_ssh() {	# addr: until it answers (at most 120 s)
	local end=$((SECONDS + 120))
	while [ $SECONDS -lt $end ]; do
		sshc "root@$1" true 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
wait_ssh "$UBU" || { echo "boot_switch: left does not answer as ubuntu" >&2; exit 1; }

# ---- R: the hand-written switch ----
ref_to_bsd=() ref_to_ubu=()
for i in $(seq "$switches"); do
	t0=$(now)
	sshc "root@$UBU" 'grub-reboot freebsd && reboot' >/dev/null 2>&1
	sleep 0.3   # the old persona's sshd must be gone before we poll
	wait_ssh "$BSD" || { echo "boot_switch: reference: freebsd did not come up" >&2; exit 1; }
	ref_to_bsd+=("$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')")
	t0=$(now)
	sshc "root@$BSD" 'shutdown -r now' >/dev/null 2>&1
	sleep 0.3
	wait_ssh "$UBU" || { echo "boot_switch: reference: ubuntu did not come back" >&2; exit 1; }
	ref_to_ubu+=("$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')")
done

# ---- T: testbedd's boot actions ----
api() {	# method path [body]
	curl -s -X "$1" -H "Authorization: Bearer $(cat "$DD/state/admin.token")" -H 'Content-Type: application/json' \
		${3:+--data-binary "$3"} "http://127.0.0.1:$(cat "$DD/port")$2"
}
jq_() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1" 2>/dev/null; }
boot() {	# os -> seconds on stdout; 1 when the action did not succeed
	local t0 id st
	t0=$(now)
	id=$(api POST /api/v1/hosts/left/boot "{\"os\":\"$1\"}" | jq_ 'd["action"]["id"]')
	[ -n "$id" ] || return 1
	for _ in $(seq 1800); do
		st=$(api GET "/api/v1/actions/$id" | jq_ 'd["action"]["state"]')
		case $st in succeeded) break ;; failed|canceled) return 1 ;; esac
		sleep 0.1
	done
	[ "$st" = succeeded ] || return 1
	awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'
}
measure() {	# name binary: fills T_<name>_bsd / T_<name>_ubu
	local name=$1 bin=$2 i s
	DD=$W/$name
	mkdir -p "$DD"
	"$bin" --inventory "$S/inventory.yaml" --state-dir "$DD/state" --port 0 --port-file "$DD/port" \
		--probe-interval 2 >"$DD/log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do [ -s "$DD/port" ] && break; sleep 0.1; done
	[ -s "$DD/port" ] || { echo "boot_switch: $bin did not start" >&2; return 1; }
	for _ in $(seq 100); do
		[ "$(api GET /api/v1/hosts/left | jq_ 'd["host"]["state"]["os"]')" = ubuntu ] && break
		sleep 0.2
	done
	eval "T_${name}_bsd=() T_${name}_ubu=()"
	for i in $(seq "$switches"); do
		s=$(boot freebsd) || { echo "boot_switch: $name: boot into freebsd failed" >&2; return 1; }
		eval "T_${name}_bsd+=($s)"
		s=$(boot ubuntu) || { echo "boot_switch: $name: boot into ubuntu failed" >&2; return 1; }
		eval "T_${name}_ubu+=($s)"
	done
	stop_daemon
}
[ -n "$before" ] && { measure before "$before" || exit 1; }
measure after "$after" || exit 1

mean() { printf '%s\n' "$@" | awk '{ s += $1; n++ } END { printf "%.2f", n ? s / n : 0 }'; }
rb=$(mean "${ref_to_bsd[@]}") ru=$(mean "${ref_to_ubu[@]}")
load=$(cut -d' ' -f1 /proc/loadavg)
echo "boot switch on the sim ($switches round trips each; load $load on $(nproc) CPUs)"
echo "  reference (ssh script): ubuntu->freebsd ${rb} s (${ref_to_bsd[*]}), freebsd->ubuntu ${ru} s (${ref_to_ubu[*]})"
row() {	# name label dir values...
	local name=$1 label=$2 dir=$3 ref
	shift 3
	ref=$([ "$dir" = bsd ] && echo "$rb" || echo "$ru")
	local m r res
	m=$(mean "$@")
	r=$(awk -v a="$m" -v b="$ref" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
	res=$(awk -v r="$r" 'BEGIN { print (r <= 1.5 ? "PASS" : "BELOW GOAL") }')
	echo "  testbedd $label: ${m} s ($*), ratio ${r} x reference: $res"
	[ -n "$summary" ] && echo "boot switch $label|${m} s|${ref} s|${r}|<= 1.5|$res" >>"$summary"
	return 0
}
for name in before after; do
	[ "$name" = before ] && [ -z "$before" ] && continue
	eval "row $name '$name ubuntu->freebsd' bsd \"\${T_${name}_bsd[@]}\""
	eval "row $name '$name freebsd->ubuntu' ubu \"\${T_${name}_ubu[@]}\""
done
exit 0

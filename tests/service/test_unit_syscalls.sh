#!/bin/sh
# tests/service/test_unit_syscalls.sh: every system call testbedd makes is one the
# unit's SystemCallFilter= allows (@system-service, minus @privileged and @resources).
#
# systemd-analyze verify cannot know which calls the daemon makes, and a call
# outside the filter fails with EPERM only when the unit runs.  So: run testbedd
# under strace -f (its children too) through start, probes, API reads and writes,
# an event stream, static pages, SIGHUP and SIGTERM; expand the unit's filter with
# `systemd-analyze syscall-filter`; fail on any call outside it.  sqlite calls
# fchown only when running as root (not under the unit), so fchown is ignored.
# Prints SKIP and passes when strace is missing or ptrace is not allowed.
set -u
src=${TB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${TB_BINARY_DIR:-$src/build}
unit=$src/deploy/testbedd.service

command -v strace >/dev/null 2>&1 || { echo "SKIP strace is not installed (apt-get install strace)"; exit 0; }
command -v systemd-analyze >/dev/null 2>&1 || { echo "FAIL systemd-analyze not found"; exit 1; }
[ -x "$bin/testbedd" ] || { echo "FAIL $bin/testbedd not built"; exit 1; }
strace -f -qq -o /dev/null true 2>/dev/null || { echo "SKIP strace cannot trace here (ptrace not allowed)"; exit 0; }

# The filter as the unit says it: allow lists, then deny lists (~).
allow_sets=$(sed -n 's/^SystemCallFilter=\([^~].*\)/\1/p' "$unit")
deny_sets=$(sed -n 's/^SystemCallFilter=~\(.*\)/\1/p' "$unit")
[ -n "$allow_sets" ] || { echo "FAIL the unit has no SystemCallFilter= allow list"; exit 1; }

tmp=$(mktemp -d /tmp/tbsys-XXXXXX) || exit 1
spid=
tpid=
cleanup() {
	if [ -n "$tpid" ]; then kill "$tpid" 2>/dev/null; fi
	if [ -n "$spid" ]; then wait "$spid" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

expand() { # @set or name -> syscall names
	for s in "$@"; do
		case $s in
		@*) systemd-analyze syscall-filter "$s" 2>/dev/null | sed -n '2,$p' | sed 's/^ *//; /^#/d; /^$/d' |
			while read -r x; do expand "$x"; done ;;
		*) echo "$s" ;;
		esac
	done
}
# shellcheck disable=SC2086 # lists of set names
expand $allow_sets | sort -u >"$tmp/allow"
# shellcheck disable=SC2086
expand $deny_sets | sort -u >"$tmp/deny"
[ "$(wc -l <"$tmp/allow")" -gt 100 ] || { echo "FAIL could not expand $allow_sets"; exit 1; }

mkdir -p "$tmp/state"
# A real key, so that the prober gets as far as connecting (nothing listens on port 9).
ssh-keygen -q -t ed25519 -N '' -C test -f "$tmp/key" >/dev/null 2>&1 || printf 'not a key\n' >"$tmp/key"
chmod 0600 "$tmp/key"
cat >"$tmp/inventory.yaml" <<EOF
version: 1
ssh: {user: root, key_file: $tmp/key, connect_timeout_s: 1}
machines:
  left:
    role: host
    mac: "02:00:00:00:00:01"
    os: {ubuntu: {address: 127.0.0.1, port: 9}, freebsd: {address: 127.0.0.2, port: 9}}
  right:
    role: host
    os: {ubuntu: {address: 127.0.0.3, port: 9}}
EOF

strace -f -qq -o "$tmp/trace" "$bin/testbedd" --inventory "$tmp/inventory.yaml" --state-dir "$tmp/state" \
	--listen 127.0.0.1 --port 0 --port-file "$tmp/port" --static "$src/static" --probe-interval 1 \
	>"$tmp/log" 2>&1 &
spid=$!
i=0
while [ $i -lt 100 ] && ! [ -s "$tmp/port" ]; do sleep 0.1; i=$((i + 1)); done
tpid=$(pgrep -P "$spid" | head -1)
[ -s "$tmp/port" ] && [ -n "$tpid" ] || { echo "FAIL testbedd did not start under strace:"; cat "$tmp/log"; exit 1; }
url=http://127.0.0.1:$(cat "$tmp/port")
i=0
until [ -s "$tmp/state/admin.token" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
auth="Authorization: Bearer $(cat "$tmp/state/admin.token")"

curl -s -o /dev/null "$url/api/v1/health"
curl -s -o /dev/null -H "$auth" "$url/api/v1/hosts"
curl -s -o /dev/null -H "$auth" "$url/api/v1/hosts/left"
curl -s -o /dev/null -H "$auth" -H 'Content-Type: application/json' -d '{"name":"sys","role":"viewer"}' "$url/api/v1/tokens"
curl -s -o /dev/null -H "$auth" "$url/api/v1/audit"
curl -s -o /dev/null -H "$auth" "$url/metrics"
curl -s -o /dev/null "$url/"
curl -s -o /dev/null -H "$auth" -H 'Content-Type: application/json' -d '{"token":"tbk_1_wrong"}' "$url/api/v1/session"
curl -s -o /dev/null -N --max-time 2 -H "$auth" "$url/api/v1/events"
sleep 2.5 # a probe round or two
kill -HUP "$tpid"
sleep 1
kill -TERM "$tpid"
wait "$spid"
spid=
tpid=

awk '{ l = $0; sub(/^[0-9]+ +/, "", l); if (match(l, /^[a-z_0-9]+\(/)) print substr(l, 1, RLENGTH - 1) }' \
	"$tmp/trace" | sort -u >"$tmp/used"
n=$(wc -l <"$tmp/used")
[ "$n" -gt 20 ] || { echo "FAIL only $n system calls traced: the trace did not work"; exit 1; }
outside=$(comm -23 "$tmp/used" "$tmp/allow" | tr '\n' ' ')
denied=$(comm -12 "$tmp/used" "$tmp/deny" | grep -vx fchown | tr '\n' ' ')
echo "note $n distinct system calls: $(tr '\n' ' ' <"$tmp/used")"
fails=0
if [ -z "$outside" ]; then echo "ok   all within $allow_sets"; else echo "FAIL outside $allow_sets: $outside"; fails=1; fi
if [ -z "$denied" ]; then echo "ok   none in ~$deny_sets"; else echo "FAIL denied by ~$deny_sets: $denied"; fails=1; fi
[ "$fails" = 0 ]

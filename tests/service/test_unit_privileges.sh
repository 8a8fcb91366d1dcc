#!/bin/sh
# tests/service/test_unit_privileges.sh: testbedd runs with what deploy/testbedd.service
# leaves it, and the unit's ExecStart/ExecReload/stop work on the real daemon.
#
# Without systemd as pid 1 the unit cannot be started, so setpriv(1) reproduces its
# credentials: a non-root user (nobody here, testbedd in the unit), no supplementary
# groups, no_new_privs, bounding set CAP_NET_RAW only, CAP_NET_RAW ambient, umask 0077.
# (The file-system, device and system-call sandbox is not reproduced; see test_unit.sh.)
# Checked: it starts and answers, the process has exactly those credentials, the
# files it creates are private (admin.token and the database: not group or other
# readable), SIGHUP (ExecReload) reloads and SIGTERM (systemd's stop) ends it with
# status 0.  Needs root for setpriv; prints SKIP and passes otherwise.
set -u
src=${TB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=${TB_BINARY_DIR:-$src/build}
fails=0
passes=0
ok() { passes=$((passes + 1)); echo "ok   $*"; }
bad() { fails=$((fails + 1)); echo "FAIL $*"; }

if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
	echo "SKIP needs root and setpriv (util-linux) to drop to the unit's credentials"
	exit 0
fi
[ -x "$bin/testbedd" ] || { echo "FAIL $bin/testbedd not built"; exit 1; }
unit=$src/deploy/testbedd.service
grep -qx 'CapabilityBoundingSet=CAP_NET_RAW' "$unit" && grep -qx 'AmbientCapabilities=CAP_NET_RAW' "$unit" &&
	grep -qx 'UMask=0077' "$unit" && grep -qx 'NoNewPrivileges=yes' "$unit" ||
	{ echo "FAIL the unit no longer has the credentials this test reproduces: update it"; exit 1; }

tmp=$(mktemp -d /tmp/tbpriv-XXXXXX) || exit 1
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
chmod 0755 "$tmp"
mkdir -p "$tmp/state"
chown nobody:nogroup "$tmp/state"
chmod 0700 "$tmp/state"
printf 'not a key\n' >"$tmp/key"
chown nobody:nogroup "$tmp/key"
chmod 0600 "$tmp/key"
inv() { # role of the second machine
	cat <<EOF
version: 1
ssh: {user: root, key_file: $tmp/key}
machines:
  left:
    role: host
    os: {ubuntu: {address: 127.0.0.1, port: 9}}
  right:
    role: $1
    os: {ubuntu: {address: 127.0.0.3, port: 9}}
EOF
}
inv host >"$tmp/inventory.yaml"
chmod 0644 "$tmp/inventory.yaml"
# nobody may not be able to reach the build tree (a 0700 home): copies it can reach.
cp "$bin/testbedd" "$tmp/testbedd" && cp -R "$src/static" "$tmp/static" && chmod -R a+rX "$tmp/testbedd" "$tmp/static" ||
	{ echo "FAIL cannot copy the daemon"; exit 1; }

# The unit's credentials; the command line is the unit's ExecStart with test paths.
(
	umask 0077
	exec setpriv --reuid=nobody --regid=nogroup --clear-groups --nnp \
		--inh-caps=-all,+net_raw --ambient-caps=-all,+net_raw --bounding-set=-all,+net_raw \
		"$tmp/testbedd" --inventory "$tmp/inventory.yaml" --state-dir "$tmp/state" --listen 127.0.0.1 \
		--port 0 --port-file "$tmp/state/port" --static "$tmp/static" --probe-interval 3600
) >"$tmp/log" 2>&1 &
pid=$!
i=0
while [ $i -lt 100 ] && ! [ -s "$tmp/state/port" ]; do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
	i=$((i + 1))
done
if ! [ -s "$tmp/state/port" ]; then
	bad "testbedd did not start with the unit's credentials:"
	sed 's/^/     /' "$tmp/log"
	echo "$passes passed, $fails failed"
	exit 1
fi
port=$(cat "$tmp/state/port")
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$port/api/v1/health" || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
if curl -sf -o /dev/null "http://127.0.0.1:$port/api/v1/health"; then ok "starts and answers as nobody with CAP_NET_RAW only"
else bad "no answer on /api/v1/health"; fi

st=/proc/$pid/status
field() { awk -v f="$1:" '$1 == f { $1 = ""; sub(/^ /, ""); print }' "$st"; }
check() { # field want what
	if [ "$(field "$1")" = "$2" ]; then ok "$3"; else bad "$3: $1 is '$(field "$1")', want '$2'"; fi
}
check Uid "65534 65534 65534 65534" "runs as nobody (the unit: testbedd), real, effective, saved"
check Groups "" "no supplementary groups"
check NoNewPrivs 1 "no_new_privs"
# CAP_NET_RAW is bit 13: 0x2000.
check CapBnd 0000000000002000 "bounding set: CAP_NET_RAW only"
check CapAmb 0000000000002000 "ambient: CAP_NET_RAW"
check CapEff 0000000000002000 "effective: CAP_NET_RAW, nothing else"

token=$tmp/state/admin.token
if [ -f "$token" ]; then
	m=$(stat -c %a "$token")
	if [ "$m" = 600 ]; then ok "admin.token is 0600"; else bad "admin.token is $m"; fi
else
	bad "no admin.token"
fi
loose=$(find "$tmp/state" -type f -perm /077 -print)
if [ -z "$loose" ]; then ok "every file in the state directory is private: $(ls "$tmp/state" | tr '\n' ' ')"
else bad "group or others can read: $loose"; fi

# ExecReload: SIGHUP rereads the inventory.
inv relay >"$tmp/inventory.yaml"
kill -HUP "$pid"
i=0
until curl -sf -H "Authorization: Bearer $(cat "$token")" "http://127.0.0.1:$port/api/v1/hosts" 2>/dev/null |
	grep -q '"relay"' || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ $i -lt 50 ]; then ok "SIGHUP (ExecReload) reloads the inventory"
else bad "the reload did not show; log: $(tail -3 "$tmp/log")"; fi

# Stop: systemd sends SIGTERM; the unit restarts only on failure, so 0 is required.
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
if [ "$rc" = 0 ]; then ok "SIGTERM stops it with status 0"; else bad "SIGTERM: exit status $rc"; fi

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]

# tests/sim/lib.sh: helpers for the simulated-testbed tests (sourced, not a test).
# Each test brings up its own sim (own prefix and block, so tests run in parallel)
# and always takes it down in a trap.
TOP=${TB_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
SIM=$TOP/deploy/sim/sim
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH LC_ALL=C
T_N=0 T_FAIL=0 PFX="" S=""

ok() { T_N=$((T_N + 1)); echo "ok $T_N - $*"; }
nok() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N - $*"; }
check() {	# description command...
	local d=$1
	shift
	if "$@"; then ok "$d"; else nok "$d"; fi
}
diag() { echo "# $*"; }
finish() {
	echo "1..$T_N"
	[ "$T_FAIL" = 0 ] || { diag "$T_FAIL failed"; exit 1; }
	exit 0
}
[ "$(id -u)" = 0 ] || { echo "1..0 # SKIP the sim needs root"; exit 0; }

sim_down() { [ -n "$PFX" ] && "$SIM" down --prefix "$PFX" >/dev/null 2>&1; }
trap 'sim_down' EXIT
trap 'exit 1' INT TERM HUP

sim_up() {	# prefix block [sim up options...]
	local pfx=$1
	BLK=$2
	shift 2
	NET=198.18.$BLK
	# a sim of this test left by a killed run (older than ctest's timeout): remove it
	if [ -n "$(find /run/testbedd-sim/.registry/$pfx -mmin +11 2>/dev/null)" ]; then
		diag "removing a stale sim $pfx"
		"$SIM" down --prefix "$pfx" >/dev/null 2>&1
	fi
	# PFX (what the EXIT trap takes down) only once the sim is ours: a prefix
	# in use by another run (the same test run twice at once) stays up
	S=$("$SIM" up --prefix "$pfx" --block "$BLK" "$@") || return 1
	PFX=$pfx
	MAC_left=02:18:$(printf %02x "$BLK"):00:00:01 MAC_right=02:18:$(printf %02x "$BLK"):00:00:02
	export IPMI_PASSWORD
	IPMI_PASSWORD=$(cat "$S/bmc-left.pass")
}

# ssh as the daemon does: its key, pinned host keys, no config, no agent
sshc() {	# user@addr command...
	ssh -F /dev/null -i "$S/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes \
		-o UserKnownHostsFile="$S/known_hosts" -o StrictHostKeyChecking=yes \
		-o ConnectTimeout=3 -o LogLevel=ERROR "$@"
}
ipmi() { timeout 15 ipmitool -I lanplus -H "$NET.12" -U ADMIN -E -C 3 -R 2 -N 2 "$@"; }

power() { cat "$S/hosts/$1/power" 2>/dev/null; }
wait_power() {	# host state [seconds]
	local i
	for i in $(seq 1 $((${3:-10} * 10))); do
		[ "$(power "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	diag "$1: power is $(power "$1"), wanted $2"
	return 1
}
wait_ssh() {	# addr [seconds]: the host answers ssh (TCP then a command)
	local i end=$((SECONDS + ${2:-10}))
	while [ $SECONDS -lt $end ]; do
		sshc -o ConnectTimeout=1 "root@$1" true 2>/dev/null && return 0
		sleep 0.2
	done
	diag "$1 does not answer ssh"
	return 1
}
ssh_refused() {	# addr: an off host does not answer ssh
	! sshc -o ConnectTimeout=2 "root@$1" true 2>/dev/null
}
boots() { grep -c ': power on$' "$S/hosts/$1/log"; }
wait_boot() {	# host boots-before addr [seconds]: a new boot finished and the host answers ssh
	local i
	for i in $(seq 1 $((${4:-15} * 10))); do
		[ "$(boots "$1")" -gt "$2" ] && break
		sleep 0.1
	done
	[ "$(boots "$1")" -gt "$2" ] || { diag "$1 did not boot again"; return 1; }
	wait_ssh "$3" 5
}

# testbedd on a sim's inventory, for tests that drive the daemon.
# daemon_up INVENTORY [testbedd options...]: starts it on port 0 in a temp dir
# ($DD), waits until it listens, exports TESTBEDD_URL and TESTBEDD_TOKEN_FILE.
BIN=${TB_BINARY_DIR:-$TOP/build}
DD="" DPID=""
daemon_up() {	# inventory [testbedd options...]
	DD=$(mktemp -d /tmp/tbsimd-XXXXXX)
	daemon_again "$@"
}
# daemon_again inventory [options...]: testbedd started again on daemon_up's
# state dir and log (after the test stopped or killed it), on a new port.
daemon_again() {
	local inv=$1
	shift
	rm -f "$DD/port"
	"$BIN/testbedd" --inventory "$inv" --state-dir "$DD/state" --port 0 --port-file "$DD/port" \
		"$@" >>"$DD/log" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do [ -s "$DD/port" ] && break; sleep 0.1; done
	[ -s "$DD/port" ] || return 1
	export TESTBEDD_URL="http://127.0.0.1:$(cat "$DD/port")" TESTBEDD_TOKEN_FILE="$DD/state/admin.token"
}
# daemon_down: SIGTERM, wait, by pid (the temp dir goes in daemon_clean).
daemon_down() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null
	for _ in $(seq 50); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=""
}
daemon_clean() { daemon_down; [ -n "$DD" ] && rm -rf "$DD"; }

# The event stream of the testbedd of daemon_up, recorded in the background
# by sse_stamp.py to $DD/events.jsonl (a JSON line per event with the time it
# came).  stamp_start TYPES (the ?type= list) returns once the stream's first
# record ("stream": where it starts) is there, 1 if not within 10 s;
# stamp_stop ends the recorder by its pid.
SPID=""
stamp_start() {
	python3 "$TOP/tests/sim/sse_stamp.py" "$TESTBEDD_URL/api/v1/events?type=$1" "$TESTBEDD_TOKEN_FILE" >"$DD/events.jsonl" 2>/dev/null &
	SPID=$!
	for _ in $(seq 1 100); do grep -q '"event": "stream"' "$DD/events.jsonl" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}
stamp_stop() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null; [ -n "$SPID" ] && wait "$SPID" 2>/dev/null; SPID=""; }

# scratch_dir: D, a temporary dir of the test's own, removed at exit.
SCRATCH=""
scratch_dir() { D=$(mktemp -d /tmp/tbscratch-XXXXXX) && SCRATCH=$D; }
trap 'stamp_stop; daemon_clean; sim_down; [ -z "$SCRATCH" ] || rm -rf "$SCRATCH"' EXIT

# sim_testbedd PREFIX BLOCK PROBE-INTERVAL: the sim up (the test ends at once
# if it does not come up) and testbedd started on its inventory (daemon_up),
# each a check.
sim_testbedd() {
	sim_up "$1" "$2" || { nok "sim up"; finish; }
	ok "sim up (prefix $PFX)"
	daemon_up "$S/inventory.yaml" --probe-interval "$3"
	check "testbedd starts on the sim's inventory" test -n "$DPID"
}
both_answer() {	# left and right are reachable in testbedd, each a check
	check "left answers" wait_up left
	check "right answers" wait_up right
}

# tbctl against the testbedd of daemon_up, at most 180 s
tb() { timeout 180 "$BIN/tbctl" "$@"; }
answers() {	# machine: the OS testbedd sees it answer as (tbctl --json host), "down" when unreachable
	tb --json host "$1" 2>/dev/null | python3 -c 'import json,sys; s=json.load(sys.stdin)["host"]["state"]; print(s["os"] if s["reachability"]=="up" else "down")'
}

# grub_entry HOST OS ENTRY: in the sim's inventory, HOST's GRUB entry for OS
# (the sim's is named OS) becomes ENTRY; reload_inventory N then has
# testbedd read it (SIGHUP) and is true once its log says "reloaded " N times.
grub_entry() {
	python3 - "$S/inventory.yaml" "$1" "$2" "$3" <<'PY'
import sys
p, host, os_, entry = sys.argv[1:]
s = open(p).read()
i = s.index("  %s:\n" % host)
old = '%s: "%s"' % (os_, os_)
j = s.index(old, i)
s = s[:j] + '%s: "%s"' % (os_, entry) + s[j + len(old):]
open(p, "w").write(s)
PY
}
reload_inventory() {
	kill -HUP "$DPID"
	for _ in $(seq 50); do [ "$(grep -c 'reloaded ' "$DD/log")" -ge "$1" ] && return 0; sleep 0.1; done
	return 1
}

# ---- the API of the testbedd started by daemon_up (the matrix tests) ----
api() {	# method path [body]: the reply body on stdout, the status in $DD/status (see st)
	local out
	out=$(curl -s -w '\n%{http_code}' -X "$1" -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" -H 'Content-Type: application/json' \
		${3:+--data-binary "$3"} "$TESTBEDD_URL$2")
	echo "${out##*$'\n'}" >"$DD/status"
	printf '%s' "${out%$'\n'*}"
}
st() { cat "$DD/status"; }
pyck() { python3 -c "import json,sys
d=json.load(sys.stdin)
$2" <<<"$1"; }	# json code: code sees d and exits non-zero to fail
jq_() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
mstate() { api GET "/api/v1/matrices/$1?runs=0" | jq_ 'd["matrix"]["state"]' 2>/dev/null; }
wait_state() {	# id state... [seconds in $WAIT]
	local id=$1 s
	shift
	for _ in $(seq $((${WAIT:-120} * 5))); do
		s=$(mstate "$id")
		for w in "$@"; do [ "$s" = "$w" ] && return 0; done
		sleep 0.2
	done
	diag "matrix $id is $s, wanted $*"
	return 1
}
run_state() {	# id seq
	api GET "/api/v1/matrices/$1" | jq_ "[r['state'] for r in d['matrix']['runs'] if r['seq'] == $2][0]" 2>/dev/null
}
wait_run() {	# id seq state [seconds]
	for _ in $(seq $((${4:-30} * 10))); do
		[ "$(run_state "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	diag "matrix $1 run $2 is $(run_state "$1" "$2"), wanted $3"
	return 1
}
# iperf3 processes (and their timeout(1) wrappers) in the sim's host namespaces
iperf_left() {
	local ns p n=0
	for ns in left right router; do
		for p in $(ip netns pids "$PFX-$ns" 2>/dev/null); do
			case "$(ps -o stat= -p "$p" 2>/dev/null)" in Z*|"") continue ;; esac
			case "$(ps -o comm= -p "$p" 2>/dev/null)" in iperf3|timeout) n=$((n + 1)) ;; esac
		done
	done
	echo $n
}
no_iperf_left() {	# within a few seconds
	for _ in $(seq 30); do [ "$(iperf_left)" = 0 ] && return 0; sleep 0.2; done
	diag "$(iperf_left) iperf3/timeout processes left on the hosts"
	return 1
}
wait_up() {	# machine
	for _ in $(seq 60); do
		api GET "/api/v1/hosts/$1" | jq_ 'd["host"]["state"]["reachability"]' 2>/dev/null | grep -qx up && return 0
		sleep 0.5
	done
	return 1
}

# ---- a console's state and stream (the console tests) ----
DEC="python3 $TOP/tests/sim/sse_console.py"	# decodes a saved console stream
cstate() {	# host key: console_state[key] of the host JSON
	api GET "/api/v1/hosts/$1" | jq_ "d['host']['console_state']['$2']" 2>/dev/null
}
wait_cstate() {	# host key value [seconds]
	for _ in $(seq $((${4:-20} * 5))); do [ "$(cstate "$1" "$2")" = "$3" ] && return 0; sleep 0.2; done
	diag "$1: console_state.$2 is $(cstate "$1" "$2"), wanted $3 (last_error: $(cstate "$1" last_error))"
	return 1
}
wait_text() {	# file text [seconds]: the decoded stream contains text
	for _ in $(seq $((${3:-20} * 5))); do $DEC "$1" | grep -qF -- "$2" && return 0; sleep 0.2; done
	diag "the console stream has no \"$2\"; its last lines:"
	$DEC "$1" | tail -5 | sed 's/^/#   /'
	return 1
}

running() {	# the seq of the run of matrix $1 running now ("" none), and the matrix's state
	api GET "/api/v1/matrices/$1" | jq_ '" ".join(map(str, [r["seq"] for r in d["matrix"]["runs"] if r["state"] == "running"][:1] + [d["matrix"]["state"]]))'
}
watch_runs() {	# matrix values-fn file tenths: "seq values" lines into file while
	# its runs run, until it ends; the matrix's last state in $state
	: >"$3"
	for _ in $(seq "$4"); do
		read -r run state <<<"$(running "$1")"
		[ -z "$state" ] && { state=$run; run=""; }
		values=$($2)
		# recorded only when the same run still runs after the values were read
		[ -n "$run" ] && [ "$(running "$1")" = "$run running" ] && echo "$run $values" >>"$3"
		case $state in succeeded|failed|canceled) break ;; esac
		sleep 0.1
	done
}

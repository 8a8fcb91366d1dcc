#!/usr/bin/env bash
# tests/bench/matrix_overhead.sh: the per-run overhead of testbedd's matrix runner
# against a hand-written ssh script, plain and with OpenSSH multiplexing, on a
# simulated testbed of its own (deploy/sim, prefix tbbo, block 239); then how the
# planner grows.  tests/bench/README.md ("3. Per-run overhead of a matrix") has
# the details and the figures; ./deploy/bench --only matrix runs it.
#
#   tests/bench/matrix_overhead.sh [--testbedd PATH] [--repeats N] [--duration S]
#                                  [--udp-bitrate R] [--smoke] [--summary FILE]
#
#   --testbedd PATH  the binary (default $TESTBEDD, else build/bench/testbedd)
#   --repeats N      repeats of each of the 4 cells (default 3: 12 runs)
#   --duration S     iperf3 -t (default 3)
#   --smoke          repeats 1 (4 runs) and 3 plan requests instead of 7
#   --summary FILE   append the figures as "name|testbedd|reference|ratio|goal|result"
#                    rows (deploy/bench's summary table)
#   --keep           keep the work directory (testbedd's logs and state, the outputs)
#
# The same runs in the same order, three ways, one after the other:
#   A. testbedd: POST /api/v1/matrices, wall time until the matrix's terminal
#      matrix.state event arrives on GET /api/v1/events; every run must end ok
#      with a stored result.  The runs' own timestamps split the overhead into
#      before the first run, inside the runs, between runs and after the last.
#   B. a plain bash script: per run one ssh to the server that starts
#      `iperf3 -s -1 -p PORT` in the background and polls `ss -Hltn` there every
#      10 ms until it listens (the same check testbedd makes), then one ssh to the
#      client running `iperf3 -c ADDR -p PORT -t S -J [-u -b R] [-R]` into a file.
#   C. B with -o ControlMaster=auto -o ControlPath=... -o ControlPersist=60: the
#      first ssh to each host opens a master, the others ride on it; the masters
#      are closed with ssh -O exit at the end (and by pid if they linger).
# Overhead a run = (wall - runs x S) / runs.  Nothing is a timed assertion: a
# figure short of its goal says BELOW GOAL and the exit status stays 0.  Exit 1
# when something could not run (the sim, testbedd, ssh, a run that failed or
# stored no result); 77 when not root (the sim needs it).  Everything started
# here is stopped by pid; the sim is taken down in the EXIT trap.
set -u
export LC_ALL=C
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
SIM=$top/deploy/sim/sim
PFX=tbbo BLK=239 REG=/run/testbedd-sim/.registry

testbedd=${TESTBEDD:-$top/build/bench/testbedd}
repeats=3 duration=3 udp_bitrate=100M smoke=0 summary="" plan_reqs=7 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--testbedd) testbedd=${2:?}; shift ;;
	--repeats) repeats=${2:?}; shift ;;
	--duration) duration=${2:?}; shift ;;
	--udp-bitrate) udp_bitrate=${2:?}; shift ;;
	--smoke) smoke=1 repeats=1 plan_reqs=3 ;;
	--summary) summary=${2:?}; shift ;;
	--keep) keep=1 ;;
	-h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
	*) echo "matrix_overhead: unknown option $1 (see --help)" >&2; exit 1 ;;
	esac
	shift
done
nruns=$((4 * repeats))
test_s=$((nruns * duration))

say() { printf '%s\n' "$*"; }
die() { echo "matrix_overhead: ERROR: $*" >&2; exit 1; }
row() { [ -z "$summary" ] || printf '%s\n' "$*" >>"$summary"; }
[ "$(id -u)" = 0 ] || { echo "matrix_overhead: the sim needs root: not run" >&2; exit 77; }
for c in ssh iperf3 python3 curl ss ip ssh-keygen; do
	command -v "$c" >/dev/null 2>&1 || die "$c is missing: run ./deploy/setup"
done
[ -x "$testbedd" ] || die "no testbedd at $testbedd (--testbedd PATH or TESTBEDD=PATH)"

tmp=$(mktemp -d /tmp/tbbo-XXXXXX) || exit 1
chmod 0755 "$tmp"
S=$tmp/sim
pids="" sim_started=0
stop_pid() { # pid: TERM, up to 5 s, then KILL
	kill -TERM "$1" 2>/dev/null || return 0
	local i=0
	while kill -0 "$1" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}
# ssh as testbedd does (tests/sim/lib.sh sshc): the sim's key, pinned host keys, no config
SSH=(ssh -F /dev/null -i "$S/id_ed25519" -o IdentitiesOnly=yes -o BatchMode=yes
	-o UserKnownHostsFile="$S/known_hosts" -o StrictHostKeyChecking=yes -o ConnectTimeout=5 -o LogLevel=ERROR)
MUX=(-o ControlMaster=auto -o "ControlPath=$tmp/cm-%C" -o ControlPersist=60)
masters_close() { # close the multiplexing masters of C, by ssh -O exit, then by pid
	local a p mp=""
	for a in ${L_ADDR:-} ${R_ADDR:-} ${P2_C:-} ${P2_S:-}; do
		p=$("${SSH[@]}" "${MUX[@]}" -O check "root@$a" 2>&1 | sed -n 's/.*(pid=\([0-9]*\)).*/\1/p')
		[ -n "$p" ] || continue
		mp="$mp $p"
		"${SSH[@]}" "${MUX[@]}" -O exit "root@$a" >/dev/null 2>&1
	done
	for p in $mp; do
		for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		if kill -0 "$p" 2>/dev/null; then
			echo "matrix_overhead: the ssh master $p outlived ssh -O exit: stopping it" >&2
			kill -TERM "$p" 2>/dev/null
		fi
	done
	masters_left=0
	for p in $mp; do kill -0 "$p" 2>/dev/null && masters_left=$((masters_left + 1)); done
	return 0
}
cleanup() {
	[ -z "${S:-}" ] || [ ! -f "$S/id_ed25519" ] || masters_close
	for p in $pids; do stop_pid "$p"; done
	pids=""
	[ "$sim_started" = 0 ] || "$SIM" down --prefix "$PFX" >/dev/null 2>&1
	sim_started=0
	if [ "$keep" = 1 ]; then echo "matrix_overhead: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# testbedd on an inventory, port 0, probes an hour apart (the first one at start).
start_testbedd() { # inventory dir -> tb_pid tb_url tb_token (files in dir)
	local inv=$1 d=$2 i
	mkdir -p "$d/state"
	"$testbedd" --inventory "$inv" --state-dir "$d/state" --listen 127.0.0.1 --port 0 --port-file "$d/port" \
		--probe-interval 3600 >"$d/testbedd.log" 2>&1 &
	tb_pid=$!
	pids="$pids $tb_pid"
	tb_url=""
	for i in $(seq 100); do
		if [ -s "$d/port" ] && [ -s "$d/state/admin.token" ] &&
			curl -sf -o /dev/null "http://127.0.0.1:$(cat "$d/port")/api/v1/health"; then
			tb_url=http://127.0.0.1:$(cat "$d/port")
			break
		fi
		kill -0 "$tb_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$tb_url" ] || { cat "$d/testbedd.log" >&2; die "testbedd did not start on $inv"; }
	tb_token=$(cat "$d/state/admin.token")
}
api() { # method path [body] -> body on stdout; fails on a non-2xx status
	curl -sf -X "$1" -H "Authorization: Bearer $tb_token" -H 'Content-Type: application/json' \
		${3:+--data-binary "$3"} "$tb_url$2"
}
fx() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
ovh() { awk -v w="$1" -v n="$nruns" -v t="$test_s" 'BEGIN { printf "%.3f", (w - t) / n }'; }

# ---- the sim ----------------------------------------------------------------------------
if [ -f "$REG/$PFX" ]; then
	if [ -n "$(find "$REG/$PFX" -mmin +15 2>/dev/null)" ]; then
		say "== removing a stale sim $PFX (left by a killed run)"
		"$SIM" down --prefix "$PFX" >/dev/null 2>&1
	else
		die "a sim '$PFX' is up (another run of this benchmark?): not touching it"
	fi
fi
say "== the sim: $SIM up --prefix $PFX --block $BLK --dir $S"
sim_started=1
"$SIM" up --prefix "$PFX" --block "$BLK" --dir "$S" >"$tmp/sim-up.log" 2>&1 ||
	{ cat "$tmp/sim-up.log" >&2; die "sim up failed"; }
inv=$S/inventory.yaml
# the personas' addresses, from the inventory the sim wrote
yaddr() { # machine section(os name or link name) -> its address (without the /len)
	awk -v m="  $1:" -v s="      $2:" '
		$0 == m { inm = 1; next } inm && /^  [a-z]/ { inm = 0 }
		inm && $0 == s { ins = 1; next }
		inm && ins && /address:/ { sub(/.*address: */, ""); sub(/\/.*/, ""); print; exit }' "$inv"
}
L_ADDR=$(yaddr left ubuntu) R_ADDR=$(yaddr right ubuntu) R_DATA=$(yaddr right lan20)
[ -n "$L_ADDR" ] && [ -n "$R_ADDR" ] && [ -n "$R_DATA" ] || die "no left/right ubuntu or lan20 address in $inv"
"${SSH[@]}" "root@$L_ADDR" true </dev/null && "${SSH[@]}" "root@$R_ADDR" true </dev/null ||
	die "ssh to the sim's personas failed"
say "   left ubuntu $L_ADDR, right ubuntu $R_ADDR, right's data-plane address $R_DATA (lan20, via the router)"
say "   $(iperf3 --version | head -1); OpenSSH $(ssh -V 2>&1 | sed 's/,.*//'); $(nproc) CPUs; load average $(cut -d' ' -f1 /proc/loadavg)"

# ---- A. testbedd ------------------------------------------------------------------------
spec="{\"name\":\"bench\",\"pairs\":[{\"client\":\"left\",\"server\":\"right\"}],\"protocols\":[\"tcp\",\"udp\"],
 \"directions\":[\"forward\",\"reverse\"],\"duration_s\":$duration,\"repeats\":$repeats,\"iperf\":{\"udp_bitrate\":\"$udp_bitrate\"}}"
mkdir -p "$tmp/a"
start_testbedd "$inv" "$tmp/a"
say "== A. testbedd (pid $tb_pid, $tb_url): $nruns runs of $duration s (tcp/udp x forward/reverse x $repeats, udp -b $udp_bitrate)"
# wait until the prober has seen left, right and the router (the first probe is at start)
for _ in $(seq 100); do
	n=$(api GET /api/v1/hosts | python3 -c 'import json,sys
d=json.load(sys.stdin); print(sum(1 for h in d["hosts"] if h["name"] in ("left","right","router") and h["state"]["reachability"]=="up"))' 2>/dev/null)
	[ "${n:-0}" = 3 ] && break
	sleep 0.1
done
[ "${n:-0}" = 3 ] || die "testbedd does not see left, right and the router up: $(api GET /api/v1/hosts)"
api POST /api/v1/matrices/plan "$spec" >"$tmp/plan.json" || die "POST /api/v1/matrices/plan refused the spec: $spec"
python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["plan"]["plan"]: print(r["seq"], r["protocol"], r["direction"])' "$tmp/plan.json" >"$tmp/runs.txt" ||
	die "no runs in the plan: $(head -c 400 "$tmp/plan.json")"
[ "$(wc -l <"$tmp/runs.txt")" = "$nruns" ] || die "the plan has $(wc -l <"$tmp/runs.txt") runs, not $nruns"
say "   the order (from the plan): $(awk '{ printf "%s%s/%s", (NR > 1 ? ", " : ""), $2, $3 }' "$tmp/runs.txt")"
printf '%s' "$spec" >"$tmp/spec.json"
python3 -u - "$tb_url" "$tmp/a/state/admin.token" "$tmp/spec.json" "$duration" "$nruns" "$tmp/a.result" <<'PY' || die "the testbedd matrix did not complete cleanly (above)"
# POST the matrix and follow GET /api/v1/events until its terminal matrix.state;
# then check every run and split the overhead with the runs' own timestamps.
import datetime, json, statistics, sys, threading, time, urllib.error, urllib.request
url, tokf, specf, dur, nruns, outf = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
tok = open(tokf).read().strip()
H = {"Authorization": "Bearer " + tok}
TERMINAL = ("succeeded", "failed", "canceled", "interrupted")

def api(method, path, body=None):
    h = dict(H)
    if body is not None:
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(url + path, data=body.encode() if body is not None else None, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit("%s %s: %d %s" % (method, path, e.code, e.read().decode("utf-8", "replace")[:500]))

evs, cv, connected = [], threading.Condition(), threading.Event()
def follow():
    req = urllib.request.Request(url + "/api/v1/events?type=run.,matrix.", headers=dict(H, Accept="text/event-stream"))
    with urllib.request.urlopen(req, timeout=3600) as r:
        connected.set()
        ev = {}
        for raw in r:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line == "":
                if "event" in ev:
                    ev["t"] = time.time()
                    with cv:
                        evs.append(ev)
                        cv.notify_all()
                ev = {}
            elif line.startswith("event:"):
                ev["event"] = line[6:].strip()
            elif line.startswith("data:"):
                try:
                    ev["data"] = json.loads(line[5:].strip())
                except ValueError:
                    pass
threading.Thread(target=follow, daemon=True).start()
if not connected.wait(10):
    sys.exit("GET /api/v1/events did not answer")
time.sleep(0.2)

def inner(e):
    return (e.get("data") or {}).get("data") or {}

t0 = time.time()
mid = api("POST", "/api/v1/matrices", open(specf).read())["matrix"]["id"]
t_posted = time.time()
end_ev, how, deadline = None, "the matrix.state event", t0 + nruns * (dur + 30) + 120
polled_end = None
while end_ev is None and time.time() < deadline:
    with cv:
        cv.wait(1.0)
        for e in evs:
            d = inner(e)
            if e.get("event") == "matrix.state" and d.get("matrix") == mid and d.get("state") in TERMINAL:
                end_ev = e
                break
        quiet = time.time() - (evs[-1]["t"] if evs else t0)
    # the stream may have gone: when it is quiet, ask (the store says "succeeded" a
    # moment before the event is published, so a poll alone would win that race)
    if end_ev is None and quiet > 3:
        st = api("GET", "/api/v1/matrices/%d?runs=0" % mid)["matrix"]["state"]
        if st in TERMINAL:
            polled_end = polled_end or {"t": time.time(), "data": {"data": {"state": st}}}
            if time.time() - polled_end["t"] > 3:
                end_ev, how = polled_end, "polling (the event did not come)"
if end_ev is None:
    sys.exit("matrix %d did not end within %.0f s" % (mid, deadline - t0))
t_end = end_ev["t"]
wall = t_end - t0
state = inner(end_ev)["state"]

mx = api("GET", "/api/v1/matrices/%d" % mid)["matrix"]
runs = sorted(mx["runs"], key=lambda r: r["seq"])
res = api("GET", "/api/v1/matrices/%d/results" % mid)
one = api("GET", "/api/v1/runs/%d" % runs[0]["id"])["run"]

bad = [r for r in runs if r["state"] != "ok" or not r.get("sender_bps") or not r.get("started_at") or not r.get("finished_at")]
rruns = res.get("runs") if isinstance(res.get("runs"), list) else []
stored = sum(1 for r in rruns if r.get("state") == "ok" and (r.get("sender_bps") or 0) > 0)
print("   matrix %d %s in %.3f s (POST -> terminal state, by %s); POST answered in %.0f ms" % (mid, state, wall, how, (t_posted - t0) * 1000))
print("   client: %s" % one.get("client_command"))
print("   server: %s" % one.get("server_command"))
def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
# the first server interval (iperf3 -i 1, flushed) arrives about 1 s after the test
# starts: run start -> test start is ssh + server start + listen wait + client ssh + connect
first = {}
for e in evs:
    d = inner(e)
    if e.get("event") == "run.interval" and d.get("matrix") == mid and d.get("side") == "server" and d.get("n") == 0:
        first.setdefault(d.get("run"), e["t"])
for r in runs:
    ph = ""
    if r.get("started_at") and r.get("finished_at"):
        s0, f0 = ts(r["started_at"]), ts(r["finished_at"])
        ph = "  %3.0f ms over %g s" % ((f0 - s0 - dur) * 1000, dur)
        if r["id"] in first:
            su = first[r["id"]] - 1.0 - s0
            ph += " = %3.0f to the test start + %3.0f after it" % (su * 1000, (f0 - s0 - dur - su) * 1000)
    print("   run %2d %s/%-7s %-6s %s -> %s  sender %6.0f Mbit/s%s" % (r["seq"], r["protocol"], r["direction"], r["state"],
          (r.get("started_at") or "-")[11:23], (r.get("finished_at") or "-")[11:23], (r.get("sender_bps") or 0) / 1e6, ph))
ok = True
if state != "succeeded" or len(runs) != nruns or bad:
    print("   NOT CLEAN: state %s, %d runs, %d not ok or without a result: %s" % (state, len(runs), len(bad),
          "; ".join("%d %s %s" % (r["seq"], r.get("error_class"), r.get("error_message")) for r in bad)))
    ok = False
if stored != nruns:
    print("   NOT CLEAN: GET /api/v1/matrices/%d/results has %d ok runs with sender_bps of %d (keys: %s)" % (mid, stored, nruns, sorted(res)))
    ok = False
if not ok:
    sys.exit(1)
print("   results: %d runs ok, each with sender_bps stored (GET /api/v1/matrices/%d/results: %d runs, %d cells)" % (stored, mid, len(rruns), len(res.get("cells") or [])))

st = [ts(r["started_at"]) for r in runs]
fi = [ts(r["finished_at"]) for r in runs]
inside = [f - s - dur for s, f in zip(st, fi)]
between = [st[i + 1] - fi[i] for i in range(len(runs) - 1)]
inrunner = (fi[-1] - st[0] - nruns * dur) / nruns
before, after = st[0] - t0, t_end - fi[-1]
setup = [first[r["id"]] - 1.0 - s for r, s in zip(runs, st) if r["id"] in first]
tail = [i - (first[r["id"]] - 1.0 - s) for r, s, i in zip(runs, st, inside) if r["id"] in first]
ms = lambda v: "%.0f" % (v * 1000)
print("   in the runner (first run start -> last run end - %d x %g s) / %d: %.3f s a run" % (nruns, dur, nruns, inrunner))
print("   before the first run (POST -> run 0 started: holds, the routers' and hosts' metadata, iperf3 --version): %s ms" % ms(before))
print("   after the last run (run %d finished -> the matrix's terminal event): %s ms" % (nruns - 1, ms(after)))
print("   per run, started -> finished minus %g s: median %s ms (min %s, max %s)" % (dur, ms(statistics.median(inside)), ms(min(inside)), ms(max(inside))))
if between:
    print("   between runs, finished -> next started: median %s ms (min %s, max %s)" % (ms(statistics.median(between)), ms(min(between)), ms(max(between))))
if setup:
    print("   of which run start -> iperf3 test start (first server interval - 1 s): median %s ms (min %s, max %s), %d runs" % (
          ms(statistics.median(setup)), ms(min(setup)), ms(max(setup)), len(setup)))
    print("   and test end -> run finished (rest of the run): median %s ms" % ms(statistics.median(tail)))
with open(outf, "w") as f:
    f.write("wall %.4f\ninrunner %.4f\nbefore %.4f\nafter %.4f\ninside %.4f\nbetween %.4f\nsetup %.4f\n" % (
        wall, inrunner, before, after, statistics.median(inside), statistics.median(between) if between else 0,
        statistics.median(setup) if setup else -1))
PY
get() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
a_wall=$(get wall "$tmp/a.result") a_in=$(get inrunner "$tmp/a.result")
a_before=$(get before "$tmp/a.result")
grep -i ' warn \| error ' "$tmp/a/testbedd.log" | head -5 | sed 's/^/   testbedd log: /'
stop_pid "$tb_pid"

# ---- B and C. the hand-written script -----------------------------------------------------
# one run as a careful hand script does it: start the server in the background and wait
# (on the server, ss every 10 ms) until it listens; then the client, its JSON to a file.
hand_run() { # out port protocol direction ssh-options...
	local out=$1 port=$2 proto=$3 dir=$4 t0 t1 t2 flags=""
	shift 4
	[ "$proto" = udp ] && flags="$flags -u -b $udp_bitrate"
	[ "$dir" = reverse ] && flags="$flags -R"
	t0=$EPOCHREALTIME
	"${SSH[@]}" "$@" "root@$R_ADDR" "iperf3 -s -1 -p $port >/dev/null 2>&1 </dev/null &
		n=0; until ss -Hltn 'sport = :$port' | grep -q .; do n=\$((n + 1)); [ \$n -lt 500 ] || exit 1; sleep 0.01; done" \
		</dev/null >"$out.server" 2>&1 || { echo "   the server on port $port did not start: $(cat "$out.server")"; return 1; }
	t1=$EPOCHREALTIME
	"${SSH[@]}" "$@" "root@$L_ADDR" "iperf3 -c $R_DATA -p $port -t $duration -J$flags" </dev/null >"$out" 2>"$out.err"
	t2=$EPOCHREALTIME
	echo "$t0 $t1 $t2" >"$out.t"
}
hand_check() { # dir -> prints a line per run; fails when a run has no result
	python3 -u - "$1" "$nruns" "$duration" <<'PY'
import json, os, statistics, sys
d, n, dur = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
bad, srv, cli = [], [], []
for i in range(n):
    p = os.path.join(d, "run-%d.json" % i)
    try:
        j = json.load(open(p))
        e = j.get("end", {})
        bps = (e.get("sum_sent") or e.get("sum") or {}).get("bits_per_second", 0)
        if j.get("error") or not bps:
            bad.append("%d: %s" % (i, j.get("error") or "no bits_per_second"))
    except (OSError, ValueError) as x:
        bad.append("%d: %s" % (i, x))
    try:
        t0, t1, t2 = map(float, open(p + ".t").read().split())
        srv.append(t1 - t0)
        cli.append(t2 - t1 - dur)
    except (OSError, ValueError):
        pass
if srv:
    print("   per run: the server ssh (start + listen) median %.0f ms (min %.0f, max %.0f); the client ssh minus %g s median %.0f ms (min %.0f, max %.0f)" % (
        statistics.median(srv) * 1000, min(srv) * 1000, max(srv) * 1000, dur, statistics.median(cli) * 1000, min(cli) * 1000, max(cli) * 1000))
if bad:
    print("   NOT CLEAN: %d of %d runs without a result: %s" % (len(bad), n, "; ".join(bad)))
    sys.exit(1)
print("   %d client outputs saved, each a JSON result with bits_per_second" % n)
PY
}
hand_script() { # dir port-base ssh-options... -> sets hand_wall
	local d=$1 base=$2 seq proto dir t0 t1
	shift 2
	mkdir -p "$d"
	t0=$EPOCHREALTIME
	while read -r seq proto dir; do
		hand_run "$d/run-$seq.json" $((base + seq)) "$proto" "$dir" "$@" || return 1
	done <"$tmp/runs.txt"
	t1=$EPOCHREALTIME
	hand_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	say "   $nruns runs in $hand_wall s"
	hand_check "$d"
}
say "== B. plain bash script: per run ssh right (iperf3 -s -1 in the background, ss -Hltn every 10 ms until it listens), ssh left (iperf3 -c $R_DATA -J > file)"
hand_script "$tmp/b" 6100 || die "the plain script did not run cleanly"
b_wall=$hand_wall
say "== C. the same with -o ControlMaster=auto -o ControlPath=$tmp/cm-%C -o ControlPersist=60"
hand_script "$tmp/c" 6300 "${MUX[@]}" || die "the multiplexed script did not run cleanly"
c_wall=$hand_wall
masters_close
say "   masters closed (ssh -O exit); ssh master processes left: $masters_left"
[ "$masters_left" = 0 ] || die "ssh master processes outlived ssh -O exit and SIGTERM"

# ---- D and E. two matrices at once (the goal holds with two running) -----------------------
# a second, disjoint pair beside left -> right: the router (its freebsd persona) -> the
# relay over the management network, as tests/sim/test_side_by_side.sh gives them
NET_MG=${L_ADDR%.*}
P2_C=$NET_MG.50 P2_S=$NET_MG.2
python3 - "$inv" "$tmp/inv2.yaml" "$NET_MG" <<'PY' || die "cannot write the two-pair inventory"
import sys
src, dst, net = sys.argv[1:4]
s = open(src).read()
a = s.replace("        ifname: {freebsd: ix1}\n", "        ifname: {freebsd: ix1}\n      mgmt:\n        address: %s.50/24\n" % net, 1)
b = a.replace("  relay:\n    role: relay\n", "  relay:\n    role: relay\n    links:\n      mgmt:\n        address: %s.2/24\n" % net, 1)
if a == s or b == a:
    sys.exit("the sim's inventory has not the router/relay shape this expects")
open(dst, "w").write(b)
PY
spec2=$(printf '%s' "$spec" | python3 -c 'import json,sys
s = json.load(sys.stdin); s["name"] = "bench2"; s["pairs"] = [{"client": "router", "server": "relay", "link": "mgmt"}]
print(json.dumps(s))') || die "cannot make the second spec from: $spec"
mkdir -p "$tmp/d"
start_testbedd "$tmp/inv2.yaml" "$tmp/d"
say "== D. testbedd, two matrices at once (pid $tb_pid): left -> right and router -> relay (management network), $nruns runs each"
for _ in $(seq 100); do
	n=$(api GET /api/v1/hosts | python3 -c 'import json,sys
d=json.load(sys.stdin); print(sum(1 for h in d["hosts"] if h["state"]["reachability"]=="up"))' 2>/dev/null)
	[ "${n:-0}" = 4 ] && break
	sleep 0.1
done
[ "${n:-0}" = 4 ] || die "testbedd does not see the four machines up: $(api GET /api/v1/hosts)"
printf '%s' "$spec2" >"$tmp/spec2.json"
python3 -u - "$tb_url" "$tmp/d/state/admin.token" "$tmp/spec.json" "$tmp/spec2.json" "$duration" "$nruns" "$tmp/d.result" <<'PY' || die "the two testbedd matrices did not complete cleanly (above)"
# POST both matrices at once and poll until both have ended; every run ok with a
# result, and the two matrices' runs overlapping in time (side by side).
import datetime, json, sys, time, urllib.error, urllib.request
url, tokf, s1, s2, dur, nruns, outf = sys.argv[1:8]
dur, nruns = float(dur), int(nruns)
H = {"Authorization": "Bearer " + open(tokf).read().strip(), "Content-Type": "application/json"}
def api(method, path, body=None):
    req = urllib.request.Request(url + path, data=body.encode() if body else None, method=method, headers=H)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit("%s %s: %d %s" % (method, path, e.code, e.read().decode("utf-8", "replace")[:500]))
TERMINAL = ("succeeded", "failed", "canceled", "interrupted")
t0 = time.time()
ids = [api("POST", "/api/v1/matrices", open(f).read())["matrix"]["id"] for f in (s1, s2)]
ends, deadline = {}, t0 + nruns * (dur + 30) + 120
while len(ends) < 2 and time.time() < deadline:
    for i in ids:
        if i not in ends and api("GET", "/api/v1/matrices/%d?runs=0" % i)["matrix"]["state"] in TERMINAL:
            ends[i] = time.time()
    time.sleep(0.05)
if len(ends) < 2:
    sys.exit("the matrices did not end within %.0f s" % (deadline - t0))
wall = max(ends.values()) - t0
ts = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
spans, bad = [], []
for i in ids:
    m = api("GET", "/api/v1/matrices/%d" % i)["matrix"]
    runs = m["runs"]
    bad += ["%d/%d %s %s" % (i, r["seq"], r.get("error_class"), r.get("error_message")) for r in runs
            if r["state"] != "ok" or not r.get("sender_bps")]
    if m["state"] != "succeeded" or len(runs) != nruns:
        bad.append("matrix %d %s with %d runs" % (i, m["state"], len(runs)))
    st = [ts(r["started_at"]) for r in runs if r.get("started_at")]
    fi = [ts(r["finished_at"]) for r in runs if r.get("finished_at")]
    spans.append((min(st), max(fi)) if st and fi else (0, 0))
    print("   matrix %d %s: runs %s -> %s, %.3f s a run in the runner" % (i, m["state"],
          datetime.datetime.utcfromtimestamp(spans[-1][0]).strftime("%H:%M:%S.%f")[:12],
          datetime.datetime.utcfromtimestamp(spans[-1][1]).strftime("%H:%M:%S.%f")[:12],
          (spans[-1][1] - spans[-1][0] - nruns * dur) / nruns))
if bad:
    sys.exit("   NOT CLEAN: " + "; ".join(bad))
(a0, a1), (b0, b1) = spans
overlap = min(a1, b1) - max(a0, b0)
print("   both ended %.3f s after the POSTs; their runs overlap for %.1f s" % (wall, overlap))
if overlap <= 0:
    sys.exit("   NOT SIDE BY SIDE: the two matrices' runs did not overlap")
open(outf, "w").write("wall %.4f\n" % wall)
PY
d_wall=$(get wall "$tmp/d.result")
grep -i ' warn \| error ' "$tmp/d/testbedd.log" | head -5 | sed 's/^/   testbedd log: /'
stop_pid "$tb_pid"
say "== E. the multiplexed script, both pairs at once (left -> right; router $P2_C -> relay $P2_S)"
t0=$EPOCHREALTIME
(hand_script "$tmp/e1" 6500 "${MUX[@]}") >"$tmp/e1.log" 2>&1 &
e1=$!
(L_ADDR=$P2_C R_ADDR=$P2_S R_DATA=$P2_S hand_script "$tmp/e2" 6700 "${MUX[@]}") >"$tmp/e2.log" 2>&1 &
e2=$!
e_ok=1
wait "$e1" || e_ok=0
wait "$e2" || e_ok=0
t1=$EPOCHREALTIME
sed 's/^/   left -> right: /' "$tmp/e1.log"
sed 's/^/   router -> relay: /' "$tmp/e2.log"
[ "$e_ok" = 1 ] || die "the multiplexed script did not run both pairs cleanly"
e_wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
masters_close
say "   both pairs in $e_wall s; masters closed, ssh master processes left: $masters_left"
[ "$masters_left" = 0 ] || die "ssh master processes outlived ssh -O exit and SIGTERM"

a_ovh=$(ovh "$a_wall") b_ovh=$(ovh "$b_wall") c_ovh=$(ovh "$c_wall")
d_ovh=$(ovh "$d_wall") e_ovh=$(ovh "$e_wall")
r_mux2=$(fx "$d_ovh" "$e_ovh")
v_ratio2=$(awk -v r="$r_mux2" 'BEGIN { print (r < 0.5 ? "PASS" : "BELOW GOAL") }')
r_plain=$(fx "$a_ovh" "$b_ovh") r_mux=$(fx "$a_ovh" "$c_ovh")
v_ratio=$(awk -v r="$r_mux" 'BEGIN { print (r < 0.5 ? "PASS" : "BELOW GOAL") }')
v_abs=$(awk -v a="$a_ovh" 'BEGIN { print (a < 0.06 ? "PASS" : "BELOW GOAL") }')

# ---- the planner --------------------------------------------------------------------------
# testbedd on a loopback inventory of 20 machines (nothing listens: a plan contacts no host)
say "== the planner: POST /api/v1/matrices/plan, 10,000 runs over 20 machines against 100 runs"
P=$tmp/plan
mkdir -p "$P"
ssh-keygen -q -t ed25519 -N '' -C bench -f "$P/id_bench" >/dev/null 2>&1 || die "ssh-keygen failed"
{
	printf '# 20 machines on loopback port 9: nothing listens, planning contacts no host\n'
	printf 'version: 1\nssh:\n  user: root\n  key_file: %s\n  connect_timeout_s: 2\nmachines:\n' "$P/id_bench"
	for i in $(seq 1 20); do
		printf '  m%02d:\n    role: host\n    os:\n      ubuntu: {address: 127.0.1.%d, port: 9}\n' "$i" "$i"
		printf '    links:\n      lan%d: {address: 198.19.%d.2/24}\n' "$i" "$i"
	done
} >"$P/inventory.yaml"
start_testbedd "$P/inventory.yaml" "$P"
pairs=$(for i in $(seq 1 2 19); do printf '%s{"client":"m%02d","server":"m%02d"}' "$([ "$i" = 1 ] || echo ,)" "$i" $((i + 1)); done)
# 10 pairs x 2 protocols x 2 directions x 5 durations x 5 parallel streams x 10 repeats
spec_big="{\"name\":\"plan10k\",\"pairs\":[$pairs],\"protocols\":[\"tcp\",\"udp\"],\"directions\":[\"forward\",\"reverse\"],
 \"duration_s\":[1,2,3,4,5],\"repeats\":10,\"iperf\":{\"parallel\":[1,2,4,8,16],\"udp_bitrate\":\"100M\"}}"
# the same shape on one pair, one repeat: 100 runs
spec_small="{\"name\":\"plan100\",\"pairs\":[{\"client\":\"m01\",\"server\":\"m02\"}],\"protocols\":[\"tcp\",\"udp\"],
 \"directions\":[\"forward\",\"reverse\"],\"duration_s\":[1,2,3,4,5],\"repeats\":1,\"iperf\":{\"parallel\":[1,2,4,8,16],\"udp_bitrate\":\"100M\"}}"
plan_time() { # spec name -> median of curl's time_total over plan_reqs requests
	local i t code
	printf '%s' "$1" >"$P/$2.json"
	: >"$P/$2.times"
	for i in $(seq "$plan_reqs"); do
		t=$(curl -s -o "$P/$2.out" -w '%{http_code} %{time_total}' -X POST -H "Authorization: Bearer $tb_token" \
			-H 'Content-Type: application/json' --data-binary @"$P/$2.json" "$tb_url/api/v1/matrices/plan")
		code=${t%% *}
		[ "$code" = 200 ] || { say "   $2: $code $(head -c 400 "$P/$2.out")"; return 1; }
		echo "${t#* }" >>"$P/$2.times"
	done
	python3 -u - "$P/$2.out" "$P/$2.times" "$2" <<'PY'
import json, statistics, sys
p = json.load(open(sys.argv[1]))["plan"]
t = [float(x) for x in open(sys.argv[2])]
machines = {r[k] for r in p["plan"] for k in ("client", "server")}
print("   %s: %d runs, %d rounds, %d machines, estimated %.0f s, %d bytes of JSON; %d requests: median %.1f ms (min %.1f, max %.1f)" % (
      sys.argv[3], p["runs"], p.get("rounds", 0), len(machines), p.get("estimated_s", 0), len(open(sys.argv[1], "rb").read()),
      len(t), statistics.median(t) * 1000, min(t) * 1000, max(t) * 1000), file=sys.stderr)
print("%.4f %d %d" % (statistics.median(t), p["runs"], len(machines)))
PY
}
out=$(plan_time "$spec_small" plan100) || die "the 100-run plan failed"
read -r p_small n_small _ <<<"$out"
out=$(plan_time "$spec_big" plan10k) || die "the 10,000-run plan failed"
read -r p_big n_big m_big <<<"$out"
[ "$n_big" = 10000 ] && [ "$m_big" = 20 ] && [ "$n_small" = 100 ] || die "the plans have $n_big runs on $m_big machines and $n_small runs"
r_plan=$(fx "$p_big" "$p_small")
v_plan=$(awk -v a="$p_big" 'BEGIN { print (a < 1 ? "PASS" : "BELOW GOAL") }')
stop_pid "$tb_pid"

# ---- figures --------------------------------------------------------------------------------
ms() { awk -v s="$1" 'BEGIN { printf "%.0f ms", s * 1000 }'; }
say
say "== matrix overhead: $nruns runs of $duration s, one after the other, on the sim ($(nproc) CPUs)$([ $smoke = 1 ] && echo ', SMOKE')"
printf '   %-34s %10s %14s\n' "" "wall" "overhead/run"
printf '   %-34s %8.3f s %12.3f s\n' "A. testbedd (POST -> finished)" "$a_wall" "$a_ovh"
printf '   %-34s %8s   %12.3f s\n' "   in the runner (runs only)" "" "$a_in"
printf '   %-34s %8.3f s %12.3f s\n' "B. plain ssh script" "$b_wall" "$b_ovh"
printf '   %-34s %8.3f s %12.3f s\n' "C. multiplexed ssh script" "$c_wall" "$c_ovh"
say "   testbedd/plain ${r_plain}x, testbedd/multiplexed ${r_mux}x"
say "   goal: under half of the multiplexed script: $v_ratio; under 0.06 s a run: $v_abs (every result stored: yes)"
printf '   %-34s %8.3f s %12.3f s\n' "D. testbedd, two matrices at once" "$d_wall" "$d_ovh"
printf '   %-34s %8.3f s %12.3f s\n' "E. multiplexed script, both pairs" "$e_wall" "$e_ovh"
say "   two at once: testbedd/multiplexed ${r_mux2}x; goal under half: $v_ratio2"
say "   planner: 10,000 runs over 20 machines $(ms "$p_big") (goal < 1 s: $v_plan), 100 runs $(ms "$p_small"), ratio ${r_plan}x"
row "matrix overhead/run, testbedd|$a_ovh s|plain ssh $b_ovh s|${r_plain}x||"
row "matrix overhead/run vs multiplexed|$a_ovh s|ssh mux $c_ovh s|${r_mux}x|< 0.5x mux|$v_ratio"
row "matrix overhead/run, absolute|$a_ovh s|||< 0.06 s|$v_abs"
row "matrix overhead/run, in the runner|$a_in s|before run 0: $(ms "$a_before")|||"
row "matrix overhead/run, two matrices at once|$d_ovh s|ssh mux, both pairs $e_ovh s|${r_mux2}x|< 0.5x mux|$v_ratio2"
row "plan 10,000 runs over 20 machines|$(ms "$p_big")|100 runs $(ms "$p_small")|${r_plan}x|< 1 s|$v_plan"
exit 0

#!/bin/sh
# Matrices side by side (issue 22 item 2) on the simulated testbed, through
# the API: two matrices on disjoint hosts (left->right, router->relay over the
# management network) run at the same time (their runs' stored times
# overlap); a third on left->right waits in the queue, its reason naming the
# matrix that holds left and its position, shown by ?state=queued, and runs
# after that one; a queued matrix is canceled without running, and the one
# behind it hears its new place (a matrix.state event); a matrix with a link
# profile holds the router it shapes (a matrix from the router waits for it,
# a power action on the router gets 409); testbedd
# stopped while two matrices run stops both (interrupted, every worker joined)
# and a resume runs them again.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_up tbsb 230 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"
# a second, disjoint pair: the router and the relay, over the management network (as test_matrix)
python3 - "$S/inventory.yaml" "$NET" <<'PY'
import sys
p, net = sys.argv[1], sys.argv[2]
s = open(p).read()
s = s.replace("        ifname: {freebsd: ix1}\n", "        ifname: {freebsd: ix1}\n      mgmt:\n        address: %s.50/24\n" % net, 1)
s = s.replace('  relay:\n    role: relay\n', '  relay:\n    role: relay\n    links:\n      mgmt:\n        address: %s.2/24\n' % net, 1)
open(p, "w").write(s)
PY
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts on the sim's inventory" test -n "$DPID"
check "left answers" wait_up left
check "right answers" wait_up right
check "the router answers" wait_up router
check "the event stream is recorded" stamp_start matrix.state

LR='"pairs":[{"client":"left","server":"right"}]'
RR='"pairs":[{"client":"router","server":"relay","link":"mgmt"}]'
MA=$(api POST /api/v1/matrices "{\"name\":\"sb-a\",$LR,\"duration_s\":5,\"repeats\":2}" | jq_ 'd["matrix"]["id"]')
MB=$(api POST /api/v1/matrices "{\"name\":\"sb-b\",$RR,\"duration_s\":3,\"repeats\":2}" | jq_ 'd["matrix"]["id"]')
MC=$(api POST /api/v1/matrices "{\"name\":\"sb-c\",$LR,\"duration_s\":2}" | jq_ 'd["matrix"]["id"]')
MD=$(api POST /api/v1/matrices "{\"name\":\"sb-d\",$LR,\"duration_s\":2}" | jq_ 'd["matrix"]["id"]')
ME=$(api POST /api/v1/matrices "{\"name\":\"sb-e\",$LR,\"duration_s\":2}" | jq_ 'd["matrix"]["id"]')
check "five matrices queued ($MA $MB $MC $MD $ME)" test -n "$MA" -a -n "$MB" -a -n "$MC" -a -n "$MD" -a -n "$ME"
check "matrix $MA (left->right) runs" wait_state "$MA" running
WAIT=20 check "matrix $MB (router->relay) runs beside it" wait_state "$MB" running
why=""
for _ in $(seq 50); do
	body=$(api GET "/api/v1/matrices/$MC?runs=0")
	why=$(echo "$body" | jq_ '(d["matrix"].get("queue") or {}).get("waiting_for")')
	[ "$why" != None ] && [ -n "$why" ] && break
	sleep 0.2
done
diag "matrix $MC: $why"
check "matrix $MC (left->right too) is queued, its reason naming the matrix that holds its host" pyck "$body" "
m = d['matrix']; q = m.get('queue') or {}
sys.exit(not (m['state'] == 'queued' and q.get('position') == 1 and
 q.get('waiting_for', '').startswith('waiting for left: matrix $MA (sb-a)')))"
body=$(api GET "/api/v1/matrices/$MD?runs=0")
check "matrix $MD is second in the queue and waits for the one queued before it or the holder" pyck "$body" "
q = d['matrix'].get('queue') or {}; print('#', q)
sys.exit(not (q.get('position') == 2 and 'waiting for left: matrix' in (q.get('waiting_for') or '')))"
body=$(api GET "/api/v1/matrices?state=queued")
check "GET /matrices?state=queued lists the queue with positions" pyck "$body" "
q = sorted((m['id'], m['queue']['position']) for m in d['matrices']); print('#', q)
sys.exit(not (q == [($MC, 1), ($MD, 2), ($ME, 3)]))"
api POST "/api/v1/matrices/$MD/cancel" >/dev/null
check "cancel of queued matrix $MD: 200, canceled" test "$(st)" = 200 -a "$(mstate "$MD")" = canceled
last_pos() {	# the places matrix.state events gave $ME: the last one after a 3 (exit 1: no move from 3 yet)
	python3 - "$DD/events.jsonl" "$ME" <<'PY'
import json, sys
ev = [e["data"]["data"] for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "matrix.state"]
pos = [(d.get("queue") or {}).get("position") for d in ev if d.get("matrix") == int(sys.argv[2])]
pos = [p for p in pos if p is not None]
after = pos[pos.index(3) + 1:] if 3 in pos else []
print(after[-1] if after else "")
sys.exit(not (after and after[-1] < 3))
PY
}
for _ in $(seq 50); do last_pos >/dev/null && break; sleep 0.1; done
check "matrix $ME, third, hears by an event that it moved up once $MD is canceled" last_pos
body=$(api GET "/api/v1/matrices/$ME?runs=0")
diag "matrix $ME: $(echo "$body" | jq_ 'd["matrix"].get("queue")'), the events' last place $(last_pos)"
check "GET /matrices/$ME says the place the last event said (it is still queued)" pyck "$body" "
sys.exit(not (d['matrix']['state'] == 'queued' and d['matrix']['queue']['position'] == int('$(last_pos)' or 0)))"
api POST "/api/v1/matrices/$ME/cancel" >/dev/null
check "cancel of queued matrix $ME: 200" test "$(st)" = 200
check "matrix $MA succeeds" wait_state "$MA" succeeded
check "matrix $MB succeeds" wait_state "$MB" succeeded
check "matrix $MC succeeds after it" wait_state "$MC" succeeded
check "matrix $MD stayed canceled, none of its runs ran" pyck "$(api GET "/api/v1/matrices/$MD")" "
sys.exit(not (d['matrix']['state'] == 'canceled' and all(r['state'] == 'pending' for r in d['matrix']['runs'])))"
span() {	# matrix: [first run's start, last run's end]
	api GET "/api/v1/matrices/$1" | jq_ '[min(r["started_at"] for r in d["matrix"]["runs"]), max(r["finished_at"] for r in d["matrix"]["runs"])]'
}
A=$(span "$MA") B=$(span "$MB") C=$(span "$MC")
diag "runs of $MA: $A, of $MB: $B, of $MC: $C"
check "the runs of $MA and $MB overlap in time (disjoint hosts run side by side)" python3 -c "
a, b = $A, $B
import sys; sys.exit(not (a[0] < b[1] and b[0] < a[1]))"
check "the runs of $MC started after the last run of $MA ended (a shared host serialises)" python3 -c "
a, c = $A, $C
import sys; sys.exit(not (c[0] >= a[1]))"
check "no iperf3 left" no_iperf_left

# ---- a matrix with link profiles holds the router it shapes ----
MP=$(api POST /api/v1/matrices "{\"name\":\"sb-shaped\",$LR,\"duration_s\":2,\"repeats\":2,\"link_profiles\":[{\"name\":\"50M\",\"rate\":\"50M\"}]}" | jq_ 'd["matrix"]["id"]')
check "matrix $MP (left->right, a link profile on the router) runs" wait_state "$MP" running
MQ=$(api POST /api/v1/matrices "{\"name\":\"sb-router\",$RR,\"duration_s\":1}" | jq_ 'd["matrix"]["id"]')
why=""
for _ in $(seq 50); do
	why=$(api GET "/api/v1/matrices/$MQ?runs=0" | jq_ '(d["matrix"].get("queue") or {}).get("waiting_for")')
	[ "$why" != None ] && [ -n "$why" ] && break
	sleep 0.2
done
diag "matrix $MQ: $why"
check "matrix $MQ (router->relay) waits for the router, held by $MP" test "${why#waiting for router: matrix $MP (sb-shaped)}" != "$why"
body=$(api POST /api/v1/hosts/router/power '{"action":"cycle"}')
check "a power action on the router: 409 naming matrix $MP" sh -c 'test "$1" = 409 && printf "%s" "$2" | grep -q "matrix $3"' _ "$(st)" "$body" "$MP"
check "matrix $MP succeeds" wait_state "$MP" succeeded
check "matrix $MQ runs after it and succeeds" wait_state "$MQ" succeeded

# ---- testbedd stopped while two matrices run: both interrupted, then resumed ----
MA=$(api POST /api/v1/matrices "{\"name\":\"sb-e\",$LR,\"duration_s\":5,\"repeats\":2}" | jq_ 'd["matrix"]["id"]')
MB=$(api POST /api/v1/matrices "{\"name\":\"sb-f\",$RR,\"duration_s\":5,\"repeats\":2}" | jq_ 'd["matrix"]["id"]')
check "matrix $MA runs its first run" wait_run "$MA" 0 running
check "matrix $MB runs its first run" wait_run "$MB" 0 running
kill -TERM "$DPID"
gone=0
for _ in $(seq 100); do kill -0 "$DPID" 2>/dev/null || { gone=1; break; }; sleep 0.1; done
check "testbedd stops within 10 s with two matrices running (every worker joined)" test "$gone" = 1
wait "$DPID"
rc=$?
check "testbedd exits 0 (built with TB_SANITIZE: no leak, no error)" test "$rc" = 0
DPID=""
daemon_again "$S/inventory.yaml" --probe-interval 2
check "testbedd starts again" test -n "$DPID"
check "matrix $MA is interrupted" test "$(mstate "$MA")" = interrupted
check "matrix $MB is interrupted" test "$(mstate "$MB")" = interrupted
check "no iperf3 left after the restart" no_iperf_left
api POST "/api/v1/matrices/$MA/resume" >/dev/null
api POST "/api/v1/matrices/$MB/resume" >/dev/null
check "matrix $MA succeeds once resumed" wait_state "$MA" succeeded
check "matrix $MB succeeds once resumed" wait_state "$MB" succeeded
daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

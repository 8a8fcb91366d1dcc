#!/bin/sh
# The BMC's view and idle power-off on the simulated testbed, through the
# daemon's API and event stream.
#
# BMC: testbedd reads left's BMC (ipmi_sim) every second (a test-only
# floor, TESTBEDD_TEST_BMC_FLOOR_S); the test itself switches left off and
# on with ipmitool behind testbedd's back: the host JSON follows the BMC and
# host.bmc events say so; sshd killed on a chassis that stays on is a
# mismatch (the BMC says on, no OS answers), published when it begins and
# when it ends; testbedd powers nothing itself.
#
# Idle: right has idle_poweroff_min 10 with 1-second "minutes"
# (TESTBEDD_TEST_IDLE_MINUTE_S=1): it is powered off by an action with
# actor idle (recorded, published); while a matrix holds it, it stays on past
# its idle time; it is powered off again 10 s after the matrix ends; each
# idle power-off is in the audit log.
#
# Wake schedule: after a SIGHUP reload gives right and left "* * * * *",
# the next whole minute powers right (off) on by an action with actor
# schedule (audited); left, on already, gets nothing and says so.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
D=$(mktemp -d /tmp/tbscratch-XXXXXX)
trap 'daemon_clean; sim_down; rm -rf "$D"' EXIT
IDLE=10

sim_up tbbi 245 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"
python3 - "$S/inventory.yaml" "$IDLE" <<'PY'
import sys
p, n = sys.argv[1], sys.argv[2]
s = open(p).read()
s = s.replace("  right:\n    role: host\n", "  right:\n    role: host\n    idle_poweroff_min: %s\n" % n, 1)
open(p, "w").write(s)
PY
check "the inventory gives right idle_poweroff_min $IDLE" grep -q "idle_poweroff_min: $IDLE" "$S/inventory.yaml"
TESTBEDD_TEST_BMC_FLOOR_S=1 TESTBEDD_TEST_IDLE_MINUTE_S=1 daemon_up "$S/inventory.yaml" --probe-interval 1 --bmc-interval 1
check "testbedd starts" test -n "$DPID"
check "the log says the idle minute is for tests" grep -q 'an idle minute is 1 s' "$DD/log"

host() { api GET "/api/v1/hosts/$1"; }
field() {	# machine python-expression-on-h
	host "$1" | python3 -c "import json,sys; h=json.load(sys.stdin)['host']; print($2)" 2>/dev/null
}
until_() {	# seconds command...: until the command succeeds
	local n=$1
	shift
	for _ in $(seq $((n * 5))); do "$@" && return 0; sleep 0.2; done
	return 1
}
until_eval() {	# seconds 'shell code': until the code (evaluated anew each time) succeeds
	local n=$1
	for _ in $(seq $((n * 5))); do eval "$2" && return 0; sleep 0.2; done
	return 1
}
bmc_is() { [ "$(field left "h['bmc']['power']")" = "$1" ]; }
reach_is() { [ "$(field "$1" "h['state']['reachability']")" = "$2" ]; }
mismatch_is() { [ "$(field left "'none' if h['bmc']['mismatch'] is None else 'yes'")" = "$1" ]; }
events() {	# every event so far of type $1 on host $2, one JSON per line (the stream
	# filtered by testbedd: unfiltered, a loaded machine once did not replay
	# every probe's event since 0 within the 3 s the stream is read)
	timeout 3 "$BIN/tbctl" events --type "$1" --host "$2" --since 0 --json 2>/dev/null
}
count_ev() {	# type host condition: how many events of that type on that host meet the
	# python condition on e (an event)
	events "$1" "$2" | python3 -c "import json,sys
n=0
for l in sys.stdin:
    try: e=json.loads(l)
    except Exception: continue
    if $3: n+=1
print(n)"
}
idle_actions() {	# machine: ids of its actions by actor idle, oldest first
	api GET "/api/v1/actions?host=$1&limit=100" | python3 -c '
import json,sys
print(" ".join(str(a["id"]) for a in reversed(json.load(sys.stdin)["actions"]) if a["actor"] == "idle"))'
}
action_is() { [ "$(action_field "$1" "a['state']")" = "$2" ]; }
action_field() { api GET "/api/v1/actions/$1" | python3 -c "import json,sys; a=json.load(sys.stdin)['action']; print($2)"; }

# ---- the BMC's view ----
check "left's BMC is read: power on" until_ 15 bmc_is on
check "the host JSON names the method and when it was read" \
	test "$(field left "h['bmc']['method'] + ' ' + str(h['bmc']['checked_at'] is not None)")" = "ipmi True"
check "right has no BMC: bmc is null" test "$(field right "h['bmc']")" = None
check "GET /hosts carries bmc for left" test "$(api GET /api/v1/hosts | python3 -c 'import json,sys; print([h["bmc"]["power"] for h in json.load(sys.stdin)["hosts"] if h["name"] == "left"][0])')" = on
check "left answers" until_ 15 reach_is left up
check "no mismatch while both agree" mismatch_is none

check "ipmitool chassis power off behind testbedd's back" ipmi chassis power off
check "the host JSON follows: the BMC says off" until_ 10 bmc_is off
check "reachability agrees: down" until_ 15 reach_is left down
check "a host.bmc event said left's BMC went off" \
	test "$(count_ev host.bmc left 'e["type"]=="host.bmc" and e["host"]=="left" and e["data"]["change"]=="power" and e["data"]["power"]=="off"')" -ge 1
sleep 7   # past the mismatch margin: both sides agree, so none may begin
check "no mismatch when the BMC and reachability agree on off" mismatch_is none
check "testbedd powered nothing itself: no action on left" \
	test "$(api GET '/api/v1/actions?host=left' | jq_ 'len(d["actions"])')" = 0
check "ipmitool chassis power on" ipmi chassis power on
check "the BMC says on again" until_ 10 bmc_is on
check "left answers again" until_ 20 reach_is left up
check "a host.bmc event said on again" \
	test "$(count_ev host.bmc left 'e["type"]=="host.bmc" and e["host"]=="left" and e["data"]["change"]=="power" and e["data"]["power"]=="on"')" -ge 2

# an OS that stops answering on a chassis that stays on: kill left's sshd (sim processes, by pid)
for p in $(ip netns pids "$PFX-left"); do
	[ "$(ps -o comm= -p "$p" 2>/dev/null)" = sshd ] && kill "$p"
done
check "left stops answering ssh" until_ 15 reach_is left down
check "a mismatch begins: the BMC says on, no OS answers" until_ 20 mismatch_is yes
check "the mismatch says what differs" \
	test "$(field left "h['bmc']['mismatch']['message']")" = "the BMC says on, but no OS answers ssh"
n=$(count_ev host.bmc left 'e["type"]=="host.bmc" and e["host"]=="left" and e["data"]["change"]=="mismatch" and e["data"]["mismatch"] is not None')
check "a host.bmc event published the mismatch (events: $n)" test "$n" = 1
check "nothing was corrected: left's chassis is still on" test "$(power left)" = on
ipmi chassis power off >/dev/null
check "switched off: the mismatch ends" until_ 20 mismatch_is none
n=$(count_ev host.bmc left 'e["type"]=="host.bmc" and e["host"]=="left" and e["data"]["change"]=="mismatch" and e["data"]["mismatch"] is None')
check "a host.bmc event published its end (events: $n)" test "$n" = 1
ipmi chassis power on >/dev/null
check "left comes back" until_ 20 reach_is left up
pw=$(cat "$S/bmc-left.pass")
check "the BMC password is in no event" sh -c "! timeout 3 $BIN/tbctl events --since 0 --json 2>/dev/null | grep -qF '$pw'"
check "... not in the host JSON" sh -c "! curl -s -H \"Authorization: Bearer \$(cat $TESTBEDD_TOKEN_FILE)\" $TESTBEDD_URL/api/v1/hosts | grep -qF '$pw'"

# ---- idle power-off ----
# right has had no use since testbedd started: by now it was switched off
check "right was powered off by an idle action" until_eval 60 'test -n "$(idle_actions right)"'
A1=$(idle_actions right | awk '{print $1}')
check "action $A1: power off by actor idle" \
	test "$(action_field "$A1" "a['kind'] + ' ' + a['params']['action'] + ' ' + a['actor']")" = "power off idle"
check "... and it succeeds" until_ 60 action_is "$A1" succeeded
check "its steps say why and what ran (systemctl poweroff over ssh)" \
	test "$(action_field "$A1" "sum(1 for s in a['steps'] if 'has not been used since' in s['what'] or 'systemctl poweroff' in (s['command'] or ''))")" = 2
check "right no longer answers" until_ 15 reach_is right down
check "action.state events published it with actor idle" \
	test "$(count_ev action.state right 'e["type"]=="action.state" and e["host"]=="right" and e["data"]["actor"]=="idle" and e["data"]["state"]=="succeeded"')" -ge 1
check "while off: idle_poweroff shows after_min and no countdown" \
	test "$(field right "h['idle_poweroff']['state'] + ' ' + str(h['idle_poweroff']['after_min']) + ' ' + str(h['idle_poweroff']['off_at'])")" = "off $IDLE None"
check "left has no idle_poweroff_min: null, and no idle action" \
	test "$(field left "h['idle_poweroff']")/$(idle_actions left)" = "None/"

body=$(api POST /api/v1/hosts/right/power '{"action":"on"}')
P=$(echo "$body" | jq_ 'd["action"]["id"]')
check "power right on (202)" test "$(st)" = 202 -a -n "$P"
check "the power-on action succeeds" until_ 60 action_is "$P" succeeded ||
	action_field "$P" "'\\n'.join('# %s %s %s' % (s['at'], s['what'], s['command']) for s in a['steps']) + '\\n# ' + str(a['error'])"
# the countdown starts at the end of that action; a matrix takes the host within it
body=$(api POST /api/v1/matrices '{"name":"hold","pairs":[{"client":"left","server":"right"}],"duration_s":18,"repeats":1}')
M=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "a matrix on left -> right starts" test "$(st)" = 201 -a -n "$M"
WAIT=20 check "the matrix runs" wait_state "$M" running
check "while held: idle_poweroff state held, no countdown" \
	test "$(field right "h['idle_poweroff']['state'] + ' ' + str(h['idle_poweroff']['seconds_left'])")" = "held None"
sleep $((IDLE + 4))
check "past the idle time under the matrix: no new idle action" test "$(idle_actions right)" = "$A1"
check "... and right still answers" reach_is right up
WAIT=60 check "the matrix succeeds" wait_state "$M" succeeded
check "after the matrix: counting down, seconds_left within the idle time" \
	test "$(field right "str(h['idle_poweroff']['state'] == 'counting' and h['idle_poweroff']['off_at'] is not None and 0 <= h['idle_poweroff']['seconds_left'] <= $IDLE)")" = True
check "then an idle action powers right off again" until_eval 40 'test "$(idle_actions right | wc -w)" = 2'
A2=$(idle_actions right | awk '{print $2}')
ended=$(api GET "/api/v1/matrices/$M?runs=0" | jq_ 'd["matrix"]["finished_at"]')
created=$(action_field "$A2" "a['created_at']")
diag "matrix ended $ended, idle action $A2 created $created"
check "not before the idle time after the matrix ended" python3 -c "
import datetime as d, sys
f=lambda s: d.datetime.strptime(s[:19], '%Y-%m-%dT%H:%M:%S')
sys.exit(not ((f('$created') - f('$ended')).total_seconds() >= $IDLE - 1))"
check "action $A2 succeeds" until_ 60 action_is "$A2" succeeded
check "right no longer answers" until_ 15 reach_is right down
audit_count() {	# actor machine: audit records of host.power by actor on machine
	api GET "/api/v1/audit?host=$2&limit=100" | python3 -c "import json,sys
print(sum(1 for a in json.load(sys.stdin)['audit'] if a['actor'] == '$1' and a['action'] == 'host.power' and a['remote'] == 'testbedd'))"
}
check "each idle power-off is in the audit log (actor idle, from testbedd itself)" test "$(audit_count idle right)" = 2

# ---- the wake schedule: every minute, by SIGHUP reload ----
# right (off) and left (on: nothing to do) get "* * * * *"; the next whole minute wakes right
python3 - "$S/inventory.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("  right:\n    role: host\n", "  right:\n    role: host\n    wake_schedule: \"* * * * *\"\n", 1)
s = s.replace("  left:\n    role: host\n", "  left:\n    role: host\n    wake_schedule: \"* * * * *\"\n", 1)
open(p, "w").write(s)
PY
kill -HUP "$DPID"
scheduled() { [ "$(field right "h['wake_schedule'] + '/' + str(h['wake']['next_at'] is not None)")" = "* * * * */True" ]; }
check "the inventory is reloaded with right's wake_schedule" until_ 10 scheduled
next=$(field right "h['wake']['next_at']")
check "its next time is a whole minute within the next 60 s" python3 -c "
import datetime as d, sys
n = d.datetime.strptime('$next', '%Y-%m-%dT%H:%M:%SZ').replace(tzinfo=d.timezone.utc)
left = (n - d.datetime.now(d.timezone.utc)).total_seconds()
print('#', '$next', left); sys.exit(not (n.second == 0 and -1 <= left <= 61))"
wake_actions() {	# machine: ids of its actions by actor schedule
	api GET "/api/v1/actions?host=$1&limit=100" | python3 -c '
import json,sys
print(" ".join(str(a["id"]) for a in reversed(json.load(sys.stdin)["actions"]) if a["actor"] == "schedule"))'
}
check "at that minute a power-on action by actor schedule starts for right" until_eval 75 'test -n "$(wake_actions right)"'
W=$(wake_actions right | awk '{print $1}')
check "action $W: power on, with the schedule in its parameters" \
	test "$(action_field "$W" "a['params']['action'] + ' ' + a['params']['wake_schedule']")" = "on * * * * *"
check "... and it succeeds: right answers" until_ 60 action_is "$W" succeeded
check "right is up" until_ 15 reach_is right up
check "its first step says why" \
	test "$(action_field "$W" "str('wake_schedule \"* * * * *\" of right names' in a['steps'][0]['what'])")" = True
check "wake.last names the action, last_at the minute" \
	test "$(field right "h['wake']['last'] + ' ' + str(h['wake']['last_at'] == '$next')")" = "power-on action $W True"
check "the wake is in the audit log (actor schedule)" test "$(audit_count schedule right)" = 1
check "left was on: no action, and wake.last says so" \
	test "$(wake_actions left)/$(field left "h['wake']['last']")" = "/not powered on: it was on already"
daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

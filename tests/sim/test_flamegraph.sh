#!/bin/sh
# Flame graphs (issue 20 item 2) on the simulated testbed: a spec with
# "profile": {"side": "sender"} profiles the sender of each run.  On the
# Linux persona (ubuntu: perf record -a -g over ssh as root, in the host's
# network and mount namespaces on this kernel) the run is ok, GET
# /runs/{id}/profile says state ok with samples, and GET
# /runs/{id}/flamegraph.svg serves a well-formed SVG holding the TCP send
# path (tcp_sendmsg: iperf3's sender on this kernel); perf and its temp dir
# are gone after the run.  On the FreeBSD persona (a Linux kernel without
# dtrace) the run is ok too and the profile says exactly why there is no
# flame graph ("dtrace was not found"), the SVG route a 404 with that
# reason.  Which one each host really is, is checked first (perf on PATH
# in ubuntu, no dtrace in freebsd), so that the test asserts what this
# machine can do.  Also: bad "profile" specs refused naming the field, the
# plan lists the commands, the HTML report has a Flame graphs section (the
# Linux run's drawn inline, the FreeBSD run's reason), a spec without
# "profile" profiles nothing.  A canceled run's recording is removed unread
# (a cancel never waits for perf script) and its profile says so.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS=${ASAN_OPTIONS:-fast_unwind_on_malloc=0}
sim_testbedd tbfg 194 2
both_answer

body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"profile":{"side":"middle"}}')
check "a bad profile.side is refused (400) naming profile.side" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"profile.side"')"
body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"profile":{"frequency":0}}')
check "a bad profile.frequency is refused (400) naming profile.frequency" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"profile.frequency"')"
body=$(api POST /api/v1/matrices/plan '{"name":"bad","pairs":[{"client":"left","server":"right"}],"profile":true}')
check "a profile that is not an object is refused naming profile" \
	test "$(st)" = 400 -a -n "$(echo "$body" | grep '"field": *"profile"')"

spec='{"name":"flame","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],
 "duration_s":4,"repeats":1,"profile":{"side":"sender"},
 "os":[{"left":"ubuntu","right":"ubuntu"},{"left":"freebsd","right":"ubuntu"}]}'
body=$(api POST /api/v1/matrices/plan "$spec")
check "the plan lists the profiling commands" pyck "$body" '
p = d["plan"]["profile"]
sys.exit(not (p["side"] == "sender" and p["frequency"] == 99
  and any(c.startswith("perf record -a -g -F 99 ") for c in p["commands"]["linux"])
  and any("profile-99" in c and "stack()" in c for c in p["commands"]["freebsd"])))'

body=$(api POST /api/v1/matrices "$spec")
M=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "start: 201" test "$(st)" = 201 -a -n "$M"
WAIT=300 check "matrix $M succeeds" wait_state "$M" succeeded
runs=$(api GET "/api/v1/matrices/$M")
RL=$(echo "$runs" | jq_ '[r["id"] for r in d["matrix"]["runs"] if r["client_os"] == "ubuntu"][0]')
RB=$(echo "$runs" | jq_ '[r["id"] for r in d["matrix"]["runs"] if r["client_os"] == "freebsd"][0]')
check "both runs are ok" pyck "$runs" 'sys.exit(not all(r["state"] == "ok" for r in d["matrix"]["runs"]) or len(d["matrix"]["runs"]) != 2)'
check "the stored spec keeps profile" pyck "$runs" 'sys.exit(d["matrix"]["spec"].get("profile") != {"side": "sender"})'

# what this machine's personas really have (the test follows it)
has_perf=0
[ -x /usr/bin/perf ] && perf --version >/dev/null 2>&1 && has_perf=1
diag "perf on this machine: $has_perf; dtrace: $(command -v dtrace || echo none)"
check "this machine has no dtrace (the FreeBSD persona runs on its Linux kernel)" bash -c '! command -v dtrace'

body=$(api GET "/api/v1/runs/$RL/profile")
diag "linux run $RL: $(echo "$body" | jq_ '[(p["host"], p["state"], p["samples"], p.get("reason")) for p in d["profiles"]]')"
if [ $has_perf = 1 ]; then
	check "the Linux sender was profiled: perf, left, sender, ok, samples and stacks" pyck "$body" '
p = d["profiles"]
sys.exit(not (len(p) == 1 and p[0]["host"] == "left" and p[0]["side"] == "sender" and p[0]["role"] == "client"
  and p[0]["tool"] == "perf" and p[0]["os"] == "linux" and p[0]["state"] == "ok" and p[0]["samples"] > 20
  and p[0]["stacks"] > 5 and "folded" not in p[0] and p[0]["command"].startswith("perf record -a -g -F 99 ")))'
	code=$(curl -s -o "$DD/flame.svg" -w '%{http_code} %{content_type}' -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" \
		"$TESTBEDD_URL/api/v1/runs/$RL/flamegraph.svg")
	check "GET /runs/$RL/flamegraph.svg: 200 image/svg+xml" test "$code" = "200 image/svg+xml; charset=utf-8"
	check "the SVG is well-formed XML" xmllint --noout "$DD/flame.svg"
	check "the SVG holds the TCP send path (tcp_sendmsg)" grep -q '<title>tcp_sendmsg (' "$DD/flame.svg"
	check "the SVG is titled with the run and host" grep -q "left, the sender (perf -F 99), run id $RL" "$DD/flame.svg"
	check "folded=true gives the folded stacks, iperf3 among them" pyck "$(api GET "/api/v1/runs/$RL/profile?folded=true")" '
f = d["profiles"][0]["folded"]
sys.exit(not (any(l.startswith("iperf3;") for l in f.splitlines()) and all(l.rsplit(" ", 1)[1].isdigit() for l in f.splitlines())))'
else
	check "without perf the Linux run says why" pyck "$body" 'sys.exit(not ("perf was not found" in d["profiles"][0]["reason"]))'
fi
check "no perf is left on left, nor its temp dir" bash -c '
for _ in $(seq 20); do
	n=0
	for p in $(ip netns pids "'"$PFX"'-left" 2>/dev/null); do
		tr "\0" " " <"/proc/$p/cmdline" 2>/dev/null | grep -q "^perf " && n=$((n + 1))
	done
	[ $n = 0 ] && break
	sleep 0.2
done
[ $n = 0 ]'
wait_ssh "$NET.11" 60 >/dev/null
check "no /tmp/testbedd-perf.* left on left" test -z "$(sshc "root@$NET.11" 'ls -d /tmp/testbedd-perf.* 2>/dev/null')"

body=$(api GET "/api/v1/runs/$RB/profile")
diag "freebsd run $RB: $(echo "$body" | jq_ '[(p["host"], p["state"], p.get("reason")) for p in d["profiles"]]')"
check "the FreeBSD sender: dtrace unavailable, said exactly, the run ok" pyck "$body" '
p = d["profiles"][0]
sys.exit(not (p["host"] == "left" and p["os"] == "freebsd" and p["tool"] == "dtrace" and p["state"] == "unavailable"
  and p["reason"].startswith("left: dtrace was not found (not on PATH") and p["samples"] == 0))'
body=$(api GET "/api/v1/runs/$RB/flamegraph.svg")
check "its flamegraph.svg is a 404 naming the reason" \
	test "$(st)" = 404 -a -n "$(echo "$body" | grep 'dtrace was not found')"

api GET "/api/v1/matrices/$M/report?format=html" >"$DD/report.html"
check "the HTML report: a Flame graphs section with both runs, the Linux one drawn inline, the FreeBSD one's reason" \
	bash -c "grep -q '<h2>Flame graphs</h2>' '$DD/report.html' && grep -q 'dtrace was not found' '$DD/report.html' &&
		{ [ $has_perf = 0 ] || grep -q '<title>tcp_sendmsg (' '$DD/report.html'; }"
body=$(api GET "/api/v1/matrices/$M/report?format=md")
check "the Markdown report: a line per profiled end, the FreeBSD one with its reason" pyck "$(python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))' <<<"$body")" '
i = d.find("## Flame graphs")
sys.exit(not (i >= 0 and "left (sender, dtrace): no flame graph: left: dtrace was not found" in d[i:]
  and "left (sender, perf)" in d[i:]))'
body=$(api GET "/api/v1/runs/$RL/flamegraph.svg?host=right")
check "a host the run did not profile: 404" test "$(st)" = 404
body=$(api GET "/api/v1/runs/abc/profile")
check "a bad run id: 400" test "$(st)" = 400

# a spec without "profile": nothing profiled
body=$(api POST /api/v1/matrices '{"name":"plain","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":2,"repeats":1}')
M2=$(echo "$body" | jq_ 'd["matrix"]["id"]')
WAIT=120 check "matrix $M2 succeeds" wait_state "$M2" succeeded
R2=$(api GET "/api/v1/matrices/$M2" | jq_ 'd["matrix"]["runs"][0]["id"]')
body=$(api GET "/api/v1/runs/$R2/profile")
check "a run without profile has none (404)" test "$(st)" = 404
# a canceled run: perf's recording is removed unread (a cancel never waits
# for perf script), the profile says so, nothing is left on the host
if [ $has_perf = 1 ]; then
	body=$(api POST /api/v1/matrices '{"name":"cancel","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":30,"repeats":1,"profile":{"side":"sender"},"os":[{"left":"ubuntu","right":"ubuntu"}]}')
	M3=$(echo "$body" | jq_ 'd["matrix"]["id"]')
	for _ in $(seq 100); do
		[ "$(api GET "/api/v1/matrices/$M3" | jq_ 'd["matrix"]["runs"][0]["state"]')" = running ] && break
		sleep 0.2
	done
	sleep 3 # perf records
	R3=$(api GET "/api/v1/matrices/$M3" | jq_ 'd["matrix"]["runs"][0]["id"]')
	api POST "/api/v1/matrices/$M3/cancel" >/dev/null
	check "cancel of running matrix $M3: 200" test "$(st)" = 200
	WAIT=60 check "matrix $M3 is canceled" wait_state "$M3" canceled
	body=$(api GET "/api/v1/runs/$R3/profile")
	diag "canceled run $R3: $(echo "$body" | jq_ '[(p["state"], p.get("reason")) for p in d["profiles"]]')"
	check "the canceled run's profile: not read, said so" pyck "$body" '
p = d["profiles"][0]
sys.exit(not (p["state"] == "failed" and p["samples"] == 0
  and p["reason"] == "left: the run was stopped: its recording was removed unread"))'
	check "no /tmp/testbedd-perf.* left on left after the cancel" \
		test -z "$(sshc "root@$NET.11" 'ls -d /tmp/testbedd-perf.* 2>/dev/null')"
fi
daemon_down
check "testbedd's log has no sanitizer report" bash -c "! grep -A30 'Sanitizer' '$DD/log'"
finish

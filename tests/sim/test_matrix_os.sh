#!/bin/sh
# Matrices II on the simulated testbed: a spec over two OS combinations
# (ubuntu/ubuntu and freebsd/freebsd) from both hosts up as ubuntu.  The plan
# puts ubuntu/ubuntu first (no boot), then two boots, then two back; the
# runner boots the hosts through boot actions (grub-reboot, the proof by
# uname), both hosts at once, runs each combination, boots them back (at once too); every run carries the
# persona it ran in, the metadata is taken in each OS, the boots are recorded
# in the matrix with their actions, and a second plan estimates the boots
# with the times just measured; tbctl's plan lists the boots.  Then right's
# GRUB entry for freebsd is made one its menu lacks (inventory reloaded by
# SIGHUP): a matrix that needs right in freebsd fails its run as boot_error
# with the reason, records the failed boot, tbctl watch shows it, and right
# comes back as ubuntu.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_testbedd tbmo 233 2
both_answer

SPEC='{"name":"os","pairs":[{"client":"left","server":"right"}],"duration_s":2,
 "os":[{"left":"freebsd","right":"freebsd"},{"left":"ubuntu","right":"ubuntu"}]}'

# ---- the plan: the combination the hosts are in first, the boots listed ----
for _ in $(seq 50); do   # both seen as ubuntu by the prober
	api GET /api/v1/hosts | jq_ '" ".join(h["state"]["os"] or "-" for h in d["hosts"] if h["name"] in ("left","right"))' |
		grep -qx "ubuntu ubuntu" && break
	sleep 0.2
done
body=$(api POST /api/v1/matrices/plan "$SPEC")
check "plan: 2 runs in 2 combinations, ubuntu/ubuntu first, 2 boots before run 1 and 2 back, each pair at once in the estimate" pyck "$body" '
p = d["plan"]; r = p["plan"]; b = p["boots"]
print("#", [(x["seq"], x["client_os"], x["server_os"]) for x in r], [(x["seq"], x["machine"], x["from"], x["to"]) for x in b])
sys.exit(not (p["runs"] == 2 and p["combinations"] == 2 and r[0]["client_os"] == "ubuntu" and r[1]["server_os"] == "freebsd"
 and [(x["seq"], x["machine"], x["from"], x["to"]) for x in b] == [(1, "left", "ubuntu", "freebsd"),
     (1, "right", "ubuntu", "freebsd"), (None, "left", "freebsd", "ubuntu"), (None, "right", "freebsd", "ubuntu")]
 and all(x["estimated_s"] == 120 for x in b) and 240 <= p["estimated_s"] < 480 and p["spec"]["os_after"] == "restore"))'
api POST /api/v1/matrices/plan '{"name":"x","pairs":[{"client":"left","server":"right"}],"os":[{"left":"windows"}]}' >/dev/null
check "a combination with an OS the host does not have: 400" test "$(st)" = 400

# ---- run it ----
M=$(api POST /api/v1/matrices "$SPEC" | jq_ 'd["matrix"]["id"]')
WAIT=400 check "matrix $M succeeds (4 boots)" wait_state "$M" succeeded
body=$(api GET "/api/v1/matrices/$M")
check "each run ran in the persona its combination wants" pyck "$body" '
r = sorted(d["matrix"]["runs"], key=lambda x: x["seq"])
print("#", [(x["state"], x["client_os"], x["server_os"], x["want_client_os"]) for x in r])
sys.exit(not (all(x["state"] == "ok" for x in r) and (r[0]["client_os"], r[0]["server_os"]) == ("ubuntu", "ubuntu")
 and (r[1]["client_os"], r[1]["server_os"]) == ("freebsd", "freebsd") and r[1]["want_server_os"] == "freebsd"))'
check "the matrix recorded 4 boots, each with its action, all succeeded" pyck "$body" '
b = d["matrix"]["boots"]; print("#", [(x["host"], x["to"], x["state"], x["action"], x["before_seq"]) for x in b])
sys.exit(not (len(b) == 4 and all(x["state"] == "succeeded" and x["action"] for x in b)
 and sorted((x["host"], x["to"], x["before_seq"]) for x in b) == [("left", "freebsd", 1), ("left", "ubuntu", None),
     ("right", "freebsd", 1), ("right", "ubuntu", None)]))'
check "left and right boot at once: into freebsd before run 1, and back after the last run" pyck "$body" '
import datetime as dt
t = lambda s: dt.datetime.strptime(s.replace("Z", "")[:23], "%Y-%m-%dT%H:%M:%S.%f" if "." in s else "%Y-%m-%dT%H:%M:%S")
b = d["matrix"]["boots"]
for to in ("freebsd", "ubuntu"):
    l, r = [x for x in b if x["to"] == to and x["host"] == "left"][0], [x for x in b if x["to"] == to and x["host"] == "right"][0]
    print("#", to, l["started_at"], l["finished_at"], r["started_at"], r["finished_at"])
    if not (t(l["started_at"]) < t(r["finished_at"]) and t(r["started_at"]) < t(l["finished_at"])):
        sys.exit(1)'
A=$(echo "$body" | jq_ '[x["action"] for x in d["matrix"]["boots"] if x["to"] == "freebsd"][0]')
act=$(api GET "/api/v1/actions/$A")
check "a boot is an action by the matrix with the exact grub-reboot command" pyck "$act" '
a = d["action"]; print("#", a["actor"], [s["command"] for s in a["steps"] if s["command"]][:3])
sys.exit(not (a["kind"] == "boot" and a["actor"] == "matrix '"$M"'" and a["state"] == "succeeded"
 and any("grub-reboot" in (s["command"] or "") for s in a["steps"])))'
hosts=$(api GET "/api/v1/matrices/$M/hosts")
check "the metadata of each host in each OS" pyck "$hosts" '
got = sorted((h["host"], h["os"], h["metadata"]["kind"]) for h in d["hosts"] if h["host"] != "router"); print("#", got)
sys.exit(got != [("left", "freebsd", "freebsd"), ("left", "ubuntu", "linux"), ("right", "freebsd", "freebsd"),
 ("right", "ubuntu", "linux")])'
check "both hosts are back in ubuntu" sh -c "sleep 3; curl -s -H \"Authorization: Bearer \$(cat $TESTBEDD_TOKEN_FILE)\" $TESTBEDD_URL/api/v1/hosts |
	python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(sorted(h[\"state\"][\"os\"] or \"-\" for h in d[\"hosts\"] if h[\"name\"] in (\"left\",\"right\")) != [\"ubuntu\", \"ubuntu\"])'"
check "no iperf3 left on the hosts" no_iperf_left

# ---- the next plan knows how long a boot takes here ----
body=$(api POST /api/v1/matrices/plan "$SPEC")
check "plan: the boots estimated with the measured times (under 120 s)" pyck "$body" '
b = d["plan"]["boots"]; print("#", [x["estimated_s"] for x in b])
sys.exit(not (len(b) == 4 and all(0 < x["estimated_s"] < 120 for x in b)))'

# ---- what tbctl shows of it: the boots in the plan, the boots while it runs ----
printf '%s' "$SPEC" >"$S/os-spec.json"
out=$("$BIN/tbctl" matrix plan "$S/os-spec.json" 2>&1)
check "tbctl matrix plan lists each boot with its estimate" sh -c 'printf "%s" "$1" | grep -q "boot before run 1: left ubuntu -> freebsd (about" &&
	printf "%s" "$1" | grep -q "boot after the last run: right freebsd -> ubuntu"' _ "$out" || diag "$out"

# ---- a boot that cannot happen: the runs of its combination fail as boot_error, nothing else breaks ----
grub_entry right freebsd nosuch
check "the inventory is reloaded (right's GRUB entry for freebsd is one its menu does not have)" reload_inventory 1
M2=$(api POST /api/v1/matrices '{"name":"noboot","pairs":[{"client":"left","server":"right"}],"duration_s":2,
 "os":[{"right":"freebsd"}],"os_after":"leave"}' | jq_ 'd["matrix"]["id"]')
timeout 300 "$BIN/tbctl" matrix watch "$M2" >"$S/watch2.out" 2>&1 </dev/null
WAIT=300 check "matrix $M2 ends failed" wait_state "$M2" failed
body=$(api GET "/api/v1/matrices/$M2")
check "its run failed as boot_error, naming right and freebsd" pyck "$body" '
r = d["matrix"]["runs"][0]; print("#", r["state"], r["error_class"], r["error_message"])
sys.exit(not (r["state"] == "failed" and r["error_class"] == "boot_error" and "right" in r["error_message"]
 and "freebsd" in r["error_message"]))'
check "the matrix recorded the failed boot with its action" pyck "$body" '
b = d["matrix"]["boots"]; print("#", b)
sys.exit(not (len(b) == 1 and b[0]["host"] == "right" and b[0]["to"] == "freebsd" and b[0]["state"] == "failed"
 and b[0]["action"] and b[0]["error"]))'
check "tbctl matrix watch showed the boot and its failure" sh -c 'grep -q "boot right into freebsd: running" "$1" &&
	grep -q "boot right into freebsd: failed" "$1" && grep -q "boot_error" "$1"' _ "$S/watch2.out" || diag "$(cat "$S/watch2.out")"
check "right answers again (as ubuntu)" wait_up right
check "no iperf3 left on the hosts" no_iperf_left

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

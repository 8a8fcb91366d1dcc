#!/bin/sh
# IPv6 (issue 20 item 8) on the simulated testbed: the sim's data plane
# carries 2001:2::/48 (RFC 5180's benchmarking range) beside 198.19.0.0/16,
# the router forwarding it; the inventory's links have address6; a matrix
# with "family": ["ipv4", "ipv6"] x "tool": ["iperf3", "iperf2"] x TCP/UDP
# from left to right gives results for both families, the IPv6 runs'
# commands carrying right's IPv6 address (iperf3 -6, iperf2 -V on both
# ends), their family stored (params, the run, the results' CSV), an RTT
# stream (ping) beside them over IPv6 too (left's ICMPv6 echoes counted),
# and irtt beside an IPv6 run answering at [ADDR6]:PORT (not falling back
# to ping); the hosts' metadata has IPv6
# forwarding beside IPv4's (on for the router's FreeBSD persona).  The IPv6 traffic crossed the
# router: its Ip6OutForwDatagrams counter grew by the runs' packets, and the
# router's 50 Mbit/s rate cap bounds the TCP runs of both families (and
# the sim's loss rule has an IPv6 twin).  With
# right's address6 taken out of the inventory, an IPv6 plan is refused (400)
# naming family, the host and the inventory field, and an IPv4 one plans.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
sim_testbedd tbv6 198 2
both_answer

fwd6() { ip netns exec "$PFX-router" awk '$1 == "Ip6OutForwDatagrams" { print $2 }' /proc/net/snmp6; }
echo6() { ip netns exec "$PFX-left" awk '$1 == "Icmp6OutEchos" { print $2 }' /proc/net/snmp6; }

check "left's data0 has 2001:2:0:10::2/64 beside 198.19.10.2" \
	bash -c "ip -n $PFX-left -o addr show dev data0 | grep -q 'inet6 2001:2:0:10::2/64' && ip -n $PFX-left -o addr show dev data0 | grep -q 'inet 198.19.10.2/24'"
check "left pings right's IPv6 address through the router" sshc root@$NET.11 ping -n -c 2 -W 2 2001:2:0:20::2
inv=$(api GET /api/v1/inventory)
check "the inventory has the links' address6" pyck "$inv" '
m = d.get("inventory", d).get("machines", d.get("machines"))
m = {x["name"]: x for x in m} if isinstance(m, list) else m
sys.exit(not (m["left"]["links"]["lan10"]["address6"] == "2001:2:0:10::2/64" and m["right"]["links"]["lan20"]["address6"] == "2001:2:0:20::2/64"))'

spec='{"name":"v6","pairs":[{"client":"left","server":"right"}],"protocols":["tcp","udp"],"duration_s":2,
 "family":["ipv4","ipv6"],"tool":["iperf3","iperf2"],"iperf":{"udp_bitrate":"10M"},"latency":"ping"}'
body=$(api POST /api/v1/matrices/plan "$spec")
check "plan: 8 runs, each with its family and the server address of that family" pyck "$body" '
p = d["plan"]["plan"] if isinstance(d.get("plan"), dict) else d["plan"]
ok = len(p) == 8
for r in p:
    v6 = r["family"] == "ipv6"
    ok = ok and r["server_address"] == ("2001:2:0:20::2" if v6 else "198.19.20.2")
    ok = ok and (r["params"].get("family") == "ipv6") == v6
    ok = ok and r["iperf_args"].endswith(" -6" if r["tool"] == "iperf3" else " -V") == v6
print("#", [(r["family"], r["tool"], r["iperf_args"]) for r in p])
sys.exit(not ok)'

check "sim link --rate 50mbit" "$SIM" link --prefix "$PFX" --rate 50mbit
f0=$(fwd6)
e0=$(echo6)
stamp_start run.rtt
body=$(api POST /api/v1/matrices "$spec")
M=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "start: 201" test "$(st)" = 201 -a -n "$M"
WAIT=150 check "matrix $M succeeds" wait_state "$M" succeeded
sleep 1
stamp_stop
f1=$(fwd6)
e1=$(echo6)
"$SIM" link --prefix "$PFX" --rate none >/dev/null
diag "router Ip6OutForwDatagrams $f0 -> $f1; left Icmp6OutEchos $e0 -> $e1"
check "the IPv6 runs crossed the router: it forwarded over 5000 IPv6 datagrams" test $((f1 - f0)) -gt 5000
# the 4 IPv6 runs' ping (idle 10 + loaded 15 each) went to right's IPv6 address, not its IPv4 one
check "the RTT stream of the IPv6 runs pinged over IPv6 (left sent over 40 ICMPv6 echoes)" test $((e1 - e0)) -gt 40

rule6() { ip netns exec "$PFX-router" nft list table ip6 tbsim_link 2>/dev/null | grep -o 'mod 1000 < [0-9]*'; }
"$SIM" link --prefix "$PFX" --loss 2 >/dev/null
check "sim link --loss 2 drops IPv6 too (table ip6 tbsim_link: mod 1000 < 20)" test "$(rule6)" = "mod 1000 < 20"
"$SIM" link --prefix "$PFX" --loss 0 >/dev/null
check "sim link --loss 0 removes it" test -z "$(rule6)"

hosts=$(api GET "/api/v1/matrices/$M/hosts")
check "metadata: IPv6 forwarding on the router (FreeBSD persona), off on left and right, beside IPv4's" pyck "$hosts" '
f = {h["host"]: h["metadata"].get("forwarding") for h in d["hosts"]}
print("#", f)
sys.exit(not (f["router"] == {"ipv4": True, "ipv6": True} and f["left"] == {"ipv4": False, "ipv6": False}
 and f["right"] == {"ipv4": False, "ipv6": False} and all(not h["metadata"].get("errors") for h in d["hosts"])))'

mj=$(api GET "/api/v1/matrices/$M")
check "the stored spec keeps family" pyck "$mj" 'sys.exit(d["matrix"]["spec"].get("family") != ["ipv4", "ipv6"])'
for R in $(echo "$mj" | jq_ '" ".join(str(r["id"]) for r in d["matrix"]["runs"])'); do
	rj=$(api GET "/api/v1/runs/$R")
	diag "$(echo "$rj" | jq_ '"run %d %s %s %s: %s, receiver %s bit/s; client %s; server %s" % (d["run"]["id"], d["run"]["family"], d["run"]["tool"], d["run"]["protocol"], d["run"]["state"], d["run"]["receiver_bps"], d["run"]["client_command"], d["run"]["server_command"])')"
	check "run $R: ok, its family's address in the command as it ran, family stored" pyck "$rj" '
r = d["run"]
v6 = r["family"] == "ipv6"
i2 = r["tool"] == "iperf2"
addr = "2001:2:0:20::2" if v6 else "198.19.20.2"
ok = r["state"] == "ok" and r["receiver_bps"] > 1e6 and r["server_address"] == addr
ok = ok and (" -c %s " % addr) in r["client_command"] and (r["params"].get("family") == "ipv6") == v6
ok = ok and (" -6" in r["client_command"]) == (v6 and not i2)
ok = ok and (" -V" in r["client_command"]) == (v6 and i2) and (" -V" in r["server_command"]) == (v6 and i2)
if r["protocol"] == "tcp":
    ok = ok and r["receiver_bps"] < 55e6
sys.exit(not ok)'
done

check "TCP under the router's 50 Mbit/s cap in both families (each 10..55 Mbit/s)" pyck "$mj" '
t = {(r["family"], r["tool"]): r["receiver_bps"] for r in d["matrix"]["runs"] if r["protocol"] == "tcp"}
print("#", t)
sys.exit(not (len(t) == 4 and all(10e6 < v < 55e6 for v in t.values())))'

check "RTT (ping) beside the IPv6 runs too" python3 - "$DD/events.jsonl" "$mj" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
runs = {r["id"]: r for r in json.loads(sys.argv[2])["matrix"]["runs"]}
rtt = [e["data"]["data"] for e in ev if e.get("event") == "run.rtt"]
ok = True
for rid, r in runs.items():
    n = len([x for x in rtt if x["run"] == rid])
    print("# run %d (%s %s %s): %d run.rtt bins" % (rid, r["family"], r["tool"], r["protocol"], n))
    ok = ok and n >= 1
sys.exit(not ok)
PY

csv=$(curl -s -H "Authorization: Bearer $(cat "$TESTBEDD_TOKEN_FILE")" -H 'Accept: text/csv' "$TESTBEDD_URL/api/v1/matrices/$M/results?format=csv")
check "the results' CSV has a family column with both families" python3 -c '
import csv, io, sys
rows = list(csv.DictReader(io.StringIO(sys.argv[1])))
print("# families in the CSV:", sorted(set(r.get("family") for r in rows)))
sys.exit(not (rows and sorted(set(r["family"] for r in rows)) == ["ipv4", "ipv6"]))' "$csv"

# irtt beside an IPv6 run: its ADDR:PORT is [2001:2:0:20::2]:PORT (a bare v6
# address with :PORT is no address to irtt: the probe would fall back to ping)
stamp_start run.rtt
body=$(api POST /api/v1/matrices '{"name":"v6irtt","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"duration_s":2,"family":"ipv6","latency":"irtt"}')
M2=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "irtt matrix start: 201" test "$(st)" = 201 -a -n "$M2"
WAIT=60 check "matrix $M2 (IPv6, latency irtt) succeeds" wait_state "$M2" succeeded
sleep 1
stamp_stop
check "irtt answered over IPv6: the run's RTT bins, idle and loaded, are irtt's" python3 - "$DD/events.jsonl" "$M2" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rtt = [e["data"]["data"] for e in ev if e.get("event") == "run.rtt"]
mine = [x for x in rtt if x["matrix"] == int(sys.argv[2])]
print("# run.rtt bins of matrix %s (tool, phase):" % sys.argv[2], sorted(set((x["tool"], x["phase"]) for x in mine)))
sys.exit(not (mine and all(x["tool"] == "irtt" for x in mine) and {x["phase"] for x in mine} == {"idle", "load"}))
PY

# right without IPv6 in the inventory: an IPv6 plan is refused before anything runs
python3 - "$S/inventory.yaml" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("        address6: 2001:2:0:20::2/64\n", "", 1)
open(p, "w").write(s)
PY
check "testbedd reads the inventory without right's address6" reload_inventory 1
body=$(api POST /api/v1/matrices/plan '{"name":"no6","pairs":[{"client":"left","server":"right"}],"family":["ipv4","ipv6"]}')
diag "$body"
check "an IPv6 plan for right is refused (400) naming family[1], right and its inventory field" \
	pyck "$body" 'e = d["error"]; sys.exit(not (e["field"] == "family[1]" and "right" in e["message"] and "machines.right.links.lan20.address6" in e["message"]))'
check "(status 400)" test "$(st)" = 400
api POST /api/v1/matrices/plan '{"name":"only4","pairs":[{"client":"left","server":"right"}],"family":"ipv4"}' >/dev/null
check "the same pair over IPv4 plans (200)" test "$(st)" = 200
finish

#!/bin/sh
# Tunables as a matrix dimension (issue 20 item 3) on the simulated testbed:
# a matrix sweeps net.ipv4.tcp_congestion_control (the default and reno: a
# namespace may set what tcp_allowed_congestion_control lists; per namespace) and the MTU of the data interfaces (1500/1400: the router's ports
# stay at 1500, so 9000 on the ends would black-hole) on left -> right as
# ubuntu.  The plan lists the four sets with their changes and restore; each
# run's namespace has its set's values while it runs (read in the namespaces
# by this test), each run stores its set in its params, the journal has a row
# per change with the original, and the originals are back afterwards.  A
# value the kernel refuses fails its run as tunable_error naming tunables[1],
# changing nothing; net.ipv4.tcp_rmem given two of its three values is a
# read-back mismatch (the kernel keeps the third).  A cancel mid-cell, and
# kill -9 of testbedd mid-cell then a restart: the originals come back (the
# latter from the journal).  Then the same sweep with both hosts
# booted into the freebsd persona (its sysctl and ifconfig stand-ins: the
# FreeBSD names and `ifconfig IF mtu N`).  A TSO sweep (off, on) on both
# ends' data0 as ubuntu: ethtool -K on the veths, read in the namespaces
# while each run runs, journaled as data0/tso, restored.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_testbedd tbtu 229 2
both_answer

cc() { ip netns exec "$PFX-$1" sysctl -n net.ipv4.tcp_congestion_control; }
mtu() { ip netns exec "$PFX-$1" cat /sys/class/net/data0/mtu; }
now4() { echo "$(cc left) $(mtu left) $(cc right) $(mtu right)"; }
# the namespaces start with the machine's default congestion control (bbr here, cubic on a stock kernel)
ORIG=$(now4) CC0=$(cc left)
check "the originals: the same on both ends, MTU 1500 ($ORIG)" test "$ORIG" = "$CC0 1500 $CC0 1500"

# a namespace may set only what net.ipv4.tcp_allowed_congestion_control lists (reno always; cubic on a
# stock kernel, bbr here): the sweep is the default and reno
A=$CC0 B=reno
[ "$A" = reno ] && A=$(ip netns exec "$PFX-left" sysctl -n net.ipv4.tcp_allowed_congestion_control | tr ' ' '\n' | grep -vx reno | head -n 1)
diag "sweeping net.ipv4.tcp_congestion_control $A/$B (allowed: $(sysctl -n net.ipv4.tcp_allowed_congestion_control))"
TUN='[{"linux":"net.ipv4.tcp_congestion_control","freebsd":"net.inet.tcp.cc.algorithm","values":["'$A'",{"linux":"'$B'","freebsd":"newreno"}]},{"mtu":true,"values":[1500,1400]}]'
SPEC='{"name":"tun","pairs":[{"client":"left","server":"right"}],"duration_s":3,"tunables":'$TUN'}'

# ---- the plan ----
body=$(api POST /api/v1/matrices/plan "$SPEC")
check "plan: 4 runs in 4 tunable sets, each set's changes on left and right and the restore" pyck "$body" '
p = d["plan"]; t = p["tunables"]; s = t["sets"]
print("#", [(x["set"], [v["value"]["linux"] for v in x["values"]], x["first_seq"]) for x in s])
sys.exit(not (p["runs"] == 4 and [x["tunable_set"] for x in p["plan"]] == [0, 1, 2, 3] and t["hosts"] == ["left", "right"]
 and [[v["value"]["linux"] for v in x["values"]] for x in s] == [["'$A'", "1500"], ["'$A'", "1400"], ["reno", "1500"], ["reno", "1400"]]
 and s[2]["values"][0]["value"]["freebsd"] == "newreno" and "crash" in t["restore"] and "journal" in t["change"]))'
api POST /api/v1/matrices/plan '{"name":"x","pairs":[{"client":"left","server":"right"}],"tunables":[{"linux":"a.b","freebsd":"bad;name","values":[1]}]}' >"$DD/bad.json"
check "a bad sysctl name: 400 naming tunables[0].freebsd" sh -c 'test "$(cat '"$DD"'/status)" = 400 && grep -q "\"field\": *\"tunables\[0\].freebsd\"" '"$DD"'/bad.json'

# ---- run it, reading the namespaces while each run runs ----
M=$(api POST /api/v1/matrices "$SPEC" | jq_ 'd["matrix"]["id"]')
watch_runs "$M" now4 "$DD/seen" 300
check "matrix $M succeeds ($state)" test "$state" = succeeded
[ "$state" = succeeded ] || diag "$(api GET "/api/v1/matrices/$M" | jq_ '[(r["seq"], r["state"], r["error_class"], r["error_message"]) for r in d["matrix"]["runs"]]')"
diag "seen: $(sort -u "$DD/seen" | tr '\n' ';')"
check "tbctl matrix show: each run's PARAMS name its tunable set" sh -c '
out=$(timeout 60 "$1" matrix show "$2") || exit 1
for n in 0 1 2 3; do printf "%s\n" "$out" | grep -q -- "-t 3 set=$n " || { printf "# %s\n" "$out"; exit 1; }; done' _ "$BIN/tbctl" "$M"
check "while each run ran, both namespaces had its set's values" python3 - "$DD/seen" "$A" <<'PY'
import sys
a = sys.argv[2]
want = {0: a + " 1500 " + a + " 1500", 1: a + " 1400 " + a + " 1400", 2: "reno 1500 reno 1500", 3: "reno 1400 reno 1400"}
seen = {}
for line in open(sys.argv[1]):
    seq, rest = line.split(" ", 1)
    seen.setdefault(int(seq), set()).add(rest.strip())
sys.exit(not all(seen.get(k) == {v} for k, v in want.items()))
PY
check "the originals are back ($(now4))" test "$(now4)" = "$ORIG"
R=$(api GET "/api/v1/matrices/$M" | jq_ '[r["id"] for r in d["matrix"]["runs"] if r["seq"] == 3][0]')
check "run 3 stores its set (reno, MTU 1400) in its params" pyck "$(api GET "/api/v1/runs/$R")" '
t = d["run"]["params"]["tunables"]; print("#", t)
sys.exit(not (t["set"] == 3 and t["values"][0]["value"] == {"linux": "reno", "freebsd": "newreno"}
 and t["values"][1]["kind"] == "mtu" and t["values"][1]["value"]["linux"] == "1400"))'
check "the journal: nothing open; every change of the matrix with its original, restored" pyck "$(api GET '/api/v1/tunables?all=1')" '
r = [x for x in d["rows"] if x["matrix"] == '"$M"']
print("#", d["open"], len(r), sorted(set((x["host"], x["kind"], x["name"], x["original"], x["applied"]) for x in r))[:4])
sys.exit(not (d["open"] == 0 and len(r) >= 4 and all(x["state"] == "restored" and x["restored_at"] for x in r)
 and all(str(x[k]).endswith("Z") and str(x[k])[4] == "-" for x in r for k in ("created_at", "restored_at"))
 and {(x["host"], x["name"], x["original"]) for x in r} >= {("left", "net.ipv4.tcp_congestion_control", "'"$CC0"'"),
     ("right", "data0", "1500")} and {x["original"] for x in r if x["kind"] == "sysctl"} == {"'"$CC0"'"} and {x["applied"] for x in r if x["kind"] == "sysctl"} == {"'$A'", "reno"}))'

# ---- a NIC offload swept: TSO off then on, on both ends' data0 (ethtool -K on the veth) ----
tso() { ip netns exec "$PFX-$1" ethtool -k data0 | sed -n 's/^tcp-segmentation-offload: \([a-z]*\).*/\1/p'; }
tso2() { echo "$(tso left) $(tso right)"; }
TSO0=$(tso2)
check "TSO is on on both ends' data0 before ($TSO0)" test "$TSO0" = "on on"
api POST /api/v1/matrices/plan '{"name":"x","pairs":[{"client":"left","server":"right"}],"tunables":[{"offload":"gso","values":["on"]}]}' >"$DD/bad.json"
check "offload gso: 400 naming tunables[0].offload" sh -c 'test "$(cat '"$DD"'/status)" = 400 && grep -q "\"field\": *\"tunables\[0\].offload\"" '"$DD"'/bad.json'
M5=$(api POST /api/v1/matrices '{"name":"tso","pairs":[{"client":"left","server":"right"}],"duration_s":4,
 "tunables":[{"offload":"tso","values":["off","on"]}]}' | jq_ 'd["matrix"]["id"]')
watch_runs "$M5" tso2 "$DD/seen5" 300
check "matrix $M5 (tso off, on) succeeds ($state)" test "$state" = succeeded
diag "seen: $(sort -u "$DD/seen5" | tr '\n' ';')"
check "while each run ran, both ends' TSO was its set's (off, then on)" python3 - "$DD/seen5" <<'PY'
import sys
seen = {}
for line in open(sys.argv[1]):
    seq, rest = line.split(" ", 1)
    seen.setdefault(int(seq), set()).add(rest.strip())
sys.exit(not (seen.get(0) == {"off off"} and seen.get(1) == {"on on"}))
PY
check "TSO is back on on both ends ($(tso2))" test "$(tso2)" = "on on"
check "the journal: the offload rows (data0/tso, original on, applied off), restored" pyck "$(api GET '/api/v1/tunables?all=1')" '
r = [x for x in d["rows"] if x["matrix"] == '"$M5"']
print("#", sorted(set((x["host"], x["kind"], x["name"], x["original"], x["applied"], x["state"]) for x in r)))
sys.exit(not (r and all(x["kind"] == "offload" and x["name"] == "data0/tso" and x["original"] == "on" and x["state"] == "restored" for x in r)
 and {x["host"] for x in r} == {"left", "right"}))'
# the FreeBSD persona's ifconfig stand-in: the veth's own TSO in options=, -tso/tso through ethtool
FBIF=$S/personas/freebsd/bin/ifconfig
check "ifconfig data0 (FreeBSD stand-in) -tso: no TSO4 in options=, and ethtool says off" sh -c '
ip netns exec "$1-left" "$2" data0 -tso && ! ip netns exec "$1-left" "$2" data0 | grep -q "options=.*TSO4" &&
ip netns exec "$1-left" ethtool -k data0 | grep -q "^tcp-segmentation-offload: off"' _ "$PFX" "$FBIF"
check "ifconfig data0 tso: TSO4,TSO6 back in options=" sh -c '
ip netns exec "$1-left" "$2" data0 tso && ip netns exec "$1-left" "$2" data0 | grep -q "options=.*TSO4,TSO6"' _ "$PFX" "$FBIF"
check "ifconfig data0 lro: refused (a veth has no LRO)" sh -c '! ip netns exec "$1-left" "$2" data0 lro 2>/dev/null' _ "$PFX" "$FBIF"

# ---- a value the kernel refuses: the run fails naming the tunable, nothing stays changed ----
M2=$(api POST /api/v1/matrices '{"name":"refused","pairs":[{"client":"left","server":"right"}],"duration_s":1,
 "tunables":[{"mtu":true,"values":[1400]},{"linux":"net.ipv4.tcp_congestion_control","values":["nosuchcc"]}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M2 fails" wait_state "$M2" failed
check "its run failed as tunable_error naming tunables[1] and the sysctl" pyck "$(api GET "/api/v1/matrices/$M2")" '
r = d["matrix"]["runs"][0]; print("#", r["error_class"], r["error_message"])
sys.exit(not (r["error_class"] == "tunable_error" and r["error_message"].startswith("tunables[1]")
 and "net.ipv4.tcp_congestion_control" in r["error_message"]))'
check "the MTU it had set is back ($(now4))" test "$(now4)" = "$ORIG"

# ---- interrupt placement: a veth has no interrupts, so the run fails saying so, nothing stays changed ----
M7=$(api POST /api/v1/matrices '{"name":"irq","pairs":[{"client":"left","server":"right"}],"duration_s":1,
 "tunables":[{"mtu":true,"values":[1400]},{"irq":true,"values":["0"]}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M7 (irq) fails" wait_state "$M7" failed
check "its run failed as tunable_error: data0 has no interrupts of its own" pyck "$(api GET "/api/v1/matrices/$M7")" '
r = d["matrix"]["runs"][0]; print("#", r["error_class"], r["error_message"])
sys.exit(not (r["error_class"] == "tunable_error" and r["error_message"].startswith("tunables[1] (interrupts of data0) on left (ubuntu): cannot read it")
 and "data0 has no interrupts of its own" in r["error_message"]))'
check "the MTU it had set is back ($(now4))" test "$(now4)" = "$ORIG"

# ---- a vector sysctl: "a b c" one argv word, read back with tabs; two of its three values: a read-back mismatch ----
rmem() { ip netns exec "$PFX-$1" sysctl -n net.ipv4.tcp_rmem | tr -s '\t ' ' '; }
RMEM0=$(rmem left)
M5=$(api POST /api/v1/matrices '{"name":"rmem","pairs":[{"client":"left","server":"right"}],"duration_s":1,
 "tunables":[{"linux":"net.ipv4.tcp_rmem","values":["4096 65536 4194304","4096 87380"]}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M5 ends failed" wait_state "$M5" failed
check "run 0 (three values, one argv word) ran; run 1 (two: the kernel keeps the third) failed as a read-back mismatch" pyck "$(api GET "/api/v1/matrices/$M5")" '
r = sorted(d["matrix"]["runs"], key=lambda x: x["seq"]); print("#", [(x["state"], x["error_class"], x["error_message"]) for x in r])
sys.exit(not (r[0]["state"] == "ok" and r[1]["error_class"] == "tunable_error" and r[1]["error_message"].startswith("tunables[0] (net.ipv4.tcp_rmem) on left")
 and "set to \"4096 87380\", read back \"4096 87380 " in r[1]["error_message"]))'
check "tcp_rmem is back ($(rmem left) / $(rmem right), was $RMEM0)" test "$(rmem left)/$(rmem right)" = "$RMEM0/$RMEM0"

# ---- a cancel mid-cell: the originals come back with the matrix's end ----
M6=$(api POST /api/v1/matrices '{"name":"cancel","pairs":[{"client":"left","server":"right"}],"duration_s":8,
 "tunables":[{"linux":"net.ipv4.tcp_congestion_control","values":["reno"]},{"mtu":true,"values":[1400]}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M6: its run starts" wait_run "$M6" 0 running 30
check "mid-cell: reno and MTU 1400 on both ends ($(now4))" test "$(now4)" = "reno 1400 reno 1400"
api POST "/api/v1/matrices/$M6/cancel" >/dev/null
check "matrix $M6 ends canceled" wait_state "$M6" canceled
check "after the cancel the originals are back ($(now4))" test "$(now4)" = "$ORIG"

# ---- kill -9 mid-cell, restart: the originals come back from the journal ----
M3=$(api POST /api/v1/matrices '{"name":"crash","pairs":[{"client":"left","server":"right"}],"duration_s":8,
 "tunables":[{"linux":"net.ipv4.tcp_congestion_control","values":["reno"]},{"mtu":true,"values":[1400]}]}' | jq_ 'd["matrix"]["id"]')
check "matrix $M3: its run starts" wait_run "$M3" 0 running 30
check "mid-cell: reno and MTU 1400 on both ends ($(now4))" test "$(now4)" = "reno 1400 reno 1400"
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
check "after kill -9 nothing was restored yet ($(now4))" test "$(now4)" = "reno 1400 reno 1400"
check "testbedd restarts on the same state" daemon_again "$S/inventory.yaml" --probe-interval 2
for _ in $(seq 100); do [ "$(now4)" = "$ORIG" ] && break; sleep 0.2; done
check "the originals are back after the restart ($(now4))" test "$(now4)" = "$ORIG"
check "the journal has nothing open" test "$(api GET /api/v1/tunables | jq_ 'd["open"]')" = 0
check "testbedd logged the restores" grep -q "tunables.*back to $CC0" "$DD/log"
check "no iperf3 left on the hosts" no_iperf_left

# ---- the same sweep with both hosts in the freebsd persona: FreeBSD's names and commands ----
fbcc() {	# what the stand-in's sysctl says: the host's own value, else its persona's sample (FreeBSD 14: cubic)
	cat "$S/hosts/$1/sysctl/net.inet.tcp.cc.algorithm" 2>/dev/null || cat "$S/personas/freebsd/sysctl/net.inet.tcp.cc.algorithm"
}
fb4() { echo "$(fbcc left) $(mtu left) $(fbcc right) $(mtu right)"; }
FB0=$(fb4)
FBCC=$(fbcc left)
check "freebsd's originals: the same on both ends, MTU 1500 ($FB0)" test "$FB0" = "$FBCC 1500 $FBCC 1500"
# (4 s runs: the watcher polls the API and reads the stand-ins' files; on a loaded machine it
# once missed a 2 s run)
FSPEC='{"name":"tun-bsd","pairs":[{"client":"left","server":"right"}],"duration_s":4,"os":[{"left":"freebsd","right":"freebsd"}],
 "tunables":[{"linux":"net.ipv4.tcp_congestion_control","freebsd":"net.inet.tcp.cc.algorithm","values":[{"linux":"'$A'","freebsd":"cubic"},{"linux":"reno","freebsd":"newreno"}]},{"mtu":true,"values":[1500,1400]},{"offload":"tso","values":["off"]}]}'
M4=$(api POST /api/v1/matrices "$FSPEC" | jq_ 'd["matrix"]["id"]')
watch_runs "$M4" fb4 "$DD/seen4" 600
check "matrix $M4 (both hosts booted into freebsd and back) succeeds ($state)" test "$state" = succeeded
[ "$state" = succeeded ] || diag "$(api GET "/api/v1/matrices/$M4" | jq_ '[(r["seq"], r["state"], r["error_class"], r["error_message"]) for r in d["matrix"]["runs"]]')"
diag "seen: $(sort -u "$DD/seen4" | tr '\n' ';')"
check "while each run ran in freebsd, its set's values were in force (the FreeBSD sysctl, ifconfig's MTU)" python3 - "$DD/seen4" <<'PY'
import sys
want = {0: "cubic 1500 cubic 1500", 1: "cubic 1400 cubic 1400", 2: "newreno 1500 newreno 1500", 3: "newreno 1400 newreno 1400"}
seen = {}
for line in open(sys.argv[1]):
    seq, rest = line.split(" ", 1)
    seen.setdefault(int(seq), set()).add(rest.strip())
sys.exit(not all(seen.get(k) == {v} for k, v in want.items()))
PY
check "freebsd's originals are back ($(fb4)), Linux's untouched ($(now4))" test "$(fb4)/$(now4)" = "$FB0/$ORIG"
check "TSO set off through the FreeBSD stand-in (ifconfig data0 -tso) and back on ($(tso2))" pyck "$(api GET '/api/v1/tunables?all=1')" '
r = [x for x in d["rows"] if x["matrix"] == '"$M4"' and x["kind"] == "offload"]
print("#", sorted(set((x["host"], x["os"], x["name"], x["original"], x["applied"], x["state"]) for x in r)))
sys.exit(not ({x["host"] for x in r} == {"left", "right"} and all(x["os"] == "freebsd" and x["name"] == "data0/tso"
 and x["original"] == "on" and x["applied"] == "off" and x["state"] == "restored" for x in r) and "'"$(tso2)"'" == "on on"))'
check "the journal: the FreeBSD rows by their FreeBSD names, all restored" pyck "$(api GET '/api/v1/tunables?all=1')" '
r = [x for x in d["rows"] if x["matrix"] == '"$M4"']
o = {x["original"] for x in r if x["kind"] == "sysctl"}
print("#", sorted(set((x["host"], x["os"], x["family"], x["name"], x["original"], x["state"]) for x in r)))
sys.exit(not (d["open"] == 0 and r and all(x["state"] == "restored" and x["os"] == "freebsd" and x["family"] == "freebsd" for x in r)
 and {x["name"] for x in r} == {"net.inet.tcp.cc.algorithm", "data0", "data0/tso"} and o == {"'"$FBCC"'"}))'

daemon_down
check "testbedd logged no error" sh -c "! grep -q 'Z error ' $DD/log"
finish

#!/bin/sh
# up / status / down: bad input gets a clear error and changes nothing; a prefix or
# block clash with a running sim is refused; two sims run at once; the inventory is
# testbedd's format with the real host keys; `down` leaves nothing (namespaces,
# links, addresses, mounts, processes, nft tables), also after a crash halfway
# through `up`, and running it twice is safe; a killed run's sim (no process of it
# left) is taken down by the next `up` of its prefix.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

A=tbtla B=tbtlb C=tbtlc
trap '"$SIM" down --prefix $A >/dev/null 2>&1; "$SIM" down --prefix $B >/dev/null 2>&1; "$SIM" down --prefix $C >/dev/null 2>&1' EXIT

snapshot() {	# what exists on this machine that this test's sims could leave behind
	# (only names and addresses of this test: other sims may run at the same time)
	{
		ip netns list
		ip -o link show | awk -F': ' '{ print $2 }' | sed 's/@.*//'
		ip -4 -o addr show | awk '{ print $2, $4 }'
		ip neigh show
		awk '{ print $5 }' /proc/self/mountinfo
		ls /run/testbedd-sim/.registry 2>/dev/null
	} | grep -E 'tbtl|198\.18\.24[789]\.' | sort
	nft list tables 2>/dev/null | sort
}
traces_of() {	# prefix: anything left of it?
	local p=$1
	ip netns list | grep -q "^$p-" && { diag "namespace of $p left"; return 0; }
	ip -o link show | grep -q ": $p" && { diag "link of $p left"; return 0; }
	grep -q -e "/run/netns/$p-" -e "testbedd-sim/$p" /proc/self/mountinfo && { diag "mount of $p left"; return 0; }
	[ -e /run/testbedd-sim/.registry/$p ] && { diag "registry entry of $p left"; return 0; }
	[ -e /run/testbedd-sim/$p ] && { diag "state dir of $p left"; return 0; }
	return 1
}
procs_alive() {	# pids file copy: any recorded process still running (zombies count as gone)?
	local p st cur
	while read -r p st _; do
		cur=$(awk '{ sub(/.*\) /, ""); print $1, $20 }' /proc/$p/stat 2>/dev/null) || continue
		case $cur in Z*) continue ;; esac
		[ "${cur#* }" = "$st" ] && { diag "process $p still running"; return 0; }
	done <"$1"
	return 1
}

before=$(snapshot)
# bad input
for bad in "--bogus" "--prefix TB1" "--prefix tb1234567" "--prefix x1" "--block 256" "--block -1" "--boot-delay soon" \
	"--rate fast" "--loss 200" "--wol-ignore many" "--secureon 12345" "--delay 10ms" "--prefix"; do
	err=$("$SIM" up $bad 2>&1)
	rc=$?
	check "up $bad: refused (exit $rc) with a message naming the option" test $rc != 0 -a -n "$(printf '%s' "$err" | grep -e "${bad%% *}")"
done
err=$("$SIM" frobnicate 2>&1)
check "an unknown command is refused" test $? != 0 -a -n "$(printf '%s' "$err" | grep frobnicate)"
check "refused input changed nothing" test "$(snapshot)" = "$before"

# one sim, then clashes
t0=$(date +%s.%N)
S=$("$SIM" up --prefix $A --block 247 2>/dev/null)
check "up $A" test $? = 0 -a -d "$S"
diag "up took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
PFX=$A NET=198.18.247
check "up printed the state dir with the inventory" test -f "$S/inventory.yaml"
check "the daemon's key is 0600" test "$(stat -c %a "$S/id_ed25519")" = 600
cp "$S/pids" /tmp/tbtl-pids.$$
running=$(snapshot)
err=$("$SIM" up --prefix $A --block 248 2>&1)
check "a second up with the same prefix is refused" test $? != 0 -a -n "$(printf '%s' "$err" | grep -i "in use")"
err=$("$SIM" up --prefix $B --block 247 2>&1)
check "a second up with the same block is refused" test $? != 0 -a -n "$(printf '%s' "$err" | grep -i "block 247")"
check "the refused ups changed nothing" test "$(snapshot)" = "$running"
check "the running sim still answers" wait_ssh $NET.11

# a second sim at the same time
S2=$("$SIM" up --prefix $B --block 248 2>/dev/null)
check "a second sim with another prefix and block comes up" test $? = 0
check "both answer ssh at once" sshc root@198.18.247.21 true
S_save=$S; S=$S2
check "... the second too" sshc root@198.18.248.21 true
S=$S_save

# status
st=$("$SIM" status --prefix $A)
check "status shows left on as ubuntu at .11" grep -qE '^left +on +ubuntu +198\.18\.247\.11' <<<"$st"
check "status --json is JSON with each host's power" python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["hosts"]["right"]["power"] == "on"; assert d["link"]["rate"] == "none"' <<<"$("$SIM" status --prefix $A --json)"

# inventory: testbedd's format, real host keys
check "inventory is YAML with version 1 and 4 machines" python3 -c '
import yaml, sys
d = yaml.safe_load(open(sys.argv[1]))
assert d["version"] == 1 and set(d["machines"]) == {"left", "right", "router", "relay"}
assert d["ssh"]["key_file"].endswith("/id_ed25519") and d["ssh"]["user"] == "root"
l = d["machines"]["left"]
assert l["power"][0]["driver"] == "ipmi" and l["power"][0]["address"] == "198.18.247.12"
assert l["boot"]["entries"] == {"ubuntu": "0", "freebsd": "freebsd"}
assert l["os"]["freebsd"]["address"] == "198.18.247.10"
r = d["machines"]["right"]
assert [p["via"] for p in r["power"]] == ["relay", "broadcast", "directed"]
assert r["power"][1]["target"] == "198.18.247.255" and r["power"][2]["target"] == "198.18.247.21"
' "$S/inventory.yaml"
for hp in left:ubuntu:11 right:ubuntu:21 router:freebsd:50 relay:openwrt:2; do
	IFS=: read -r h p a <<<"$hp"
	want=$(python3 -c 'import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))["machines"][sys.argv[2]]["os"][sys.argv[3]]["host_key"])' "$S/inventory.yaml" $h $p)
	got=$(ssh-keyscan -t ed25519 198.18.247.$a 2>/dev/null | ssh-keygen -lf - | awk '{ print $2 }')
	check "inventory host_key of $h/$p is the key its sshd presents" test -n "$got" -a "$want" = "$got"
done
tbd=${TB_BINARY_DIR:-$TOP/build}/testbedd
if [ -x "$tbd" ]; then
	check "testbedd --check-config accepts the inventory" "$tbd" --inventory "$S/inventory.yaml" --check-config
else
	ok "testbedd --check-config # SKIP no testbedd binary at $tbd"
fi

# down
t0=$(date +%s.%N)
check "down $A exits 0" "$SIM" down --prefix $A
diag "down took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
check "down left no trace of $A" eval '! traces_of $A'
sleep 0.2
check "down ended every process it started" eval '! procs_alive /tmp/tbtl-pids.$$'
check "down twice is safe" "$SIM" down --prefix $A
"$SIM" down --prefix $B >/dev/null 2>&1
check "down $B too: this machine is as before (namespaces, links, addresses, neighbours, mounts, nft tables)" test "$(snapshot)" = "$before"

# a crash halfway through up, then down
for delay in 0.4 1.2 2.0; do
	"$SIM" up --prefix $C --block 249 >/dev/null 2>&1 &
	upid=$!
	sleep $delay
	kill -KILL $upid 2>/dev/null
	wait $upid 2>/dev/null
	cp /run/testbedd-sim/$C/pids /tmp/tbtl-pids.$$ 2>/dev/null || : >/tmp/tbtl-pids.$$
	"$SIM" down --prefix $C >/dev/null 2>&1
	check "after up was killed at ${delay}s, down leaves no trace" eval '! traces_of $C'
	check "... and no process of it" eval '! procs_alive /tmp/tbtl-pids.$$'
done

# a killed run: every process of the sim gone, its names, links and files left;
# the next up with that prefix takes them down first (one still running is refused above)
S=$("$SIM" up --prefix $C --block 249 2>/dev/null)
check "up $C" test $? = 0 -a -d "$S"
cp "$S/pids" /tmp/tbtl-pids.$$
victims=$(awk '{ print $1 }' "$S/pids"; for n in $C-left $C-right $C-router $C-relay; do ip netns pids $n; done)
kill -KILL $victims 2>/dev/null
for i in $(seq 1 50); do procs_alive /tmp/tbtl-pids.$$ 2>/dev/null || break; sleep 0.1; done
check "killed: none of its processes runs, its namespaces are left" eval '! procs_alive /tmp/tbtl-pids.$$ && ip netns list | grep -q "^$C-left"'
err=$("$SIM" up --prefix $C --block 249 2>&1 >/tmp/tbtl-dir.$$)
rc=$?
S=$(cat /tmp/tbtl-dir.$$)
check "a new up with its prefix takes the dead sim's traces down and comes up (exit $rc)" test $rc = 0 -a -d "$S"
check "... saying so" grep -q "left traces but none of its processes runs" <<<"$err"
NET=198.18.249
check "... and the new sim answers ssh" wait_ssh $NET.11
"$SIM" down --prefix $C >/dev/null 2>&1
check "this machine is as before" test "$(snapshot)" = "$before"
rm -f /tmp/tbtl-dir.$$
rm -f /tmp/tbtl-pids.$$
finish

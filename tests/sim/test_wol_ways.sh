#!/bin/sh
# Wake-on-LAN end to end through actions (POST /api/v1/hosts/right/power {"action":"on"}),
# one way at a time (right's inventory entry has only that way, so nothing else can wake
# it): limited broadcast (255.255.255.255 from a bound source), subnet broadcast, directed
# unicast, a raw EtherType 0x0842 frame (AF_PACKET on the sim's bridge), etherwake on the
# relay and (without SecureOn) wakeonlan on the relay; first without, then with a SecureOn
# password (the sim's hosts then ignore a magic packet without the right password, so a
# wake proves the password was in it).
# tcpdump on the sim's bridge records every frame; the bytes testbedd put on the wire are
# compared with those of `wakeonlan` (UDP) and `etherwake` (raw frames), sent by hand for
# the same MAC right after (right is on then: a packet for an on host changes nothing).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
command -v tcpdump >/dev/null || { echo "1..0 # SKIP no tcpdump (deploy/setup installs it)"; exit 0; }

TD="" TPID=""
cap_start() {	# tcpdump on the sim's bridge into $TD/$1.pcap
	tcpdump -i "${PFX}br" --immediate-mode -U -n -w "$TD/$1.pcap" 'udp or ether proto 0x0842' 2>"$TD/$1.err" &
	TPID=$!
	for _ in $(seq 50); do grep -q "listening on" "$TD/$1.err" && return 0; sleep 0.1; done
	return 1
}
cap_stop() {	# (--immediate-mode: without it, the last second's frames never reach the file)
	[ -n "$TPID" ] && { sleep 0.5; kill -INT "$TPID"; wait "$TPID" 2>/dev/null; TPID=""; }
}
trap 'cap_stop; daemon_clean; sim_down; [ -n "$TD" ] && rm -rf "$TD"' EXIT
TD=$(mktemp -d /tmp/tbwx-XXXXXX)

# The magic packets of a capture, one line each: "udp SRCIP DSTIP DPORT HEX" or
# "raw SRCMAC DSTMAC HEX" (the Ethernet payload).
frames() {
	python3 - "$1" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
le = d[:4] == b"\xd4\xc3\xb2\xa1"
e = "<" if le else ">"
o = 24
mac = lambda b: ":".join("%02x" % x for x in b)
while o + 16 <= len(d):
    _, _, incl, _ = struct.unpack(e + "IIII", d[o:o + 16])
    f = d[o + 16:o + 16 + incl]
    o += 16 + incl
    et = struct.unpack(">H", f[12:14])[0]
    if et == 0x0842:
        print("raw", mac(f[6:12]), mac(f[0:6]), f[14:].hex())
    elif et == 0x0800 and f[23] == 17:
        ihl = (f[14] & 15) * 4
        ip = f[14:]
        udp = ip[ihl:]
        tot = struct.unpack(">H", ip[2:4])[0]
        print("udp", ".".join(map(str, ip[12:16])), ".".join(map(str, ip[16:20])),
              struct.unpack(">H", udp[2:4])[0], ip[ihl + 8:tot].hex())
EOF
}

# right's inventory entry with only the way given as YAML lines (6 spaces in)
inventory() {	# file way-lines
	python3 - "$S/inventory.yaml" "$1" "$2" <<'EOF'
import re, sys
src, dst, way = sys.argv[1:]
t = open(src).read()
head, rest = t.split("\n  right:\n", 1)
right, tail = rest.split("\n  router:\n", 1)
right, n = re.subn(r"    power:\n((      |        ).*\n)*", lambda m: "    power:\n" + way + "\n", right + "\n", count=1)
assert n == 1
open(dst, "w").write(head + "\n  right:\n" + right[:-1] + "\n  router:\n" + tail)
EOF
}

action_state() { api GET "/api/v1/actions/$1" | jq_ 'd["action"]["state"]' 2>/dev/null; }
wake_by_action() {	# name: POST power on; waits for the action to end; 0 when it succeeded
	local id s
	id=$(api POST /api/v1/hosts/right/power '{"action":"on"}' | jq_ 'd["action"]["id"]' 2>/dev/null)
	[ "$(st)" = 202 ] || { diag "POST power: status $(st)"; return 1; }
	for _ in $(seq 600); do
		s=$(action_state "$id")
		case $s in succeeded | failed | canceled) break ;; esac
		sleep 0.2
	done
	api GET "/api/v1/actions/$id" >"$TD/$1.action.json"
	python3 -c 'import json,sys
a=json.load(open(sys.argv[1]))["action"]
for s in a.get("steps", []): print("# step:", s["what"], "|", s.get("command") or "")
print("# state:", a["state"], a.get("error") or "")' "$TD/$1.action.json"
	[ "$s" = succeeded ]
}

# way name, YAML, what the step says, testbedd's frame (grep -E), the reference's
# frame (grep -E), the command that sends the reference
one_way() {
	local name=$1 yaml=$2 says=$3 ours=$4 ref=$5 refcmd=$6 inv=$S/inventory-$1.yaml a b
	# (by hand: WOL_WAYS="subnet raw" runs only those)
	[ -z "${WOL_WAYS:-}" ] || [[ " $WOL_WAYS " == *" $name "* ]] || return 0
	inventory "$inv" "$yaml"
	check "$name: the inventory has only that way for right" "$BIN/testbedd" --check-config --inventory "$inv"
	daemon_up "$inv" --probe-interval 2 || sed 's/^/# testbedd: /' "$DD/log"
	check "$name: testbedd starts" test -s "$DD/port"
	cap_start "$name" || diag "tcpdump did not start"
	check "$name: POST /hosts/right/power on succeeds (right answers ssh)" wake_by_action "$name"
	check "$name: the step says $says" grep -qF "$says" "$TD/$name.action.json"
	check "$name: right answers ssh" wait_ssh "$NET.21"
	eval "$refcmd" >"$TD/$name.ref" 2>&1 || diag "the reference ($refcmd) failed: $(cat "$TD/$name.ref")"
	cap_stop
	frames "$TD/$name.pcap" >"$TD/$name.frames"
	sed 's/^/# /' "$TD/$name.frames"
	a=$(grep -E "$ours" "$TD/$name.frames" | head -1 | awk '{ print $NF }')
	b=$(grep -E "$ref" "$TD/$name.frames" | head -1 | awk '{ print $NF }')
	check "$name: testbedd's packet is on the bridge" test -n "$a"
	check "$name: so is the reference's" test -n "$b"
	if [ -n "$SO" ]; then
		check "$name: testbedd's packet is etherwake -p's byte for byte, or wakeonlan's then the password" \
			test "$a" = "$b$SO" -o "$a" = "$b"
		check "$name: ... and carries the password" test "${a: -12}" = "$SO"
	else
		check "$name: testbedd's packet is byte for byte the reference's" test "$a" = "$b"
	fi
	check "$name: the payload is 6 x ff and right's MAC 16 times${SO:+ and the password}" \
		test "$a" = "ffffffffffff$(printf "${MAC_right//:/}%.0s" $(seq 16))$SO"
	daemon_clean
	sshc root@$NET.21 poweroff
	check "$name: right is off again" wait_power right off
}

all_ways() {	# the ways, their reference commands with $1 as etherwake's extra options
	local m=${MAC_right//:/} so=${SO:+"
        secureon_file: $S/secureon.pass"}
	one_way limited "      - driver: wol
        via: broadcast
        target: 255.255.255.255
        source: $NET.1
        port: 9$so" "to 255.255.255.255:9 from $NET.1" "^udp $NET.1 255.255.255.255 9 " "^udp $NET.2 255.255.255.255 9 " \
		"sshc root@$NET.2 wakeonlan $MAC_right"
	one_way subnet "      - driver: wol
        via: broadcast
        target: $NET.255
        source: $NET.1
        port: 9$so" "to $NET.255:9 from $NET.1" "^udp $NET.1 $NET.255 9 " "^udp $NET.2 $NET.255 9 " \
		"sshc root@$NET.2 wakeonlan -i $NET.255 $MAC_right"
	one_way directed "      - driver: wol
        via: directed
        target: $NET.21
        source: $NET.1
        port: 9$so" "to $NET.21:9 from $NET.1" "^udp $NET.1 $NET.21 9 " "^udp $NET.2 $NET.21 9 " \
		"sshc root@$NET.2 wakeonlan -i $NET.21 $MAC_right"
	local brmac rmac
	brmac=$(cat "/sys/class/net/${PFX}br/address")
	rmac=$(ip -n "$PFX-relay" -o link show mgmt0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
	one_way raw "      - driver: wol
        via: raw
        interface: ${PFX}br$so" "raw Ethernet magic packet (EtherType 0x0842)" "^raw $brmac $MAC_right " \
		"^raw $rmac $MAC_right " "sshc root@$NET.2 etherwake -i mgmt0 $1 $MAC_right"
	# the relay's etherwake is the reference itself: its frame as testbedd has it sent
	one_way relay "      - driver: wol
        via: relay
        relay: relay
        interface: mgmt0
        command: etherwake$so" "through the relay relay (etherwake)" "^raw [0-9a-f:]+ $MAC_right " \
		"^raw [0-9a-f:]+ $MAC_right " "true"
	# wakeonlan as the relay's command (no SecureOn: it cannot send one), to UDP port 7;
	# the reference is wakeonlan from this machine
	[ -n "$SO" ] || one_way relay-wakeonlan "      - driver: wol
        via: relay
        relay: relay
        interface: mgmt0
        command: wakeonlan
        target: $NET.255
        port: 7" "through the relay relay (wakeonlan)" "^udp $NET.2 $NET.255 7 " "^udp $NET.1 $NET.255 7 " \
		"wakeonlan -i $NET.255 -p 7 $MAC_right"
}

sim_up tbwx 227 --off || { nok "sim up"; finish; }
ok "sim up with the hosts off (prefix $PFX, $NET.0/24)"
SO=""
all_ways ""
sim_down
PFX=""

PW=1a:2b:3c:4d:5e:6f
sim_up tbwx 228 --off --secureon $PW || { nok "sim up with SecureOn"; finish; }
ok "sim up with the hosts off and SecureOn $PW (prefix $PFX, $NET.0/24)"
SO=${PW//:/}
# the reference's UDP packets (wakeonlan) have no password: they cannot wake anything here
all_ways "-p $PW"
[ -n "${WOL_WAYS:-}" ] || check "right's WoL listener ignored the packets without the password" \
	grep -q "wrong or missing SecureOn password" "$S/hosts/right/log"
finish

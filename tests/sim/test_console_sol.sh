#!/bin/sh
# The console transports beyond raw TCP, end to end on the simulated testbed:
#  - ipmi-sol: left's console read through its BMC (ipmi_sim, whose SOL is
#    left's serial line: `sol "tcp:..."` onto ser2net) by `ipmitool ... sol
#    activate` as testbedd's child: a boot's lines arrive on the console
#    stream, Ctrl-C typed unsticks a hung boot, "~." typed at the start of a
#    line does not end ipmitool (it is sent as "~~."), Break is ipmitool's ~B
#    (ipmi_sim passes it on to its tcp device as telnet's IAC BRK, which the
#    host echoes: seen on the stream) and refused in mid-line, the password is
#    in ipmitool's environment and not its argv, and an ipmitool killed is
#    started again (the BMC's stale SOL session deactivated first);
#  - tcp with protocol: telnet: right's console through ser2net's
#    telnet(rfc2217) accepter: output, typing, a 255 byte both ways, Break;
#  - the RFC 2217 bytes of a Break: a pty (the sim's serial lines) has no
#    Break, so no sim host can see one; the router's console is pointed at a
#    small loopback TCP server of this test that records what it receives
#    (a stand-in for a console server, said so here), which must get
#    IAC SB COM-PORT-OPTION SET-CONTROL BREAK-ON IAC SE, then BREAK-OFF;
#  - a raw TCP console (relay) still refuses Break (400).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
command -v ser2net >/dev/null || { echo "1..0 # SKIP no ser2net (deploy/setup installs it)"; exit 0; }
command -v ipmitool >/dev/null || { echo "1..0 # SKIP no ipmitool"; exit 0; }
scratch_dir
SSEPID="" SSE2PID="" CAPPID="" RAWPID=""
trap 'for p in $SSEPID $SSE2PID $CAPPID $RAWPID; do kill "$p" 2>/dev/null; done; daemon_clean; sim_down; rm -rf "$D"' EXIT

sim_up tbso 253 --bmc-sol || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"
check "left's BMC offers SOL onto left's console" grep -q "sol \"tcp:$NET.1:2001\" 115200" "$S/bmc/lan.conf"
check "ser2net serves right's console as telnet(rfc2217) too" grep -q "telnet(rfc2217),tcp,$NET.1,2012" "$S/ser2net.yaml"

# the capture server: a stand-in console server on loopback that records
# every byte it gets and says hello (so the reader has output)
python3 - "$D/cap.port" "$D/cap.bin" <<'PY' &
import socket, sys, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
out = open(sys.argv[2], "ab", 0)
while True:
    c, _ = s.accept()
    c.sendall(b"capture ready\r\n")
    def rd(c=c):
        while True:
            d = c.recv(4096)
            if not d:
                return
            out.write(d)
    threading.Thread(target=rd, daemon=True).start()
PY
CAPPID=$!
for _ in $(seq 50); do [ -s "$D/cap.port" ] && break; sleep 0.1; done
CAP=$(cat "$D/cap.port")

# the inventory: left's console through its BMC, right's as telnet, the
# router's at the capture server (telnet), relay's stays raw
python3 - "$S/inventory.yaml" "$NET" "$CAP" <<'PY'
import sys
p, net, cap = sys.argv[1:]
s = open(p).read()
for old, new in (
        ("console: {type: tcp, address: %s.1, port: 2001}" % net, "console: {type: ipmi-sol}"),
        ("console: {type: tcp, address: %s.1, port: 2002}" % net,
         "console: {type: tcp, address: %s.1, port: 2012, protocol: telnet}" % net),
        ("console: {type: tcp, address: %s.1, port: 2005}" % net,
         "console: {type: tcp, address: 127.0.0.1, port: %s, protocol: telnet}" % cap)):
    assert old in s, old
    s = s.replace(old, new)
open(p, "w").write(s)
PY
check "the inventory has the three kinds" grep -q 'console: {type: ipmi-sol}' "$S/inventory.yaml"
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts" test -n "$DPID"

has_bytes() {	# file python-bytes-literal [seconds]: the stream's raw bytes contain them
	for _ in $(seq $((${3:-10} * 5))); do
		python3 - "$1" "$2" <<'PY' && return 0
import base64, sys
out = b""
for block in open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n\n"):
    lines = block.split("\n")
    if "event: output" in lines:
        out += base64.b64decode("".join(l[6:] for l in lines if l.startswith("data: ")))
sys.exit(0 if eval(sys.argv[2]) in out else 1)
PY
		sleep 0.2
	done
	diag "the console stream has no $2"
	return 1
}
no_bytes() { ! has_bytes "$1" "$2" 1 >/dev/null; }
sol_pid() {	# the ipmitool sol activate that testbedd runs
	ps -o pid=,args= --ppid "$DPID" | awk '/ipmitool .* sol activate/ { print $1 }'
}
type_() {	# host json: console input as admin, the status in $(st)
	api POST "/api/v1/hosts/$1/console/input" "$2" >"$D/r"
}

# --- ipmi-sol: connected through the BMC
check "left's console is connected through SOL" wait_cstate left connected True 40
check "  its type is ipmi-sol" test "$(cstate left type)" = ipmi-sol
P1=$(sol_pid)
diag "ipmitool pid $P1"
check "testbedd runs ipmitool sol activate" test -n "$P1"
check "  the password is not in its argv" sh -c "! tr '\0' ' ' </proc/$P1/cmdline | grep -qF '$IPMI_PASSWORD'"
check "  it is in its environment (IPMI_PASSWORD, for -E)" sh -c "tr '\0' '\n' </proc/$P1/environ | grep -qxF 'IPMI_PASSWORD=$IPMI_PASSWORD'"
check "  and -E is on its command line" sh -c "tr '\0' ' ' </proc/$P1/cmdline | grep -q -- ' -E '"

# ipmi_sim read left's line since sim up and hands what it kept to the new
# SOL session: the stream starts after that has come (the byte count still)
quiet_bytes() {	# host: console_state.bytes once unchanged for a second
	local a b=-1
	for _ in $(seq 20); do
		a=$(cstate "$1" bytes)
		[ "$a" = "$b" ] && { echo "$a"; return 0; }
		b=$a
		sleep 1
	done
	echo "$a"
}
B0=$(quiet_bytes left)
diag "left's console: $B0 bytes before the reboot"
TOK=$(cat "$TESTBEDD_TOKEN_FILE")
curl -sN -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/api/v1/hosts/left/console?from=$B0" >"$D/sse" 2>/dev/null &
SSEPID=$!

# --- a boot's lines through SOL, a hung boot unstuck by Ctrl-C typed
echo once >"$S/hosts/left/console-hang"
b0=$(boots left)
sshc "root@$NET.11" reboot
check "GRUB's menu arrives through SOL" wait_text "$D/sse" " |*Ubuntu " 15
check "the kernel's lines arrive" wait_text "$D/sse" "Linux version 6.8.0-134-generic" 10
check "the boot hangs at the mlx4_en line" wait_text "$D/sse" "Using 16 TX rings" 10
check "ipmitool's own banner is not in the console's bytes" sh -c "! $DEC '$D/sse' | grep -q 'SOL Session operational'"
api POST /api/v1/hosts/left/console/lease '{}' >/dev/null
check "admin takes left's lease" test "$(st)" = 200
type_ left '{"key":"ctrl-c"}'
check "Ctrl-C through SOL: 204" test "$(st)" = 204
check "the console echoes ^C and the boot goes on" wait_text "$D/sse" "Activating port:1" 10
check "a login prompt" wait_text "$D/sse" "left login: " 10
check "left boots and answers ssh" wait_boot left "$b0" "$NET.11" 15

# --- ipmitool's escapes cannot be typed
type_ left '{"text":"\r~.tilde-dot\r"}'
check "\"~.\" at the start of a line: 204" test "$(st)" = 204
check "  reaches the host as typed (echoed)" wait_text "$D/sse" "~.tilde-dot" 10
check "  and ipmitool goes on (the same process)" test "$(sol_pid)" = "$P1"
check "  still connected" test "$(cstate left connected)" = True

# --- Break over SOL: ~B at the start of a line, refused in mid-line.  A
# watcher on left's raw ser2net port (it takes 4 clients, each sees the
# output) sees what the host echoes: ipmi_sim passes a SOL Break on to its
# tcp device as telnet's IAC BRK (255 243), with the next bytes it writes
# there, and the host echoes it back.
python3 - "$NET.1" "$D/raw.bin" 2>"$D/raw.err" <<'PY' &
import socket, sys, time
a = socket.create_connection((sys.argv[1], 2001))
a.settimeout(0.5)
out = open(sys.argv[2], "wb", 0)
end = time.time() + 20
while time.time() < end:
    try:
        d = a.recv(4096)
        if not d:
            break
        out.write(d)
    except socket.timeout:
        pass
PY
RAWPID=$!
sleep 1
type_ left '{"key":"break"}'
check "Break at the start of a line: 204" test "$(st)" = 204
type_ left '{"text":"after-break\r"}'	# ipmi_sim writes the Break out with the next bytes
rawd() { python3 -c "import sys; sys.exit(0 if b'\xff\xf3' in open('$D/raw.bin','rb').read() else 1)"; }
wait_raw() { for _ in $(seq 50); do rawd && return 0; sleep 0.2; done; diag "left's line: $(od -An -c "$D/raw.bin" | tail -3 | tr -s ' ') $(cat "$D/raw.err")"; return 1; }
check "  ipmi_sim passes it on as IAC BRK, which left's line carries" wait_raw
kill "$RAWPID" 2>/dev/null
check "  ipmitool's \"[send break]\" is not in the console's bytes" sh -c "! $DEC '$D/sse' | grep -q 'send break'"
type_ left '{"text":"mid"}'
type_ left '{"key":"break"}'
check "Break in mid-line: 409" test "$(st)" = 409
check "  saying to send Enter first" grep -q 'send Enter first' "$D/r"

# --- ipmitool killed: the reader starts it again (the BMC's stale session
# deactivated), on a quiet console (nothing typed, nothing printed): ipmitool
# says the session is up at once only with its stdout unbuffered (stdbuf)
kill -KILL "$P1"
check "ipmitool gone: the state says not connected" wait_cstate left connected False 10
le=$(cstate left last_error)
diag "last_error: $le"
check "  with the reason" test -n "$le" -a "$le" != None
if wait_cstate left connected True 90; then ok "the reader reconnects"; else
	nok "the reader reconnects"
	grep 'console' "$DD/log" | tail -12 | sed 's/^/#   /'
fi
P2=$(sol_pid)
check "  with a new ipmitool" sh -c '[ -n "$0" ] && [ "$0" != "$1" ]' "$P2" "$P1"
api POST /api/v1/hosts/left/console/lease '{}' >/dev/null
type_ left '{"text":"after-restart\r"}'
check "  typing after it: echoed" wait_text "$D/sse" "after-restart" 10
grep 'console' "$DD/log" | grep -i 'sol\|ipmitool' | tail -4 | sed 's/^/# /'

# --- telnet (right, through ser2net's telnet(rfc2217) accepter)
check "right's telnet console is connected" wait_cstate right connected True 20
check "  the host JSON says protocol telnet" test "$(api GET /api/v1/hosts/right | jq_ "d['host']['console']['protocol']")" = telnet
curl -sN -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/api/v1/hosts/right/console?from=0" >"$D/sse2" 2>/dev/null &
SSE2PID=$!
api POST /api/v1/hosts/right/console/lease '{}' >/dev/null
type_ right '{"text":"over-telnet\r"}'
check "typing through telnet: echoed" wait_text "$D/sse2" "over-telnet" 10
check "  no telnet negotiation in the console's bytes (IAC WILL)" no_bytes "$D/sse2" "b'\\xff\\xfb'"
type_ right "{\"data\":\"$(printf 'iac\377x\r' | base64)\"}"
check "a 255 byte typed comes back once (IAC doubled out, undone in)" has_bytes "$D/sse2" "b'iac\\xffx'" 10
type_ right '{"key":"break"}'
check "Break on a telnet console: 204" test "$(st)" = 204
type_ right '{"text":"after-break\r"}'
check "  the console goes on after it" wait_text "$D/sse2" "after-break" 10

# --- the RFC 2217 bytes, at the capture server (the router's console)
check "the router's console (the capture server) is connected" wait_cstate router connected True 20
api POST /api/v1/hosts/router/console/lease '{}' >/dev/null
type_ router '{"key":"break"}'
check "Break to the capture server: 204" test "$(st)" = 204
capd() { python3 -c "import sys; d=open('$D/cap.bin','rb').read(); sys.exit(0 if $1 in d else 1)"; }
wait_cap() { for _ in $(seq 25); do capd "$1" && return 0; sleep 0.2; done; diag "captured: $(od -An -tx1 "$D/cap.bin" | tr -d '\n')"; return 1; }
check "  the reader asked for COM-PORT-OPTION (IAC WILL 44)" wait_cap "bytes([255,251,44])"
check "  SET-CONTROL BREAK ON (IAC SB 44 5 5 IAC SE)" wait_cap "bytes([255,250,44,5,5,255,240])"
check "  then BREAK OFF (IAC SB 44 5 6 IAC SE)" wait_cap "bytes([255,250,44,5,5,255,240,255,250,44,5,6,255,240])"

# --- raw TCP still has no Break
api POST /api/v1/hosts/relay/console/lease '{}' >/dev/null
type_ relay '{"key":"break"}'
check "Break on a raw TCP console (relay): 400" sh -c "[ \"$(st)\" = 400 ] && grep -q 'no Break' '$D/r'"

daemon_down
check "testbedd's stop ends ipmitool" sh -c "! ps -o args= -C ipmitool | grep -q '$NET.12'"
check "testbedd's log has no sanitizer report" sh -c "! grep -q 'Sanitizer' '$DD/log'"
finish

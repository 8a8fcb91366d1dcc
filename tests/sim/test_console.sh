#!/bin/sh
# Serial consoles end to end on the simulated testbed: ser2net serves each
# sim host's console, testbedd reads it always: boot lines (GRUB's menu, the
# kernel's lines) arrive on the console's own stream, a boot hung at the
# mlx4_en line goes on after Ctrl-C sent through the API and the host then
# answers ssh, the boot's log is kept and downloadable, one writer at a time
# (409 naming the holder, an admin's takeover audited), bad input refused
# (unknown host, no lease, oversized input, an unknown key), and a console
# server that vanishes: the state says so and the reader reconnects.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
command -v ser2net >/dev/null || { echo "1..0 # SKIP no ser2net (deploy/setup installs it)"; exit 0; }
D=$(mktemp -d /tmp/tbscratch-XXXXXX)
SSEPID=""
trap '[ -n "$SSEPID" ] && kill "$SSEPID" 2>/dev/null; daemon_clean; sim_down; rm -rf "$D"' EXIT

sim_up tbco 206 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"
check "the inventory has left's console on the bridge" grep -q "console: {type: tcp, address: $NET.1, port: 2001}" "$S/inventory.yaml"
daemon_up "$S/inventory.yaml" --probe-interval 2
check "testbedd starts" test -n "$DPID"

check "left's console is connected (host JSON)" wait_cstate left connected True
check "right's and the router's too" sh -c '[ "$0" = True ] && [ "$1" = True ]' "$(cstate right connected)" "$(cstate router connected)"

# --- the stream: what the console printed (scrollback), then live
TOK=$(cat "$TESTBEDD_TOKEN_FILE")
curl -sN -H "Authorization: Bearer $TOK" "$TESTBEDD_URL/api/v1/hosts/left/console?from=0" >"$D/sse" 2>/dev/null &
SSEPID=$!
check "the stream opens with the console's state" wait_text "$D/sse" "" 5
sleep 1
check "a state event says connected" sh -c "$DEC '$D/sse' state | grep -q '\"connected\": *true'"

# --- a boot that hangs at the mlx4_en line until Ctrl-C
echo once >"$S/hosts/left/console-hang"
b0=$(boots left)
sshc "root@$NET.11" reboot
check "GRUB's menu arrives live, the chosen entry marked" wait_text "$D/sse" " |*Ubuntu " 15
check "the kernel's lines arrive" wait_text "$D/sse" "Linux version 6.8.0-134-generic" 10
check "the boot hangs at the mlx4_en line" wait_text "$D/sse" "mlx4_en: mlx4_core0: Port 1: Using 16 TX rings" 10
for _ in $(seq 50); do grep -q 'hung at a boot line' "$S/hosts/left/log" && break; sleep 0.1; done
sleep 1
check "hung: left does not answer ssh" ssh_refused "$NET.11"
check "hung: no login prompt yet" sh -c "! $DEC '$D/sse' | tail -3 | grep -q 'left login:'"

# --- bad input
api POST /api/v1/hosts/left/console/input '{"key":"ctrl-c"}' >"$D/r"
check "input without the lease: 409" test "$(st)" = 409
check "  saying to take the lease" grep -q 'take its lease first' "$D/r"
api GET /api/v1/hosts/nosuch/console >/dev/null
check "the console of an unknown host: 404" test "$(st)" = 404
api POST /api/v1/hosts/nosuch/console/lease '{}' >/dev/null
check "the lease of an unknown host: 404" test "$(st)" = 404
api POST /api/v1/hosts/left/console/lease '{}' >"$D/lease"
check "admin takes left's lease: 200" test "$(st)" = 200
ADMIN=$(jq_ 'd["lease"]["holder"]' <"$D/lease")
diag "the lease holder is $ADMIN"
big=$(head -c 5000 /dev/zero | tr '\0' a)
api POST /api/v1/hosts/left/console/input "{\"text\":\"$big\"}" >"$D/r"
check "oversized input: 413" test "$(st)" = 413
api POST /api/v1/hosts/left/console/input '{"key":"f13"}' >/dev/null
check "an unknown key: 400" test "$(st)" = 400
api POST /api/v1/hosts/left/console/input '{"data":"not base64!"}' >/dev/null
check "data that is not base64: 400" test "$(st)" = 400
api POST /api/v1/hosts/left/console/input '{"key":"break"}' >"$D/r"
check "Break on a raw TCP console: 400, saying why" sh -c "[ \"$(st)\" = 400 ] && grep -q 'no Break' '$D/r'"

# --- a second writer: 409 naming the holder
SEC=$(api POST /api/v1/tokens '{"name":"bob","role":"operator"}' | jq_ 'd["secret"]')
bob() {	# method path [body]
	curl -s -w '\n%{http_code}' -X "$1" -H "Authorization: Bearer $SEC" -H 'Content-Type: application/json' \
		${3:+--data-binary "$3"} "$TESTBEDD_URL$2"
}
out=$(bob POST /api/v1/hosts/left/console/lease '{}')
check "bob's lease while admin holds it: 409" test "${out##*$'\n'}" = 409
check "  naming the holder" sh -c "echo \"\$0\" | grep -q \"leased to $ADMIN\"" "$out"
out=$(bob POST /api/v1/hosts/left/console/input '{"key":"ctrl-c"}')
check "bob's input: 409" test "${out##*$'\n'}" = 409

# --- Ctrl-C through the API: the boot goes on, the host answers ssh
api POST /api/v1/hosts/left/console/input '{"key":"ctrl-c"}' >/dev/null
check "admin sends Ctrl-C: 204" test "$(st)" = 204
check "the console echoes ^C and the boot goes on" wait_text "$D/sse" "Activating port:1" 10
check "a login prompt" wait_text "$D/sse" "left login: " 10
check "left boots and answers ssh" wait_boot left "$b0" "$NET.11" 15
api POST /api/v1/hosts/left/console/input '{"text":"root\r"}' >/dev/null
check "typed text is echoed by the console" wait_text "$D/sse" "left login: root" 5

# --- the lease: release, bob takes it, an admin takes over (audited)
api DELETE /api/v1/hosts/left/console/lease >/dev/null
check "admin gives the lease back: 204" test "$(st)" = 204
out=$(bob POST /api/v1/hosts/left/console/lease '{}')
check "now bob gets it: 200" test "${out##*$'\n'}" = 200
api POST /api/v1/hosts/left/console/lease '{}' >"$D/r"
check "admin without takeover: 409 naming bob" sh -c "[ \"$(st)\" = 409 ] && grep -q 'leased to bob' '$D/r'"
api POST /api/v1/hosts/left/console/lease '{"takeover":true}' >/dev/null
check "admin takes over: 200" test "$(st)" = 200
api GET '/api/v1/audit?limit=20' >"$D/audit"
check "the takeover is audited, naming the former holder" grep -q 'left (taken over from bob)' "$D/audit"
out=$(bob POST /api/v1/hosts/left/console/input '{"key":"enter"}')
check "bob, taken over, cannot type: 409" test "${out##*$'\n'}" = 409

# --- tbctl console in a pty (script): the scrollback, typing, ~. leaves and gives the lease back
TBCTL=${BIN}/tbctl
( sleep 2; printf 'from-tbctl\r'; sleep 2; printf '~.' ) |
	timeout 20 script -qfec "$TBCTL console left" "$D/typescript" >/dev/null 2>&1
rc=$?
check "tbctl console left: ~. leaves, exit 0" test $rc = 0
check "  it showed the scrollback (the login prompt)" grep -q 'left login:' "$D/typescript"
check "  what it typed reached the console (echoed)" wait_text "$D/sse" "from-tbctl" 5
check "  the echo came back to tbctl" grep -q 'from-tbctl' "$D/typescript"
check "  and it gave the lease back" test "$(cstate left lease)" = None
out=$(timeout 5 "$TBCTL" console left --watch </dev/null 2>&1)
check "tbctl console --watch prints the scrollback" sh -c "echo \"\$0\" | grep -q 'left login:'" "$out"
check "tbctl console --log list lists a grub log" sh -c "'$TBCTL' console left --log list | grep -q ' grub '"

# --- the boot's log is kept
api GET /api/v1/hosts/left/console/logs >"$D/logs"
check "logs list: 200" test "$(st)" = 200
id=$(jq_ '[l["id"] for l in d["logs"] if l["reason"] == "grub"][0]' <"$D/logs")
diag "boot log $id"
check "a boot log that began at GRUB's banner" test -n "$id"
api GET "/api/v1/hosts/left/console/logs/$id" >"$D/boot.log"
check "it downloads: 200" test "$(st)" = 200
check "tbctl console --log ID prints the same bytes" sh -c "'$TBCTL' console left --log '$id' | cmp -s - '$D/boot.log'"
check "  it begins with the menu" sh -c "head -c 200 '$D/boot.log' | grep -q 'GNU GRUB'"
check "  it has the hang, the ^C and the login prompt" sh -c "grep -q 'Using 16 TX rings' '$D/boot.log' && grep -q '\^C' '$D/boot.log' && grep -q 'left login:' '$D/boot.log'"
check "  and not the boot before it (sim up's)" test "$(grep -c 'GNU GRUB' "$D/boot.log")" = 1
api GET /api/v1/hosts/left/console/logs/1-nosuch >/dev/null
check "an unknown log: 404" test "$(st)" = 404
api GET '/api/v1/hosts/left/console/logs/..%2f..%2fadmin.token' >/dev/null
check "a path in a log id: refused" sh -c '[ "$0" = 400 ] || [ "$0" = 404 ]' "$(st)"

# --- a console server that vanishes and comes back
"$SIM" console stop --prefix "$PFX"
check "ser2net gone: the state says not connected" wait_cstate left connected False 10
le=$(cstate left last_error)
diag "last_error: $le"
check "  with the reason" test -n "$le" -a "$le" != None
check "the viewer's stream is told (a state event)" sh -c "$DEC '$D/sse' state | grep -q '\"connected\": *false'"
"$SIM" console start --prefix "$PFX"
check "ser2net back: the reader reconnects" wait_cstate left connected True 20
check "the viewer's stream is told again" sh -c "sleep 0.5; $DEC '$D/sse' state | grep -q '\"connected\": *true'"
api POST /api/v1/hosts/left/console/lease '{}' >/dev/null
api POST /api/v1/hosts/left/console/input '{"text":"again\r"}' >/dev/null
check "  typing after the reconnect: 204" test "$(st)" = 204
check "  typed after the reconnect: echoed" wait_text "$D/sse" "again" 10

kill "$SSEPID" 2>/dev/null; SSEPID=""
check "the daemon logged no error about consoles" sh -c "! grep -i 'console' '$DD/log' | grep -qi 'error'"
finish

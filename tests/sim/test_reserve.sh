#!/bin/sh
# Reservations on the simulated testbed (prefix tbrs, block 214): operator
# alice reserves left and right with tbctl; operator bob's power action on
# left and his matrix on left and right get 409 naming alice and the end,
# while alice's own matrix runs to success on the real hosts; bob's
# reservation of left is queued behind hers (tbctl: position 1) and granted
# when she releases; it ends by itself after its 5 s; the events
# reservation.granted/.queued/.released/.expired were published.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"

sim_testbedd tbrs 214 1
ADMIN=$TESTBEDD_TOKEN_FILE
token() {	# name: an operator token in $DD/name.token (0600)
	api POST /api/v1/tokens "{\"name\":\"$1\",\"role\":\"operator\"}" | jq_ 'd["secret"]' >"$DD/$1.token"
	chmod 600 "$DD/$1.token"
}
token alice
token bob
as() {	# name command...: with that token
	local who=$1
	shift
	TESTBEDD_TOKEN_FILE="$DD/$who.token" "$@"
}
check "left answers" wait_up left
check "right answers" wait_up right

out=$(as alice "$BIN/tbctl" reserve left right --for 1h --note "sim test" 2>&1)
check "alice reserves left and right: granted" grep -q "left right granted to alice until" <<<"$out"

code=$(as bob api POST /api/v1/hosts/left/power '{"action":"off"}' >"$DD/b1"; st)
check "bob's power off of left: 409" test "$code" = 409
check "... naming alice and the end" grep -q "left is reserved by alice until 20" "$DD/b1"
check "left stays on" test "$(power left)" = on
SPEC='{"name":"resv","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],"directions":["forward"],"duration_s":1,"repeats":1}'
code=$(as bob api POST /api/v1/matrices "$SPEC" >"$DD/b2"; st)
check "bob's matrix on left and right: 409 naming alice" test "$code" = 409 -a -n "$(grep 'reserved by alice' "$DD/b2")"

M=$(as alice api POST /api/v1/matrices "$SPEC" | jq_ 'd["matrix"]["id"]')
check "alice's matrix starts: 201" test "$(st)" = 201 -a -n "$M"
WAIT=90 check "alice's matrix $M succeeds on the reserved hosts" wait_state "$M" succeeded

out=$(as bob "$BIN/tbctl" reserve left --for 5s 2>&1)
check "bob's reservation of left is queued at position 1" grep -q "left queued for bob at position 1" <<<"$out"
out=$(as alice "$BIN/tbctl" release 2>&1)
check "alice releases hers" grep -q "released reservation" <<<"$out"
out=$(as bob "$BIN/tbctl" reservations 2>&1)
check "bob's is granted now" grep -q "left granted to bob" <<<"$out"
gone() { test "$(api GET /api/v1/reservations | jq_ 'len(d["reservations"])')" = 0; }
ended=1
for _ in $(seq 40); do gone && { ended=0; break; }; sleep 0.5; done
check "bob's ends by itself after its 5 s" test "$ended" = 0
ev=$(timeout 3 curl -s -N -H "Authorization: Bearer $(cat "$ADMIN")" "$TESTBEDD_URL/api/v1/events?since=0" |
	grep -o '^event: reservation\.[a-z]*' | sort -u | tr '\n' ' ')
check "events: reservation.granted, .queued, .released, .expired ($ev)" \
	test "$ev" = 'event: reservation.expired event: reservation.granted event: reservation.queued event: reservation.released '
finish

#!/bin/sh
# Notifications fired by real events on the simulated testbed: a webhook rule
# (generic JSON body, signed) sends to a receiver on this machine's loopback
# (allowed by the rule's allow_private_host), and it hears
#   - matrix.ended when a small matrix succeeds (with the matrix's id),
#   - host.down when a fault takes left down with no action holding it
#     (its sshd killed, the chassis left on), and
#   - bmc.mismatch for the same fault (left's BMC, ipmi_sim, says on while no
#     OS answers: a hung host),
# each once, and a rule filtered to right hears none of left's.  An email rule
# (plain SMTP to a receiver on loopback, tls "none") gets a mail for the
# matrix's end and one for the hung host (issue 19's Done when: a webhook and
# an email arrive when a matrix ends and when a host hangs).  Retries are
# shortened (TESTBEDD_TEST_NOTIFY_BACKOFF_MS) and the BMC read every second.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
. "$(dirname "$0")/lib.sh"
D=$(mktemp -d /tmp/tbscratch-XXXXXX)
RXPID="" MXPID=""
trap 'daemon_clean; [ -n "$RXPID" ] && kill "$RXPID" 2>/dev/null; [ -n "$MXPID" ] && kill "$MXPID" 2>/dev/null; sim_down; rm -rf "$D"' EXIT

sim_up tbno 208 || { nok "sim up"; finish; }
ok "sim up (prefix $PFX)"

# the receiver: each request's path, signature header and body, one JSON line
python3 - "$D" <<'PY' &
import http.server, json, sys
d = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        with open(d + "/got.jsonl", "a") as f:
            f.write(json.dumps({"path": self.path, "sig": self.headers.get("X-Testbedd-Signature"),
                                "ts": self.headers.get("X-Testbedd-Timestamp"), "body": body}) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(d + "/port.tmp", "w").write(str(s.server_address[1]))
__import__("os").rename(d + "/port.tmp", d + "/port")
s.serve_forever()
PY
RXPID=$!
# the SMTP receiver: plain SMTP, no STARTTLS offered; each mail's data, one JSON line
python3 - "$D" <<'PY' &
import json, os, socketserver, sys
d = sys.argv[1]
class H(socketserver.StreamRequestHandler):
    def handle(self):
        say = lambda t: (self.wfile.write((t + "\r\n").encode()), self.wfile.flush())
        say("220 sim-mx ESMTP")
        rcpt, data = [], None
        for raw in self.rfile:
            line = raw.decode(errors="replace").rstrip("\r\n")
            if data is not None:
                if line == ".":
                    with open(d + "/mail.jsonl", "a") as f:
                        f.write(json.dumps({"rcpt": rcpt, "data": "\n".join(data)}) + "\n")
                    data, rcpt = None, []
                    say("250 queued")
                else:
                    data.append(line[1:] if line.startswith("..") else line)
                continue
            verb = line[:4].upper()
            if verb == "EHLO":
                say("250-sim-mx"); say("250 8BITMIME")
            elif verb == "RCPT":
                rcpt.append(line[8:]); say("250 ok")
            elif verb == "DATA":
                data = []; say("354 go on")
            elif verb == "QUIT":
                say("221 bye"); return
            else:
                say("250 ok")
class S(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
s = S(("127.0.0.1", 0), H)
open(d + "/mxport.tmp", "w").write(str(s.server_address[1]))
os.rename(d + "/mxport.tmp", d + "/mxport")
s.serve_forever()
PY
MXPID=$!
for _ in $(seq 50); do [ -s "$D/port" ] && [ -s "$D/mxport" ] && break; sleep 0.1; done
check "the receiver listens" test -s "$D/port"
check "the SMTP receiver listens" test -s "$D/mxport"
RX=$(cat "$D/port")
MX=$(cat "$D/mxport")
TESTBEDD_TEST_NOTIFY_BACKOFF_MS=200 TESTBEDD_TEST_BMC_FLOOR_S=1 daemon_up "$S/inventory.yaml" --probe-interval 1 --bmc-interval 1
check "testbedd starts" test -n "$DPID"
# a rule's secrets live in STATE_DIR/notify-secrets
mkdir -m 700 "$DD/state/notify-secrets"
printf 'sim-notify-key\n' >"$DD/state/notify-secrets/hmac.key"
chmod 600 "$DD/state/notify-secrets/hmac.key"
rule() {	# name triggers hosts path
	api POST /api/v1/notifications "{\"name\":\"$1\",\"triggers\":$2,\"hosts\":$3,\"sink\":{\"url\":
		\"http://127.0.0.1:$RX/$4\",\"hmac_key_file\":\"hmac.key\",\"allow_private_host\":\"127.0.0.1\"}}" |
		jq_ 'd["id"]'
}
R1=$(rule all '["matrix.ended","matrix.failed","host.down","bmc.mismatch"]' '[]' all)
check "a rule for matrix ends, host down and BMC mismatch: 201" test "$(st)" = 201 -a -n "$R1"
R2=$(rule right '["host.down","bmc.mismatch"]' '["right"]' right)
check "a rule for right only: 201" test "$(st)" = 201 -a -n "$R2"
R3=$(api POST /api/v1/notifications "{\"name\":\"mail\",\"triggers\":[\"matrix.ended\",\"bmc.mismatch\"],
	\"sink\":{\"type\":\"email\",\"url\":\"smtp://127.0.0.1:$MX\",\"tls\":\"none\",
	\"from\":\"testbedd@sim.example\",\"to\":[\"owner@sim.example\"],\"allow_private_host\":\"127.0.0.1\"}}" |
	jq_ 'd["id"]')
check "an email rule for matrix ends and BMC mismatch: 201" test "$(st)" = 201 -a -n "$R3"
check "left answers" wait_up left
check "right answers" wait_up right

got() {	# python condition on m (a received message): how many match
	python3 -c "import json,sys
n=0
for l in open('$D/got.jsonl') if __import__('os').path.exists('$D/got.jsonl') else []:
    r=json.loads(l); m=json.loads(r['body']); m['path']=r['path']
    if $1: n+=1
print(n)"
}
mails() {	# python condition on data (a received mail's text): how many match
	python3 -c "import json
n=0
for l in open('$D/mail.jsonl') if __import__('os').path.exists('$D/mail.jsonl') else []:
    data=json.loads(l)['data']
    if $1: n+=1
print(n)"
}
until_eval() {	# seconds 'shell code'
	for _ in $(seq $(($1 * 5))); do eval "$2" && return 0; sleep 0.2; done
	return 1
}

# ---- a matrix ends ----
body=$(api POST /api/v1/matrices '{"name":"notify","pairs":[{"client":"left","server":"right"}],"protocols":["tcp"],
 "directions":["forward"],"duration_s":1,"repeats":1}')
M=$(echo "$body" | jq_ 'd["matrix"]["id"]')
check "a matrix starts" test "$(st)" = 201 -a -n "$M"
WAIT=90 check "matrix $M succeeds" wait_state "$M" succeeded
check "the receiver hears matrix.ended for matrix $M" \
	until_eval 30 "test \"\$(got \"m['trigger']=='matrix.ended' and m['matrix']==$M and m['path']=='/all'\")\" = 1"
check "... signed: sha256=HMAC(key, timestamp.body)" python3 -c "
import hmac, hashlib, json
for l in open('$D/got.jsonl'):
    r = json.loads(l)
    want = 'sha256=' + hmac.new(b'sim-notify-key', (r['ts'] + '.' + r['body']).encode(), hashlib.sha256).hexdigest()
    assert r['sig'] == want, (r['sig'], want)
"
check "... its text says it ended" test "$(got "m['title']=='testbedd: matrix $M ended'")" = 1
check "a mail arrives for matrix $M's end" \
	until_eval 30 "test \"\$(mails \"'Subject: testbedd: matrix $M ended' in data and 'trigger: matrix.ended' in data\")\" = 1"

# ---- a fault takes left down: its sshd killed, the chassis stays on ----
for p in $(ip netns pids "$PFX-left"); do
	[ "$(ps -o comm= -p "$p" 2>/dev/null)" = sshd ] && kill "$p"
done
check "the receiver hears host.down for left" \
	until_eval 30 "test \"\$(got \"m['trigger']=='host.down' and m['host']=='left'\")\" = 1"
check "... and bmc.mismatch for left (a hung host)" \
	until_eval 40 "test \"\$(got \"m['trigger']=='bmc.mismatch' and m['host']=='left'\")\" = 1"
check "... and a mail for left's BMC mismatch" \
	until_eval 40 "test \"\$(mails \"'trigger: bmc.mismatch' in data and 'left' in data\")\" = 1"
check "the mails went to the rule's address" test "$(mails "True")" = "$(mails "'owner@sim.example' in data")"
check "the rule for right heard nothing of left" test "$(got "m['path']=='/right'")" = 0
check "its delivery log is empty" \
	test "$(api GET "/api/v1/notifications/$R2/deliveries" | jq_ 'len(d["deliveries"])')" = 0
check "the rule's log: every message delivered" \
	test "$(api GET "/api/v1/notifications/$R1/deliveries" | jq_ 'sorted(set(x["state"] for x in d["deliveries"]))')" = "['delivered']"
check "the email rule's log: every message delivered" \
	test "$(api GET "/api/v1/notifications/$R3/deliveries" | jq_ 'sorted(set(x["state"] for x in d["deliveries"]))')" = "['delivered']"
check "the key is not in testbedd's log" sh -c "! grep -q sim-notify-key '$DD/log'"
finish

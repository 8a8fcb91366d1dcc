#!/usr/bin/env python3
"""redfish_mock.py - a small Redfish BMC for testbedd's tests.

A mock, not an emulator: no Redfish BMC emulator is packaged for Debian
(DMTF's Redfish-Mockup-Server and OpenStack's sushy-tools are pip-only), so
tests/integration/test_power_redfish.c runs this instead.  Python 3 standard
library only.  It follows the DMTF shapes testbedd relies on:

  GET    /redfish/v1/                          service root, Systems and SessionService links
  GET    /redfish/v1/Systems                   collection, one member
  GET    /redfish/v1/Systems/sys1              ComputerSystem: PowerState, Boot, Actions,
                                               ETag header and @odata.etag
  PATCH  /redfish/v1/Systems/sys1              Boot override; If-Match must equal the ETag, else 412
  POST   /redfish/v1/Systems/sys1/Actions/ComputerSystem.Reset   {"ResetType": ...}
  POST   /redfish/v1/SessionService/Sessions   {"UserName","Password"} -> 201, X-Auth-Token, Location
  DELETE /redfish/v1/SessionService/Sessions/N

Everything but the service root needs HTTP basic auth or a session token
(401 otherwise).  "On" while on answers 409 and "ForceOff" while off 400,
as real BMCs do for "already in that state"; a restart while off 409.

Test controls (not Redfish, no auth, not logged): POST /mock/config with a
JSON object of any of
  {"allowed": [ResetType...], "power": "On"|"Off", "slow_ms": N, "slow_match": "substring of
   the path to delay, '' = every request", "stale_etag": true (after each GET of the system its
   ETag changes, as if someone else had changed it), "session_location": "path" | "absolute"
   (an https URL naming another host) | "none" (no Location header), "read_only": true (the user may
   only GET: anything else 403), "busy": N (the next N requests answer 503)}
GET /mock/state returns the state.

Every other request is appended to --log as one JSON line: method, path,
headers (Authorization and X-Auth-Token values replaced by "***"), body,
status, and for a new session the token it issued ("issued_token").

Binds 127.0.0.1 on an ephemeral port with TLS (--cert/--key) and writes the
port to --port-file once it listens.  The password is read from
--password-file, so that it is on no command line.
"""
import argparse
import base64
import json
import os
import secrets
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SYS = "/redfish/v1/Systems/sys1"
RESET = SYS + "/Actions/ComputerSystem.Reset"
SESSIONS = "/redfish/v1/SessionService/Sessions"
ALL_RESETS = ["On", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "ForceOn",
              "PowerCycle", "Nmi"]
BOOT_TARGETS = ["None", "Pxe", "Hdd", "Cd", "BiosSetup", "UefiBootNext"]


class State:
    def __init__(self, user, password, log_path):
        self.lock = threading.Lock()
        self.user = user
        self.password = password
        self.log_path = log_path
        self.power = "On"
        self.allowed = list(ALL_RESETS)
        self.slow_ms = 0
        self.slow_match = ""
        self.stale_etag = False
        self.session_location = "path"
        self.read_only = False
        self.busy = 0
        self.etag_n = 1
        self.boot = {"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None"}
        self.sessions = {}  # id -> token
        self.next_session = 1

    def etag(self):
        return 'W/"%d"' % self.etag_n

    def log(self, rec):
        with self.lock:
            with open(self.log_path, "a") as f:
                f.write(json.dumps(rec, sort_keys=True) + "\n")


def error_body(code, message):
    return {"error": {"code": "Base.1.8." + code, "message": message,
                      "@Message.ExtendedInfo": [{"MessageId": "Base.1.8." + code, "Message": message}]}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "redfish-mock/1"

    def log_message(self, fmt, *args):
        pass

    # -- plumbing --

    def reply(self, status, obj=None, headers=None):
        """Keep the reply; send() writes it after the request is logged, so
        that a test that got the reply finds the request in the log."""
        self.pending = (status, obj, headers or {})
        self.status = status

    def send(self):
        status, obj, headers = self.pending
        body = b"" if obj is None else json.dumps(obj).encode()
        self.send_response(status)
        if obj is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("OData-Version", "4.0")
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def authorized(self):
        st = self.server.state
        tok = self.headers.get("X-Auth-Token")
        if tok is not None:
            return tok in st.sessions.values()
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Basic "):
            return False
        try:
            user, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
        except Exception:
            return False
        return user == st.user and pw == st.password

    def handle_any(self, method):
        st = self.server.state
        self.status = 0
        self.issued = None
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        path = self.path.split("?", 1)[0]
        if path.startswith("/mock/"):
            self.control(method, path, raw)
            return self.send()
        # busy is taken before the slow sleep: a slow request that a test
        # gave up on wakes later and must not use up a later test's busy reply
        with st.lock:
            busy = st.busy > 0
            st.busy -= 1 if busy else 0
        if not busy and st.slow_ms > 0 and st.slow_match in path:
            time.sleep(st.slow_ms / 1000.0)
        if busy:
            self.reply(503, error_body("ServiceTemporarilyUnavailable", "busy, try later"), {"Retry-After": "1"})
        else:
            self.route(method, path, raw)
        headers = {}
        for k, v in self.headers.items():
            headers[k] = "***" if k.lower() in ("authorization", "x-auth-token") else v
        auth = self.headers.get("Authorization", "")
        rec = {"method": method, "path": path, "headers": headers, "body": raw.decode("utf-8", "replace"),
               "status": self.status, "auth": "token" if "X-Auth-Token" in self.headers
               else ("basic" if auth.startswith("Basic ") else "none")}
        if self.issued is not None:
            rec["issued_token"] = self.issued
        st.log(rec)
        try:
            self.send()
        except OSError:
            pass  # the client gave up (a timeout test): BrokenPipe, SSLEOFError

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def control(self, method, path, raw):
        st = self.server.state
        if method == "POST" and path == "/mock/config":
            cfg = json.loads(raw or b"{}")
            with st.lock:
                for k in ("allowed", "power", "slow_ms", "slow_match", "stale_etag", "session_location", "read_only", "busy"):
                    if k in cfg:
                        setattr(st, k, cfg[k])
                if "power" in cfg:
                    st.etag_n += 1
        elif not (method == "GET" and path == "/mock/state"):
            return self.reply(404, error_body("ResourceMissingAtURI", "no such control"))
        self.reply(200, {"power": st.power, "allowed": st.allowed, "boot": st.boot, "etag": st.etag(),
                         "sessions": len(st.sessions)})

    # -- Redfish --

    def system(self):
        st = self.server.state
        return {
            "@odata.id": SYS, "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem",
            "@odata.etag": st.etag(), "Id": "sys1", "Name": "mock system", "PowerState": st.power,
            "Boot": dict(st.boot, **{"BootSourceOverrideTarget@Redfish.AllowableValues": BOOT_TARGETS}),
            "Actions": {"#ComputerSystem.Reset": {"target": RESET,
                                                  "ResetType@Redfish.AllowableValues": st.allowed}},
        }

    def route(self, method, path, raw):
        st = self.server.state
        if path.rstrip("/") == "/redfish/v1" and method == "GET":
            return self.reply(200, {
                "@odata.id": "/redfish/v1/", "@odata.type": "#ServiceRoot.v1_15_0.ServiceRoot",
                "Id": "RootService", "RedfishVersion": "1.17.0",
                "Systems": {"@odata.id": "/redfish/v1/Systems"},
                "SessionService": {"@odata.id": "/redfish/v1/SessionService"},
                "Links": {"Sessions": {"@odata.id": SESSIONS}}})
        if path == SESSIONS and method == "POST":
            try:
                b = json.loads(raw)
            except ValueError:
                return self.reply(400, error_body("MalformedJSON", "not JSON"))
            if b.get("UserName") != st.user or b.get("Password") != st.password:
                return self.reply(401, error_body("NoValidSession", "wrong user name or password"))
            with st.lock:
                sid = str(st.next_session)
                st.next_session += 1
                tok = secrets.token_hex(16)
                st.sessions[sid] = tok
            self.issued = tok
            headers = {"X-Auth-Token": tok}
            if st.session_location == "path":
                headers["Location"] = SESSIONS + "/" + sid
            elif st.session_location == "absolute":
                headers["Location"] = "https://bmc.invalid:443" + SESSIONS + "/" + sid
            return self.reply(201, {"@odata.id": SESSIONS + "/" + sid, "Id": sid, "UserName": st.user}, headers)
        if not self.authorized():
            return self.reply(401, error_body("InsufficientPrivilege", "authentication required"),
                              {"WWW-Authenticate": 'Basic realm="mock"'})
        if st.read_only and method != "GET" and not path.startswith(SESSIONS + "/"):
            return self.reply(403, error_body("InsufficientPrivilege", "the user may only read"))
        if path.startswith(SESSIONS + "/") and method == "DELETE":
            sid = path[len(SESSIONS) + 1:]
            with st.lock:
                if st.sessions.pop(sid, None) is None:
                    return self.reply(404, error_body("ResourceMissingAtURI", "no such session"))
            return self.reply(204)
        if path == "/redfish/v1/Systems" and method == "GET":
            return self.reply(200, {"@odata.id": "/redfish/v1/Systems", "Members@odata.count": 1,
                                    "Members": [{"@odata.id": SYS}]})
        if path == SYS and method == "GET":
            self.reply(200, self.system(), {"ETag": st.etag()})
            if st.stale_etag:
                with st.lock:
                    st.etag_n += 1  # someone else changed it after our reply was made
            return None
        if path == SYS and method == "PATCH":
            if self.headers.get("If-Match") != st.etag():
                return self.reply(412, error_body("PreconditionFailed", "ETag does not match"))
            try:
                boot = json.loads(raw).get("Boot", {})
            except ValueError:
                return self.reply(400, error_body("MalformedJSON", "not JSON"))
            if boot.get("BootSourceOverrideTarget", "None") not in BOOT_TARGETS:
                return self.reply(400, error_body("PropertyValueNotInList", "bad BootSourceOverrideTarget"))
            with st.lock:
                st.boot.update({k: boot[k] for k in ("BootSourceOverrideEnabled", "BootSourceOverrideTarget")
                                if k in boot})
                st.etag_n += 1
            return self.reply(204, None, {"ETag": st.etag()})
        if path == RESET and method == "POST":
            try:
                t = json.loads(raw).get("ResetType")
            except ValueError:
                return self.reply(400, error_body("MalformedJSON", "not JSON"))
            if t not in st.allowed:
                return self.reply(400, error_body("ActionParameterNotSupported",
                                                  "ResetType %s is not supported" % t))
            with st.lock:
                if t in ("On", "ForceOn") and st.power == "On":
                    return self.reply(409, error_body("NoOperation", "The system is already on"))
                if t in ("ForceOff", "GracefulShutdown") and st.power == "Off":
                    return self.reply(400, error_body("NoOperation", "The system is already off"))
                if t in ("PowerCycle", "ForceRestart", "GracefulRestart") and st.power == "Off":
                    return self.reply(409, error_body("ActionNotSupported", "The system is off"))
                st.power = "Off" if t in ("ForceOff", "GracefulShutdown") else "On"
                st.etag_n += 1
            return self.reply(204)
        return self.reply(404 if method == "GET" else 405,
                          error_body("ResourceMissingAtURI", "no %s %s here" % (method, path)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--user", default="admin")
    ap.add_argument("--password-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    a = ap.parse_args()
    with open(a.password_file) as f:
        password = f.read().rstrip("\n")
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.state = State(a.user, password, a.log)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(a.cert, a.key)
    srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

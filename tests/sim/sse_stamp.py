#!/usr/bin/env python3
# tests/sim/sse_stamp.py URL TOKEN_FILE: follow an SSE stream and print one JSON
# line per event, {"t": arrival (Unix s), "id": N, "event": TYPE, "data": {...}},
# flushed, until the stream ends or the process is stopped.  Used by the sim
# tests to see WHEN events arrive (live intervals), not only that they do.
import json
import sys
import time
import urllib.request

url, token_file = sys.argv[1], sys.argv[2]
token = open(token_file).read().strip()
req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token, "Accept": "text/event-stream"})
ev = {}
with urllib.request.urlopen(req, timeout=600) as r:
    for raw in r:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if line == "":
            if "event" in ev:
                ev["t"] = time.time()
                print(json.dumps(ev), flush=True)
            ev = {}
        elif line.startswith("id:"):
            ev["id"] = int(line[3:].strip())
        elif line.startswith("event:"):
            ev["event"] = line[6:].strip()
        elif line.startswith("data:"):
            try:
                ev["data"] = json.loads(line[5:].strip())
            except ValueError:
                ev["data"] = line[5:].strip()

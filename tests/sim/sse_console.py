#!/usr/bin/env python3
"""tests/sim/sse_console.py FILE [state]: the bytes of a console stream (GET
/hosts/{name}/console) saved by curl, decoded from its "output" events; with
"state", the data of the last "state" event instead."""
import base64
import sys

text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
out, state = b"", ""
for block in text.split("\n\n"):
    ev, data = "", ""
    for line in block.split("\n"):
        if line.startswith("event: "):
            ev = line[7:]
        elif line.startswith("data: "):
            data += line[6:]
    if ev == "output":
        out += base64.b64decode(data)
    elif ev == "state":
        state = data
if len(sys.argv) > 2:
    print(state)
else:
    sys.stdout.write(out.decode("utf-8", "replace"))

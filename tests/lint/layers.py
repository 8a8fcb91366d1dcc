#!/usr/bin/env python3
"""tests/lint/layers.py - the layering of server/, checked from its includes.

Every file of server/ belongs to a module (its name up to the first '_' unless
the table says otherwise) and every module to a layer, bottom (1) to top.  A
file may include headers of its own layer or lower; an include of a higher
layer's header is an arrow running up.  The check fails on:
  - an arrow running up that is not in DEBTS (a new one), or a DEBTS entry that
    no longer exists (take it off the list: the list only shrinks);
  - a Linux-only header or call outside a *_linux.c file (portability: the
    reference control host runs FreeBSD; see README "Portability");
  - a file under server/ that no layer names.
It prints what it measured: files including the context (app.h), circles
between modules, arrows running up, the depth of the module graph and the
longest functions, so that a note can give before and after.

Usage: layers.py [--self-test] [SERVER_DIR]   (default: server/ beside tests/)
  --self-test: the real tree passes, and planted problems (an include
  running up, a Linux-only call, a file of no layer) are each reported.
"""
import os
import re
import sys

# Bottom to top.  A module is named by the stem of its files.
LAYERS = [
    # 1. base: no state of their own, used by everyone
    ("base", "error log timeutil outbuf csv crypto validate shquote cron stats yamltree grubcfg hostmeta iperf iperf2 netperf traffic irtt ticker wipe machtab services feed proxy flame shaper cpulist"),
    # 2. adapters: the store, processes, ssh, raw frames, the bus, the inventory, who calls
    ("adapters", "store proc ssh rawframe events inventory invadmin auth ratelimit audit metrics"),
    # 3. pure domain: the matrix spec and planner
    ("pure", "matrix bootcheck bootpaths"),
    # 4. machines: reachability, holds
    ("machines", "hosts actions bootmenu reserve"),
    # 5. acting on machines
    ("acting", "power boot bmcwatch hostsnap idle console"),
    # 6. policies and the parts of a run
    ("policies", "wake notify run hostchange tunables linkprof matrixboot results compare osview history report specs"),
    # 7. the matrix engine
    ("engine", "runner schedule"),
    # 8. the HTTP edge and the handlers
    ("edge", "http api routes"),
    # 9. the composition root: creates, starts, reloads and stops everything
    ("root", "app"),
    # 10. the program
    ("main", "main"),
]

# Files whose module is not their first word.
MODULE_OF = {
    "matrix_boot": "matrixboot",
    "run_exec": "run",
    "run_server": "run",
    "run_host": "run",
    "run_internal": "run",
    "runner_internal": "runner",
    "runner_par": "runner",
    "runner_matrix": "runner",
    "hostmeta_text": "hostmeta",
    "hostmeta_shape": "hostmeta",
    "hostmeta_tools": "hostmeta",
    "hostmeta_internal": "hostmeta",
    "hostsnap": "hostsnap",
    "boot_check": "bootcheck",
    "boot_paths": "bootpaths",
}

# Arrows running up that are known and being taken down (issue "One house").
# Each is "file -> header".  Remove a line when its include goes.
DEBTS = set()

LINUX_ONLY_HEADERS = re.compile(
    r'#\s*include\s*<(sys/epoll\.h|sys/inotify\.h|linux/[^>]+|netpacket/packet\.h|sys/prctl\.h|'
    r'sys/sendfile\.h|sys/signalfd\.h|sys/timerfd\.h|sys/eventfd\.h|sys/sysinfo\.h|mcheck\.h|'
    r'sys/vfs\.h|sys/statfs\.h|features\.h)>')
LINUX_ONLY_CALLS = re.compile(
    r'\b(prctl|epoll_\w+|inotify_\w+|accept4|pipe2|memfd_create|signalfd|timerfd_\w+|eventfd|'
    r'sendfile|get_nprocs\w*|sched_getaffinity|O_PATH|PR_SET_\w+|MSG_MORE|TCP_CORK)\b|"/proc/')


def module_of(stem):
    if stem in MODULE_OF:
        return MODULE_OF[stem]
    return stem.split("_")[0]


def strip_comments(text, strings=False):
    """Comments out, line numbers kept; with strings, string and character
    literals emptied too (braces in json_pack formats must not count)."""
    def repl(m):
        t = m.group(0)
        if t[0] == "/":
            return "\n" * t.count("\n")
        return t[0] * 2 if strings else t
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  repl, text, flags=re.S)


def functions(path, text):
    """(lines, name) of each top-level function body in a .c file."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("{") and i > 0:
            # the name: the last identifier before '(' on the lines above
            head = " ".join(lines[max(0, i - 4):i])
            names = re.findall(r"(\w+)\s*\(", head)
            depth, j = 0, i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth == 0:
                    break
                j += 1
            if names:
                out.append((j - i + 1, names[0] if names[0] not in ("static", "const") else names[-1]))
            i = j + 1
            continue
        i += 1
    return out


def self_test(sdir):
    """The check fails on what it promises to catch: a copy of server/ with
    an include running up, a Linux-only call outside *_linux.c and a file no
    layer names must each be reported; the real tree must pass.  0 or 1."""
    import io
    import contextlib
    import shutil
    import tempfile

    def run(d):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check(d)
        return rc, out.getvalue()

    rc, text = run(sdir)
    if rc != 0:
        print(text, end="")
        return 1
    plants = [
        ("actions.c", '#include "app.h"\n', "actions.c -> app.h: an include runs up"),
        ("ticker.c", "static int f(void) { return prctl(0); }\n", "Linux-only interface outside a *_linux.c"),
        ("zzzz.c", "int zzzz;\n", 'no layer names module "zzzz"'),
    ]
    failed = 0
    for name, line, want in plants:
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "server")
            shutil.copytree(sdir, d)
            with open(os.path.join(d, name), "a", encoding="utf-8") as f:
                f.write(line)
            rc, text = run(d)
            if rc == 0 or want not in text:
                print(f"layers: self-test: {name} with {line.strip()!r} was not reported as: {want}")
                failed = 1
    print("layers: self-test: " + ("FAILED" if failed else "each planted problem was reported"))
    return failed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = [a for a in sys.argv[1:] if a != "--self-test"]
    sdir = args[0] if args else os.path.join(here, "..", "..", "server")
    if "--self-test" in sys.argv[1:]:
        return self_test(sdir)
    return check(sdir)


def check(sdir):
    layer = {}
    for n, (_, mods) in enumerate(LAYERS, 1):
        for m in mods.split():
            layer[m] = n
    problems = []
    includes = {}      # file -> [header stems]
    funcs = []
    for name in sorted(os.listdir(sdir)):
        if not name.endswith((".c", ".h")):
            continue
        stem = name[:-2]
        text = open(os.path.join(sdir, name), encoding="utf-8").read()
        code = strip_comments(text)
        includes[name] = re.findall(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)\.h"', code, flags=re.M)
        if module_of(stem) not in layer:
            problems.append(f"server/{name}: no layer names module \"{module_of(stem)}\" (add it to LAYERS)")
        if not stem.endswith("_linux"):
            for k, line in enumerate(code.split("\n"), 1):
                if LINUX_ONLY_HEADERS.search(line) or LINUX_ONLY_CALLS.search(line):
                    problems.append(f"server/{name}:{k}: Linux-only interface outside a *_linux.c file: "
                                    f"{line.strip()}")
        if name.endswith(".c"):
            funcs += [(n, f"server/{name}:{f}") for n, f in functions(name, strip_comments(text, True))]

    up = []
    edges = {}
    for name, hdrs in includes.items():
        src = module_of(name[:-2])
        for h in hdrs:
            dst = module_of(h)
            if dst == src or src not in layer or dst not in layer:
                continue
            edges.setdefault(src, set()).add(dst)
            if layer[dst] > layer[src]:
                up.append(f"{name} -> {h}.h")
    for u in up:
        if u not in DEBTS:
            problems.append(f"server/{u}: an include runs up ({module_of(u.split(' ')[0][:-2])} is in layer "
                            f"{layer[module_of(u.split(' ')[0][:-2])]}, {u.split('-> ')[1]} in layer "
                            f"{layer[module_of(u.split('-> ')[1][:-2])]}): pass the service down instead")
    for d in sorted(DEBTS - set(up)):
        problems.append(f"tests/lint/layers.py: DEBTS lists \"{d}\", which is gone: take it off the list")

    # circles: strongly connected components of the module graph (Tarjan)
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(comp)

    sys.setrecursionlimit(10000)
    mods = set(edges) | {d for s in edges.values() for d in s}
    for v in sorted(mods):
        if v not in index:
            strong(v)
    comp_of = {m: i for i, c in enumerate(sccs) for m in c}
    circles = [sorted(c) for c in sccs if len(c) > 1]

    # depth: the longest chain of modules, circles counted as one
    memo = {}

    def depth(c):
        if c not in memo:
            memo[c] = 0
            nexts = {comp_of[d] for m in sccs[c] for d in edges.get(m, ()) if comp_of[d] != c}
            memo[c] = 1 + max((depth(n) for n in nexts), default=0)
        return memo[c]

    deepest = max((depth(c) for c in range(len(sccs))), default=0)
    ctx = sorted(n for n, h in includes.items() if "app" in h and module_of(n[:-2]) != "app")
    svc = sorted(n for n, h in includes.items() if "services" in h)

    print(f"layers: {len(includes)} files, {len(mods)} modules in {len(LAYERS)} layers")
    print(f"layers: files including the composition root (app.h): {len(ctx)} ({' '.join(ctx)})")
    print(f"layers: files including the services (services.h): {len(svc)}")
    print(f"layers: arrows running up: {len(up)} (known debts: {len(DEBTS & set(up))})")
    print(f"layers: circles between modules: {len(circles)}"
          + "".join(f"\n  circle of {len(c)}: {' '.join(c)}" for c in circles))
    print(f"layers: depth of the module graph: {deepest}")
    funcs.sort(reverse=True)
    print("layers: longest functions: " + ", ".join(f"{f} {n}" for n, f in funcs[:8]))
    for p in problems:
        print(p)
    if problems:
        print(f"layers: {len(problems)} problem(s)")
        return 1
    print("layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""cpuprobe.py ORACLE ENGINE N [oracle args]: start the oracle with one page of ENGINE, send N
trivial geometry cases one at a time (after 10 to warm up), and print the CPU ms per case (case
and the reset after it) of every process under the oracle, by executable and Chromium --type.
PROBE_SCRIPT=JS gives every measured case that script (a case with a script gets a new document)."""
import json, os, re, sys, time
from oraclepipe import Oracle
oracle, engine, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
args = sys.argv[4:]
orc = Oracle([oracle, "--store=off", "--engines=" + engine, "--pages=1"] + args, stderr=open("/tmp/cpuprobe.log", "w"))
call = orc.call
HZ = os.sysconf("SC_CLK_TCK")
def procs():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit(): continue
        try:
            st = open("/proc/%s/stat" % d).read()
            f = st[st.rindex(")") + 2:].split()
            cmd = open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")
            comm = open("/proc/%s/comm" % d).read().strip()
        except OSError: continue
        kids[int(d)] = (int(f[1]), (int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])) / HZ, cmd, comm)
    out = {}
    def walk(pid):
        for k, (pp, cpu, cmd, comm) in kids.items():
            if pp == pid:
                # Chromium rewrites its argv into one space-separated string.
                t = re.search(rb"--type=(\S+)", b" ".join(cmd))
                out[k] = (comm + (" " + t.group(1).decode() if t else ""), cpu)
                walk(k)
    walk(orc.pid)
    out[orc.pid] = ("oracle", kids[orc.pid][1])
    return out
orc.wait_ready()
html = "<!doctype html><div style='width:100px;padding:3px'><p>hello <b>world</b></p><span>x</span></div>"
for i in range(10): call({"id": "w%d" % i, "html": html})
time.sleep(1)
a0 = procs(); t0 = time.time()
SCRIPT = os.environ.get("PROBE_SCRIPT")
for i in range(n):
    o = {"id": "c%d" % i, "html": html + "<!--%d-->" % i}
    if SCRIPT: o["script"] = SCRIPT
    call(o)
time.sleep(0.5)
a1 = procs(); wall = time.time() - t0
by = {}
for pid, (cls, cpu) in a1.items():
    by[cls] = by.get(cls, 0) + cpu - a0.get(pid, (cls, 0))[1]
for pid, (cls, cpu) in a0.items():
    if pid not in a1: by[cls + " (exited)"] = by.get(cls + " (exited)", 0) - cpu
tot = sum(by.values())
print("%s n=%d wall/case %.0f ms  cpu/case %.1f ms" % (engine, n, wall * 1000 / n, tot * 1000 / n))
for k, v in sorted(by.items(), key=lambda x: -x[1]):
    if abs(v) > 0.0005: print("  %-40s %7.1f" % (k, v * 1000 / n))
orc.shutdown()

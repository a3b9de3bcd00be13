#!/usr/bin/env python3
"""drive.py ORACLE REQS OUT [oracle args...]: start the oracle, wait for every engine ready,
send REQS one at a time (one in flight), write answers (one per line, in order) to OUT and
print per-engine-set latency medians by request kind."""
import json, subprocess, sys, time, statistics, threading, queue
oracle, reqs, out = sys.argv[1], sys.argv[2], sys.argv[3]
args = sys.argv[4:]
p = subprocess.Popen([oracle, "--store=off"] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open(out + ".log", "w"), text=True, bufsize=1)
q = queue.Queue()
def reader():
    for line in p.stdout:
        q.put(line)
    q.put(None)
threading.Thread(target=reader, daemon=True).start()
def call(obj):
    p.stdin.write(json.dumps(obj) + "\n"); p.stdin.flush()
    while True:
        line = q.get()
        if line is None: raise SystemExit("oracle exited")
        a = json.loads(line)
        if a.get("id") == obj["id"]: return a, line
t0 = time.time()
while True:
    a, _ = call({"id": "ping", "op": "ping"})
    st = a.get("states", {})
    if st and all(v.get("state") != "starting" for v in st.values()): break
    time.sleep(0.2)
print("startup %.1fs" % (time.time() - t0), file=sys.stderr)
lat = {}
with open(out, "w") as f:
    for line in open(reqs):
        r = json.loads(line)
        t = time.time()
        a, raw = call(r)
        d = (time.time() - t) * 1000
        kind = (r.get("op") or "geometry") + "/" + ",".join(r.get("engines") or ["all"])
        lat.setdefault(kind, []).append(d)
        f.write(raw if raw.endswith("\n") else raw + "\n")
call({"id": "bye", "op": "shutdown"})
p.wait(timeout=60)
for k, v in sorted(lat.items()):
    print("%-28s n=%4d median %7.1f ms  p90 %7.1f ms" % (k, len(v), statistics.median(v), sorted(v)[int(len(v) * 0.9) - 1] if len(v) > 1 else v[0]))

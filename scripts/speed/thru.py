#!/usr/bin/env python3
"""thru.py ORACLE REQS N [oracle args...]: wait for every engine ready, then write the first N
requests at once (the oracle's backpressure paces the pipe) and time until every answer is in."""
import json, subprocess, sys, time, threading
oracle, reqs, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
args = sys.argv[4:]
p = subprocess.Popen([oracle, "--store=off"] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open("thru.log", "w"), text=True, bufsize=1)
t0 = time.time()
while True:
    p.stdin.write('{"id":"ping","op":"ping"}\n'); p.stdin.flush()
    a = json.loads(p.stdout.readline())
    st = a.get("states", {})
    if st and all(v.get("state") != "starting" for v in st.values()): break
    time.sleep(0.2)
startup = time.time() - t0
lines = [l for l in open(reqs)][:n]
errs = 0
def writer():
    for l in lines:
        r = json.loads(l); r.pop("engines", None)
        p.stdin.write(json.dumps(r) + "\n"); p.stdin.flush()
t1 = time.time()
threading.Thread(target=writer, daemon=True).start()
for i in range(len(lines)):
    a = json.loads(p.stdout.readline())
    errs += len(a.get("errors") or {})
wall = time.time() - t1
p.stdin.write('{"id":"bye","op":"shutdown"}\n'); p.stdin.flush(); p.wait(timeout=60)
print("%s %s: startup %.1fs, %d cases in %.1fs = %.2f cases/s, engine errors %d" % (oracle, " ".join(args), startup, len(lines), wall, len(lines)/wall, errs))

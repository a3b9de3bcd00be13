#!/usr/bin/env python3
"""urlprocs.py ORACLE URL.ndjson DOCROOT N ENGINE [oracle args]: N url cases one at a time on one engine
(after 3 to warm up), --pages=1 --store=off --self-check=false; counts the content processes (Chromium
--type=renderer, Firefox -contentproc, WebKitWebProcess) born while they ran, polling /proc every 10 ms,
and prints their median latency."""
import json, sys, time, statistics, threading, os
from oraclepipe import Oracle
oracle, url_path, docroot, n, eng = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
extra = sys.argv[6:]
rs = [json.loads(l) for l in open(url_path)][:n]
orc = Oracle([oracle, "--store=off", "--pages=1", "--self-check=false", "--engines", eng, "--docroot", docroot] + extra)
call = orc.call
orc.wait_ready()
pat = {"chromium": "--type=renderer", "firefox": "-contentproc", "webkit": "WebKitWebProcess"}[eng]
seen = set(); stop = False
def poll():
    while not stop:
        for pid in os.listdir("/proc"):
            if pid.isdigit() and pid not in seen:
                try: c = open("/proc/%s/cmdline" % pid, "rb").read()
                except Exception: continue
                if pat.encode() in c: seen.add(pid)
        time.sleep(0.01)
for i in range(3):  # warm
    o = dict(rs[i]); o["id"] = "w%d" % i; o["engines"] = [eng]; call(o)
th = threading.Thread(target=poll); th.start(); time.sleep(0.3); before = len(seen)
lat = []
for i, r in enumerate(rs):
    o = dict(r); o["id"] = "u%d" % i; o["engines"] = [eng]
    t = time.time(); a = call(o); lat.append((time.time() - t) * 1000)
stop = True; th.join()
orc.shutdown()
print("%s: %d url cases, content processes existing %d, new %d, median %.0f ms" % (eng, n, before, len(seen) - before, statistics.median(lat)))

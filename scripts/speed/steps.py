#!/usr/bin/env python3
"""steps.py ORACLE ENGINE N DOCROOT FILE.ndjson...: for each request file, a new oracle
(--pages=1 --store=off --self-check=false --log-level=debug --docroot DOCROOT, one
engine), the first N requests one at a time; prints the median latency (send to
answer), the median of the oracle's own "request" time, and the count and median of its
"page reset" times, both from its debug log. Run with the inline and the url corpus of
scripts/corpus/wpt_corpus.py to see where a url case's time goes."""
import json, sys, time, statistics
from oraclepipe import Oracle
oracle, eng, n, docroot, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
for f in files:
    rs = [json.loads(l) for l in open(f)][:n]
    orc = Oracle([oracle, "--store=off", "--pages=1", "--self-check=false", "--engines", eng,
                "--docroot", docroot, "--log-level=debug"], keep_log=True)
    call, logs = orc.call, orc.logs
    orc.wait_ready()
    mark, lat = len(logs), []
    for i, r in enumerate(rs):
        o = dict(r); o["id"] = "x%d" % i; o["engines"] = [eng]
        t = time.time(); call(o); lat.append((time.time() - t) * 1000)
    time.sleep(0.5)
    entries = [json.loads(l) for l in logs[mark:] if l.startswith("{")]
    req = [x["took"] for x in entries if x.get("message") == "request"]
    rst = [x["took"] for x in entries if x.get("message") == "page reset"]
    orc.shutdown()
    print("%s %-24s latency %.0f ms  request %.0f ms  resets %d, median %.0f ms" % (
        eng, f.split("/")[-1], statistics.median(lat), statistics.median(req), len(rst),
        statistics.median(rst) if rst else 0))

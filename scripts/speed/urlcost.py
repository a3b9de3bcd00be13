#!/usr/bin/env python3
"""urlcost.py ORACLE INLINE.ndjson URL.ndjson DOCROOT N: the first N requests of each file
(scripts/corpus/wpt_corpus.py without and with --url), one at a time, per engine, all
inline then all by url, through one oracle (--pages=1 --store=off --docroot DOCROOT);
prints each engine's median latency of both and their ratio. Each latency includes the
wait for the reset after the case before (one page), so it is the cost per case."""
import json, sys, time, statistics
from oraclepipe import Oracle
oracle, inline_path, url_path, docroot, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
inl = [json.loads(l) for l in open(inline_path)][:n]
url = [json.loads(l) for l in open(url_path)][:n]
orc = Oracle([oracle, "--store=off", "--pages=1", "--docroot", docroot])
call = orc.call
orc.wait_ready()
lat = {}
engines = ["chromium", "firefox", "webkit"]
for e in engines:
    for mode, rs in (("inline", inl), ("url", url)):
        for i, r in enumerate(rs):
            o = dict(r); o["id"] = "%s%d%s" % (mode, i, e); o["engines"] = [e]
            t = time.time(); call(o)
            lat.setdefault((e, mode), []).append((time.time() - t) * 1000)
orc.shutdown()
for e in engines:
    a, b = statistics.median(lat[(e, "inline")]), statistics.median(lat[(e, "url")])
    print("%-9s inline median %7.1f ms  url median %7.1f ms  url/inline %.2fx" % (e, a, b, b / a))

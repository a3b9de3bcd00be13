#!/usr/bin/env python3
"""cmpdumps.py A B: per engine, how many answers (dumps, traces, states, errors) are byte-identical."""
import json, sys, collections
def load(p):
    out = {}
    for l in open(p):
        a = json.loads(l); out[a.get("id")] = a
    return out
A, B = load(sys.argv[1]), load(sys.argv[2])
same, diff, ex = collections.Counter(), collections.Counter(), []
for i, a in A.items():
    b = B.get(i)
    if b is None: diff["missing"] += 1; continue
    for key in ("dumps", "traces", "states"):
        for eng in set((a.get(key) or {})) | set((b.get(key) or {})):
            x, y = (a.get(key) or {}).get(eng), (b.get(key) or {}).get(eng)
            if key == "traces":
                for t in (x, y):
                    if t: t.pop("origin", None)  # one origin per case and run
            if json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True): same[eng + " " + key] += 1
            else: diff[eng + " " + key] += 1; ex.append((i, eng, key))
    ea, eb = a.get("errors") or {}, b.get("errors") or {}
    for eng in set(ea) | set(eb):
        if ea.get(eng) == eb.get(eng): same[eng + " errors"] += 1
        else: diff[eng + " errors"] += 1; ex.append((i, eng, "error", ea.get(eng), eb.get(eng)))
print("identical:", dict(sorted(same.items())))
print("different:", dict(sorted(diff.items())))
for e in ex[:20]: print("  ", e)

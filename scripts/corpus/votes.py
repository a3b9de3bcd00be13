#!/usr/bin/env python3
# Usage: bin/compare --answers responses.ndjson --json > report.ndjson; python3 scripts/corpus/votes.py report.ndjson
"""Sums compare --json reports: per-item votes, case verdicts, outvoted engines."""
import json, sys, collections
votes = collections.Counter(); verdicts = collections.Counter(); outl = collections.Counter()
unanimous_cases = split_cases = cases = 0
outprop = collections.Counter()
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "totals" in r:
        continue
    cases += 1
    verdicts[r.get("verdict")] += 1
    v = r.get("votes") or {}
    votes.update(v)
    if v and set(k for k, n in v.items() if n) <= {"unanimous"}:
        unanimous_cases += 1
    if v.get("split"):
        split_cases += 1
    for o in r.get("outliers") or []:
        outl[o["engine"]] += o["count"]
        outprop[(o["engine"], o["property"])] += o["count"]
print("cases", cases, "verdicts", dict(verdicts))
print("per-item votes", dict(votes))
print("cases unanimous on every item", unanimous_cases, "cases with a split item", split_cases)
print("outvoted items per engine", dict(outl))
print("top outvoted (engine, property)", outprop.most_common(12))

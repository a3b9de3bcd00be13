#!/usr/bin/env python3
"""orders.py OUT_A OUT_B FILE...: the requests of FILE... (NDJSON) in two random orders,
each with a probe case after every 10th request that reports what its about:blank
document is (origin, secure context, cookies, storage, history length, referrer,
window.name, and how it came to be: navigation.activation, the navigation timing entry). Pipe both through the same oracle and compare the answers by id
(scripts/speed/cmpdumps.py): a case's answer must not depend on the cases before it.

  python3 scripts/corpus/orders.py /tmp/A.ndjson /tmp/B.ndjson wpt300.ndjson testdata/cases.ndjson ...
  for o in A B; do bin/oracle --store=off --docroot DIR < /tmp/$o.ndjson > /tmp/$o.out; done
  python3 scripts/speed/cmpdumps.py /tmp/A.out /tmp/B.out
"""
import json, random, sys

PROBE_JS = ("const t = (f) => { try { return String(f()); } catch (e) { return e.name; } };"
            " const nav = () => performance.getEntriesByType('navigation');"
            " document.getElementById('r').setAttribute('title', [t(() => self.origin), t(() => isSecureContext),"
            " t(() => document.cookie), t(() => localStorage.length), t(() => history.length),"
            " t(() => document.referrer), t(() => window.name),"
            " t(() => typeof navigation === 'object' ? navigation.activation && navigation.activation.navigationType : 'no API'),"
            " t(() => typeof navigation === 'object' ? navigation.entries().length : 'no API'),"
            " t(() => nav().length), t(() => nav().length && nav()[0].type)].join('|'));")


def probe(n):
    return json.dumps({"id": "probe-%d" % n, "op": "reflect", "html": "<p id=r></p>", "script": PROBE_JS,
                       "probes": [{"selector": "#r", "attr": "title"}]})


def main():
    out_a, out_b, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    reqs = [l.rstrip("\n") for f in files for l in open(f) if l.strip()]
    for seed, path in ((1, out_a), (2, out_b)):
        order = reqs[:]
        random.Random(seed).shuffle(order)
        with open(path, "w") as w:
            for i, r in enumerate(order):
                w.write(r + "\n")
                if i % 10 == 9:
                    w.write(probe(i // 10) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# Usage: python3 scripts/corpus/wpt_corpus.py <WPT git checkout> <N> [--url] [--with-resources] > corpus.ndjson
"""Builds an NDJSON geometry corpus from a WPT checkout (git tree at HEAD).

By default: self-contained layout tests (no external resources, no testharness, no
reftest-wait), inlined as html, as for the README's first measurement.
--url: the same files as "url" requests, for `oracle --docroot <a work tree of the
checkout>` (docs/web-content.md): .xht/.xhtml are then parsed as XML, and what the
files reference loads from the docroot.
--with-resources (with --url): also the files that reference /fonts/, images,
stylesheets or scripts, or wait with reftest-wait (still no testharness tests;
cmd/wpt requests gives those as traces)."""
import argparse, hashlib, json, re, subprocess, sys
ap = argparse.ArgumentParser()
ap.add_argument("repo")
ap.add_argument("n", type=int)
ap.add_argument("--url", action="store_true", help='emit {"id","url"} requests instead of inlined html')
ap.add_argument("--with-resources", action="store_true", help="with --url: keep files with external resources and reftest-wait")
a = ap.parse_args()
if a.with_resources and not a.url:
    ap.error("--with-resources needs --url: inlined, their resources never load")
repo, n = a.repo, a.n
dirs = ["css/CSS2/normal-flow", "css/CSS2/floats", "css/CSS2/floats-clear", "css/CSS2/positioning",
        "css/CSS2/margin-padding-clear", "css/CSS2/box-display", "css/CSS2/linebox", "css/CSS2/visudet",
        "css/CSS2/visuren", "css/CSS2/tables", "css/CSS2/text", "css/CSS2/fonts", "css/CSS2/borders",
        "css/CSS2/lists", "css/CSS2/generated-content", "css/css-flexbox", "css/css-grid", "css/css-overflow",
        "css/css-text", "css/css-position", "css/css-sizing", "css/css-fonts", "css/css-ui", "css/css-transforms",
        "css/css-multicol", "css/css-writing-modes", "css/css-animations", "css/css-transitions"]
files = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD", "--"] + dirs,
                       capture_output=True, text=True, check=True).stdout.split()
ext = re.compile(r"\.(html?|xht|xhtml)$")
bad = re.compile(r"testharness|reftest-wait|<script[^>]*\bsrc=|<link[^>]*stylesheet|@import|<iframe|<object|<embed|<video|<audio|url\((?!\s*['\"]?data:)|<img[^>]*src=['\"]?(?!data:)|src=['\"]?/", re.I)
if a.with_resources:
    bad = re.compile(r"testharness|<iframe|<object|<embed|<video|<audio", re.I)
picked = []
for f in files:
    if not ext.search(f) or "/support/" in f or "/reference/" in f:
        continue
    picked.append(f)
picked.sort(key=lambda f: hashlib.sha1(f.encode()).hexdigest())
out = 0
for f in picked:
    b = subprocess.run(["git", "-C", repo, "show", "HEAD:" + f], capture_output=True).stdout
    if len(b) > 30000:
        continue
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError:
        continue
    if bad.search(s):
        continue
    print(json.dumps({"id": f, "url": "/" + f} if a.url else {"id": f, "html": s}))
    out += 1
    if out >= n:
        break
print(f"{out} cases from {len(picked)} candidates", file=sys.stderr)

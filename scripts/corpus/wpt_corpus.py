#!/usr/bin/env python3
"""Builds an NDJSON geometry corpus from web-platform-tests.

usage: wpt_corpus.py [--url] [--with-resources] [--xhtml {html,xml,skip}] [--wpt PATH] WPT N > corpus.ndjson

WPT is a web-platform-tests git checkout or a bare git directory (a mirror); N is how
many cases to print. The tests are WPT's reftests in the CSS layout directories
below, as bin/wpt tells a test from a reference (`wpt requests --kinds reftest`:
MANIFEST.json where the tree has one, else a file that links a match or mismatch
reference), so no reference file is ever a case. They are sampled in a fixed order
(by the hash of their path).

By default: self-contained layout tests (no external resources, no testharness, no
reftest-wait), inlined as {"id","html"} requests, the form bin/triage needs.
--xhtml: what to do with .xht/.xhtml tests when inlining. `html` (the default) writes
  them as HTML, as a candidate reading HTML on stdin gets them (`<![CDATA[` in a
  `<style>` is then CSS, not XML); the count is printed on stderr. `xml` sends them
  with "content_type": "application/xhtml+xml" (the oracle parses them as XML; bin/triage
  does not take such cases). `skip` leaves them out.
--url: the same files as "url" requests, for `oracle --docroot <a work tree of the
  checkout>` (docs/web-content.md): .xht/.xhtml are then parsed as XML, and what the
  files reference loads from the docroot.
--with-resources (with --url): also the files that reference /fonts/, images,
  stylesheets or scripts, or wait with reftest-wait (still no testharness tests;
  `wpt requests` gives those as traces).

Errors (not a git directory, no bin/wpt, no test found) are one line on stderr and
exit status 2."""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

DIRS = ["css/CSS2/normal-flow", "css/CSS2/floats", "css/CSS2/floats-clear", "css/CSS2/positioning",
        "css/CSS2/margin-padding-clear", "css/CSS2/box-display", "css/CSS2/linebox", "css/CSS2/visudet",
        "css/CSS2/visuren", "css/CSS2/tables", "css/CSS2/text", "css/CSS2/fonts", "css/CSS2/borders",
        "css/CSS2/lists", "css/CSS2/generated-content", "css/css-flexbox", "css/css-grid", "css/css-overflow",
        "css/css-text", "css/css-position", "css/css-sizing", "css/css-fonts", "css/css-ui", "css/css-transforms",
        "css/css-multicol", "css/css-writing-modes", "css/css-animations", "css/css-transitions"]
XHTML = re.compile(r"\.(xht|xhtml)$")
SELF_CONTAINED = re.compile(r"testharness|reftest-wait|<script[^>]*\bsrc=|<link[^>]*stylesheet|@import|<iframe|<object|<embed|<video|<audio|url\((?!\s*['\"]?data:)|<img[^>]*src=['\"]?(?!data:)|src=['\"]?/", re.I)
WITH_RESOURCES = re.compile(r"testharness|<iframe|<object|<embed|<video|<audio", re.I)
MAX_BYTES = 30000


def fail(msg):
    print("wpt_corpus.py: " + msg, file=sys.stderr)
    sys.exit(2)


def git(repo, *args, **kw):
    return subprocess.run(["git", "-C", repo] + list(args), capture_output=True, **kw)


def first_line(b):
    lines = b.decode("utf-8", "replace").strip().splitlines()
    return lines[0] if lines else "(no message)"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("repo", metavar="WPT", help="a web-platform-tests git checkout, or a bare git directory")
    ap.add_argument("n", metavar="N", type=int, help="how many cases to print")
    ap.add_argument("--url", action="store_true", help='print {"id","url"} requests instead of inlined html')
    ap.add_argument("--with-resources", action="store_true", help="with --url: keep files with external resources and reftest-wait")
    ap.add_argument("--xhtml", choices=["html", "xml", "skip"], default="html",
                    help="inlined .xht/.xhtml tests: as HTML (default), as XML (content_type), or left out")
    ap.add_argument("--wpt", default=os.path.join(here, "..", "..", "bin", "wpt"),
                    help="the bin/wpt that tells a test from a reference (default: this repository's bin/wpt)")
    a = ap.parse_args()
    if a.with_resources and not a.url:
        ap.error("--with-resources needs --url: inlined, their resources never load")
    if not os.path.isfile(a.wpt):
        fail(f"{a.wpt}: no such file: run `make build` first, or name bin/wpt with --wpt")

    probe = git(a.repo, "rev-parse", "--is-bare-repository")
    if probe.returncode != 0:
        fail(f"{a.repo} is not a git checkout or git directory of web-platform-tests (git: {first_line(probe.stderr)})")
    bad = WITH_RESOURCES if a.with_resources else SELF_CONTAINED

    with tempfile.TemporaryDirectory(prefix="wpt-corpus-") as tmp:
        if probe.stdout.strip() == b"true":
            # A bare directory has no files to read: its HEAD's layout directories
            # are written out once, read-only, for bin/wpt and for inlining.
            present = [d for d in DIRS if git(a.repo, "cat-file", "-e", "HEAD:" + d).returncode == 0]
            if not present:
                fail(f"{a.repo}: HEAD has none of the CSS layout directories (is it web-platform-tests?)")
            archive = git(a.repo, "archive", "--format=tar", "HEAD", "--", *present)
            if archive.returncode != 0:
                fail(f"{a.repo}: git archive failed: {first_line(archive.stderr)}")
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            root = tmp
        else:
            root = git(a.repo, "rev-parse", "--show-toplevel", text=True).stdout.strip()
            present = [d for d in DIRS if os.path.isdir(os.path.join(root, d))]
            if not present:
                fail(f"{root}: none of the CSS layout directories (is it web-platform-tests?)")

        def listing(kind):
            r = subprocess.run([a.wpt, "requests", "--root", root, "--kinds", kind] + present,
                               capture_output=True, text=True)
            if r.returncode != 0:
                last = r.stderr.strip().splitlines()
                fail(f"{a.wpt} requests: {last[-1] if last else 'exit ' + str(r.returncode)}")
            return [json.loads(line)["id"].lstrip("/") for line in r.stdout.splitlines() if line.strip()]
        # A file that is some test's reference is no case here, even where it links
        # references of its own (a chained reftest, which WPT runs as a test too).
        refs = set(listing("ref"))
        tests = [t for t in listing("reftest") if t not in refs]
        tests.sort(key=lambda f: hashlib.sha1(f.encode()).hexdigest())

        out = xhtml = 0
        for f in tests:
            if not a.url and a.xhtml == "skip" and XHTML.search(f):
                continue
            with open(os.path.join(root, f), "rb") as fh:
                b = fh.read(MAX_BYTES + 1)
            if len(b) > MAX_BYTES:
                continue
            try:
                s = b.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if bad.search(s):
                continue
            if a.url:
                req = {"id": f, "url": "/" + f}
            else:
                req = {"id": f, "html": s}
                if XHTML.search(f):
                    xhtml += 1
                    if a.xhtml == "xml":
                        req["content_type"] = "application/xhtml+xml"
            print(json.dumps(req))
            out += 1
            if out >= a.n:
                break
    if out == 0:
        fail(f"no test of the {len(tests)} reftests bin/wpt listed is self-contained and under {MAX_BYTES} bytes")
    msg = f"{out} cases from {len(tests)} reftests that are no reference"
    if xhtml:
        how = "inlined as HTML (text/html), not parsed as XML" if a.xhtml == "html" else "sent as application/xhtml+xml"
        msg += f"; {xhtml} of them .xht/.xhtml {how} (--xhtml)"
    print(msg, file=sys.stderr)


if __name__ == "__main__":
    main()

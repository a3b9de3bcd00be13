#!/usr/bin/python3
"""WeasyPrint as a candidate engine of the layout oracle (README.md here).

Reads one case's HTML on stdin, lays it out with WeasyPrint on one page the size
of the oracle's viewport (800x600 CSS px, no margin), and writes its dump
(docs/dump-format.md) as one JSON object on stdout: every element in document
order, its border boxes as "rects" (one per box fragment) and their union as
"bounding", in CSS px relative to the page's origin (the viewport's), and the
style subset from WeasyPrint's computed and used values.

With --server it stays up and answers one case a line (docs/candidate.md), so
Python and WeasyPrint start once: bin/triage --candidate-server '.../adapter.py --server'.
--server --workers N lays out N cases at once in forked workers (default 1).

Run it under the oracle's pinned environment (`bin/triage candidate-env`, which
bin/triage applies by default): FONTCONFIG_FILE gives WeasyPrint's Pango the
browsers' faces; LAYOUT_ORACLE_FONT_SIZE, LAYOUT_ORACLE_MONOSPACE_SIZE and
LAYOUT_ORACLE_VIEWPORT give the default sizes and the page size.
"""

import argparse
import json
import math
import os
import sys

import weasyprint
import weasyprint.document
from weasyprint import CSS, HTML
from weasyprint.formatting_structure import boxes as B

STYLE_SUBSET = [
    "display", "position", "box-sizing", "direction", "writing-mode", "float", "clear",
    "width", "height", "min-width", "max-width", "min-height", "max-height",
    "margin-top", "margin-right", "margin-bottom", "margin-left",
    "padding-top", "padding-right", "padding-bottom", "padding-left",
    "border-top-width", "border-right-width", "border-bottom-width", "border-left-width",
    "overflow-x", "overflow-y",
]


def viewport():
    w, _, h = os.environ.get("LAYOUT_ORACLE_VIEWPORT", "800x600").partition("x")
    return float(w), float(h)


def user_css(width, height):
    size = os.environ.get("LAYOUT_ORACLE_FONT_SIZE", "16")
    mono = os.environ.get("LAYOUT_ORACLE_MONOSPACE_SIZE", "13")
    # The page is the viewport. !important: a user rule outranks the author's
    # normal @page rules. The browsers' default monospace size (13px where the
    # font size is the initial medium) is approximated on the elements whose UA
    # style makes them monospace.
    return (f"@page {{ size: {width:g}px {height:g}px !important; margin: 0 !important }}\n"
            f"html {{ font-size: {size}px }}\n"
            f"pre, code, kbd, samp, tt, listing, xmp, plaintext {{ font-size: {mono}px }}\n")


# WeasyPrint computes every element's style once (StyleFor); keep it, so an element
# without a box still has its computed values, and a box can be told apart from the
# anonymous boxes of its element (those get a style of their own).
_captured = {}
_get_all = weasyprint.document.get_all_computed_styles


def _capture(*args, **kwargs):
    style_for = _get_all(*args, **kwargs)
    _captured["style_for"] = style_for
    return style_for


weasyprint.document.get_all_computed_styles = _capture


def tag_of(el):
    # The contract's tag is tagName.toUpperCase() in every namespace (SVG's
    # foreignObject is FOREIGNOBJECT): the namespace is dropped, the case upper.
    tag = el.tag
    if tag.startswith("{"):
        tag = tag[1:].partition("}")[2]
    return tag.upper()


def num(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return 0.0
    return float(v)


def px(v):
    """A length as getComputedStyle serializes it: '8px', '18.625px'."""
    v = round(float(v), 4)
    if v == int(v):
        return f"{int(v)}px"
    return f"{v:.4f}".rstrip("0").rstrip(".") + "px"


def computed_length(d, auto="auto", inf="none"):
    if d == "auto" or d is None:
        return auto
    if isinstance(d, str):
        return d
    value, unit = getattr(d, "value", d), getattr(d, "unit", "px")
    if isinstance(value, float) and math.isinf(value):
        return inf
    if unit == "%":
        return f"{value:g}%"
    if unit in (None, "px"):
        return px(value)
    return f"{value:g}{unit}"


DISPLAY = {
    ("none",): "none", ("contents",): "contents",
    ("block", "flow"): "block", ("block", "flow-root"): "flow-root",
    ("inline", "flow"): "inline", ("inline", "flow-root"): "inline-block",
    ("block", "flex"): "flex", ("inline", "flex"): "inline-flex",
    ("block", "grid"): "grid", ("inline", "grid"): "inline-grid",
    ("block", "table"): "table", ("inline", "table"): "inline-table",
    ("block", "flow", "list-item"): "list-item", ("inline", "flow", "list-item"): "inline list-item",
}


def display_of(d):
    d = tuple(d)
    return DISPLAY.get(d, " ".join(d))


def principal_boxes(page_boxes, style_for):
    """element -> its principal boxes' fragments, in layout order, per page."""
    out = {}
    skip = set()
    for page_no, page in enumerate(page_boxes):
        stack = [page]
        while stack:
            box = stack.pop()
            children = list(getattr(box, "children", []) or [])
            stack.extend(reversed(children))
            el = box.element
            if el is None or isinstance(box, (B.LineBox, B.TextBox, B.PageBox, B.MarginBox)):
                continue
            if box.element_tag and "::" in box.element_tag:
                continue
            if id(box) in skip:
                continue
            own = box.style is style_for(el)
            if box.is_table_wrapper:
                own = True
                skip.update(id(c) for c in children if isinstance(c, B.TableBox))
            if own:
                out.setdefault(el, []).append((page_no, box))
    return out


def text_extent(box):
    """The vertical extent of an inline box's own text, or None."""
    top = bottom = None
    for c in getattr(box, "children", []) or []:
        if isinstance(c, B.TextBox):
            t, b = c.position_y, c.position_y + c.height
            top = t if top is None else min(top, t)
            bottom = b if bottom is None else max(bottom, b)
    return (top, bottom) if top is not None else None


def border_rect(box, page_no, page_height):
    x, y = box.border_box_x(), box.border_box_y()
    w, h = box.border_width(), box.border_height()
    if isinstance(box, B.InlineBox):
        ext = text_extent(box)
        if ext is not None:
            pt = num(box.padding_top) + num(box.border_top_width)
            pb = num(box.padding_bottom) + num(box.border_bottom_width)
            y, h = ext[0] - pt, ext[1] - ext[0] + pt + pb
    return {"x": num(x), "y": num(y) + page_no * page_height, "w": num(w), "h": num(h)}


_parents = {}


def flex_or_grid_item(el):
    parent = _parents.get(el)
    if parent is None:
        return False
    ps = _captured["style_for"](parent)
    return ps is not None and tuple(ps["display"])[-1] in ("flex", "grid")


def style_of(el, style, frags):
    box = frags[0][1] if frags else None
    s = {}
    s["display"] = display_of(style["display"])
    pos = style["position"]
    s["position"] = pos if isinstance(pos, str) else "static"
    s["box-sizing"] = style["box_sizing"]
    s["direction"] = style["direction"]
    s["writing-mode"] = style["writing_mode"] if "writing_mode" in style else "horizontal-tb"
    s["float"] = style["float"]
    s["clear"] = style["clear"]
    inline = box is not None and isinstance(box, B.InlineBox)
    if box is not None and not inline:
        s["width"] = px(num(box.width))
        s["height"] = px(num(box.height))
    else:
        s["width"] = computed_length(style["width"])
        s["height"] = computed_length(style["height"])
    # min-width/min-height: auto resolves to 0px except on a flex or grid item.
    item = flex_or_grid_item(el)
    s["min-width"] = computed_length(style["min_width"], auto="auto" if item else "0px")
    s["max-width"] = computed_length(style["max_width"])
    s["min-height"] = computed_length(style["min_height"], auto="auto" if item else "0px")
    s["max-height"] = computed_length(style["max_height"])
    for side in ("top", "right", "bottom", "left"):
        used = getattr(box, f"margin_{side}", None) if box is not None and not inline else None
        s[f"margin-{side}"] = px(used) if isinstance(used, (int, float)) else computed_length(style[f"margin_{side}"], auto="0px")
    for side in ("top", "right", "bottom", "left"):
        used = getattr(box, f"padding_{side}", None) if box is not None and not inline else None
        s[f"padding-{side}"] = px(used) if isinstance(used, (int, float)) else computed_length(style[f"padding_{side}"])
    for side in ("top", "right", "bottom", "left"):
        s[f"border-{side}-width"] = px(style[f"border_{side}_width"])
    ov = style["overflow"]
    s["overflow-x"] = s["overflow-y"] = ov
    return s


def dump(html):
    width, height = viewport()
    doc = HTML(string=html).render(stylesheets=[CSS(string=user_css(width, height))])
    style_for = _captured["style_for"]
    root = doc._html.etree_element if hasattr(doc, "_html") else None
    if root is None:
        raise SystemExit("weasyprint adapter: no document tree")
    page_boxes = [p._page_box for p in doc.pages]
    frags = principal_boxes(page_boxes, style_for)
    nodes, index = [], {}
    overflowed = len(doc.pages) > 1

    def visit(el, parent, depth):
        i = len(nodes)
        index[el] = i
        fs = frags.get(el, [])
        rects = [border_rect(b, p, height) for p, b in fs]
        rects = [r for r in rects if r["w"] > 0 or r["h"] > 0] or rects[:1] if rects else []
        if rects:
            x0 = min(r["x"] for r in rects)
            y0 = min(r["y"] for r in rects)
            x1 = max(r["x"] + r["w"] for r in rects)
            y1 = max(r["y"] + r["h"] for r in rects)
            bounding = {"x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0}
        else:
            bounding = {"x": 0.0, "y": 0.0, "w": 0.0, "h": 0.0}
        style = style_for(el)
        node = {"index": i, "parent": parent, "tag": tag_of(el), "depth": depth,
                "bounding": bounding, "rects": rects,
                "style": style_of(el, style, fs) if style is not None else {"display": "none"}}
        nodes.append(node)
        for child in el:
            if isinstance(child.tag, str):
                _parents[child] = el
                visit(child, i, depth + 1)

    visit(root, -1, 0)
    for n in nodes:
        b = n["bounding"]
        if b["x"] + b["w"] > width + 0.5 or b["y"] + b["h"] > height + 0.5:
            overflowed = True
    return {"engine": "weasyprint", "engine_version": weasyprint.__version__,
            "viewport": {"width": width, "height": height},
            "overflowed": overflowed, "nodes": nodes}


def dump_case(html):
    """One case's dump, with the per-document state of the last one cleared."""
    _captured.clear()
    _parents.clear()
    return dump(html)


def reply_to(line):
    """The reply line to one request line: its dump, or its error."""
    rid = None
    try:
        req = json.loads(line)
        rid = req["id"]
        reply = {"id": rid, "dump": dump_case(req["html"])}
    except Exception as e:  # noqa: BLE001 - the case's error, never the server's end
        reply = {"id": rid, "error": f"{type(e).__name__}: {e}"}
    return json.dumps(reply, separators=(",", ":")) + "\n"


def serve(workers=1):
    """--server: one request a line on stdin, {"id","html"}; one reply a line on
    stdout, {"id","dump"} or {"id","error"}, in any order (docs/candidate.md).
    Python and WeasyPrint start once; a case's exception is that case's error reply.
    With more than one worker, cases are laid out in that many forked processes
    at once (WeasyPrint holds one core a case). A worker that dies ends the whole
    server: the oracle's triage then runs each case that was in flight again,
    alone, so only the case that kills a worker is charged with it."""
    out = sys.stdout
    lines = (line for line in sys.stdin.buffer if line.strip())
    if workers <= 1:
        for line in lines:
            out.write(reply_to(line))
            out.flush()
        return
    import concurrent.futures
    import multiprocessing
    import threading
    lock = threading.Lock()

    def write(fut):
        try:
            text = fut.result()
        except concurrent.futures.process.BrokenProcessPool:
            os._exit(70)  # a worker died: end, so that the case that did it is found alone
        with lock:
            out.write(text)
            out.flush()

    ctx = multiprocessing.get_context("fork")  # the workers inherit the loaded WeasyPrint
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        for line in lines:
            pool.submit(reply_to, line).add_done_callback(write)


def main():
    parser = argparse.ArgumentParser(description="WeasyPrint as a candidate engine of the layout oracle")
    parser.add_argument("--server", action="store_true",
                        help="stay up and answer one {\"id\",\"html\"} request a line (docs/candidate.md)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="with --server, lay out N cases at once in forked workers (default 1)")
    args = parser.parse_args()
    if args.workers != 1 and not args.server:
        parser.error("--workers needs --server")
    if args.server:
        serve(args.workers)
        return
    html = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    json.dump(dump(html), sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

// A case page: hovering a box (or a row of the items table) shows its node's tag, index, each engine's bounding
// box and the items that were not a unanimous pass, and outlines the same node in
// every panel whose nodes are the voted ones.
(function () {
  "use strict";
  var el = document.getElementById("nodes"), details = document.getElementById("details");
  if (!el || !details) return;
  var nodes = {};
  JSON.parse(el.textContent || "[]").forEach(function (n) { nodes[n.node] = n; });

  function td(tr, text, tag) {
    var c = document.createElement(tag || "td");
    c.textContent = text;
    tr.appendChild(c);
  }
  function show(i) {
    var n = nodes[i];
    details.textContent = "";
    if (!n) { details.textContent = "node " + i + " (not part of the vote in this panel)"; return; }
    var h = document.createElement("p");
    h.textContent = "node " + n.node + " <" + n.tag.toLowerCase() + ">: " + n.status +
      (n.outvoted ? " (outvoted: " + n.outvoted.join(", ") + ")" : "");
    details.appendChild(h);
    var t = document.createElement("table"), tr = document.createElement("tr");
    ["engine", "x", "y", "w", "h"].forEach(function (s) { td(tr, s, "th"); });
    t.appendChild(tr);
    Object.keys(n.bounding).sort().forEach(function (e) {
      var b = n.bounding[e], r = document.createElement("tr");
      [e, b.x, b.y, b.w, b.h].forEach(function (v) { td(r, v); });
      t.appendChild(r);
    });
    details.appendChild(t);
    if (n.items && n.items.length) {
      var it = document.createElement("table"), hr = document.createElement("tr");
      ["property", "vote", "outlier", "values", "want", "delta", ""].forEach(function (s) { td(hr, s, "th"); });
      it.appendChild(hr);
      n.items.forEach(function (x) {
        var r = document.createElement("tr");
        var vals = Object.keys(x.values).sort().map(function (e) { return e + " " + x.values[e]; }).join(", ");
        [x.property, x.vote, x.outlier || "", vals, x.want || "", x.delta === undefined ? "" : x.delta,
          x.failed ? "candidate fails" : ""].forEach(function (v) { td(r, v); });
        it.appendChild(r);
      });
      details.appendChild(it);
    }
  }
  // A click on a panel's stage zooms it to the viewport's own size, and back.
  document.addEventListener("click", function (ev) {
    var s = ev.target.closest && ev.target.closest(".stage");
    if (s && s.parentElement) s.parentElement.classList.toggle("zoomed");
  });
  var current = null;
  function mark(i, on) {
    Array.prototype.forEach.call(document.querySelectorAll('rect.box[data-node="' + i + '"], #items tr[data-node="' + i + '"]'), function (r) {
      r.classList.toggle("hover", on);
    });
  }
  document.addEventListener("mouseover", function (ev) {
    // A box, or a row of the items table: both name their node.
    var r = ev.target.closest && ev.target.closest("rect.box, #items tr[data-node]");
    if (!r) return;
    var i = r.getAttribute("data-node");
    if (current !== null) mark(current, false);
    current = i;
    mark(i, true);
    show(Number(i));
  });
})();

// The index: filters, sorts and pages window.REPORT.cases (cases.js) in the page, so
// that only one page of rows is ever in the DOM, however many cases there are. The
// state lives in the URL's hash, so going back from a case page returns to the same
// page of the same view.
(function () {
  "use strict";
  var R = window.REPORT || { cases: [], engines: [], verdicts: {} };
  var all = R.cases;
  var st = { v: "", e: "", r: "outvoted", q: "", s: "n", d: 1, p: 0, per: 100 };
  var $ = function (id) { return document.getElementById(id); };

  function readHash() {
    var h = location.hash.replace(/^#/, "");
    h.split("&").forEach(function (kv) {
      var i = kv.indexOf("=");
      if (i < 0) return;
      var k = kv.slice(0, i), v = decodeURIComponent(kv.slice(i + 1));
      if (k in st) st[k] = (typeof st[k] === "number") ? (Number(v) || 0) : v;
    });
    if ([50, 100, 500].indexOf(st.per) < 0) st.per = 100;
    if (st.d !== -1) st.d = 1;
  }
  function writeHash() {
    var parts = [];
    for (var k in st) parts.push(k + "=" + encodeURIComponent(st[k]));
    history.replaceState(null, "", "#" + parts.join("&"));
  }
  function sum(m) { var n = 0; for (var k in (m || {})) n += m[k]; return n; }
  function votes(c, k) { return (c.votes && c.votes[k]) || 0; }
  function outvoted(c) { return st.e ? ((c.outvoted || {})[st.e] || 0) : sum(c.outvoted); }
  var keyOf = {
    n: function (c) { return c.n; },
    id: function (c) { return c.id; },
    verdict: function (c) { return c.verdict; },
    majority: function (c) { return votes(c, "majority"); },
    split: function (c) { return votes(c, "split") + votes(c, "disagree"); },
    unstable: function (c) { return votes(c, "unstable"); },
    outvoted: outvoted,
    failed: function (c) { return c.failed || 0; },
    delta: function (c) { return c.max_delta || 0; },
    errors: function (c) { return (c.errors || []).length; }
  };
  function matches(c) {
    if (st.v && c.verdict !== st.v) return false;
    if (st.q && c.id.indexOf(st.q) < 0) return false;
    if (st.e) {
      var o = (c.outvoted || {})[st.e] > 0, er = (c.errors || []).indexOf(st.e) >= 0;
      if (st.r === "outvoted" && !o) return false;
      if (st.r === "error" && !er) return false;
      if (st.r === "either" && !o && !er) return false;
      if (st.r === "apart" && (c.not_comparable || []).indexOf(st.e) < 0) return false;
    }
    return true;
  }
  function view() {
    var rows = all.filter(matches), key = keyOf[st.s] || keyOf.n;
    rows.sort(function (a, b) {
      var x = key(a), y = key(b);
      if (x < y) return -st.d;
      if (x > y) return st.d;
      return a.n - b.n;
    });
    return rows;
  }
  function cell(tr, text, cls) {
    var td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    tr.appendChild(td);
    return td;
  }
  function render() {
    var rows = view(), pages = Math.max(1, Math.ceil(rows.length / st.per));
    if (st.p >= pages) st.p = pages - 1;
    if (st.p < 0) st.p = 0;
    var body = document.createElement("tbody");
    rows.slice(st.p * st.per, (st.p + 1) * st.per).forEach(function (c) {
      var tr = document.createElement("tr");
      tr.dataset.verdict = c.verdict;
      tr.dataset.n = c.n;
      cell(tr, c.n);
      var a = document.createElement("a");
      a.href = c.page;
      a.textContent = c.id;
      var td = cell(tr, "", "id");
      td.appendChild(a);
      cell(tr, c.verdict, "verdict v-" + c.verdict);
      cell(tr, c.failed || "", "failed");
      cell(tr, c.max_delta ? c.max_delta.toFixed(2) : "", "delta");
      cell(tr, votes(c, "majority") || "");
      cell(tr, (votes(c, "split") + votes(c, "disagree")) || "");
      cell(tr, votes(c, "unstable") || "", "unstable");
      var ov = [];
      for (var e in (c.outvoted || {})) ov.push(e + " " + c.outvoted[e]);
      cell(tr, ov.sort().join(", "), "outvoted");
      cell(tr, (c.errors || []).join(", "), "errors");
      var nc = (c.not_comparable || []).length ? "not comparable: " + c.not_comparable.join(", ") : "";
      cell(tr, [c.reason, nc].filter(Boolean).join("; "), "reason");
      body.appendChild(tr);
    });
    var t = $("cases");
    t.replaceChild(body, t.tBodies[0]);
    $("page").textContent = "page " + (st.p + 1) + " of " + pages;
    $("prev").disabled = st.p === 0;
    $("next").disabled = st.p >= pages - 1;
    $("shown").textContent = rows.length + " of " + all.length + " cases";
    Array.prototype.forEach.call(document.querySelectorAll("th[data-sort]"), function (th) {
      th.classList.toggle("sorted", th.dataset.sort === st.s);
      th.classList.toggle("desc", th.dataset.sort === st.s && st.d < 0);
    });
    writeHash();
  }
  function option(sel, value, label) {
    var o = document.createElement("option");
    o.value = value;
    o.textContent = label;
    sel.appendChild(o);
  }
  function init() {
    readHash();
    var vs = Object.keys(R.verdicts).sort();
    vs.forEach(function (v) { option($("f-verdict"), v, v + " (" + R.verdicts[v] + ")"); });
    R.engines.forEach(function (e) { option($("f-engine"), e, e); });
    // Trace cases: engines left out of a vote for another emulation set.
    if (all.some(function (c) { return c.not_comparable; })) option($("f-role"), "apart", "not comparable");
    $("summary").textContent = vs.map(function (v) { return R.verdicts[v] + " " + v; }).join(", ");
    $("f-verdict").value = st.v; $("f-engine").value = st.e; $("f-role").value = st.r;
    $("f-id").value = st.q; $("per").value = String(st.per);
    $("f-verdict").onchange = function () { st.v = this.value; st.p = 0; render(); };
    $("f-engine").onchange = function () { st.e = this.value; st.p = 0; render(); };
    $("f-role").onchange = function () { st.r = this.value; st.p = 0; render(); };
    $("f-id").oninput = function () { st.q = this.value; st.p = 0; render(); };
    $("per").onchange = function () { st.per = Number(this.value); st.p = 0; render(); };
    $("prev").onclick = function () { st.p--; render(); };
    $("next").onclick = function () { st.p++; render(); };
    Array.prototype.forEach.call(document.querySelectorAll("th[data-sort]"), function (th) {
      th.onclick = function () {
        if (st.s === th.dataset.sort) st.d = -st.d; else { st.s = th.dataset.sort; st.d = 1; }
        st.p = 0;
        render();
      };
    });
    render();
  }
  init();
})();

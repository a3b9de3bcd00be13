(function (styleProperties, maxNodes) {
  // Walks every element in document order, as the page is now. `this` is the case
  // program's captured built-ins (oracle/case.js): nothing here reads a property the
  // case could have replaced, and results are built without Array.prototype.
  //
  // maxNodes (--dump-max-nodes) bounds what the walk hands back, so that no page can
  // make the answer (and the oracle's memory) grow without bound: past maxNodes
  // elements, 4 boxes per allowed node, or 512 bytes of style text per allowed node,
  // the walk stops and returns { overLimit: what } instead of a dump.
  var B = this;
  if (!(maxNodes > 0)) maxNodes = 1 / 0;
  var nodes = [], boxes = 0, styleBytes = 0, over = { what: '' };
  function visit(el, parent, depth) {
    var index = nodes.length;
    if (index >= maxNodes) { over.what = 'nodes'; throw over; }
    var cs = B.getComputedStyle(el);
    var style = B.obj();
    for (var i = 0; i < styleProperties.length; i++) {
      var v = B.getPropertyValue(cs, styleProperties[i]);
      styleBytes += v.length;
      style[styleProperties[i]] = v;
    }
    if (styleBytes > 512 * maxNodes) { over.what = 'style text'; throw over; }
    var list = B.getClientRects(el);
    boxes += list.length;
    if (boxes > 4 * maxNodes) { over.what = 'boxes'; throw over; }
    var rects = [];
    for (var j = 0; j < list.length; j++) B.push(rects, B.rect(list[j]));
    var bounding = rects.length ? B.rect(B.getBoundingClientRect(el)) : { x: 0, y: 0, w: 0, h: 0 };
    B.push(nodes, {
      index: index, parent: parent, tag: B.upper(B.tagName(el)), depth: depth,
      bounding: bounding, rects: rects, style: style
    });
    for (var c = B.firstElementChild(el); c; c = B.nextElementSibling(c)) visit(c, index, depth + 1);
  }
  var root = B.documentElement(B.doc);
  try {
    if (root) visit(root, -1, 0);
  } catch (e) {
    if (e === over) return { overLimit: over.what };
    throw e;
  }
  var se = B.scrollingElement(B.doc) || root;
  var overflowed = !!se && (B.scrollWidth(se) > B.clientWidth(se) || B.scrollHeight(se) > B.clientHeight(se));
  return {
    viewport: { width: B.innerWidth(), height: B.innerHeight() },
    overflowed: overflowed,
    nodes: nodes
  };
})

(function (styleProperties, maxNodes, stylePerNode, tagPerNode) {
  // Walks every element in document order, as the page is now. `this` is the case
  // program's captured built-ins (oracle/case.js): nothing here reads a property the
  // case could have replaced, and results are built without Array.prototype.
  //
  // maxNodes (--dump-max-nodes) bounds what the walk hands back, so that no page can
  // make the answer (and the oracle's memory) grow without bound: past maxNodes
  // elements, 4 boxes per allowed node, stylePerNode bytes of style text or tagPerNode
  // bytes of tag names per allowed node (512 and 64; counted as the answer line
  // carries them, B.jsonBytes), the walk stops and returns { overLimit: what }
  // instead of a dump.
  var B = this;
  if (!(maxNodes > 0)) maxNodes = 1 / 0;
  var styleMax = (stylePerNode > 0 ? stylePerNode : 512) * maxNodes;
  var tagMax = (tagPerNode > 0 ? tagPerNode : 64) * maxNodes;
  var nodes = [], boxes = 0, styleBytes = 0, tagBytes = 0, over = { what: '' };
  function visit(el, parent, depth) {
    var index = nodes.length;
    if (index >= maxNodes) { over.what = 'nodes'; throw over; }
    var tag = B.upper(B.tagName(el));
    tagBytes += B.jsonBytes(tag, tagMax - tagBytes);
    if (tagBytes > tagMax) { over.what = 'tag names'; throw over; }
    var cs = B.getComputedStyle(el);
    var style = B.obj(), joined = '';
    for (var i = 0; i < styleProperties.length; i++) {
      var v = B.getPropertyValue(cs, styleProperties[i]);
      joined += v;
      style[styleProperties[i]] = v;
    }
    // One count for the node's values (escapes add up; each value's quotes are 2).
    styleBytes += B.jsonBytes(joined, styleMax - styleBytes) + 2 * (styleProperties.length - 1);
    if (styleBytes > styleMax) { over.what = 'style text'; throw over; }
    var list = B.getClientRects(el);
    boxes += list.length;
    if (boxes > 4 * maxNodes) { over.what = 'boxes'; throw over; }
    var rects = [];
    for (var j = 0; j < list.length; j++) B.push(rects, B.rect(list[j]));
    var bounding = rects.length ? B.rect(B.getBoundingClientRect(el)) : { x: 0, y: 0, w: 0, h: 0 };
    B.push(nodes, {
      index: index, parent: parent, tag: tag, depth: depth,
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

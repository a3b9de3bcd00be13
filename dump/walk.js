(function (styleProperties) {
  // Walks every element in document order, as the page is now. `this` is the case
  // program's captured built-ins (oracle/case.js): nothing here reads a property the
  // case could have replaced, and results are built without Array.prototype.
  var B = this;
  var nodes = [];
  function visit(el, parent, depth) {
    var index = nodes.length;
    var cs = B.getComputedStyle(el);
    var style = B.obj();
    for (var i = 0; i < styleProperties.length; i++) {
      style[styleProperties[i]] = B.getPropertyValue(cs, styleProperties[i]);
    }
    var list = B.getClientRects(el);
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
  if (root) visit(root, -1, 0);
  var se = B.scrollingElement(B.doc) || root;
  var overflowed = !!se && (B.scrollWidth(se) > B.clientWidth(se) || B.scrollHeight(se) > B.clientHeight(se));
  return {
    viewport: { width: B.innerWidth(), height: B.innerHeight() },
    overflowed: overflowed,
    nodes: nodes
  };
})

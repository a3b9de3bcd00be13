(function (styleProperties) {
  // Walks every element in document order, as the page is now.
  function rect(r) {
    return { x: r.x, y: r.y, w: r.width, h: r.height };
  }
  var nodes = [];
  function visit(el, parent, depth) {
    var index = nodes.length;
    var cs = getComputedStyle(el);
    var style = {};
    for (var i = 0; i < styleProperties.length; i++) {
      style[styleProperties[i]] = cs.getPropertyValue(styleProperties[i]);
    }
    var list = el.getClientRects();
    var rects = [];
    for (var j = 0; j < list.length; j++) rects.push(rect(list[j]));
    var bounding = rects.length ? rect(el.getBoundingClientRect()) : { x: 0, y: 0, w: 0, h: 0 };
    nodes.push({
      index: index, parent: parent, tag: el.tagName.toUpperCase(), depth: depth,
      bounding: bounding, rects: rects, style: style
    });
    for (var c = el.firstElementChild; c; c = c.nextElementSibling) visit(c, index, depth + 1);
  }
  var root = document.documentElement;
  if (root) visit(root, -1, 0);
  var se = document.scrollingElement || root;
  var overflowed = !!se && (se.scrollWidth > se.clientWidth || se.scrollHeight > se.clientHeight);
  return {
    viewport: { width: window.innerWidth, height: window.innerHeight },
    overflowed: overflowed,
    nodes: nodes
  };
})

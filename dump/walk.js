(function (script, styleProperties) {
  // Runs the case's script, then walks every element in document order.
  // Returns {dump} or {scriptError}; a throwing script is the case's error, not ours.
  if (script) {
    try {
      (0, eval)(script); // indirect eval: global scope, like a classic <script>
    } catch (e) {
      var name = e && e.name ? e.name : typeof e;
      var msg = e && e.message !== undefined ? e.message : String(e);
      return { scriptError: name + ": " + msg };
    }
  }
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
    dump: {
      viewport: { width: window.innerWidth, height: window.innerHeight },
      overflowed: overflowed,
      nodes: nodes
    }
  };
})

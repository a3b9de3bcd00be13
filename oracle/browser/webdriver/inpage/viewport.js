const viewport = (() => { const g = (k) => { const d = pristine.gopd(window, k); return d && d.get ? d.get : function () { return window[k]; }; };
  const w = g('innerWidth'), h = g('innerHeight'), call = Reflect.apply;
  return () => [call(w, window, []), call(h, window, [])]; })();
const viewportWant = arguments[2], viewportBefore = viewport();
const viewportChanged = () => { if (!viewportWant) return ''; const a = viewportBefore, b = viewport();
  return a[0] === viewportWant[0] && a[1] === viewportWant[1] && b[0] === viewportWant[0] && b[1] === viewportWant[1] ? '' :
    '@@VIEWPORT_CHANGED@@ (' + a[0] + 'x' + a[1] + ' when it began, ' + b[0] + 'x' + b[1] + ' when it ended, not ' + viewportWant[0] + 'x' + viewportWant[1] + '); answer withheld'; };

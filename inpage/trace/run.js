function (script, opts) {
  if (typeof window.__traceRun !== 'function') {
    throw new Error('trace: no recorder in this page (' + location.href + ')');
  }
  return window.__traceRun(script, opts);
}
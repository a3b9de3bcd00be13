(function (c) {
  // A kept window's Load: the case program (case.js) its first inert case left on the
  // window (PROGRAM there), called with c, so that the engine neither receives nor
  // compiles the program's text again. No script of a case can run in a kept window
  // (the window's policy) to replace what this reads. A window without it (a case
  // navigated it away, which Keep refuses to keep anyway) answers a failed inert
  // check: the case is measured again on a new document.
  var d = Object.getOwnPropertyDescriptor(window, '__layoutOracleCase');
  if (!d || typeof d.value !== 'function') {
    return Promise.resolve('{"inert":"the kept window holds no case program"}');
  }
  return d.value(c);
})

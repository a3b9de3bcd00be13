(function (script) {
  var B = this, walk = (@@FN@@), args = B.args(arguments, 1);
  var err = B.runScript(script);
  if (err !== null) return { scriptError: err };
  if (!script) return { result: B.apply(walk, B, args) };
  return B.later(function (resolve, reject) {
    B.settle(function () {
      var r;
      try { r = B.apply(walk, B, args); } catch (e) { reject(e); return; }
      resolve({ result: r });
    }, reject);
  });
})
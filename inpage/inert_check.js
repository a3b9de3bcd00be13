(function inertChecked(allowed) {
  // An inert case's walk (the function below, with the arguments after allowed),
  // then the case program's inert check of what the engine built against allowed,
  // the keys of the classifier's tree (oracle/inert's Judge): {result, inert: '' or
  // why not, unkept: '' or why the window may not hold the next inert case}. An
  // inert case has no script. The text must start as case.js's INERT_CHECK says:
  // that arms the check before the case is written.
  var B = this, walk = (@@FN@@);
  var r = B.apply(walk, B, B.args(arguments, 1));
  return { result: r, inert: B.inertCheck(allowed), unkept: B.unkeepable() };
})

(function (probes) {
  // Reads each probe's content attribute and IDL property.
  // Returns {observations} or {probeError}. `this` is the case program's captured
  // built-ins (oracle/case.js): the lookup and the attribute read cannot be replaced
  // by the case; the IDL read (el[idl]) is the observation itself.
  var B = this;
  function canonical(v) {
    switch (typeof v) {
      case "undefined":
        return { $undefined: true };
      case "number":
        if (v !== v) return { $num: "NaN" };
        if (v === Infinity) return { $num: "Infinity" };
        if (v === -Infinity) return { $num: "-Infinity" };
        if (v === 0 && 1 / v < 0) return { $num: "-0" };
        return v;
      case "boolean":
      case "string":
        return v;
      case "bigint":
        return { $bigint: B.String(v) };
      case "function":
        return { $function: true };
      case "object":
        if (v === null) return null;
        // Not a reflected scalar (classList, style, a form's elements): name its
        // interface and its string form, rather than walking it.
        return { $object: B.typeTag(v), string: B.String(v) };
    }
    return { $unknown: typeof v };
  }
  var observations = [];
  for (var i = 0; i < probes.length; i++) {
    var p = probes[i];
    var el = B.getElementById(B.slice(p.selector, 1));
    if (!el) return { probeError: "selector " + B.str(p.selector) + " matched no element" };
    var idl = p.idl || p.attr;
    var value;
    try {
      value = canonical(idl in el ? el[idl] : undefined);
    } catch (e) {
      value = { $error: true, name: e && e.name ? B.String(e.name) : typeof e };
    }
    B.push(observations, {
      selector: p.selector, attr: p.attr, attr_value: B.getAttribute(el, p.attr),
      idl: idl, idl_value: value
    });
  }
  return { observations: observations };
})

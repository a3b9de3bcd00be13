(function (probes) {
  // Reads each probe's content attribute and IDL property.
  // Returns {observations} or {probeError}.
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
        return { $bigint: String(v) };
      case "function":
        return { $function: true };
      case "object":
        if (v === null) return null;
        // Not a reflected scalar (classList, style, a form's elements): name its
        // interface and its string form, rather than walking it.
        return { $object: Object.prototype.toString.call(v).slice(8, -1), string: String(v) };
    }
    return { $unknown: typeof v };
  }
  var observations = [];
  for (var i = 0; i < probes.length; i++) {
    var p = probes[i];
    var el = document.getElementById(p.selector.slice(1));
    if (!el) return { probeError: "selector " + JSON.stringify(p.selector) + " matched no element" };
    var idl = p.idl || p.attr;
    var value;
    try {
      value = canonical(idl in el ? el[idl] : undefined);
    } catch (e) {
      value = { $error: true, name: e && e.name ? e.name : typeof e };
    }
    observations.push({
      selector: p.selector, attr: p.attr, attr_value: el.getAttribute(p.attr),
      idl: idl, idl_value: value
    });
  }
  return { observations: observations };
})

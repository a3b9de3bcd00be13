(function (probes, maxBytes) {
  // Reads each probe's content attribute and IDL property.
  // Returns {observations}, {probeError}, or {overLimit} once the observations would
  // take more than maxBytes in the answer line (counted as it carries them,
  // B.jsonBytes; reflect.MaxStateBytes), so no page makes the answer grow without
  // bound. `this` is the case program's captured
  // built-ins (oracle/case.js): the lookup and the attribute read cannot be replaced
  // by the case; the IDL read (el[idl]) is the observation itself.
  var B = this;
  // pair is a canonical object: null-prototype, so that size below walks its own keys.
  function pair(k1, v1, k2, v2) {
    var o = B.obj();
    o[k1] = v1;
    if (k2) o[k2] = v2;
    return o;
  }
  function canonical(v) {
    switch (typeof v) {
      case "undefined":
        return pair("$undefined", true);
      case "number":
        if (v !== v) return pair("$num", "NaN");
        if (v === Infinity) return pair("$num", "Infinity");
        if (v === -Infinity) return pair("$num", "-Infinity");
        if (v === 0 && 1 / v < 0) return pair("$num", "-0");
        return v;
      case "boolean":
      case "string":
        return v;
      case "bigint":
        return pair("$bigint", B.String(v));
      case "function":
        return pair("$function", true);
      case "object":
        if (v === null) return null;
        // Not a reflected scalar (classList, style, a form's elements): name its
        // interface and its string form, rather than walking it.
        return pair("$object", B.typeTag(v), "string", B.String(v));
    }
    return pair("$unknown", typeof v);
  }
  if (!(maxBytes > 0)) maxBytes = 1 / 0;
  var bytes = 2; // the brackets of the observations array
  // size is v's JSON size in the line: a canonical value holds strings, numbers (at
  // most 25 bytes), booleans, null and flat objects of those.
  function size(v) {
    if (v === null) return 4;
    switch (typeof v) {
      case "string": return B.jsonBytes(v, maxBytes);
      case "number": return 25;
      case "boolean": return 5;
    }
    var n = 1;
    for (var k in v) n += B.jsonBytes(k, maxBytes) + 2 + size(v[k]);
    return n;
  }
  var observations = [];
  for (var i = 0; i < probes.length; i++) {
    var p = probes[i];
    var el = B.getElementById(B.slice(p.selector, 1));
    if (!el) return { probeError: B.fitError("selector " + B.str(p.selector) + " matched no element") };
    var idl = p.idl || p.attr;
    var value;
    try {
      value = canonical(idl in el ? el[idl] : undefined);
    } catch (e) {
      value = pair("$error", true, "name", e && e.name ? B.String(e.name) : typeof e);
    }
    var attrValue = B.getAttribute(el, p.attr);
    // {"selector":,"attr":,"attr_value":,"idl":,"idl_value":}, and a comma
    bytes += 56 + size(p.selector) + size(p.attr) + size(attrValue) + size(idl) + size(value);
    if (bytes > maxBytes) return { overLimit: "bytes" };
    B.push(observations, {
      selector: p.selector, attr: p.attr, attr_value: attrValue,
      idl: idl, idl_value: value
    });
  }
  return { observations: observations };
})

// The trace recorder (dump-format.md, "Trace protocol" -> "The recorder").
//
// Installed before any of a trace page's own script: by context.addInitScript on
// Playwright, or inlined as the first script element of the served document on
// WebDriver.
// It defines window.trace and window.__traceResult, and nothing at all on a page whose
// path is not under /trace/ (the init script runs in every page of the context,
// including the about:blank geometry page). Installing it twice is a no-op.
//
// Every built-in it uses is captured here, at install time, so a case script that
// replaces JSON.stringify, Array.prototype.push, Promise.prototype.then, setTimeout
// and the like cannot break it. Canonical output is built from null-prototype objects
// and arrays, so a later Object.prototype.toJSON or an indexed setter on a prototype
// cannot reach it either. This file must never contain a closing script tag or an HTML
// comment opener (nor a script start tag): it is inlined into HTML verbatim.
(function () {
  'use strict';
  var G = (typeof globalThis === 'object' && globalThis) || window;
  if (typeof G.location !== 'object' || G.location === null) return;
  if (String(G.location.pathname).indexOf('/trace/') !== 0) return;
  var KEY = '__traceResult';
  if (Object.prototype.hasOwnProperty.call(G, KEY)) return; // installed already

  // ---- built-ins, captured once ----
  var O = Object, A = Array;
  var defineProperty = O.defineProperty;
  var getOwnPropertyDescriptor = O.getOwnPropertyDescriptor;
  var getPrototypeOf = O.getPrototypeOf;
  var setPrototypeOf = O.setPrototypeOf;
  var objectCreate = O.create;
  var objectKeys = O.keys;
  var getOwnPropertyNames = O.getOwnPropertyNames;
  var objectFreeze = O.freeze;
  var ObjectProto = O.prototype;
  var isArray = A.isArray;
  var objectIs = O.is;
  var StringCtor = String;
  var fromCharCode = String.fromCharCode;
  var call = Function.prototype.call;
  var bind = Function.prototype.bind;
  // uncurry(f)(thisArg, ...args) == f.call(thisArg, ...args), immune to later
  // replacement of Function.prototype.call on the page.
  var uncurry = function (f) { return bind.call(call, f); };
  var apply = uncurry(Function.prototype.apply);
  var propertyIsEnumerable = uncurry(ObjectProto.propertyIsEnumerable);
  var toStringTag = uncurry(ObjectProto.toString);
  var stringSlice = uncurry(String.prototype.slice);
  var PromiseCtor = Promise;
  var promiseThen = uncurry(Promise.prototype.then);
  var promiseResolve = bind.call(Promise.resolve, Promise);
  var setTimeoutFn = G.setTimeout;
  var btoaFn = G.btoa;
  var JSONObj = G.JSON, JSONStringify = JSONObj.stringify, JSONParse = JSONObj.parse;
  var restorable = [];
  (function (list) {
    for (var i = 0; i < list.length; i += 2) {
      var o = list[i], names = list[i + 1];
      for (var j = 0; j < names.length; j++) restorable[restorable.length] = [o, names[j], o[names[j]]];
    }
  })([JSONObj, ['stringify', 'parse'], Function.prototype, ['apply', 'call', 'bind', 'toString'],
    Array.prototype, ['push', 'pop', 'shift', 'unshift', 'slice', 'splice', 'map', 'forEach', 'indexOf', 'join', 'concat'],
    Promise.prototype, ['then', 'catch', 'finally'], Promise, ['resolve', 'reject', 'all'],
    Object, ['keys', 'defineProperty', 'getOwnPropertyNames', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'create', 'assign'],
    Object.prototype, ['hasOwnProperty', 'toString'], G, ['setTimeout', 'clearTimeout', 'Promise', 'Array', 'Object', 'Error']]);
  var Uint8ArrayCtor = Uint8Array;
  var ErrorProto = Error.prototype;
  var TypeErrorCtor = TypeError;
  var errorIsError = typeof Error.isError === 'function' ? Error.isError : null;

  var getter = function (proto, name) {
    if (!proto) return null;
    var d = getOwnPropertyDescriptor(proto, name);
    return d && typeof d.get === 'function' ? uncurry(d.get) : null;
  };
  var method = function (proto, name) {
    if (!proto) return null;
    var d = getOwnPropertyDescriptor(proto, name);
    return d && typeof d.value === 'function' ? uncurry(d.value) : null;
  };
  var TypedArrayProto = getPrototypeOf(Uint8Array.prototype);
  var typedArrayTag = getter(TypedArrayProto, Symbol.toStringTag); // brand check: undefined unless a typed array
  var typedArrayBuffer = getter(TypedArrayProto, 'buffer');
  var typedArrayOffset = getter(TypedArrayProto, 'byteOffset');
  var typedArrayByteLength = getter(TypedArrayProto, 'byteLength');
  var typedArrayLength = getter(TypedArrayProto, 'length');
  var dataViewBuffer = getter(DataView.prototype, 'buffer');
  var dataViewOffset = getter(DataView.prototype, 'byteOffset');
  var dataViewByteLength = getter(DataView.prototype, 'byteLength');
  var arrayBufferByteLength = getter(ArrayBuffer.prototype, 'byteLength');
  var sharedBufferByteLength = typeof SharedArrayBuffer === 'function'
    ? getter(SharedArrayBuffer.prototype, 'byteLength') : null;
  var ImageDataProto = typeof ImageData === 'function' ? ImageData.prototype : null;
  var imageDataWidth = getter(ImageDataProto, 'width');
  var imageDataHeight = getter(ImageDataProto, 'height');
  var imageDataData = getter(ImageDataProto, 'data');
  var AudioBufferProto = typeof AudioBuffer === 'function' ? AudioBuffer.prototype : null;
  var audioChannels = getter(AudioBufferProto, 'numberOfChannels');
  var audioLength = getter(AudioBufferProto, 'length');
  var audioRate = getter(AudioBufferProto, 'sampleRate');
  var audioChannelData = method(AudioBufferProto, 'getChannelData');
  var DOMExceptionProto = typeof DOMException === 'function' ? DOMException.prototype : null;
  var domExceptionName = getter(DOMExceptionProto, 'name');
  var addEventListener = method(typeof EventTarget === 'function' ? EventTarget.prototype : null, 'addEventListener');
  var eventType = getter(typeof Event === 'function' ? Event.prototype : null, 'type');
  var NodeProto = typeof Node === 'function' ? Node.prototype : null;
  var nodeName = getter(NodeProto, 'nodeName');
  var ElementProto = typeof Element === 'function' ? Element.prototype : null;
  var elementTagName = getter(ElementProto, 'tagName');
  var elementId = getter(ElementProto, 'id');
  var symbolDescription = getter(Symbol.prototype, 'description');
  var theWindow = G;
  var theDocument = G.document;
  var origin = StringCtor(G.location.origin);
  var secure = G.isSecureContext === true;

  // ---- canonicalization ----
  var MAX_DEPTH = 4;     // container levels walked; deeper ones are truncated
  var MAX_ELEMENTS = 64; // array elements, and object keys, walked per level
  var MAX_NODES = 4096;  // containers and leaves per recorded value, in walk order

  var obj = function () { return objectCreate(null); };
  var arr = function () { return setPrototypeOf([], null); };
  var append = function (a, v) { a[a.length] = v; };

  var tryCall = function (f, self) {
    if (!f) return { ok: false };
    try { return { ok: true, v: f(self) }; } catch (e) { return { ok: false }; }
  };

  var isError = function (v) {
    if (errorIsError) { try { if (errorIsError(v)) return true; } catch (e) { /* fall through */ } }
    if (tryCall(domExceptionName, v).ok) return true;
    var p = v;
    for (var i = 0; i < 64 && p !== null; i++) {
      p = getPrototypeOf(p);
      if (p === ErrorProto) return true;
    }
    return false;
  };

  var errorName = function (v) {
    var n;
    var dn = tryCall(domExceptionName, v);
    if (dn.ok) n = dn.v;
    else { try { n = v.name; } catch (e) { n = undefined; } }
    if (typeof n === 'string') return n;
    try { return StringCtor(n); } catch (e) { return ''; }
  };

  var base64 = function (buffer, offset, length) {
    if (length === 0) return ''; // also a detached buffer, which no view may wrap
    var bytes = new Uint8ArrayCtor(buffer, offset, length);
    var s = '';
    for (var i = 0; i < length; i += 8192) {
      var end = i + 8192 < length ? i + 8192 : length;
      var chunk = [];
      for (var j = i; j < end; j++) chunk[j - i] = bytes[j];
      s += apply(fromCharCode, null, chunk);
    }
    return btoaFn(s);
  };

  var bufferRecord = function (elementType, length, buffer, offset, byteLength) {
    var r = obj();
    r.$buffer = true;
    r.elementType = elementType;
    r.length = length;
    r.base64 = base64(buffer, offset, byteLength);
    return r;
  };

  // asBuffer returns the $buffer / $imageData / $audioBuffer reduction of v, or null.
  var asBuffer = function (v) {
    var tag = typedArrayTag ? typedArrayTag(v) : undefined;
    if (typeof tag === 'string') {
      return bufferRecord(tag, typedArrayLength(v), typedArrayBuffer(v), typedArrayOffset(v), typedArrayByteLength(v));
    }
    var dv = tryCall(dataViewByteLength, v);
    if (dv.ok) return bufferRecord('DataView', dv.v, dataViewBuffer(v), dataViewOffset(v), dv.v);
    var ab = tryCall(arrayBufferByteLength, v);
    if (ab.ok) return bufferRecord('ArrayBuffer', ab.v, v, 0, ab.v);
    var sab = tryCall(sharedBufferByteLength, v);
    if (sab.ok) return bufferRecord('SharedArrayBuffer', sab.v, v, 0, sab.v);
    var w = tryCall(imageDataWidth, v);
    if (w.ok) {
      var data = imageDataData(v);
      var r = bufferRecord('Uint8ClampedArray', typedArrayLength(data), typedArrayBuffer(data),
        typedArrayOffset(data), typedArrayByteLength(data));
      r.$imageData = true;
      r.width = w.v;
      r.height = imageDataHeight(v);
      return r;
    }
    var nc = tryCall(audioChannels, v);
    if (nc.ok) {
      var a = obj();
      a.$audioBuffer = true;
      a.numberOfChannels = nc.v;
      a.length = audioLength(v);
      a.sampleRate = audioRate(v);
      a.channels = arr();
      for (var c = 0; c < nc.v; c++) {
        var ch = audioChannelData(v, c);
        append(a.channels, bufferRecord('Float32Array', typedArrayLength(ch), typedArrayBuffer(ch),
          typedArrayOffset(ch), typedArrayByteLength(ch)));
      }
      return a;
    }
    return null;
  };

  var tagged = function (k, v) { var r = obj(); r[k] = v; return r; };

  var functionName = function (f) {
    var d;
    try { d = getOwnPropertyDescriptor(f, 'name'); } catch (e) { d = undefined; }
    return d && typeof d.value === 'string' ? d.value : '';
  };

  var className = function (v) {
    var t;
    try { t = toStringTag(v); } catch (e) { return 'Object'; }
    return stringSlice(t, 8, t.length - 1);
  };

  var typeName = function (v) {
    return v === null ? 'null' : typeof v;
  };

  // keysOf lists the keys the shape walk reads, in order: own enumerable string keys
  // (Object.keys order: insertion order, which script can observe), then, for an
  // object whose prototype is not Object.prototype or null (an IDL object such as a
  // URL, or a class instance), the enumerable accessors with a getter on the
  // prototypes up the chain (Object.prototype excluded), sorted by code unit. IDL
  // attributes are exactly such accessors; the order engines define them in on an
  // interface prototype is their own (URL's href is first in Gecko and WebKit, last
  // in Blink), so it is not kept. Class-syntax getters (not enumerable) and methods
  // (IDL operations, class methods: data properties) are skipped.
  var keysOf = function (v) {
    var keys = arr(), seen = obj(), inherited = arr();
    var own = objectKeys(v);
    for (var i = 0; i < own.length; i++) { append(keys, own[i]); seen[own[i]] = true; }
    var p = getPrototypeOf(v);
    for (var depth = 0; p !== null && p !== ObjectProto && depth < 64; depth++) {
      var names = getOwnPropertyNames(p);
      for (var j = 0; j < names.length; j++) {
        var k = names[j];
        if (seen[k] === true) continue;
        var d = getOwnPropertyDescriptor(p, k);
        if (!d || typeof d.get !== 'function' || !propertyIsEnumerable(p, k)) continue;
        append(inherited, k);
        seen[k] = true;
      }
      p = getPrototypeOf(p);
    }
    sortStrings(inherited);
    for (var m = 0; m < inherited.length; m++) append(keys, inherited[m]);
    return keys;
  };

  // sortStrings sorts a in place by code unit (insertion sort: no Array.prototype.sort,
  // which the page could have replaced, and the lists are short).
  var sortStrings = function (a) {
    for (var i = 1; i < a.length; i++) {
      var x = a[i], j = i - 1;
      while (j >= 0 && a[j] > x) { a[j + 1] = a[j]; j--; }
      a[j + 1] = x;
    }
  };

  var canon = function (v, st, depth) {
    st.nodes++;
    switch (typeof v) {
      case 'undefined': return tagged('$undefined', true);
      case 'boolean': case 'string': return v;
      case 'number':
        if (v !== v) return tagged('$num', 'NaN');
        if (v === Infinity) return tagged('$num', 'Infinity');
        if (v === -Infinity) return tagged('$num', '-Infinity');
        if (v === 0 && objectIs(v, -0)) return tagged('$num', '-0');
        return v;
      case 'bigint': return tagged('$bigint', StringCtor(v));
      case 'symbol': {
        var sd = '';
        try { sd = StringCtor(symbolDescription(v)); } catch (e) { sd = ''; }
        return tagged('$symbol', sd);
      }
      case 'function': {
        var f = obj();
        f.$function = true;
        f.name = functionName(v);
        return f;
      }
    }
    if (v === null) return null;
    if (isError(v)) {
      var er = obj();
      er.$error = true;
      er.name = errorName(v);
      return er;
    }
    var b = asBuffer(v);
    if (b) return b;
    for (var i = 0; i < st.path.length; i++) {
      if (st.path[i] === v) return tagged('$circular', true);
    }
    var r = obj();
    var isArr = isArray(v);
    r.$shape = isArr ? 'array' : 'object';
    var len = 0;
    if (isArr) { len = v.length; r.length = len; }
    var proto = getPrototypeOf(v);
    if (!isArr && proto !== ObjectProto && proto !== null) r['class'] = className(v);
    if (depth >= MAX_DEPTH) { r.truncated = 'depth'; return r; }
    if (st.nodes >= MAX_NODES) { r.truncated = 'size'; return r; }
    append(st.path, v);
    if (isArr) {
      r.elements = arr();
      var n = len < MAX_ELEMENTS ? len : MAX_ELEMENTS;
      for (var e = 0; e < n; e++) append(r.elements, canonChild(v, e, st, depth + 1).value);
    } else {
      var keys = keysOf(v);
      if (keys.length > MAX_ELEMENTS) { r.key_count = keys.length; keys.length = MAX_ELEMENTS; }
      r.keys = keys;
      r.props = obj();
      for (var k = 0; k < keys.length; k++) r.props[keys[k]] = canonChild(v, keys[k], st, depth + 1);
    }
    st.path.length--;
    return r;
  };

  // canonChild reads v[k] (a getter that throws records {"type": "throws"} with the
  // thrown value) and canonicalizes it one level down.
  var canonChild = function (v, k, st, depth) {
    var p = obj();
    var x;
    try {
      x = v[k];
    } catch (e) {
      p.type = 'throws';
      p.value = canonSafe(e, st, depth);
      return p;
    }
    p.type = typeName(x);
    p.value = canonSafe(x, st, depth);
    return p;
  };

  // canonSafe never throws: a value whose canonicalization throws (a Proxy trap, a
  // detached or hostile object) becomes {"$throws": <the thrown value, canonicalized>}.
  var canonSafe = function (v, st, depth) {
    var saved = st.path.length;
    try {
      return canon(v, st, depth);
    } catch (e) {
      st.path.length = saved;
      var t;
      try { t = isError(e) ? canon(e, st, MAX_DEPTH) : typeName(e); } catch (e2) { t = 'unknown'; }
      return tagged('$throws', t);
    }
  };

  var canonicalize = function (v) {
    return canonSafe(v, { nodes: 0, path: arr() }, 0);
  };

  // ---- records ----
  var records = arr();
  var ended = false;
  var timedOut = false;
  var resolveResult;
  var result = new PromiseCtor(function (res) { resolveResult = res; });

  var push = function (kind, label, fields) {
    if (ended) return;
    var r = obj();
    r.seq = records.length;
    r.kind = kind;
    r.label = label;
    for (var k in fields) r[k] = fields[k];
    append(records, r);
  };

  var labelString = function (label) {
    if (typeof label === 'string') return label;
    try { return StringCtor(label); } catch (e) { return ''; }
  };

  var finish = function (byTimeout) {
    if (ended) return;
    ended = true;
    timedOut = byTimeout;
    var out = obj();
    out.timed_out = timedOut;
    out.records = records;
    out.origin = origin;
    out.is_secure_context = secure;
    restore();
    resolveResult(out);
  };

  var targetLabel = function (t) {
    if (t === theWindow) return 'window';
    if (t === theDocument) return 'document';
    var tag = tryCall(elementTagName, t);
    if (tag.ok) {
      var id = tryCall(elementId, t);
      return id.ok && id.v ? tag.v + '#' + id.v : tag.v;
    }
    var nn = tryCall(nodeName, t);
    if (nn.ok) return nn.v;
    return className(t);
  };

  var fields = function (k1, v1, k2, v2) {
    var f = obj();
    f[k1] = v1;
    if (k2 !== undefined) f[k2] = v2;
    return f;
  };

  var api = obj();
  api.value = function (label, v) {
    if (ended) return;
    push('value', labelString(label), fields('value', canonicalize(v)));
  };
  api.error = function (label, err) {
    if (ended) return;
    push('error', labelString(label), fields('value', canonicalize(err)));
  };
  api.settle = function (label, promise) {
    var l = labelString(label);
    var onFulfilled = function (v) { if (!ended) push('settle', l, fields('state', 'fulfilled', 'value', canonicalize(v))); };
    var onRejected = function (e) { if (!ended) push('settle', l, fields('state', 'rejected', 'value', canonicalize(e))); };
    try {
      promiseThen(promise, onFulfilled, onRejected); // a native promise: no extra tick
    } catch (e) {
      promiseThen(promiseResolve(promise), onFulfilled, onRejected); // a thenable or a plain value
    }
  };
  api.event = function (target, types) {
    var list = typeof types === 'string' ? [types] : types;
    var label;
    try {
      if (target === null || (typeof target !== 'object' && typeof target !== 'function')) {
        throw new TypeErrorCtor('trace.event: target is not an object');
      }
      label = targetLabel(target);
      var n = list.length;
      for (var i = 0; i < n; i++) {
        var type = StringCtor(list[i]);
        addEventListener(target, type, function (ev) {
          var t = tryCall(eventType, ev);
          push('event', label, fields('type', t.ok ? t.v : ''));
        });
      }
    } catch (e) {
      // Not an EventTarget, or types not a list: the script's mistake, made visible
      // in the trace rather than thrown into it.
      push('error', 'trace.event', fields('value', canonicalize(e)));
    }
  };
  api.done = function () { finish(false); };
  objectFreeze(api);

  // restore puts back the built-ins the drivers' own in-page code relies on, in case
  // the script replaced them: the oracle's call wrapper serializes the collected result
  // with JSON.stringify (callExpression in oracle/engine.go), and WebKitGTK's WebDriver
  // parses Execute Script arguments with JSON.parse and builds results with
  // Array.prototype.push, in the page's own realm. It runs when the trace ends (done
  // or timeout) and again when the result is collected; the trace has ended by then,
  // so this changes nothing it observes.
  var restore = function () {
    try {
      if (G.JSON !== JSONObj) defineProperty(G, 'JSON', { value: JSONObj, writable: true, configurable: true, enumerable: false });
    } catch (e) { /* non-configurable now: nothing more to do */ }
    for (var i = 0; i < restorable.length; i++) {
      var r = restorable[i];
      try {
        if (r[0][r[1]] !== r[2]) defineProperty(r[0], r[1], { value: r[2], writable: true, configurable: true, enumerable: false });
      } catch (e) { /* likewise */ }
    }
  };

  defineProperty(G, 'trace', { value: api, writable: false, enumerable: false, configurable: false });
  defineProperty(G, KEY, {
    value: function () {
      return promiseThen(result, function (r) { restore(); return r; });
    },
    writable: false, enumerable: false, configurable: false
  });
  setTimeoutFn(function () { finish(true); }, 5000);
})();

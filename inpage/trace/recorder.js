// The trace recorder (dump-format.md, "Trace protocol" -> "The recorder").
//
// Installed before any of a trace page's own script: by context.addInitScript on
// Playwright, or inlined as the first script element of the served document on
// WebDriver (that element removes itself, so the page never sees the recorder's text).
// It defines window.trace and window.__traceRun (both non-writable, non-configurable),
// and nothing at all on a page whose path is not under /trace/ (the init script runs in
// every page of the context, including the about:blank geometry page). Installing it
// twice is a no-op.
//
// The case's script is not in the page: the oracle passes it to __traceRun once the
// document has loaded, which runs it by indirect eval and resolves with the trace,
// serialized here and sealed with HMAC-SHA-256 under SECRET (a key the page never
// sees), so whatever the page does to the path the result travels (JSON.stringify,
// Function.prototype.apply, Promise.prototype.then in the drivers' wrappers), the
// oracle gets its real records or an error, never records the page made up.
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
  var KEY = '__traceRun';
  // Substituted by trace.Recorder (Go): the HMAC key, and for inlined copies the
  // record and byte bounds (null: the bounds come with the __traceRun call).
  var SECRET = '@@SECRET@@';
  var LIMITS = @@LIMITS@@;
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
  var charCodeAt = uncurry(String.prototype.charCodeAt);
  var evalFn = G.eval; // called through a variable: an indirect eval, global scope
  var reportErrorFn = typeof G.reportError === 'function' ? G.reportError : null;
  var perfNow = uncurry(Performance.prototype.now);
  var perf = G.performance;
  var Int32ArrayCtor = Int32Array;
  var textEncoder = new TextEncoder();
  var encodeUTF8 = uncurry(TextEncoder.prototype.encode);
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
  var readyState = getter(typeof Document === 'function' ? Document.prototype : null, 'readyState');
  var documentImages = getter(typeof Document === 'function' ? Document.prototype : null, 'images');
  var collectionLength = getter(typeof HTMLCollection === 'function' ? HTMLCollection.prototype : null, 'length');
  var collectionItem = method(typeof HTMLCollection === 'function' ? HTMLCollection.prototype : null, 'item');
  var imageComplete = getter(typeof HTMLImageElement === 'function' ? HTMLImageElement.prototype : null, 'complete');
  var removeNode = method(typeof Element === 'function' ? Element.prototype : null, 'remove');
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
  // ---- serialization ----
  // Records are kept as JSON text, made at push time by the JSON.stringify captured at
  // install (the page's replacement never runs), so the bounds count the very bytes
  // the oracle will receive. toJSON is never consulted: canonical values hold only
  // null, booleans, finite numbers, strings and the recorder's own null-prototype
  // objects and arrays, whose only page-named properties ("props" keys) hold
  // non-callable objects.
  var HEX = '0123456789abcdef';
  var ser = function (v) { return JSONStringify(v); };
  // lineLength is text's size in the oracle's answer line: its UTF-8 bytes, plus 5
  // for each '<', '>', '&' and 3 for each U+2028, U+2029, which the oracle's
  // encoding/json writes as six-byte \u escapes (JSON.stringify does not).
  var lineLength = function (text) {
    var b = encodeUTF8(textEncoder, text), len = typedArrayLength(b), n = len;
    for (var i = 0; i < len; i++) {
      var c = b[i];
      if (c === 0x3c || c === 0x3e || c === 0x26) n += 5;
      else if (c === 0xe2 && b[i + 1] === 0x80 && (b[i + 2] === 0xa8 || b[i + 2] === 0xa9)) n += 3;
    }
    return n;
  };

  // ---- HMAC-SHA-256, on typed arrays and operators only ----
  var K256 = new Int32ArrayCtor([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2]);
  // sha256 hashes prefix (exactly 64 bytes) followed by m, both Uint8Arrays.
  var sha256 = function (prefix, m) {
    var H = new Int32ArrayCtor([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
    var W = new Int32ArrayCtor(64);
    var block = function (b, off) {
      var t, x, y;
      for (t = 0; t < 16; t++) {
        x = off + 4 * t;
        W[t] = (b[x] << 24) | (b[x + 1] << 16) | (b[x + 2] << 8) | b[x + 3];
      }
      for (t = 16; t < 64; t++) {
        x = W[t - 15]; y = W[t - 2];
        W[t] = (W[t - 16] + (((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
          W[t - 7] + (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10))) | 0;
      }
      var a = H[0], bb = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
      for (t = 0; t < 64; t++) {
        var t1 = (h + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
          ((e & f) ^ (~e & g)) + K256[t] + W[t]) | 0;
        var t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
          ((a & bb) ^ (a & c) ^ (bb & c))) | 0;
        h = g; g = f; f = e; e = (d + t1) | 0; d = c; c = bb; bb = a; a = (t1 + t2) | 0;
      }
      H[0] = (H[0] + a) | 0; H[1] = (H[1] + bb) | 0; H[2] = (H[2] + c) | 0; H[3] = (H[3] + d) | 0;
      H[4] = (H[4] + e) | 0; H[5] = (H[5] + f) | 0; H[6] = (H[6] + g) | 0; H[7] = (H[7] + h) | 0;
    };
    block(prefix, 0);
    var n = m.length, full = n - n % 64, off;
    for (off = 0; off < full; off += 64) block(m, off);
    var tail = new Uint8ArrayCtor(n - full < 56 ? 64 : 128);
    for (off = full; off < n; off++) tail[off - full] = m[off];
    tail[n - full] = 0x80;
    var bits = (n + 64) * 8, hi = (bits / 4294967296) >>> 0, lo = bits >>> 0, L = tail.length;
    tail[L - 8] = hi >>> 24; tail[L - 7] = hi >>> 16; tail[L - 6] = hi >>> 8; tail[L - 5] = hi;
    tail[L - 4] = lo >>> 24; tail[L - 3] = lo >>> 16; tail[L - 2] = lo >>> 8; tail[L - 1] = lo;
    for (off = 0; off < L; off += 64) block(tail, off);
    var out = new Uint8ArrayCtor(32);
    for (var i = 0; i < 8; i++) {
      out[4 * i] = H[i] >>> 24; out[4 * i + 1] = H[i] >>> 16; out[4 * i + 2] = H[i] >>> 8; out[4 * i + 3] = H[i];
    }
    return out;
  };
  // hmac is HMAC-SHA-256 of text (as UTF-8) under SECRET (64 ASCII characters: one
  // block, used as the key as it is), in hex.
  var hmac = function (text) {
    var ipad = new Uint8ArrayCtor(64), opad = new Uint8ArrayCtor(64), i;
    for (i = 0; i < 64; i++) {
      var k = charCodeAt(SECRET, i);
      ipad[i] = k ^ 0x36; opad[i] = k ^ 0x5c;
    }
    var mac = sha256(opad, sha256(ipad, encodeUTF8(textEncoder, text)));
    var h = '';
    for (i = 0; i < 32; i++) h += HEX[mac[i] >> 4] + HEX[mac[i] & 15];
    return h;
  };

  // ---- records ----
  var records = arr();  // JSON text of each record
  var recordBytes = 2;  // bytes of the records array's JSON text in the answer line (lineLength), brackets and commas included
  var maxRecords = LIMITS ? LIMITS.records : 100000;
  var maxBytes = LIMITS ? LIMITS.bytes : 67108864;
  var overflow = '';    // the bound that ended the trace, if one did
  var ended = false;
  var timedOut = false;
  var started = false;
  var onEnd = null;     // set by __traceRun: called once when the trace ends

  var push = function (kind, label, fields) {
    if (ended) return;
    if (records.length >= maxRecords) {
      overflow = 'the trace exceeded --trace-max-records=' + maxRecords + ' records';
      finish(false);
      return;
    }
    var r = obj();
    r.seq = records.length;
    r.kind = kind;
    r.label = label;
    for (var k in fields) r[k] = fields[k];
    var text = ser(r);
    var size = lineLength(text) + (records.length ? 1 : 0);
    if (recordBytes + size > maxBytes) {
      overflow = 'the trace exceeded --trace-max-bytes=' + maxBytes + ' bytes of records';
      finish(false);
      return;
    }
    recordBytes += size;
    append(records, text);
  };

  var labelString = function (label) {
    if (typeof label === 'string') return label;
    try { return StringCtor(label); } catch (e) { return ''; }
  };

  var finish = function (byTimeout) {
    if (ended) return;
    ended = true;
    timedOut = byTimeout;
    restore();
    if (onEnd) onEnd();
  };

  // sealed is the collected result: the trace as JSON text (its own serializer) and
  // that text's HMAC. nonce is the oracle's, for this call: a sealed result from
  // another call (stashed by an earlier case) does not pass as this one.
  var sealed = function (nonce) {
    var p = '{"nonce":' + ser(nonce) + ',"error":' + ser(overflow) +
      ',"timed_out":' + (timedOut ? 'true' : 'false') + ',"origin":' + ser(origin) +
      ',"is_secure_context":' + (secure ? 'true' : 'false') + ',"records":[';
    for (var i = 0; i < records.length; i++) p += (i ? ',' : '') + records[i];
    p += ']}';
    var out = obj();
    out.payload = p;
    out.mac = hmac(p);
    return out;
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
  // message, when given (not undefined or null), travels as the record's "message":
  // text for a person (an assertion's), which trace comparison and the vote skip.
  api.value = function (label, v, message) {
    if (ended) return;
    var f = fields('value', canonicalize(v));
    if (message !== undefined && message !== null) f.message = labelString(message);
    push('value', labelString(label), f);
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
  // with JSON.stringify (CallExpression in oracle/engine.go), and WebKitGTK's WebDriver
  // builds results with Array.prototype.push, in the page's own realm. It runs when
  // the trace ends (done, timeout or a bound) and again when the result is handed
  // over; the trace has ended by then, so this changes nothing it observes. It is a
  // courtesy, not a defence: the seal is what keeps a result honest.
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

  // ---- running the case ----
  // The load event's own handlers have all run once a task after this listener's.
  var loaded = false;
  if (addEventListener) addEventListener(theWindow, 'load', function () { loaded = true; });
  var now = function () { return perfNow(perf); };
  var imagesComplete = function () {
    var imgs = documentImages(theDocument), n = collectionLength(imgs);
    for (var i = 0; i < n; i++) if (!imageComplete(collectionItem(imgs, i))) return false;
    return true;
  };
  var IMAGE_WAIT_MS = 5000; // then the script runs anyway, with what has loaded

  // run is __traceRun(script, opts): once the document has loaded (readyState
  // "complete", the load event's handlers run, every <img> complete), run script by
  // indirect eval, start the 5000 ms completion timeout, and resolve with the sealed
  // trace when it ends. opts: {"nonce", "max_records", "max_bytes"} (the bounds are
  // ignored by an inlined copy, which has its own).
  var run = function (script, opts) {
    if (started) throw new TypeErrorCtor('trace: this page has run its case already');
    started = true;
    var nonce = '', mr, mb;
    try {
      nonce = StringCtor(opts.nonce);
      mr = opts.max_records; mb = opts.max_bytes;
    } catch (e) { /* sealed with an empty nonce: refused by the oracle */ }
    if (!LIMITS) {
      if (typeof mr === 'number' && mr > 0) maxRecords = mr;
      if (typeof mb === 'number' && mb > 0) maxBytes = mb;
    }
    // Inline markup may have recorded past the bounds the run brings.
    if (records.length > maxRecords) {
      overflow = 'the trace exceeded --trace-max-records=' + maxRecords + ' records';
      finish(false);
    } else if (recordBytes > maxBytes) {
      overflow = 'the trace exceeded --trace-max-bytes=' + maxBytes + ' bytes of records';
      finish(false);
    }
    var src = StringCtor(script);
    return new PromiseCtor(function (resolve) {
      var hand = function () { restore(); resolve(sealed(nonce)); };
      var go = function () {
        if (ended) { hand(); return; } // ended before the script: by inline markup's trace.done(), or a bound
        onEnd = hand;
        setTimeoutFn(function () { finish(true); }, 5000);
        // Playwright's BiDi route (Firefox) leaves an enumerable
        // window.__pw_bidiInsertText in every document (case.js says more): gone
        // before the case's script, which would see it in Firefox alone.
        try { delete G.__pw_bidiInsertText; } catch (e) { /* the page made it permanent */ }
        try {
          evalFn(src);
        } catch (e) {
          // As an uncaught error in a script element would: an error event on window, and
          // the trace goes on.
          if (reportErrorFn) { try { reportErrorFn(e); } catch (e2) { /* nothing more to do */ } }
        }
      };
      var t0 = now();
      var tick = function () {
        var ready = false;
        try { ready = readyState(theDocument) === 'complete' && loaded && imagesComplete(); } catch (e) { ready = true; }
        if (ready || now() - t0 > IMAGE_WAIT_MS) go();
        else setTimeoutFn(tick, 5);
      };
      setTimeoutFn(tick, 0);
    });
  };

  defineProperty(G, 'trace', { value: api, writable: false, enumerable: false, configurable: false });
  defineProperty(G, KEY, { value: run, writable: false, enumerable: false, configurable: false });
  // An inlined copy takes its element (and with it SECRET) out of the document
  // before any of the page's own markup is parsed.
  if (removeNode && theDocument && theDocument.currentScript) {
    try { removeNode(theDocument.currentScript); } catch (e) { /* nothing more to do */ }
  }
})();

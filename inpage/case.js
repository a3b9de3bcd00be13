(function layoutOracleCase(c) {
  // The case program: the same text in every engine, on both routes, evaluated in one
  // driver call on a fresh about:blank page (the pool resets after every case).
  // c is {html, fn, args, budget}: fn is a function expression's source, called with
  // this = B (the built-ins captured below) and args after the document is written and
  // settled. The promise returned resolves to the JSON text of fn's result.
  //
  // Every built-in used after the case's own markup or script has run is captured here,
  // first, while the global is still the fresh about:blank one. Nothing later reads a
  // property the page could have replaced: calls go through Reflect.apply captured
  // here, getters are taken from property descriptors, arrays grow by defineProperty
  // with null-prototype descriptors, and the JSON text is written here, with the
  // captured JSON.stringify applied to primitives only (no toJSON, no index setters).
  'use strict';
  var G = window;
  var O = Object;
  var apply = Reflect.apply;
  var getOwn = O.getOwnPropertyDescriptor;
  var getProto = O.getPrototypeOf;
  var defProp = O.defineProperty;
  var create = O.create;
  var keys = O.keys;
  var isArray = Array.isArray;
  var stringify = JSON.stringify;
  var geval = G.eval;
  var PromiseCtor = Promise;
  var now = Date.now;
  var StringFn = String;
  var ErrorCtor = Error;

  // descriptor finds name on obj or up its prototype chain.
  function descriptor(obj, name) {
    for (var o = obj; o !== null && o !== undefined; o = getProto(o)) {
      var d = getOwn(o, name);
      if (d) return d;
    }
    return undefined;
  }
  // getter(obj, name) is a function reading name from its argument through the
  // getter found now; method(obj, name) the function value found now.
  function getter(obj, name) {
    var d = descriptor(obj, name);
    var g = d && d.get;
    if (!g) return function () { return undefined; };
    return function (x) { return apply(g, x, []); };
  }
  function method(obj, name) {
    var d = descriptor(obj, name);
    return d && d.value;
  }
  var noop = function () {};

  var DocP = Document.prototype, ElP = Element.prototype;
  var doc = document;
  var docOpen = method(DocP, 'open'), docWrite = method(DocP, 'write'), docClose = method(DocP, 'close');
  var readyState = getter(DocP, 'readyState');
  var documentElement = getter(DocP, 'documentElement');
  var scrollingElement = getter(DocP, 'scrollingElement');
  var fontsOf = getter(DocP, 'fonts');
  var fontStatus = typeof FontFaceSet === 'function' ? getter(FontFaceSet.prototype, 'status') : noop;
  var getAnimations = method(DocP, 'getAnimations');
  var getElementsByTagName = method(DocP, 'getElementsByTagName');
  var getElementById = method(DocP, 'getElementById');
  var getElementsByTagNameNS = method(DocP, 'getElementsByTagNameNS');
  var contentType = getter(DocP, 'contentType');
  var textContent = getter(Node.prototype, 'textContent');
  var collLength = getter(HTMLCollection.prototype, 'length');
  var collItem = method(HTMLCollection.prototype, 'item');
  var imgComplete = getter(HTMLImageElement.prototype, 'complete');
  var imgDecode = method(HTMLImageElement.prototype, 'decode');
  var imgLoading = getter(HTMLImageElement.prototype, 'loading');
  var animFinish = typeof Animation === 'function' ? method(Animation.prototype, 'finish') : undefined;
  var animCancel = typeof Animation === 'function' ? method(Animation.prototype, 'cancel') : undefined;
  var animPlayState = typeof Animation === 'function' ? getter(Animation.prototype, 'playState') : noop;
  var promiseThen = method(PromiseCtor.prototype, 'then');
  var raf = method(G, 'requestAnimationFrame');
  var setTimeoutFn = method(G, 'setTimeout');
  var getComputedStyleFn = method(G, 'getComputedStyle');
  var innerWidth = getter(G, 'innerWidth'), innerHeight = getter(G, 'innerHeight');
  var scrollToFn = method(G, 'scrollTo');
  var scrollX = getter(G, 'scrollX'), scrollY = getter(G, 'scrollY');
  var getPropertyValue = method(CSSStyleDeclaration.prototype, 'getPropertyValue');
  var getBCR = method(ElP, 'getBoundingClientRect');
  var elRemove = method(ElP, 'remove'), bodyOf = getter(DocP, 'body');
  var getClientRects = method(ElP, 'getClientRects');
  var firstElementChild = getter(ElP, 'firstElementChild');
  var nextElementSibling = getter(ElP, 'nextElementSibling');
  var tagName = getter(ElP, 'tagName');
  var getAttribute = method(ElP, 'getAttribute');
  var scrollWidth = getter(ElP, 'scrollWidth'), scrollHeight = getter(ElP, 'scrollHeight');
  var clientWidth = getter(ElP, 'clientWidth'), clientHeight = getter(ElP, 'clientHeight');
  var rectListLength = getter(DOMRectList.prototype, 'length');
  var rectListItem = method(DOMRectList.prototype, 'item');
  var RectP = DOMRectReadOnly.prototype;
  var rectX = getter(RectP, 'x'), rectY = getter(RectP, 'y');
  var rectW = getter(RectP, 'width'), rectH = getter(RectP, 'height');
  var toUpper = method(StringFn.prototype, 'toUpperCase');
  var strSlice = method(StringFn.prototype, 'slice');
  var objToString = method(O.prototype, 'toString');
  var strIndexOf = method(StringFn.prototype, 'indexOf');
  var strReplace = method(StringFn.prototype, 'replace');
  var codeAt = apply(Function.prototype.bind, Function.prototype.call, [method(StringFn.prototype, 'charCodeAt')]);
  var reTest = method(RegExp.prototype, 'test');
  // plainText finds a character whose JSON form is not itself in ASCII; its own exec
  // (the one test calls) is the built-in, whatever the page does to RegExp.prototype.
  var plainText = /[^\x20\x21\x23-\x25\x27-\x3b\x3d\x3f-\x5b\x5d-\x7e]/;
  defProp(plainText, 'exec', { value: method(RegExp.prototype, 'exec') });
  var spaces = /[ \t\n\f\r]+/g;

  // The inert check (inpage/inert_check.js; docs/untrusted.md, "Inert cases"): a c.fn
  // that starts with INERT_CHECK arms a MutationObserver on the document right after
  // document.open, before the write, so that every element the engine's parser (or
  // anything the markup ran) ever inserted, and every attribute set on an element
  // already in place, is in its records, even if it was removed again. Its parts are
  // captured here with the rest, so a global that was clean when this program started
  // checks the case it writes whatever that case does to the global.
  var INERT_CHECK = '(function inertChecked(';
  var MO = G.MutationObserver;
  var moObserve = method(MO.prototype, 'observe'), moTake = method(MO.prototype, 'takeRecords');
  var moDisconnect = method(MO.prototype, 'disconnect');
  var RecP = MutationRecord.prototype;
  var recType = getter(RecP, 'type'), recTarget = getter(RecP, 'target');
  var recAdded = getter(RecP, 'addedNodes'), recAttrName = getter(RecP, 'attributeName');
  var recAttrNS = getter(RecP, 'attributeNamespace');
  var nodeListLength = getter(NodeList.prototype, 'length');
  var nodeListItem = method(NodeList.prototype, 'item');
  var nodeType = getter(Node.prototype, 'nodeType');
  var parentNode = getter(Node.prototype, 'parentNode');
  var namespaceURI = getter(ElP, 'namespaceURI'), localName = getter(ElP, 'localName');
  var getAttributeNames = method(ElP, 'getAttributeNames');
  var shadowRoot = getter(ElP, 'shadowRoot');
  var NS = create(null);
  NS['http://www.w3.org/1999/xhtml'] = 'html';
  NS['http://www.w3.org/2000/svg'] = 'svg';
  NS['http://www.w3.org/1998/Math/MathML'] = 'math';
  // VALUED are the attributes whose value the classifier judges (oracle/inert's
  // special): their key holds the value too.
  var VALUED = create(null);
  VALUED['html link rel'] = true;
  VALUED['html meta name'] = true;
  VALUED['html input type'] = true;
  var observed = [];
  var observer = null;
  // The policy that makes a kept window's documents unable to run script
  // (docs/untrusted.md, "The engine refuses script in a kept window"): written as a
  // <meta> into the window's first document, which document.open keeps, with every
  // policy, for every later document written into the window. The drivers'
  // evaluation is not bound by it, but the program's own indirect eval of fn is in
  // WebKitGTK's WebDriver (refused under script-src 'none'), hence 'unsafe-eval':
  // no script of a case can start to call eval, as no source, inline script,
  // handler or javascript: URL is allowed.
  var POLICY = '<meta http-equiv="Content-Security-Policy" content="script-src \'unsafe-eval\'; object-src \'none\'">';
  // FRESH is the window's own property holding what its first, fresh document
  // measured (freshState): no script of a case can run in a kept window to read or
  // change it, and a case that is not inert gets a new window.
  var FRESH = '__layoutOracleFreshState';
  // PROGRAM is the window's own property holding this program, left by the window's
  // first inert case: a kept window's later cases call it (inpage/kept_case.js)
  // instead of sending and compiling its text again. Like FRESH, no script of a
  // case can run in a kept window to reach it.
  var PROGRAM = '__layoutOracleCase';
  var createElement = method(DocP, 'createElement');
  var setAttribute = method(ElP, 'setAttribute');
  var dispatchEvent = method(EventTarget.prototype, 'dispatchEvent');
  var addListener = method(EventTarget.prototype, 'addEventListener');
  var EventCtor = Event;
  var devicePixelRatio = getter(G, 'devicePixelRatio');
  var VioP = typeof SecurityPolicyViolationEvent === 'function' ? SecurityPolicyViolationEvent.prototype : null;
  var vioDirective = VioP ? getter(VioP, 'effectiveDirective') : noop;
  var vioBlocked = VioP ? getter(VioP, 'blockedURI') : noop;
  // refused is the first policy violation the engine reported in the case's
  // document ('' while none): the engine refused something the case would have run
  // or loaded in a new document, so its answer is not a new document's.
  var refused = '';
  var checked = false; // the check has read refused; later violations are its own proof's
  var PROBE_ATTR = 'data-layout-oracle-ran';
  // FRESH_DOC is the document a kept window is measured in before each case: taller
  // than the viewport, so the viewport has its scrollbar, and in quirks mode, as
  // most cases are (Gecko shows a scrollbar style an earlier document left in the
  // root's width here, not in a standards-mode document's).
  var FRESH_DOC = '<div style="height:200vh"></div>';
  var freshDiffers = '';

  // freshState writes FRESH_DOC after prefix into the window's document, which the
  // caller has opened, and says what a new document in this window has: the
  // viewport, its scrollbars, the root's place, the scroll position and the zoom.
  function freshState(prefix) {
    apply(docWrite, doc, [prefix + FRESH_DOC]);
    apply(docClose, doc, []);
    var root = documentElement(doc);
    var r = apply(getBCR, root, []);
    var state = 'viewport ' + innerWidth(G) + 'x' + innerHeight(G) + ', root ' + clientWidth(root) + 'x' + clientHeight(root) +
      ' at ' + rectX(r) + ',' + rectY(r) + ' width ' + rectW(r) + ', scrolled ' + scrollX(G) + ',' + scrollY(G) + ', zoom ' + devicePixelRatio(G);
    // Then the tall element goes and the root is laid out again, so the case does
    // not find the scrollbar FRESH_DOC made: WebKit keeps an existing scrollbar's
    // style, so a case's ::-webkit-scrollbar would not apply to it as it does in a
    // new document. (Removing it costs one layout; a second document.open, Gecko's
    // costly step, would cost more.)
    apply(elRemove, firstElementChild(bodyOf(doc)), []);
    apply(getBCR, root, []);
    return state;
  }
  // enforced answers '' when the engine refuses an inline handler in the window's
  // document, or why not: a handler that would mark its element is dispatched and
  // must not have run. Its own violation comes after the check read refused.
  function enforced() {
    var el = apply(createElement, doc, ['div']);
    apply(setAttribute, el, ['onclick', 'this.setAttribute("' + PROBE_ATTR + '","")']);
    apply(dispatchEvent, el, [new EventCtor('click')]);
    return apply(getAttribute, el, [PROBE_ATTR]) === null ? '' : 'the engine ran an inline handler in the window despite its policy';
  }
  var scrolledTo = null; // a kept window's scroll position right after its scroll to the origin
  // writesPolicy: this case is its window's first inert one, which writes POLICY
  // and proves it holds (enforced). The policy list belongs to the document, which
  // document.open keeps for every later case of the window; no markup can loosen it
  // (a second policy only adds refusals), and a case that navigates the window away
  // leaves a new window without the reference freshState compares with.
  var writesPolicy = false;

  function dataDesc(v) {
    var d = create(null);
    d.value = v;
    d.writable = true;
    d.enumerable = true;
    d.configurable = true;
    return d;
  }
  // when runs ok or fail when the native promise p settles, through the captured then;
  // an own constructor of undefined keeps then's species lookup off the page's
  // Promise.prototype.constructor and Promise[Symbol.species].
  function when(p, ok, fail) {
    defProp(p, 'constructor', dataDesc(undefined));
    apply(promiseThen, p, [ok, fail]);
  }
  // ser is the JSON text of v: plain objects (own enumerable keys), arrays and
  // primitives, as JSON.stringify would write them, but without toJSON.
  function ser(v) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') return 'null';
    if (v === null || typeof v !== 'object') return stringify(v);
    var s, i;
    if (isArray(v)) {
      s = '[';
      for (i = 0; i < v.length; i++) s += (i ? ',' : '') + ser(v[i]);
      return s + ']';
    }
    var ks = keys(v), first = true;
    s = '{';
    for (i = 0; i < ks.length; i++) {
      var x = v[ks[i]];
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
      s += (first ? '' : ',') + stringify(ks[i]) + ':' + ser(x);
      first = false;
    }
    return s + '}';
  }

  // jsonBytes is the size of the string s in the answer line, quotes included, as
  // the oracle's encoding/json writes it: UTF-8, with '<', '>', '&', U+2028, U+2029
  // and control characters as six-byte \u escapes (a lone surrogate too). It stops
  // counting once past limit; jsonBytes.end is then where it stopped.
  function jsonBytes(s, limit) {
    var len = s.length;
    jsonBytes.end = len;
    if (!apply(reTest, plainText, [s])) return len + 2;
    var n = 2, c, d, at;
    for (var i = 0; i < len; i++) {
      at = i;
      c = codeAt(s, i);
      if (c >= 0x20 && c < 0x7f) n += c === 0x22 || c === 0x5c ? 2 : c === 0x3c || c === 0x3e || c === 0x26 ? 6 : 1;
      else if (c === 0x0a || c === 0x0d || c === 0x09) n += 2;
      else if (c < 0x80) n += c === 0x7f ? 1 : 6;
      else if (c < 0x800) n += 2;
      else if (c >= 0xd800 && c < 0xdc00 && i + 1 < len && (d = codeAt(s, i + 1)) >= 0xdc00 && d < 0xe000) { n += 4; i++; }
      else if ((c >= 0xd800 && c < 0xe000) || c === 0x2028 || c === 0x2029) n += 6;
      else n += 3;
      if (n > limit) { jsonBytes.end = at; return n; }
    }
    return n;
  }
  // MAX_ERROR is the bound on an error message the page hands back (the oracle's
  // MaxErrorBytes is 16384: room for what it puts before the message).
  var MAX_ERROR = 8192;
  // fitError cuts a message whose JSON string is over MAX_ERROR bytes, and says so.
  function fitError(s) {
    if (jsonBytes(s, MAX_ERROR) <= MAX_ERROR) return s;
    var marker = ' ... [truncated: the message had ' + s.length + ' characters]';
    jsonBytes(s, MAX_ERROR - marker.length);
    return apply(strSlice, s, [0, jsonBytes.end]) + marker;
  }

  // inertCheck answers '' when the document holds nothing the classifier did not
  // allow, or why not: every element ever inserted (the records' added nodes and
  // their descendants) and every element of the final document must have its
  // namespace and name, each attribute's name (and the value of VALUED ones) among
  // allowed, which are the keys of the tree the classifier built (oracle/inert's
  // Judge); no element may host a shadow root; a kept window must have started at
  // the origin.
  function inertCheck(allowed) {
    if (observer === null) return 'the check was not armed';
    var recs = apply(moTake, observer, []), i, j;
    apply(moDisconnect, observer, []);
    for (i = 0; i < recs.length; i++) B.push(observed, recs[i]);
    if (scrolledTo !== null) return scrolledTo;
    if (freshDiffers) return freshDiffers;
    checked = true;
    if (refused) return 'the engine refused ' + refused + ' under the window\'s policy';
    if (writesPolicy) {
      var proof = enforced();
      if (proof) return proof;
    }
    var ok = create(null);
    for (i = 0; i < allowed.length; i++) ok[allowed[i]] = true;
    function element(el) {
      var ns = NS[namespaceURI(el)];
      if (ns === undefined) return 'an element in namespace ' + namespaceURI(el);
      var name = ns + ' ' + localName(el);
      if (ok['e ' + name] !== true) return 'an element <' + name + '> the classifier did not build';
      if (shadowRoot(el) !== null) return 'a shadow root on <' + name + '>';
      var attrs = apply(getAttributeNames, el, []);
      for (var k = 0; k < attrs.length; k++) {
        var why = attribute(el, name, attrs[k]);
        if (why) return why;
      }
      return '';
    }
    function attribute(el, name, attr) {
      var key = name + ' ' + attr;
      if (VALUED[key]) key += '=' + apply(getAttribute, el, [attr]);
      if (ok['a ' + key] !== true) return 'an attribute ' + key + ' the classifier did not allow';
      return '';
    }
    // subtree checks root and every element under it, in tree order.
    function subtree(root) {
      for (var el = root; ;) {
        var why = element(el);
        if (why) return why;
        var next = firstElementChild(el);
        while (next === null && el !== root) {
          next = nextElementSibling(el);
          if (next === null) el = parentNode(el);
        }
        if (next === null) return '';
        el = next;
      }
    }
    for (i = 0; i < observed.length; i++) {
      var r = observed[i], why;
      if (recType(r) === 'attributes') {
        if (recAttrNS(r) !== null) return 'an attribute in namespace ' + recAttrNS(r);
        var t = recTarget(r), ns = NS[namespaceURI(t)];
        why = attribute(t, ns + ' ' + localName(t), recAttrName(r));
        if (why) return why;
        continue;
      }
      var added = recAdded(r), n = nodeListLength(added);
      for (j = 0; j < n; j++) {
        var node = apply(nodeListItem, added, [j]);
        if (nodeType(node) !== 1) continue;
        why = subtree(node);
        if (why) return why;
      }
    }
    var root = documentElement(doc);
    return root === null ? '' : subtree(root);
  }

  // unkeepable answers '' when the window may hold the next inert case, or why
  // not: the case left it scrolled (its own scroll snapping, an initial scroll
  // target), possibly with a smooth scroll still running, which the next case's
  // scroll to the origin may not stop (Blink). The case's own answer stands.
  function unkeepable() {
    var sx = scrollX(G), sy = scrollY(G);
    return sx === 0 && sy === 0 ? '' : 'the case left the window scrolled to ' + sx + ',' + sy;
  }

  var budget = typeof c.budget === 'number' ? c.budget : 20000;
  var started = now();
  var LATER = create(null);

  // frame calls next after one animation frame. rAF fires in all three engines as the
  // oracle drives them (docs/serving.md, "Settle point"); the timer is only a bound for a page
  // whose frames stop (it never fired in the measurements), the same in every engine.
  var frameFallbacks = 0;
  function frame(next) {
    var fired = false;
    function once() {
      if (fired) return;
      fired = true;
      next();
    }
    apply(raf, G, [once]);
    apply(setTimeoutFn, G, [function () { if (!fired) frameFallbacks++; once(); }, 1000]);
  }
  function task(next) { apply(setTimeoutFn, G, [next, 0]); }

  // xmlParseError is the text of the error an engine's XML parser left in a navigated
  // document that is not well-formed (Gecko replaces the document with a
  // <parsererror>, Blink and WebKit insert one), or '' when there is none.
  function xmlParseError() {
    var ct = contentType(doc);
    if (ct === 'text/html') return '';
    var list = apply(getElementsByTagNameNS, doc, ['*', 'parsererror']);
    if (!collLength(list)) return '';
    var t = textContent(apply(collItem, list, [0]));
    t = apply(strReplace, StringFn(t === null ? '' : t), [spaces, ' ']);
    return apply(strSlice, t, [0, 400]);
  }

  // reftestWaiting says whether the root element's class list holds reftest-wait
  // (a navigated WPT document that is not finished yet; c.reftestWait).
  function reftestWaiting() {
    var root = documentElement(doc);
    if (!root) return false;
    var cls = apply(getAttribute, root, ['class']);
    if (cls === null || cls === undefined) return false;
    return apply(strIndexOf, ' ' + apply(strReplace, StringFn(cls), [spaces, ' ']) + ' ', [' reftest-wait ']) >= 0;
  }

  // settle waits for the settle point (docs/serving.md, "Settle point"), then calls ok; fail
  // gets an Error naming what did not settle within the budget. With c.reftestWait,
  // a root still classed reftest-wait at that point is waited for (within the same
  // budget), and the page then settles again from step 1.
  function settle(ok, fail) {
    settleOnce(function () {
      if (!c.reftestWait || !reftestWaiting()) { ok(); return; }
      var deadline = started + budget;
      (function check() {
        if (!reftestWaiting()) { settle(ok, fail); return; }
        if (now() > deadline) {
          fail(new ErrorCtor('layout oracle: the page did not settle within ' + budget + ' ms: the root element is still classed reftest-wait'));
          return;
        }
        apply(setTimeoutFn, G, [check, 4]);
      })();
    }, fail);
  }
  function settleOnce(ok, fail) {
    var deadline = started + budget;
    var waitingFor = '';
    function poll(cond, what, next) {
      (function check() {
        var r;
        try { r = cond(); } catch (e) { r = true; }
        if (r) { next(); return; }
        if (now() > deadline) {
          fail(new ErrorCtor('layout oracle: the page did not settle within ' + budget + ' ms: ' + what + (waitingFor ? ' (' + waitingFor + ')' : '')));
          return;
        }
        apply(setTimeoutFn, G, [check, 4]);
      })();
    }
    // images are the document's <img> elements, less lazy ones the engine has not
    // loaded: an engine defers those by its own distance rule, possibly forever.
    function images() {
      var list = apply(getElementsByTagName, doc, ['img']);
      var n = collLength(list), imgs = [], i;
      for (i = 0; i < n; i++) {
        var img = apply(collItem, list, [i]);
        if (imgLoading(img) === 'lazy' && !imgComplete(img)) continue;
        defProp(imgs, imgs.length, dataDesc(img));
      }
      return imgs;
    }
    var imgs;
    // 1. load has finished: readyState complete, then one task so load handlers ran.
    poll(function () { return readyState(doc) === 'complete'; }, 'the load event', function () {
      task(function () {
        // 2. a forced layout starts the loads of the fonts the page uses.
        var root = documentElement(doc);
        if (root) apply(getBCR, root, []);
        poll(function () {
          var fonts = fontsOf(doc);
          return !fonts || fontStatus(fonts) === 'loaded';
        }, 'document.fonts is still loading', function () {
          // 3. every image complete (a broken one counts), then decoded.
          imgs = images();
          poll(function () {
            var pending = 0;
            for (var i = 0; i < imgs.length; i++) if (!imgComplete(imgs[i])) pending++;
            waitingFor = pending + ' of ' + imgs.length + ' <img> not complete';
            return pending === 0;
          }, 'images are still loading', function () {
            waitingFor = '';
            // decode() settles in every engine for every image but one kind: WebKitGTK
            // never settles it for some malformed images that did fire load. So a
            // decode still pending after 1 s counts as done, the same in every engine.
            var left = imgs.length, decodeBy = now() + 1000;
            var decoded = function () { left--; };
            for (var i = 0; i < imgs.length; i++) {
              try { when(apply(imgDecode, imgs[i], []), decoded, decoded); } catch (e) { decoded(); }
            }
            poll(function () { return left <= 0 || now() > decodeBy; }, 'images are still decoding', framesThenAnimations);
          });
        });
      });
    });
    // 4. two frames and a task; 5. finite animations finished, infinite ones
    // cancelled, a frame, again while any remain running (at most 3 rounds).
    function framesThenAnimations() {
      frame(function () {
        frame(function () {
          task(function () { animations(3); });
        });
      });
    }
    function animations(rounds) {
      var list = getAnimations ? apply(getAnimations, doc, []) : [];
      var running = 0;
      for (var i = 0; i < list.length; i++) {
        var a = list[i];
        if (animPlayState(a) === 'finished') continue;
        running++;
        try { apply(animFinish, a, []); } catch (e) { try { apply(animCancel, a, []); } catch (e2) { /* gone */ } }
      }
      // 6. one more frame.
      frame(function () {
        if (running && rounds > 1) animations(rounds - 1);
        else ok();
      });
    }
  }

  // The captured built-ins, as `this` of fn (and so of the walks).
  var B = create(null);
  B.apply = apply;
  B.ser = ser;
  B.str = function (v) { return stringify(v); };
  // push appends v to the array a without Array.prototype (no push, no index setter).
  B.push = function (a, v) { defProp(a, a.length, dataDesc(v)); };
  B.obj = function () { return create(null); };
  B.doc = doc;
  B.documentElement = documentElement;
  B.scrollingElement = scrollingElement;
  B.getComputedStyle = function (el) { return apply(getComputedStyleFn, G, [el]); };
  B.getPropertyValue = function (cs, name) { return apply(getPropertyValue, cs, [name]); };
  B.getBoundingClientRect = function (el) { return apply(getBCR, el, []); };
  B.getClientRects = function (el) {
    var list = apply(getClientRects, el, []), out = [], n = rectListLength(list);
    for (var i = 0; i < n; i++) defProp(out, i, dataDesc(apply(rectListItem, list, [i])));
    return out;
  };
  B.rect = function (r) { return { x: rectX(r), y: rectY(r), w: rectW(r), h: rectH(r) }; };
  B.firstElementChild = firstElementChild;
  B.nextElementSibling = nextElementSibling;
  B.tagName = tagName;
  B.upper = function (s) { return apply(toUpper, s, []); };
  B.slice = function (s, from) { return apply(strSlice, s, [from]); };
  B.getAttribute = function (el, name) { return apply(getAttribute, el, [name]); };
  B.getElementById = function (id) { return apply(getElementById, doc, [id]); };
  B.scrollWidth = scrollWidth;
  B.scrollHeight = scrollHeight;
  B.clientWidth = clientWidth;
  B.clientHeight = clientHeight;
  B.innerWidth = function () { return innerWidth(G); };
  B.innerHeight = function () { return innerHeight(G); };
  B.typeTag = function (v) { return apply(strSlice, apply(objToString, v, []), [8, -1]); };
  B.String = StringFn;
  B.jsonBytes = jsonBytes;
  B.fitError = fitError;
  B.args = function (list, from) {
    var out = [];
    for (var i = from; i < list.length; i++) defProp(out, out.length, dataDesc(list[i]));
    return out;
  };
  // runScript runs the case's script by indirect eval (global scope, like a classic
  // <script>) and returns null, or "Name: message" when it threw.
  B.runScript = function (src) {
    if (!src) return null;
    try {
      geval(src);
    } catch (e) {
      var name, msg;
      try {
        name = e && e.name ? StringFn(e.name) : typeof e;
        msg = e && e.message !== undefined ? StringFn(e.message) : StringFn(e);
      } catch (e2) {
        name = typeof e;
        msg = '(unprintable)';
      }
      return fitError(name + ': ' + msg);
    }
    return null;
  };
  B.settle = settle;
  B.inertCheck = inertCheck;
  B.unkeepable = unkeepable;
  // later(run) is a result that is not ready yet: run(resolve, reject) provides it.
  B.later = function (run) {
    var l = create(LATER);
    l.run = run;
    return l;
  };

  var args = isArray(c.args) ? c.args : [];
  var html = typeof c.html === 'string' ? c.html : '';
  var fn = geval('(' + c.fn + ')');

  return new PromiseCtor(function (resolve, reject) {
    function finish(v) {
      if (v !== null && typeof v === 'object' && getProto(v) === LATER) {
        try { v.run(finish, reject); } catch (e) { reject(e); }
        return;
      }
      if (v instanceof PromiseCtor) { when(v, finish, reject); return; }
      var text;
      try { text = ser(v); } catch (e) { reject(e); return; }
      resolve(text);
    }
    // The document is written from a task of its own, so the driver has attached its
    // callbacks to the returned promise before any of the case's script runs.
    task(function () {
      // Playwright's WebDriver BiDi route (Firefox) assigns window.__pw_bidiInsertText
      // in every new document (its keyboard.insertText helper, which the oracle never
      // calls): an enumerable global a case listing the window's properties would see
      // in Firefox alone. A navigated document's own scripts ran before this.
      try { delete G.__pw_bidiInsertText; } catch (e) { /* the page made it permanent */ }
      // c.navigated: the page navigated to its document (Engine.LoadURL); nothing
      // to write, the same settle point.
      if (!c.navigated) {
        try {
          apply(docOpen, doc, []);
          // c.kept: the window held an inert case before (Keeper), which may have
          // left it scrolled, and document.open keeps the scroll position (Blink,
          // WebKit). A new document starts at the origin: the scroll goes to it in
          // the new, empty document, whose styles cannot snap it, instantly, so no
          // earlier scroll animation runs on; anywhere else fails the inert check.
          if (c.kept) {
            var to = create(null);
            to.left = 0;
            to.top = 0;
            to.behavior = 'instant';
            apply(scrollToFn, G, [to]);
            var sx = scrollX(G), sy = scrollY(G);
            if (sx !== 0 || sy !== 0) scrolledTo = 'the kept window is scrolled to ' + sx + ',' + sy + ' after its scroll to the origin';
          }
          if (apply(strIndexOf, StringFn(c.fn), [INERT_CHECK]) === 0) {
            // An inert case's window refuses script (POLICY): the first case of a
            // window installs it; every case first measures what a new document in
            // the window has, the first as the window's reference, each kept one
            // against it, then writes itself into the document again.
            writesPolicy = !c.kept;
            var state = freshState(writesPolicy ? POLICY : '');
            if (!c.kept) {
              var fresh = dataDesc(state);
              fresh.enumerable = false;
              defProp(G, FRESH, fresh);
              var program = dataDesc(layoutOracleCase);
              program.enumerable = false;
              defProp(G, PROGRAM, program);
            }
            else if (G[FRESH] !== state) freshDiffers = 'a new document in the kept window has ' + state + ', its first had ' + StringFn(G[FRESH]);
            apply(docOpen, doc, []);
            apply(addListener, doc, ['securitypolicyviolation', function (ev) {
              if (checked || refused) return;
              refused = StringFn(vioDirective(ev)) + ' (' + StringFn(vioBlocked(ev)) + ')';
            }, true]);
            observer = new MO(function (recs) {
              for (var i = 0; i < recs.length; i++) B.push(observed, recs[i]);
            });
            var opts = create(null);
            opts.childList = true;
            opts.subtree = true;
            opts.attributes = true;
            apply(moObserve, observer, [doc, opts]);
          }
          apply(docWrite, doc, [html]);
          apply(docClose, doc, []);
        } catch (e) {
          reject(e);
          return;
        }
      }
      settle(function () {
        var v;
        if (c.navigated) {
          var pe = xmlParseError();
          if (pe) { reject(new ErrorCtor('layout oracle: the document is not well-formed XML: ' + pe)); return; }
        }
        try { v = apply(fn, B, args); } catch (e) { reject(e); return; }
        finish(v);
      }, reject);
    });
  });
})

const token = arguments[0], arg = arguments[1];
@@NAVIGATED@@let settle;
const p = new Promise((res, rej) => { settle = [res, rej]; });
Object.defineProperty(window, '@@CALL_PROP@@', {value: {token: token, p: p}, configurable: true, writable: true, enumerable: false});
@@DIALOG@@@@REPAIR@@@@VIEWPORT@@const finish = (i, v) => { try { restore(); } catch (e) {} if (!repair()) { i = 1; v = new Error(unrepairable); }
  else if (viewportChanged()) { i = 1; v = new Error(viewportChanged()); } settle[i](v); };
(@@CALL@@)(arg).then(v => finish(0, v), e => finish(1, e));
return p;
const natives = Object.getOwnPropertyDescriptor(window, '__layoutOracleNatives') ? window.__layoutOracleNatives : {};
if (!Object.getOwnPropertyDescriptor(window, '__layoutOracleNatives')) {
  for (const n of ['alert', 'confirm', 'prompt']) natives[n] = Object.getOwnPropertyDescriptor(window, n) || null;
  Object.defineProperty(window, '__layoutOracleNatives', {value: natives, configurable: true, writable: true, enumerable: false});
}
const dismissed = {alert: function alert() {}, confirm: function confirm() { return false; }, prompt: function prompt() { return null; }};
for (const n in dismissed) {
  Object.defineProperty(window, n, {value: dismissed[n], configurable: true, writable: true, enumerable: natives[n] ? natives[n].enumerable : true});
}
const restore = () => {
  for (const n in dismissed) {
    if (natives[n]) Object.defineProperty(window, n, natives[n]); else delete window[n];
  }
};

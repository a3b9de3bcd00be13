@@META@@
self.GLOBAL = {
  isWindow: function() { return false; },
  isWorker: function() { return true; },
};
importScripts("/resources/testharness.js");
@@SCRIPT@@
importScripts("@@PATH@@");
done();

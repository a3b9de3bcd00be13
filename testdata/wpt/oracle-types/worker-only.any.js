// META: global=worker
// META: title=A test of the worker globals
// META: variant=?a
// META: variant=?b
test(() => {
  assert_true(self.GLOBAL.isWorker(), 'GLOBAL.isWorker');
  assert_equals(self.META_TITLE, 'A test of the worker globals');
}, 'in a worker, ' + location.search);

// The layout oracle's testharnessreport.js, served at /resources/testharnessreport.js
// on every case origin in place of a docroot's own (WPT reserves this file for the
// system running the tests). On a trace page (the recorder defined window.trace) it
// records each subtest as a value record, label the subtest's name and value its
// status, in the order the harness reports them, then the harness status under the
// label "(harness)", and ends the trace. Elsewhere (geometry, reflect) it records
// nothing. A subtest's message (the assertion text, "assert_equals: expected 1 but
// got 2") and the harness's (an uncaught error's) travel as the record's "message"
// (trace.value's third argument), which trace comparison and the vote skip: their
// text differs between engines for the same outcome. Stacks are left out.
(function () {
  'use strict';
  var subtest = ['PASS', 'FAIL', 'TIMEOUT', 'NOTRUN', 'PRECONDITION_FAILED'];
  var harness = ['OK', 'ERROR', 'TIMEOUT', 'PRECONDITION_FAILED'];
  var rec = window.trace;
  try {
    // No results table in the page: the page's layout stays the test's own.
    setup({output: false});
  } catch (e) { /* not testharness.js */ }
  if (typeof add_completion_callback !== 'function' || !rec) return;
  add_completion_callback(function (tests, status) {
    for (var i = 0; i < tests.length; i++) {
      var s = tests[i].status;
      rec.value(String(tests[i].name), subtest[s] || String(s), tests[i].message);
    }
    rec.value('(harness)', harness[status.status] || String(status.status), status.message);
    rec.done();
  });
})();

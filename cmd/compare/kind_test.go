package main

// A unit test of our own code (no engine: the oracle lines are made up, in the form
// `oracle store export` writes them): a throw-away kind (kindstest.Title) is voted
// through package kinds' registry once registered, and reported, not skipped, when
// it is not.

import (
	"testing"

	"github.com/layout-oracle/oracle/kinds"
	"github.com/layout-oracle/oracle/kinds/kindstest"
	"github.com/stretchr/testify/assert"
)

func TestAKindIsComparedOnceRegisteredAndReportedWhenNot(t *testing.T) {
	titles := `{"id":"same","titles":{"chromium":{"engine":"chromium","title":"x"},"firefox":{"engine":"firefox","title":"x"},"webkit":{"engine":"webkit","title":"x"}}}` + "\n" +
		`{"id":"apart","titles":{"chromium":{"engine":"chromium","title":"x"},"firefox":{"engine":"firefox","title":"y"},"webkit":{"engine":"webkit","title":"z"}}}` + "\n"
	oracle := titles + fixture(t, "oracle-one.ndjson")

	code, stdout, stderr := runCmd(t, oracle, "--oracle", "-")
	assert.Equal(t, exitBadInput, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Contains(t, stdout, `error         same  oracle record 1 answers under "titles": no kind compare knows has that field (known: `+kinds.Fields()+`)`)
	assert.Contains(t, stdout, `error         apart  oracle record 2 answers under "titles"`)
	assert.Contains(t, stdout, "no-candidate  only", "the cases after it are compared")
	assert.Contains(t, stdout, "3 cases:")

	t.Run("registered", func(t *testing.T) {
		kindstest.Register(t)
		code, stdout, stderr := runCmd(t, oracle, "--oracle", "-")
		assert.Equal(t, exitOK, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
		assert.Contains(t, stdout, "no-candidate  same")
		assert.Contains(t, stdout, "untrustworthy apart  the engines' titles are split")
		assert.Contains(t, stdout, "no-candidate  only")

		// A candidate record for it is not in the contract (dump-format.md): refused.
		code, stdout, stderr = runCmd(t, `{"id":"same","title":{"engine":"candidate","title":"x"}}`+"\n", "--oracle", writeFile(t, titles), "--candidate", "-")
		assert.Equal(t, exitBadInput, code, stdout)
		assert.Contains(t, stderr, `candidate record 1: neither {"id", "dump"}`)
	})
}

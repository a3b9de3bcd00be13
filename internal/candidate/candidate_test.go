package candidate

// Real processes (sh, sleep, cat); no engine.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := Command{Cmd: "sleep 30 & echo $! > " + pidFile + "; wait", Timeout: 500 * time.Millisecond}
	start := time.Now()
	_, err := c.Run(context.Background(), "")
	var ce *Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "timeout", ce.Kind)
	assert.Less(t, time.Since(start), 3*time.Second)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	// The child is gone (or a zombie of init's for a moment): signal 0 fails or
	// its state says so.
	deadline := time.Now().Add(2 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil || strings.Contains(string(st), ") Z") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	assert.True(t, err != nil || strings.Contains(string(st), ") Z"), "the background sleep outlived the timeout: %s", st)
}

func TestExitKeepsABoundedStderr(t *testing.T) {
	c := Command{Cmd: "head -c 100000 /dev/zero | tr '\\0' x >&2; echo END >&2; exit 3", Timeout: 5 * time.Second}
	_, err := c.Run(context.Background(), "")
	var ce *Error
	require.True(t, errors.As(err, &ce), "%v", err)
	assert.Equal(t, "exit", ce.Kind)
	assert.Contains(t, ce.Msg, "exit status 3")
	assert.Equal(t, "exit", KindOf(err.Error()))
	assert.Equal(t, "", KindOf("candidate: something else"))
	assert.Less(t, len(ce.Stderr), maxStderr+100)
	assert.True(t, strings.HasSuffix(ce.Stderr, "END"), "the end of stderr is kept")
}

func TestStdinIsTheCaseAndBadDumpsAreRefused(t *testing.T) {
	c := Command{Cmd: "cat", Timeout: 5 * time.Second}
	out, err := c.Run(context.Background(), "<p>hi")
	require.NoError(t, err)
	assert.Equal(t, "<p>hi", string(out))
	_, err = c.Dump(context.Background(), `{"engine":"x"}`)
	require.Error(t, err)
	// Refused by the contract's schema, which names what is missing and where.
	assert.Contains(t, err.Error(), "not a dump of the contract")
	assert.Contains(t, err.Error(), "missing properties 'engine_version'")
	assert.Contains(t, err.Error(), "[dump.schema.json#/required]")
	_, err = c.Dump(context.Background(), ``)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no dump on stdout")
}

func TestPinnedEnvironment(t *testing.T) {
	env, err := Pinned()
	require.NoError(t, err)
	fc := lookup(env, "FONTCONFIG_FILE")
	require.NotEmpty(t, fc)
	b, err := os.ReadFile(fc)
	require.NoError(t, err, "the browsers' fontconfig file exists")
	assert.Contains(t, string(b), "Liberation Serif")
	assert.Equal(t, "en_US.UTF-8", lookup(env, "LC_ALL"))
	assert.Equal(t, "en_US.UTF-8", lookup(env, "LANG"))
	assert.Equal(t, "UTC", lookup(env, "TZ"))
	assert.Equal(t, "16", lookup(env, "LAYOUT_ORACLE_FONT_SIZE"))
	assert.Equal(t, "800x600", lookup(env, "LAYOUT_ORACLE_VIEWPORT"))
	c := Command{Cmd: `printf '%s|%s' "$TZ" "$FONTCONFIG_FILE"`, Env: env, Timeout: 5 * time.Second}
	out, err := c.Run(context.Background(), "")
	require.NoError(t, err)
	assert.Equal(t, "UTC|"+fc, string(out))
	assert.Contains(t, Exports([]string{"A=it's"}), `export A='it'\''s'`)
}

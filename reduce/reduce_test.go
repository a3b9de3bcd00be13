package reduce

// These are unit tests of the reducer alone: the interestingness tests are
// constructed predicates over the variant's text, no browser runs.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counting wraps a per-variant predicate as a Test, failing t if a variant is
// asked twice, and records the largest batch.
type counting struct {
	t       *testing.T
	mu      sync.Mutex
	seen    map[[32]byte]bool
	calls   int
	maxSize int
	f       func(Variant) bool
}

func newCounting(t *testing.T, f func(Variant) bool) *counting {
	return &counting{t: t, seen: map[[32]byte]bool{}, f: f}
}

func (c *counting) test(_ context.Context, vs []Variant) []bool {
	out := make([]bool, len(vs))
	var wg sync.WaitGroup
	for i, v := range vs {
		c.mu.Lock()
		if c.seen[v.key()] {
			c.t.Errorf("variant asked twice: %.80q", v.HTML)
		}
		c.seen[v.key()] = true
		c.calls++
		c.maxSize = max(c.maxSize, len(vs))
		c.mu.Unlock()
		wg.Go(func() { out[i] = c.f(v) })
	}
	wg.Wait()
	return out
}

func bigPage() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>t</title><style>\n")
	for i := range 20 {
		fmt.Fprintf(&b, "h%d, .c%d > p { margin: %dpx 2px 3px; color: blue; }\n", i%6+1, i, i)
	}
	b.WriteString("@media screen { .keep, .other { color: red; padding: 1px 2px 3px 4px; border: 1px solid } }\n</style></head><body>\n")
	for i := range 30 {
		fmt.Fprintf(&b, "<div class=c%d id=d%d data-x=%d><p>Paragraph %d has <em>some</em> words in it.</p></div>\n", i, i, i, i)
	}
	b.WriteString(`<section class="a b"><p class="keep other" title=x>alpha needle omega</p></section>`)
	b.WriteString("</body></html>")
	return b.String()
}

func TestReduceKeepsWhatTheTestNeeds(t *testing.T) {
	// Interesting: some element with class keep holds the word needle, and the
	// style sheet still gives .keep a padding.
	c := newCounting(t, func(v Variant) bool {
		d, err := parse(v)
		if err != nil {
			return false
		}
		return strings.Contains(v.HTML, "needle") && strings.Contains(v.HTML, `class="keep`) &&
			strings.Contains(v.HTML, ".keep") && strings.Contains(v.HTML, "padding") && d.root != nil
	})
	orig := Variant{HTML: bigPage()}
	best, st, ok := Reduce(context.Background(), orig, c.test, Options{Parallel: 4})
	require.True(t, ok)
	assert.True(t, c.f(best), "the result must still be interesting")
	assert.Less(t, best.Size(), orig.Size()/10, "reduced to %q", best.HTML)
	assert.NotContains(t, best.HTML, "Paragraph")
	assert.NotContains(t, best.HTML, "color: blue")
	assert.NotContains(t, best.HTML, "data-x")
	assert.NotContains(t, best.HTML, "<section", "wrappers are unwrapped")
	assert.NotContains(t, best.HTML, "omega", "text words are dropped")
	assert.NotContains(t, best.HTML, ".other", "selector lists are cut")
	assert.NotContains(t, best.HTML, "2px 3px", "values are shortened")
	assert.Equal(t, c.calls, st.Tests)
	assert.Equal(t, orig.Size(), st.BytesBefore)
	assert.Equal(t, best.Size(), st.BytesAfter)
	assert.Greater(t, c.maxSize, 1, "variants go to the test in batches")
	t.Logf("%d -> %d bytes in %d tests (%d cache hits): %q", st.BytesBefore, st.BytesAfter, st.Tests, st.CacheHits, best.HTML)
}

func TestReduceScriptStatements(t *testing.T) {
	script := "var a = 1;\nfunction f(x) {\n  a += x;\n  keep(a);\n  a--;\n}\nf(2); f(3)\nconsole.log('x;y')\nlet s = `t;${a}`;"
	c := newCounting(t, func(v Variant) bool {
		return strings.Contains(v.Script, "keep(") && strings.Count(v.Script, "{") == strings.Count(v.Script, "}")
	})
	best, _, ok := Reduce(context.Background(), Variant{HTML: "<p>x</p>", Script: script}, c.test, Options{})
	require.True(t, ok)
	assert.Equal(t, "function f(x) { keep(a); }", strings.Join(strings.Fields(best.Script), " "))
}

func TestReduceNotInteresting(t *testing.T) {
	c := newCounting(t, func(Variant) bool { return false })
	v := Variant{HTML: bigPage()}
	best, st, ok := Reduce(context.Background(), v, c.test, Options{})
	assert.False(t, ok)
	assert.Equal(t, v, best)
	assert.Equal(t, 1, st.Tests)
}

// A case already minimal comes back as it was, not as its serialization, which
// adds what parsing implied: "<p>x" came back as "<p>x</p>", 4 -> 8 bytes.
func TestReduceNeverGrowsACase(t *testing.T) {
	c := newCounting(t, func(v Variant) bool { return strings.Contains(v.HTML, "x") })
	best, st, ok := Reduce(context.Background(), Variant{HTML: "<p>x"}, c.test, Options{})
	require.True(t, ok)
	assert.Equal(t, "<p>x", best.HTML)
	assert.Equal(t, st.BytesBefore, st.BytesAfter)
}

// A case whose parsed-and-serialized form loses what is interesting (here, the
// raw upper-case markup) is reduced line by line.
func TestReduceRawLines(t *testing.T) {
	html := "<P ID=raw>keep</P>\n<div>a</div>\n<div>b</div>\n<div>c</div>\n"
	c := newCounting(t, func(v Variant) bool { return strings.Contains(v.HTML, "<P ID=raw>") })
	best, _, ok := Reduce(context.Background(), Variant{HTML: html}, c.test, Options{})
	require.True(t, ok)
	assert.Equal(t, "<P ID=raw>keep</P>\n", best.HTML)
}

func TestReduceStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	test := func(_ context.Context, vs []Variant) []bool {
		n++
		if n == 3 {
			cancel()
		}
		out := make([]bool, len(vs))
		for i := range out {
			out[i] = true
		}
		return out
	}
	_, _, ok := Reduce(ctx, Variant{HTML: bigPage()}, test, Options{})
	assert.True(t, ok)
	assert.Equal(t, 3, n, "no batch after the cancel")
}

func TestStatements(t *testing.T) {
	s := "a();b()\nif (x) {\n y(1,\n 2);\n}\nz = `;`; // c;\n"
	var got []string
	for _, sp := range statements(s) {
		got = append(got, s[sp.lo:sp.hi])
	}
	assert.Equal(t, []string{"a();", "b()\n", "y(1,\n 2);", "if (x) {\n y(1,\n 2);\n}", "z = `;`;", "// c;\n"}, got)
}

func TestScanCSS(t *testing.T) {
	s := "/* c */ a, b > c { x: 1px 2px; y: url(a;b) }\n@media print { d { z: 0 } }\n@import 'q';"
	c := scanCSS(s, false)
	text := func(sp []span) []string {
		var out []string
		for _, x := range sp {
			out = append(out, s[x.lo:x.hi])
		}
		return out
	}
	// A rule goes with the space (and comments) before it.
	assert.ElementsMatch(t, []string{"/* c */", "/* c */ a, b > c { x: 1px 2px; y: url(a;b) }", "\n@media print { d { z: 0 } }", " d { z: 0 }", "@import 'q';"}, text(c.rules))
	assert.Equal(t, []string{"a,", ", b > c "}, text(c.selectors))
	assert.Equal(t, []string{" x: 1px 2px;", " y: url(a;b) ", " z: 0 "}, text(c.decls))
	assert.Equal(t, []string{" 1px", " 2px"}, text(c.values))
	assert.Equal(t, "a { y: 1 }", cutSpans("a { x: 0; y: 1 }", []span{{4, 10}, {5, 9}}))
}

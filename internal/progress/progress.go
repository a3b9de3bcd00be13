// Package progress shows progress of a long run (cases done, rate, ETA) on stderr
// when stderr is a terminal, and nothing at all otherwise: a log file or a pipe
// gets no bar, no escape codes, not a byte.
package progress

import (
	"io"
	"os"
	"strconv"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar counts done units; a nil *Bar (not a terminal) does nothing.
type Bar struct{ b *progressbar.ProgressBar }

// Terminal reports whether w is a terminal.
func Terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New is a bar of max units (-1: unknown) labelled what, on w when w is a terminal;
// nil otherwise.
func New(w io.Writer, max int64, what, unit string) *Bar {
	if !Terminal(w) {
		return nil
	}
	return newBar(w, max, what, unit)
}

func newBar(w io.Writer, max int64, what, unit string) *Bar {
	return &Bar{progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

// Add counts n more units done.
func (b *Bar) Add(n int) {
	if b != nil {
		b.b.Add(n)
	}
}

// Describe changes the label.
func (b *Bar) Describe(what string) {
	if b != nil {
		b.b.Describe(what)
	}
}

// Finish clears the bar from the terminal.
func (b *Bar) Finish() {
	if b != nil {
		b.b.Finish()
		b.b.Exit()
	}
}

// Reader counts the bytes read through r and the records (lines) among them, so a
// streaming reader of NDJSON (compare) shows how far it is; against the file's size,
// with an ETA, when r is a regular file. r itself when w is not a terminal.
func Reader(r io.Reader, w io.Writer, what string) io.Reader {
	if !Terminal(w) {
		return r
	}
	size := int64(-1)
	if f, ok := r.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	}
	return newReader(r, size, w, what)
}

func newReader(r io.Reader, size int64, w io.Writer, what string) *reader {
	if size <= 0 {
		size = -1
	}
	b := progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	return &reader{r: r, bar: b, what: what}
}

type reader struct {
	r     io.Reader
	bar   *progressbar.ProgressBar
	what  string
	lines int
	done  bool
}

func (p *reader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	for _, c := range b[:n] {
		if c == '\n' {
			p.lines++
		}
	}
	p.bar.Describe(p.what + " " + strconv.Itoa(p.lines) + " records")
	p.bar.Add(n)
	if err != nil && !p.done {
		p.done = true
		p.bar.Finish()
		p.bar.Exit()
	}
	return n, err
}

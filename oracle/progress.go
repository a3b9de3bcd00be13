package oracle

import (
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DefaultProgressEvery is how often a serving oracle logs its progress line.
const DefaultProgressEvery = 30 * time.Second

// progress counts answers for the periodic one-line summary at info level, so a
// long run (a WPT corpus piped through) shows on stderr how far it is and how fast.
type progress struct {
	answered     atomic.Int64
	errors       atomic.Int64 // requests answered with an error line
	engineErrors atomic.Int64 // answers in which some engine has an error
}

// note counts one answer.
func (p *progress) note(resp any) {
	p.answered.Add(1)
	switch r := resp.(type) {
	case ErrorResponse:
		p.errors.Add(1)
	case interface{ engineErrors() map[string]string }:
		if len(r.engineErrors()) > 0 {
			p.engineErrors.Add(1)
		}
	}
}

// run logs a summary every interval in which something was answered, and a last one
// when stop closes; interval <= 0 logs nothing.
func (p *progress) run(log zerolog.Logger, every time.Duration, stop <-chan struct{}) {
	if every <= 0 {
		return
	}
	start := time.Now()
	last, lastAt := int64(0), start
	line := func(msg string) {
		n, now := p.answered.Load(), time.Now()
		log.Info().Int64("answered", n).Int64("errors", p.errors.Load()).Int64("engine_errors", p.engineErrors.Load()).
			Float64("rate", round1(float64(n-last)/now.Sub(lastAt).Seconds())).
			Float64("avg_rate", round1(float64(n)/now.Sub(start).Seconds())).Msg(msg)
		last, lastAt = n, now
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			if p.answered.Load() > last {
				line("progress: done")
			}
			return
		case <-t.C:
			if p.answered.Load() > last {
				line("progress")
			}
		}
	}
}

func round1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// Package pool is one engine's pages, each a browser.Engine serving one call at a
// time: handed out free and given back (Take, Put), grown by a late endpoint (Add),
// a page out of service for good dropped (Drop), all taken back before a close
// (Drain); which page's document holds kept inert cases (Keep); the pages' build
// (Version, Route), health and sandbox as ping reports them. What runs on a page,
// under which deadline, and when it is reset is package oracle's (fanOut).
package pool

import (
	"strings"
	"sync"
	"time"

	"github.com/layout-oracle/oracle/oracle/browser"
	"github.com/layout-oracle/oracle/oracle/remote"
)

// Pool is one engine's pages: each an Engine serving one call at a time. A request
// takes a free page (Take), uses it, and gives it back (Put) after a reset to a fresh
// about:blank, or after an inert case it kept (Keep).
type Pool struct {
	name string
	// pages grows when a slow remote endpoint joins a serving pool (Add);
	// pagesMu guards it, and free has room for every page the engine may have.
	pagesMu sync.Mutex
	pages   []browser.Engine
	free    chan browser.Engine

	// dropped counts pages taken out of service for good (a remote endpoint whose
	// build changed, remote.OutOfService); gone closes when every page is.
	dropMu  sync.Mutex
	dropped map[browser.Engine]bool
	gone    chan struct{}

	// kept counts, per page, the inert cases its current document has held since
	// the page last had a new one (Keep); a page not in it has a new document.
	keptMu sync.Mutex
	kept   map[browser.Engine]int

	// The sandbox as ping reports it: the last /proc scan's, which can retry for 2 s,
	// so ping never runs one; each read starts the next scan in the
	// background, at most one at a time. Scanned first at startup (ScanSandbox).
	sbMu       sync.Mutex
	sbState    browser.SandboxState
	sbOK       bool // sbState holds a page's state
	sbScanning bool
}

// maxKept bounds how many inert cases one document holds in turn before the page
// gets a new one anyway, so nothing a document accumulates grows without bound.
const maxKept = 200

// Keep says whether e may skip its reset after the inert case it just answered: the
// engine kept its page as the case left it (browser.Keeper), for the next case that
// is inert too. It counts the case on e's document.
func (p *Pool) Keep(e browser.Engine) bool {
	k, ok := e.(browser.Keeper)
	if !ok {
		return false
	}
	// k.Keep is a browser round trip (up to seconds): keptMu is not held across it,
	// or every other page of the engine would wait on this one. Only the call on e
	// (one call at a time) changes e's count, so it cannot move meanwhile.
	p.keptMu.Lock()
	full := p.kept[e] >= maxKept
	p.keptMu.Unlock()
	keep := !full && k.Keep()
	p.keptMu.Lock()
	defer p.keptMu.Unlock()
	if !keep {
		delete(p.kept, e)
		return false
	}
	if p.kept == nil {
		p.kept = map[browser.Engine]int{}
	}
	p.kept[e]++
	return true
}

// Fresh records that e has a new document (it was reset).
func (p *Pool) Fresh(e browser.Engine) {
	p.keptMu.Lock()
	defer p.keptMu.Unlock()
	delete(p.kept, e)
}

// HoldsKept says whether e's document holds an inert case it kept.
func (p *Pool) HoldsKept(e browser.Engine) bool {
	p.keptMu.Lock()
	defer p.keptMu.Unlock()
	return p.kept[e] > 0
}

// New is name's pool of pages, every one free.
func New(name string, pages []browser.Engine) *Pool {
	return NewWithRoom(name, pages, len(pages))
}

// NewWithRoom is a pool with room for up to capacity pages, pages among them.
func NewWithRoom(name string, pages []browser.Engine, capacity int) *Pool {
	p := &Pool{name: name, pages: pages, free: make(chan browser.Engine, max(capacity, len(pages))), gone: make(chan struct{})}
	for _, e := range pages {
		p.free <- e
	}
	return p
}

// Name is the pool's engine.
func (p *Pool) Name() string { return p.name }

// Take hands out free pages, one per receive.
func (p *Pool) Take() <-chan browser.Engine { return p.free }

// Put gives e back to the pool, free (there is always room: the pool's room bounds
// its pages).
func (p *Pool) Put(e browser.Engine) { p.free <- e }

// Gone is closed once every page of the pool was dropped.
func (p *Pool) Gone() <-chan struct{} { return p.gone }

// Add puts more pages into a serving pool (an endpoint that came up after the pool
// began to serve); it refuses those past the pool's room, which it returns.
func (p *Pool) Add(pages []browser.Engine) (refused []browser.Engine) {
	p.pagesMu.Lock()
	defer p.pagesMu.Unlock()
	for _, e := range pages {
		if len(p.pages) >= cap(p.free) {
			refused = append(refused, e)
			continue
		}
		p.pages = append(p.pages, e)
		p.free <- e // room: cap(free) bounds len(pages)
	}
	return refused
}

// All is the pool's pages now.
func (p *Pool) All() []browser.Engine {
	p.pagesMu.Lock()
	defer p.pagesMu.Unlock()
	return append([]browser.Engine(nil), p.pages...)
}

// Drop takes e out of the pool for good and closes it.
func (p *Pool) Drop(e browser.Engine) {
	p.dropMu.Lock()
	if p.dropped == nil {
		p.dropped = map[browser.Engine]bool{}
	}
	if !p.dropped[e] {
		p.dropped[e] = true
		if len(p.dropped) == len(p.All()) {
			close(p.gone)
		}
	}
	p.dropMu.Unlock()
	go e.Close()
}

// Drain takes every page back out of the pool, waiting up to d for the ones still
// in a call or in the reset after it (which runs after the answer), and returns
// those that came back; dropped pages never do. The pool serves no more.
func (p *Pool) Drain(d time.Duration) []browser.Engine {
	var back []browser.Engine
	wait := time.After(d)
	for range p.All() {
		select {
		case e := <-p.free:
			back = append(back, e)
		case <-p.gone:
			return back
		case <-wait:
			return back
		}
	}
	return back
}

// Version is the same for every page of a pool (the oracle checks it); the Route may
// differ between local pages and remote endpoints': Route names each once.
func (p *Pool) Version() string { return p.All()[0].Version() }

// Route is the routes of the pool's pages, each named once, "; " between.
func (p *Pool) Route() string {
	var routes []string
	seen := map[string]bool{}
	for _, e := range p.All() {
		if r := e.Route(); !seen[r] {
			seen[r] = true
			routes = append(routes, r)
		}
	}
	return strings.Join(routes, "; ")
}

// Health is one engine's pages' state, as ping reports it.
type Health struct {
	State    string `json:"state"`
	Restarts int    `json:"restarts"`
	Pages    int    `json:"pages"`
	Reason   string `json:"reason,omitempty"`
}

// Health is the worst page state and the sum of restarts.
func (p *Pool) Health() Health { return HealthOf(p.All()) }

// HealthOf is the worst state of pages and the sum of their restarts. A page
// out of service counts as failed.
func HealthOf(pages []browser.Engine) Health {
	h := Health{State: browser.StateReady, Pages: len(pages)}
	rank := map[string]int{browser.StateReady: 0, browser.StateRestarting: 1, browser.StateFailed: 2, remote.StateOutOfService: 2}
	for _, e := range pages {
		ph := e.Health()
		h.Restarts += ph.Restarts
		if rank[ph.State] > rank[h.State] {
			h.State, h.Reason = ph.State, ph.Reason
		}
	}
	return h
}

// Sandbox is the pages' sandbox state as the last scan found it, at once; it starts
// the next scan. ok is false when no page can report one (or none was scanned yet).
func (p *Pool) Sandbox() (browser.SandboxState, bool) {
	p.sbMu.Lock()
	defer p.sbMu.Unlock()
	if !p.sbScanning {
		p.sbScanning = true
		go func() {
			p.ScanSandbox()
			p.sbMu.Lock()
			p.sbScanning = false
			p.sbMu.Unlock()
		}()
	}
	return p.sbState, p.sbOK
}

// ScanSandbox reads the pages' sandbox state from /proc now (up to 2 s) and keeps it
// for Sandbox: the first page's, or the first page whose sandbox is off.
func (p *Pool) ScanSandbox() (st browser.SandboxState, ok bool) {
	defer func() {
		p.sbMu.Lock()
		p.sbState, p.sbOK = st, ok
		p.sbMu.Unlock()
	}()
	for _, e := range p.All() {
		r, is := e.(browser.SandboxReporter)
		if !is {
			continue
		}
		s := r.Sandbox()
		if !ok || (st.On && !s.On) {
			st, ok = s, true
		}
	}
	return st, ok
}

package katatest

import (
	"context"
	"sync"

	"gokata/internal/katatest/shake"
)

// The fakes are where the code under test calls into the test: each call
// of Gate.Hold, Peak.Enter, its leave and Recorder.Add starts and ends
// with a shake.Point, so the code's goroutines interleave differently
// around them when a repetition shakes the schedule (see Repeat).

// Gate holds every call that enters it until the test releases the gate,
// and records what the calls saw. Create it inside the test body.
type Gate struct {
	mu        sync.Mutex
	open      chan struct{}
	release   sync.Once
	entered   int
	waiting   int
	cancelled int
}

// NewGate returns a closed gate.
func NewGate() *Gate { return &Gate{open: make(chan struct{})} }

// Gate returns a closed gate that the test owns: [Call.Stop] releases it, so
// a call that went wrong while held in it can still end.
func (h *H) Gate() *Gate {
	g := NewGate()
	h.Own(g.Release)
	return g
}

// Own hands the harness the release of a fake of the test's own (a latch,
// a held backend): [Call.Stop], and so [Call.Returns] and [Unwind], call
// release before they wait for the call, so a call that went wrong while
// held in the fake can still end. release must be safe to call twice.
func (h *H) Own(release func()) { h.fakes = append(h.fakes, release) }

// releaseFakes releases every fake the test owns. Call it from the test
// body's goroutine.
func (h *H) releaseFakes() {
	for _, release := range h.fakes {
		release()
	}
}

// Hold blocks until the gate is released or ctx is done. It returns
// ctx.Err() if ctx ended first.
func (g *Gate) Hold(ctx context.Context) error {
	shake.Point()
	defer shake.Point()
	g.mu.Lock()
	g.entered++
	g.waiting++
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.waiting--
		g.mu.Unlock()
	}()
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		g.cancelled++
		g.mu.Unlock()
		return ctx.Err()
	}
}

// Release lets every held call and every later one through.
// Releasing it again does nothing.
func (g *Gate) Release() { g.release.Do(func() { close(g.open) }) }

// Entered counts the calls that reached the gate.
func (g *Gate) Entered() int { g.mu.Lock(); defer g.mu.Unlock(); return g.entered }

// Waiting counts the calls held right now.
func (g *Gate) Waiting() int { g.mu.Lock(); defer g.mu.Unlock(); return g.waiting }

// Cancelled counts the calls released by their context rather than the gate.
func (g *Gate) Cancelled() int { g.mu.Lock(); defer g.mu.Unlock(); return g.cancelled }

// Peak measures concurrency: how many calls are inside at once.
type Peak struct {
	mu       sync.Mutex
	now, max int
}

// Enter marks a call as running; the returned func marks it done.
func (p *Peak) Enter() (leave func()) {
	shake.Point()
	p.mu.Lock()
	p.now++
	p.max = max(p.max, p.now)
	p.mu.Unlock()
	shake.Point()
	return func() {
		shake.Point()
		p.mu.Lock()
		p.now--
		p.mu.Unlock()
		shake.Point()
	}
}

// Now is how many calls are inside right now.
func (p *Peak) Now() int { p.mu.Lock(); defer p.mu.Unlock(); return p.now }

// Max is the most calls that were ever inside at once.
func (p *Peak) Max() int { p.mu.Lock(); defer p.mu.Unlock(); return p.max }

// Recorder collects what a callback saw (pauses, states, arguments), safe
// for concurrent use.
type Recorder[T any] struct {
	mu  sync.Mutex
	got []T
}

// Add records v.
func (r *Recorder[T]) Add(v T) {
	shake.Point()
	defer shake.Point()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, v)
}

// All returns a copy of everything recorded, in order.
func (r *Recorder[T]) All() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.got...)
}

package katatest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// HeldClock is the mock clock, except that it holds the code at a gate
// right after the code read the clock or made a timer, as the scheduler may
// hold a goroutine there. The test arms it, lets the code run up to the
// hold, makes something else happen meanwhile (the clock moves, a cancel, a
// result), then releases Gate: the code goes on and finds that world.
//
// Two moments that "come together" never do on the mock clock by
// themselves: it lets every goroutine settle after each timer it fires. A
// hold stages them. Give the code the HeldClock instead of h.Clk.
type HeldClock struct {
	*Clock
	Gate *Gate // the code waits here; the test's Release lets it go

	// readings is set and cleared by the test goroutine only, and read by
	// the code: an atomic load orders nothing between the code's
	// goroutines, so the race detector sees their races as before.
	readings atomic.Bool

	mu        sync.Mutex
	nextTimer bool // hold the next timer made
	nth, made int  // hold the nth timer made (0: none), of made so far
	held      bool // a timer's maker was held
}

// HeldClock makes a HeldClock on h's clock, with a gate of h's.
func (h *H) HeldClock() *HeldClock { return &HeldClock{Clock: h.Clk, Gate: h.Gate()} }

// HoldReadings holds every caller of Now at the gate, right after its
// reading, for as long as it is on. Turn it on only while the one call the
// test means to hold runs.
func (c *HeldClock) HoldReadings(on bool) { c.readings.Store(on) }

// HoldNextTimer holds the caller that makes the next timer (Timer, After
// or AfterFunc) right after it made it, once; off forgets it.
func (c *HeldClock) HoldNextTimer(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextTimer = on
}

// HoldTimer holds the caller that makes the nth timer on this clock
// (Timer, After or AfterFunc, counted from the clock's making), right after
// it made it.
func (c *HeldClock) HoldTimer(nth int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nth = nth
}

// Held reports whether a timer's maker was held.
func (c *HeldClock) Held() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// Now reads the clock, and holds its caller while HoldReadings is on.
func (c *HeldClock) Now() time.Time {
	now := c.Clock.Now()
	if c.readings.Load() {
		_ = c.Gate.Hold(context.Background())
	}
	return now
}

func (c *HeldClock) Timer(d time.Duration) *clock.Timer {
	t := c.Clock.Timer(d)
	c.made1()
	return t
}

func (c *HeldClock) After(d time.Duration) <-chan time.Time { return c.Timer(d).C }

func (c *HeldClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	t := c.Clock.AfterFunc(d, f)
	c.made1()
	return t
}

// made1 counts a timer made, and holds its maker if it is the one.
func (c *HeldClock) made1() {
	c.mu.Lock()
	c.made++
	hold := c.nextTimer || c.made == c.nth
	if hold {
		c.nextTimer, c.held = false, true
	}
	c.mu.Unlock()
	if hold {
		_ = c.Gate.Hold(context.Background())
	}
}

package blockingloop

// R2 when the loop is slow after a beat. OnTick runs on the loop, and
// takes some time; the scheduler may also hold the loop's goroutine at any
// point, for instance right before it makes a timer. Meanwhile the clock
// moves on, by less than a Tick. The heartbeat must keep its schedule all
// the same: one OnTick every Tick from Run's start, at 1s, 2s, 3s…, as a
// clk.Ticker gives, not a Tick after the loop was done with the last beat.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"gokata/internal/katatest"
)

// testSlowLoopClock is the mock clock, except that while the test sets a
// gate, a call that makes a timer or a ticker is held there before it
// makes it, as the scheduler may hold the caller right before that call.
type testSlowLoopClock struct {
	*katatest.Clock
	mu   sync.Mutex
	gate *katatest.Gate
}

func (c *testSlowLoopClock) hold(g *katatest.Gate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate = g
}

func (c *testSlowLoopClock) held() {
	c.mu.Lock()
	g := c.gate
	c.mu.Unlock()
	if g != nil {
		_ = g.Hold(context.Background())
	}
}

func (c *testSlowLoopClock) Timer(d time.Duration) *clock.Timer {
	c.held()
	return c.Clock.Timer(d)
}

func (c *testSlowLoopClock) After(d time.Duration) <-chan time.Time { return c.Timer(d).C }

func (c *testSlowLoopClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	c.held()
	return c.Clock.AfterFunc(d, f)
}

func (c *testSlowLoopClock) Ticker(d time.Duration) *clock.Ticker {
	c.held()
	return c.Clock.Ticker(d)
}

func (c *testSlowLoopClock) Tick(d time.Duration) <-chan time.Time { return c.Ticker(d).C }

func TestR2_TheHeartbeatKeepsItsScheduleWhenTheLoopIsSlowAfterABeat(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		clk := &testSlowLoopClock{Clock: h.Clk}
		backend := testNewBackend()
		h.Own(backend.releaseAll)
		var ticks katatest.Recorder[Stats]
		var mu sync.Mutex
		var inOnTick *katatest.Gate // OnTick waits there, while set
		cache := New(clk, backend.lookup, Config{MaxInFlight: 2, Tick: testTick, OnTick: func(s Stats) {
			ticks.Add(s)
			mu.Lock()
			g := inOnTick
			mu.Unlock()
			if g != nil {
				_ = g.Hold(context.Background())
			}
		}})
		run := katatest.StartErr(h, cache.Run)
		var gates []*katatest.Gate
		defer func() {
			clk.hold(nil)
			run.Cancel()
			for _, g := range gates {
				g.Release()
			}
			backend.releaseAll()
			synctest.Wait()
		}()
		synctest.Wait()
		// After each beat, OnTick takes a while on the clock; then, if the
		// loop makes a timer, it is held right before it while the clock
		// moves a little more. Each time less than a Tick in all.
		steps := []struct{ inOnTick, beforeTimer time.Duration }{
			{1, 1},
			{testTick / 2, testTick / 4},
			{testTick - 2, 1},
		}
		var story []string // what slowed the loop down so far
		late := func(n, want int) {
			what := ""
			if len(story) > 0 {
				what = " Before that, " + strings.Join(story, "; ") + "."
			}
			h.Errorf("OnTick ran %d time(s) by %v on the clock; want %d, one every Tick (%v) from Run's start.%s The "+
				"beats keep their schedule however long the loop takes over one (less than a Tick here): a timer "+
				"made afresh after each beat counts from the moment the loop made it, so every slow beat pushes the "+
				"later ones back. Make one clk.Ticker(Tick) as Run starts, and call OnTick on each of its ticks",
				n, h.Elapsed(), want, testTick, what)
		}
		for i, st := range steps {
			beat := i + 1
			at := time.Duration(beat) * testTick
			og, tg := h.Gate(), h.Gate()
			gates = append(gates, og, tg)
			mu.Lock()
			inOnTick = og
			mu.Unlock()
			clk.hold(tg)
			// The loop is held (at most once a beat) while it makes a timer.
			timerHeld := func() {
				if tg.Waiting() == 0 {
					return
				}
				h.Advance(st.beforeTimer)
				story = append(story, fmt.Sprintf("the loop was held %v right before it made a timer, at %v",
					st.beforeTimer, h.Elapsed()-st.beforeTimer))
				clk.hold(nil)
				tg.Release()
				synctest.Wait()
			}
			h.Advance(at - h.Elapsed())
			timerHeld() // before OnTick, if that is when it makes one
			if n := len(ticks.All()); n != beat {
				late(n, beat)
				return
			}
			if og.Waiting() > 0 {
				h.Advance(st.inOnTick)
				story = append(story, fmt.Sprintf("the OnTick of %v took %v on the clock", at, st.inOnTick))
			}
			mu.Lock()
			inOnTick = nil
			mu.Unlock()
			og.Release()
			synctest.Wait()
			timerHeld() // after OnTick
			clk.hold(nil)
			tg.Release()
			synctest.Wait()
		}
		want := len(steps) + 1
		h.Advance(time.Duration(want)*testTick - h.Elapsed())
		if n := len(ticks.All()); n != want {
			late(n, want)
		}
	})
}

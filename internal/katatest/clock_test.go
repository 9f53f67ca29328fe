package katatest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// Timers made by many goroutines at once, some due at once, while the
// test moves the clock: with a bare clock.Mock two goroutines can fire the
// same timer and the second blocks forever holding the Mock's lock (a
// hang no synctest bubble reports). Every timer must fire exactly once.
func TestClockFiresEachTimerOnceWhateverRunsAtOnce(t *testing.T) {
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			clk := NewClock()
			const makers, each = 4, 8
			fired := make([]int, makers*each)
			var wg sync.WaitGroup
			for g := range makers {
				wg.Go(func() {
					for i := range each {
						tm := clk.Timer(time.Duration(i%3) * time.Millisecond)
						<-tm.C
						select {
						case <-tm.C:
							t.Errorf("timer %d of goroutine %d fired twice", i, g)
						default:
						}
						fired[g*each+i]++
					}
				})
			}
			done := make(chan struct{})
			go func() {
				wg.Wait()
				close(done)
			}()
			for {
				select {
				case <-done:
					for i, n := range fired {
						assert.Equal(t, 1, n, "timer %d", i)
					}
					return
				default:
					clk.Add(time.Millisecond)
				}
			}
		})
	}
}

// Sleep and After go through the same turn as Timer.
func TestClockSleepWaitsForTheClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := NewClock()
		woke := make(chan time.Time)
		go func() {
			clk.Sleep(time.Second)
			woke <- clk.Now()
		}()
		synctest.Wait()
		clk.Add(999 * time.Millisecond)
		synctest.Wait()
		select {
		case <-woke:
			t.Fatal("Sleep(1s) returned after 999ms")
		default:
		}
		clk.Add(time.Millisecond)
		assert.Equal(t, time.Unix(1, 0), <-woke)
		clk.Add(time.Second)
		assert.Equal(t, time.Unix(2, 0), <-clk.After(0), "After(0) fires at once")
	})
}

// Unwind ends calls left running: one waits for its ctx, one is stuck on
// a mutex that another call holds while it sleeps on the mock clock, which
// synctest cannot wait for.
func TestUnwindEndsCallsStuckOnCtxOrAMutex(t *testing.T) {
	Run(t, func(h *H) {
		var mu sync.Mutex
		holder := Start(h, func(ctx context.Context) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			h.Clk.Sleep(30 * time.Minute) // deaf to ctx
			return 1, nil
		})
		h.Settle()
		stuck := Start(h, func(ctx context.Context) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return 2, nil
		})
		waiter := Start(h, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 3, ctx.Err()
		})
		assert.NotNil(t, h.Settle(), "the second call waits on a mutex")
		Unwind(h, holder, stuck, waiter)
		for i, c := range []*Call[int]{holder, stuck, waiter} {
			assert.True(t, c.Returned(), "call %d returned", i+1)
		}
		assert.GreaterOrEqual(t, h.Elapsed(), 30*time.Minute)
	})
}

// StopRunning counts the timers that have neither fired nor been stopped,
// whichever way they were made, and stops them.
func TestClockStopRunningCountsTheTimersStillRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := NewClock()
		clk.Timer(time.Second)                     // running
		clk.Timer(time.Millisecond)                // fires below
		clk.Timer(0)                               // fired at once
		clk.Timer(time.Minute).Stop()              // stopped
		clk.AfterFunc(time.Hour, func() {})        // running
		after := clk.After(2 * time.Millisecond)   // fires below
		clk.AfterFunc(time.Millisecond, func() {}) // fires below
		clk.Add(2 * time.Millisecond)
		<-after
		synctest.Wait()
		assert.Equal(t, 2, clk.StopRunning(), "running timers")
		assert.Equal(t, 0, clk.StopRunning(), "after StopRunning stopped them")
		before := clk.Now()
		clk.WaitForAllTimers()
		assert.Equal(t, before, clk.Now(), "a timer was left on the clock")
	})
}

// Ticking tells the tickers still running from the stopped ones without
// moving the clock, and stops them; PendingTimer then counts a running
// ticker as a timer pending a period away instead of spinning for ever.
func TestClockTickingSeesStoppedTickers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := NewClock()
		clk.Ticker(time.Second)               // running
		clk.Ticker(time.Minute).Stop()        // stopped
		clk.Tick(3 * time.Second)             // running, and cannot be stopped
		reset := clk.Ticker(time.Millisecond) // stopped, then running again
		reset.Stop()
		reset.Reset(time.Hour)
		before := clk.Now()
		n, longest := clk.Ticking()
		assert.Equal(t, 3, n, "running tickers")
		assert.Equal(t, time.Hour, longest, "the longest period of the running tickers")
		assert.Equal(t, before, clk.Now(), "Ticking moved the clock")
		n, _ = clk.Ticking()
		assert.Equal(t, 0, n, "after Ticking stopped them")
	})
	Run(t, func(h *H) {
		h.Clk.Ticker(5 * time.Second)
		assert.Equal(t, 5*time.Second, h.PendingTimer(), "a running ticker is a timer pending")
		assert.Equal(t, time.Duration(0), h.PendingTimer(), "once stopped")
		h.Clk.Ticker(time.Second).Stop()
		h.Clk.Timer(time.Minute)
		assert.Equal(t, time.Minute, h.PendingTimer(), "a stopped ticker is not pending")
		assert.Equal(t, 0, h.Ticking())
	})
	assert.PanicsWithValue(t, "non-positive interval for NewTicker", func() { NewClock().Ticker(0) })
}

// A HeldClock holds the caller that reads it while readings are held, and
// the maker of the next (or the nth) timer, right after; nothing else.
func TestHeldClockHoldsWhereArmed(t *testing.T) {
	Run(t, func(h *H) {
		clk := h.HeldClock()
		clk.Now() // not armed: not held
		clk.HoldReadings(true)
		read := Go(h, func() (time.Time, error) { return clk.Now(), nil })
		synctest.Wait()
		clk.HoldReadings(false)
		assert.Equal(t, 1, clk.Gate.Waiting(), "the reading held")
		h.Clk.Add(time.Second)
		clk.Gate.Release()
		at, _ := read.Result()
		assert.True(t, at.Equal(time.Unix(0, 0)), "the reading from before the hold, got %v", at)

		clk = h.HeldClock()
		clk.Timer(time.Hour) // the 1st
		clk.HoldTimer(3)
		clk.After(time.Hour) // the 2nd
		third := Go(h, func() (bool, error) { clk.AfterFunc(time.Hour, func() {}); return true, nil })
		synctest.Wait()
		assert.True(t, clk.Held(), "the 3rd timer's maker was held")
		clk.Gate.Release()
		_, _ = third.Result()

		clk = h.HeldClock()
		clk.HoldNextTimer(true)
		next := Go(h, func() (bool, error) { clk.Timer(time.Hour); return true, nil })
		synctest.Wait()
		assert.Equal(t, 1, clk.Gate.Waiting(), "the next timer's maker held")
		clk.Gate.Release()
		_, _ = next.Result()
		clk.Timer(time.Hour) // held once only
		h.Clk.StopRunning()
	})
}

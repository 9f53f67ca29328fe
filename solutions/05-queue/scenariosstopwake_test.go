package queue

// R3 and R4 when the stop meets puts on their way to wait. Every consumer
// is busy and the queue is full; then, at one instant, several goroutines
// of produce call put, each to find the queue full and wait for room, and
// a consume call stops Run: it fails (R4), or the caller cancels as it
// returns (R3). Each put is somewhere between "is the run stopped?" and
// "wait for room" when the stop lands. A design that asks the first
// question outside the lock it waits with (a look at ctx, then a condition
// variable's Wait) misses the wake-up of a stop that lands in between, and
// that put waits for ever. A correct put returns ctx.Err() whatever the
// moment of the stop. (Whether one of them may return nil first is R1's
// business, not this test's.)
// The window is a few instructions wide: each bubble plays several stops,
// each met by several puts, on shaken schedules.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

// testStopWake is one Run of the scenario.
type testStopWake struct {
	capacity, consumers int
	putters             int  // goroutines of produce that put at the stop, one item each
	first               int  // the stop comes once this many of those puts have begun,
	delay               int  // and after this many more chances for the others to go on
	byError             bool // consume call #1 fails (R4), or the caller cancels as it returns (R3)
}

func (s testStopWake) String() string {
	stop := "consume call #1 fails"
	if !s.byError {
		stop = "the caller cancels ctx as consume call #1 returns"
	}
	return fmt.Sprintf("Run(capacity %d, %d consumer(s)); produce puts %d items (every consumer busy, the queue "+
		"full), then starts %d goroutines that each put one more item; each consume call waits until its ctx is "+
		"done, except call #1; at one instant the goroutines put and, once %d of those puts have begun, %s",
		s.capacity, s.consumers, s.capacity+s.consumers, s.putters, s.first, stop)
}

// play runs the scenario; false once it reported a failure.
func (s testStopWake) play(h *katatest.H) bool {
	h.Helper()
	errStore := errors.New("store: disk full")
	at := make(chan struct{}) // the instant of the stop
	var (
		entered sync.WaitGroup // the puts made at the stop have begun
		calls   atomic.Int32
		call    *katatest.Call[Stats]
		mu      sync.Mutex
		waiting int     // goroutines of produce waiting for the instant
		putting int     // puts in flight
		putErrs []error // what the failed puts made at the stop returned
	)
	produce := func(ctx context.Context, put func(int) error) error {
		for i := 1; i <= s.capacity+s.consumers; i++ {
			if err := put(i); err != nil {
				return err
			}
		}
		var wg sync.WaitGroup
		entered.Add(s.first)
		for p := range s.putters {
			mu.Lock()
			waiting++
			mu.Unlock()
			wg.Go(func() {
				<-at
				mu.Lock()
				putting++
				mu.Unlock()
				if p < s.first {
					entered.Done()
				}
				err := put(testItem(p, 1))
				mu.Lock()
				putting--
				if err != nil {
					putErrs = append(putErrs, err)
				}
				mu.Unlock()
			})
		}
		wg.Wait()
		return nil
	}
	consume := func(ctx context.Context, v int) error {
		if calls.Add(1) != 1 {
			<-ctx.Done() // busy until the stop
			return nil
		}
		<-at
		entered.Wait() // some puts have begun: the stop meets the others on their way
		for range 1 + s.delay {
			shake.Point()
		}
		if s.byError {
			return errStore
		}
		call.Cancel()
		return nil
	}
	call = katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return Run(ctx, s.capacity, s.consumers, produce, consume)
	})
	if call.Broken() {
		close(at)
		return false
	}
	mu.Lock()
	ready := waiting
	mu.Unlock()
	if int(calls.Load()) != s.consumers || ready != s.putters || call.Returned() {
		h.Errorf("precondition: with capacity %d and %d consumers held inside consume, %d puts return without "+
			"blocking (R1); then %d consume call(s) had started and %d of the %d goroutines of produce were ready "+
			"(Run returned: %v)\nThe scenario: %s", s.capacity, s.consumers, s.capacity+s.consumers, calls.Load(),
			ready, s.putters, call.Returned(), s)
		close(at)
		call.Stop()
		return false
	}
	close(at)
	stop, want := fmt.Sprintf("a consume call failed with %q", errStore), error(errStore)
	if !s.byError {
		stop, want = "the caller cancelled just as a consume call returned", context.Canceled
	}
	synctest.Wait()
	if !call.Returned() {
		mu.Lock()
		stuck := putting
		mu.Unlock()
		h.Errorf("%s at the very instant %d puts began on the full queue, and Run was still waiting: %d of those "+
			"puts never returned. A stop must wake every put that waits for room, also one that looked for a stop "+
			"just before it began to wait: wait for room and for ctx.Done() in one select (or, with a condition "+
			"variable, look at ctx under the lock you wait with, and have the stop take that lock before it wakes "+
			"the waiters)\nThe scenario: %s", stop, s.putters, stuck, s)
		// Nothing may ever wake such a put: no Stop, which would report
		// that as a deadlock ahead of this message. The leak check after
		// the test names what is still blocked.
		call.Cancel()
		return false
	}
	_, err, ok := call.Finish("Run")
	if !ok {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(err, want) {
		h.Errorf("%s at the very instant %d puts began on the full queue: Run must return %v; it returned %s\n"+
			"The scenario: %s", stop, s.putters, want, testDescribe(err), s)
		return false
	}
	for _, e := range putErrs {
		if !errors.Is(e, context.Canceled) {
			h.Errorf("%s at the very instant %d puts began on the full queue: each must return ctx.Err(), "+
				"context.Canceled; one returned %s\nThe scenario: %s", stop, s.putters, testDescribe(e), s)
			return false
		}
	}
	return true
}

// testStopWakes plays each shape of the scenario once in a bubble, on
// shaken schedules: each put is one more chance to be in its window.
func testStopWakes(t *testing.T, byError bool) {
	katatest.Repeat(t, 12, func(h *katatest.H) {
		for _, s := range []testStopWake{
			{capacity: 0, consumers: 1, putters: 16, first: 8},
			{capacity: 0, consumers: 1, putters: 16, first: 8, delay: 1},
			{capacity: 1, consumers: 2, putters: 16, first: 8},
			{capacity: 1, consumers: 2, putters: 16, first: 8, delay: 2},
			{capacity: 2, consumers: 3, putters: 16, first: 4, delay: 1},
			{capacity: 0, consumers: 1, putters: 16, first: 4, delay: 3},
		} {
			s.byError = byError
			if !s.play(h) {
				return
			}
		}
	})
}

func TestR3_ACancelWakesThePutsAboutToWait(t *testing.T) { testStopWakes(t, false) }

func TestR4_AConsumerErrorWakesThePutsAboutToWait(t *testing.T) { testStopWakes(t, true) }

package queue

// R3 and R4 when the stop meets a put on its way to wait. The consumers
// take each item as soon as it is queued and return at once, and produce
// keeps putting, from one or two goroutines, until a put fails: the queue
// fills and empties all the time, and a put is forever finding it full and
// starting to wait. Then a consume call stops Run (it fails, or the caller
// cancels as it returns) while a put is somewhere between "is the run
// stopped?" and "wait for room". A design that asks the first question
// outside the lock it waits with (a look at ctx, then a condition
// variable's Wait) misses the wake-up of a stop that lands in between, and
// that put waits for ever. A correct put returns ctx.Err() whatever the
// moment of the stop. The window is a few instructions wide: each scenario
// plays several stops, on many shaken schedules.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"gokata/internal/katatest"
)

// testStopWake is one Run of the scenario.
type testStopWake struct {
	capacity, consumers, producers int
	stopAt                         int  // the consume call that stops Run, from 1
	byError                        bool // it fails (R4), or the caller cancels as it returns (R3)
}

func (s testStopWake) String() string {
	stop := fmt.Sprintf("consume call #%d fails", s.stopAt)
	if !s.byError {
		stop = fmt.Sprintf("the caller cancels ctx as consume call #%d returns", s.stopAt)
	}
	return fmt.Sprintf("Run(capacity %d, %d consumers); produce puts from %d goroutine(s), each without pause until "+
		"a put fails; every consume call returns at once; %s", s.capacity, s.consumers, s.producers, stop)
}

// play runs the scenario; false once it reported a failure.
func (s testStopWake) play(h *katatest.H) bool {
	h.Helper()
	errStore := errors.New("store: disk full")
	var (
		calls   atomic.Int32
		call    *katatest.Call[Stats]
		mu      sync.Mutex
		putting int     // puts in flight
		putErrs []error // what the failed puts returned
	)
	ready := make(chan struct{}) // call is set: a consume call may cancel it
	produce := func(ctx context.Context, put func(int) error) error {
		<-ready
		var wg sync.WaitGroup
		for p := range s.producers {
			wg.Go(func() {
				for i := 1; ; i++ {
					mu.Lock()
					putting++
					mu.Unlock()
					err := put(testItem(p, i))
					mu.Lock()
					putting--
					if err != nil {
						putErrs = append(putErrs, err)
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		return ctx.Err()
	}
	consume := func(ctx context.Context, v int) error {
		if calls.Add(1) != int32(s.stopAt) {
			return nil
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
	close(ready)
	stop, want := fmt.Sprintf("a consume call failed with %q", errStore), error(errStore)
	if !s.byError {
		stop, want = "the caller cancelled just as a consume call returned", context.Canceled
	}
	synctest.Wait()
	if !call.Returned() {
		mu.Lock()
		stuck := putting
		mu.Unlock()
		h.Errorf("%s while produce was putting without pause (the queue full again and again, a put about to "+
			"wait for room), and Run was still waiting: %d put(s) never returned. A stop must wake every put, also "+
			"one that looked for a stop just before it began to wait: wait for room and for ctx.Done() in one "+
			"select (or, with a condition variable, look at ctx under the lock you wait with, and have the stop "+
			"take that lock before it wakes the waiters)\nThe scenario: %s", stop, stuck, s)
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
	if !errors.Is(err, want) {
		h.Errorf("%s while produce was putting: Run must return %v; it returned %s\nThe scenario: %s", stop, want,
			testDescribe(err), s)
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range putErrs {
		if !errors.Is(e, context.Canceled) {
			h.Errorf("%s while produce was putting: every put after the stop must return ctx.Err(), "+
				"context.Canceled; one returned %s\nThe scenario: %s", stop, testDescribe(e), s)
			return false
		}
	}
	return true
}

// testStopWakes plays each shape of the scenario once in a bubble: each
// stop is one more chance to land in a put's window.
func testStopWakes(t *testing.T, byError bool) {
	katatest.Repeat(t, 6, func(h *katatest.H) {
		for _, s := range []testStopWake{
			{capacity: 0, consumers: 1, producers: 1, stopAt: 5},
			{capacity: 1, consumers: 1, producers: 1, stopAt: 6},
			{capacity: 1, consumers: 2, producers: 2, stopAt: 9},
			{capacity: 2, consumers: 1, producers: 2, stopAt: 7},
			{capacity: 3, consumers: 3, producers: 1, stopAt: 12},
		} {
			s.byError = byError
			if !s.play(h) {
				return
			}
		}
	})
}

func TestR3_ACancelWakesAPutThatIsAboutToWait(t *testing.T) { testStopWakes(t, false) }

func TestR4_AConsumerErrorWakesAPutThatIsAboutToWait(t *testing.T) { testStopWakes(t, true) }

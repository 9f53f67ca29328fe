package queue

// R4 when a consumer fails just as other consumers go back to the queue.
// Every consumer is busy and the queue is full; then one consume call
// fails, and right before it returns its error it lets some of the other
// busy calls return nil, so that their consumers head back to the queue at
// the moment of the failure, with quick writes to do: a call that starts
// after the failure returns nil at once. Once the failing call has
// returned its error, no consumer starts a new consume: Run stops
// everything at once. A correct Run stops on the failing consumer's own
// goroutine before that goroutine goes on (or hands the error over and
// waits until it is taken by whatever hands out the items), so the
// consumers find the run stopped. A Run that leaves the stop to another
// goroutine, which learns of the error when it next runs, lets every
// consumer that runs before it take item after item: the whole queue.
//
// The scenarios run on one processor (GOMAXPROCS 1) and without yields
// (shake.Off): the failing consumer's goroutine runs on from its return
// until it blocks or ends, and a consumer back at the queue runs until the
// queue is empty. So a correct Run starts no call at all after the
// failure. A goroutine that the failure wakes runs after the consumers
// already waiting to run about half the time (the race detector's
// scheduler puts a goroutine it wakes either next or last), and then the
// consumers drain the queue before the stop. The bound allows one call per
// consumer that went back, far below the queue a late stop lets them
// drain. A scenario plays six Runs and fails when two or more of them
// break the bound: the runtime itself may pause the failing goroutine in
// one Run (a preemption), whatever the design, while a late stop shows in
// about every other Run.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

// testFailBack is one Run: every consumer busy, the queue full, then one
// busy call fails as some others return.
type testFailBack struct {
	capacity, consumers int
	producers           int   // goroutines of produce that put at once
	extra               int   // items beyond capacity + consumers: puts blocked at the failure (0: produce has returned)
	fails               int   // which busy call fails, by the order they started
	back                []int // the other busy calls that return as it fails, by the order they started
	failure             int   // index into testFailures
}

func (s testFailBack) String() string {
	total := s.capacity + s.consumers + s.extra
	produce := "then returns, so the failure comes during the drain"
	if s.extra > 0 {
		produce = fmt.Sprintf("so %d put(s) wait for room when the failure comes", s.extra)
	}
	back := make([]string, len(s.back))
	for i, b := range s.back {
		back[i] = fmt.Sprintf("#%d", b)
	}
	return fmt.Sprintf("Run(capacity %d, %d consumers); %d goroutine(s) of produce put %d items in all, %s; "+
		"busy call #%d (of #0…#%d, in the order they started) fails with %s, and right before it returns "+
		"its error it lets busy call(s) %s return nil; every later consume call returns nil at once",
		s.capacity, s.consumers, s.producers, total, produce, s.fails, s.consumers-1,
		testFailures[s.failure].how, strings.Join(back, ", "))
}

// testDrawFailBack draws a Run whose queue holds twice the consumers or
// more: what a late stop lets the consumers drain is well above the bound.
func testDrawFailBack(r *rapid.T) testFailBack {
	var s testFailBack
	s.consumers = rapid.IntRange(2, 5).Draw(r, "consumers")
	s.capacity = rapid.IntRange(2*s.consumers, 2*s.consumers+4).Draw(r, "capacity")
	s.producers = rapid.IntRange(1, 2).Draw(r, "producer goroutines")
	s.extra = rapid.IntRange(0, 3).Draw(r, "items beyond capacity + consumers")
	s.fails = rapid.IntRange(0, s.consumers-1).Draw(r, "the busy call that fails")
	for i := range s.consumers {
		if i != s.fails && rapid.Bool().Draw(r, fmt.Sprintf("busy call #%d returns as it fails", i)) {
			s.back = append(s.back, i)
		}
	}
	if len(s.back) == 0 {
		s.back = []int{(s.fails + 1 + rapid.IntRange(0, s.consumers-2).Draw(r, "the one call that returns")) % s.consumers}
	}
	s.failure = rapid.IntRange(0, len(testFailures)-1).Draw(r, "failure")
	return s
}

// testLateStarts is what one Run showed: the items whose consume call
// started after the failure with ctx not yet cancelled.
type testLateStarts struct {
	late []int
	err  error // what the failing call returned
}

// play runs s; ok is false once it reported a failure of its own (a
// precondition, a Run that does not return, a leak).
func (s testFailBack) play(h *katatest.H, run int) (got testLateStarts, ok bool) {
	h.Helper()
	var (
		mu     sync.Mutex
		busy   []chan error // the busy calls' results, in the order they started
		failed atomic.Bool  // the failing call is returning its error
		calls  atomic.Int32
	)
	hold := make(chan struct{}) // closed to let every held call go, when the scenario fails
	h.Own(func() {
		mu.Lock()
		defer mu.Unlock()
		select {
		case <-hold:
		default:
			close(hold)
		}
	})
	consume := func(ctx context.Context, v int) error {
		if calls.Add(1) > int32(s.consumers) { // a quick write, after the busy ones
			if failed.Load() && ctx.Err() == nil {
				mu.Lock()
				got.late = append(got.late, v)
				mu.Unlock()
			}
			return nil
		}
		res := make(chan error, 1)
		mu.Lock()
		me := len(busy)
		busy = append(busy, res)
		mu.Unlock()
		if me != s.fails {
			select {
			case err := <-res:
				return err
			case <-ctx.Done(): // stopped: the write is cut short
				return ctx.Err()
			case <-hold:
				return nil
			}
		}
		select {
		case <-res:
		case <-hold:
			return nil
		}
		err := testFailures[s.failure].make(v)
		mu.Lock()
		got.err = err
		for _, b := range s.back {
			busy[b] <- nil // those calls return nil with this one
		}
		mu.Unlock()
		failed.Store(true)
		return err
	}
	total := s.capacity + s.consumers + s.extra
	produce := func(ctx context.Context, put func(int) error) error {
		var wg sync.WaitGroup
		for p := range s.producers {
			wg.Go(func() {
				for v := 1 + p; v <= total; v += s.producers {
					if put(v) != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		return nil
	}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return Run(ctx, s.capacity, s.consumers, produce, consume)
	})
	if call.Broken() {
		return got, false
	}
	mu.Lock()
	started := len(busy)
	mu.Unlock()
	if started != s.consumers {
		h.Errorf("run %d: precondition: with %d items put, capacity %d and %d consumers, every consumer is inside "+
			"consume (R1); %d were", run, total, s.capacity, s.consumers, started)
		call.Stop()
		return got, false
	}
	mu.Lock()
	busy[s.fails] <- nil
	mu.Unlock()
	if !call.Returns("run %d: busy call #%d failed while the other consumers were busy or going back to the "+
		"queue, and Run was still waiting: a consumer error stops everything at once", run, s.fails) {
		return got, false
	}
	if _, _, ok := call.Finish("Run"); !ok {
		return got, false
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(got.late)
	return got, true
}

// testFailBackRuns is one scenario: six Runs, each drawn on its own.
type testFailBackRuns []testFailBack

func (rs testFailBackRuns) String() string {
	lines := make([]string, len(rs))
	for i, s := range rs {
		lines[i] = fmt.Sprintf("\n  run %d: %s", i+1, s)
	}
	return strings.Join(lines, "")
}

// play plays the six Runs and fails when two or more of them started
// more calls after the failure than consumers went back with it.
func (rs testFailBackRuns) play(h *katatest.H) {
	var runs []string
	first, firstRun := testLateStarts{}, 0
	for i, s := range rs {
		got, ok := s.play(h, i+1)
		if !ok {
			return
		}
		if len(got.late) > len(s.back) {
			runs = append(runs, fmt.Sprint(i+1))
			if firstRun == 0 {
				first, firstRun = got, i+1
			}
		}
	}
	if len(runs) < 2 {
		return // none, or one: the runtime may pause the failing goroutine itself, whatever the design
	}
	h.Errorf("after a consume call returned its error, more consume calls started with their ctx not yet "+
		"cancelled, in %d of %d runs (run %s): in run %d, after consume returned %s, %d calls started (items %v) "+
		"while %d consumer(s) went back to the queue with the failure. Once a consumer has failed, no consumer "+
		"starts a new consume: the stop came late. It must happen on the failing consumer's own goroutine, "+
		"before that goroutine does anything else (record the error and cancel the ctx the others select on), "+
		"not in a goroutine of its own that learns of the error only when it next runs, while the other "+
		"consumers go on taking items", len(runs), len(rs), strings.Join(runs, ", "), firstRun,
		testDescribe(first.err), len(first.late), first.late, len(rs[firstRun-1].back))
}

func TestR4_ExploreNoConsumeStartsOnceOneFailedAsTheOthersGoBack(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	draw := func(r *rapid.T) testFailBackRuns {
		rs := make(testFailBackRuns, 6)
		for i := range rs {
			rs[i] = testDrawFailBack(r)
		}
		return rs
	}
	katatest.Explore(t, 6, draw, func(h *katatest.H, rs testFailBackRuns) {
		shake.Off() // see the top of the file: the goroutines run on until they block
		rs.play(h)
	})
}

package queue

// Explored late puts (R5): a put that starts after produce returned fails
// with ErrClosed, however the run ends. Each scenario keeps the put of
// produce in goroutines that put after produce returned, several at once:
// while Run still drains, after a stop (the caller's cancel or a consumer
// error, before or after produce returned) while Run still waits for a
// consume call that ignores its ctx, and after Run returned.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How a testLatePuts run ends.
const (
	testLateEnds          = iota // produce returns (testProduceErrors[produceErr]): nothing stops Run
	testLateCancelFirst          // the caller cancels while produce still runs
	testLateFailFirst            // a consume call fails while produce still runs
	testLateEndThenCancel        // produce returns nil, then the caller cancels during the drain
	testLateEndThenFail          // produce returns nil, then a consume call fails during the drain
)

// When a late goroutine puts.
const (
	testLateDraining = iota // after produce returned, before any stop
	testLateStopped         // after the stop
	testLateReturned        // after Run returned
)

// testLatePutter is a goroutine that kept the put of produce.
type testLatePutter struct {
	phase int
	puts  int
}

type testLatePuts struct {
	capacity, consumers int
	items               int  // produce puts 1..items: they all fit
	blocked             bool // testLateCancelFirst: produce then waits in one more put, on the full queue (else on its ctx)
	ending              int
	produceErr          int // testLateEnds: index into testProduceErrors
	pick, fail          int // the failing ending: held call #pick fails with testFailures[fail]
	putters             []testLatePutter
}

// stopped reports whether a stop ends the run.
func (s testLatePuts) stopped() bool { return s.ending != testLateEnds }

// stopFirst reports whether the stop comes while produce still runs.
func (s testLatePuts) stopFirst() bool {
	return s.ending == testLateCancelFirst || s.ending == testLateFailFirst
}

// failing reports whether a consumer error stops the run.
func (s testLatePuts) failing() bool {
	return s.ending == testLateFailFirst || s.ending == testLateEndThenFail
}

// heldAfterStop is how many consume calls, each ignoring its ctx, keep Run
// waiting after the stop.
func (s testLatePuts) heldAfterStop() int {
	n := min(s.items, s.consumers)
	if s.failing() {
		n--
	}
	return n
}

// stop names the stop, for messages.
func (s testLatePuts) stop() string {
	switch s.ending {
	case testLateCancelFirst:
		return "the caller's cancel while produce still ran"
	case testLateFailFirst:
		return fmt.Sprintf("a consume call that failed (with %s) while produce still ran", testFailures[s.fail].how)
	case testLateEndThenCancel:
		return "the caller's cancel during the drain"
	case testLateEndThenFail:
		return fmt.Sprintf("a consume call that failed (with %s) during the drain", testFailures[s.fail].how)
	}
	return ""
}

// when says when the putters of phase put, for messages.
func (s testLatePuts) when(phase int) string {
	switch {
	case phase == testLateReturned:
		return "after Run returned"
	case phase == testLateStopped && s.heldAfterStop() > 0:
		return "after the stop, while Run still waited for a consume call that ignores its ctx"
	case phase == testLateStopped:
		return "after the stop"
	case s.items > 0:
		return "while Run was draining"
	}
	return "right after produce returned"
}

// testLateItem is the i-th item (from 1) of late goroutine g.
func testLateItem(g, i int) int { return 1000*(g+1) + i }

func (s testLatePuts) String() string {
	var b strings.Builder
	what := "no item"
	if s.items > 0 {
		what = testItems(1, s.items) + " (they all fit)"
	}
	fmt.Fprintf(&b, "Run(capacity %d, %d consumer(s)); produce puts %s and keeps put for goroutines it does not "+
		"wait for; each consume call waits until the test releases it (it ignores its ctx)",
		s.capacity, s.consumers, what)
	step := 0
	line := func(format string, args ...any) {
		step++
		fmt.Fprintf(&b, "\n  %d. ", step)
		fmt.Fprintf(&b, format, args...)
	}
	latePuts := func(phase int) {
		var who []string
		for g, p := range s.putters {
			if p.phase == phase {
				who = append(who, fmt.Sprintf("goroutine %d puts %s", g+1, testItems(testLateItem(g, 1), p.puts)))
			}
		}
		switch {
		case len(who) > 1:
			line("%s, at once: %s", s.when(phase), strings.Join(who, "; "))
		case len(who) == 1:
			line("%s: %s", s.when(phase), who[0])
		}
	}
	stop := func() {
		if s.failing() {
			line("held call #%d (oldest is #0) fails with %s", s.pick, testFailures[s.fail].how)
		} else {
			line("the caller cancels ctx")
		}
	}
	switch {
	case s.stopFirst():
		if s.blocked {
			line("produce puts one more item, which waits on the full queue")
		} else {
			line("produce waits on its ctx for the next record")
		}
		stop()
		if s.blocked {
			line("that put returns ctx.Err(), and produce returns it")
		} else {
			line("produce returns ctx.Err()")
		}
		latePuts(testLateStopped)
	case s.ending == testLateEnds:
		line("produce returns %s", testProduceErrors[s.produceErr].how)
		latePuts(testLateDraining)
	default:
		line("produce returns nil")
		latePuts(testLateDraining)
		stop()
		latePuts(testLateStopped)
	}
	line("every consume call is let go, and Run returns")
	latePuts(testLateReturned)
	return b.String()
}

func testDrawLatePuts(r *rapid.T) testLatePuts {
	var s testLatePuts
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
	s.ending = rapid.IntRange(testLateEnds, testLateEndThenFail).Draw(r, "ending")
	low := 0
	if s.stopped() && !s.stopFirst() || s.failing() {
		low = 1 // a consume call is held: to fail, or to keep Run draining until the stop
	}
	s.items = rapid.IntRange(low, s.capacity+s.consumers).Draw(r, "items")
	if s.ending == testLateCancelFirst && rapid.Bool().Draw(r, "produce waits in a put on the full queue") {
		s.blocked = true
		s.items = s.capacity + s.consumers
	}
	if s.ending == testLateEnds {
		s.produceErr = rapid.IntRange(0, len(testProduceErrors)-1).Draw(r, "produce error")
	}
	if s.failing() {
		s.pick = rapid.IntRange(0, 3).Draw(r, "pick")
		s.fail = rapid.IntRange(0, len(testFailures)-1).Draw(r, "failure")
	}
	phases := []int{testLateDraining, testLateReturned}
	switch {
	case s.stopFirst():
		phases = []int{testLateStopped, testLateReturned}
	case s.stopped():
		phases = []int{testLateDraining, testLateStopped, testLateReturned}
	}
	for range rapid.IntRange(1, 4).Draw(r, "late goroutines") {
		s.putters = append(s.putters, testLatePutter{phase: rapid.SampledFrom(phases).Draw(r, "phase"),
			puts: rapid.IntRange(1, 3).Draw(r, "late puts")})
	}
	return s
}

// testLateHeld is a consume call the test holds.
type testLateHeld struct {
	item   int
	result chan error
}

// testLateResult is what one late put did.
type testLateResult struct {
	item     int
	err      error
	panicked any
}

func (s testLatePuts) play(h *katatest.H) {
	var (
		mu       sync.Mutex
		held     []*testLateHeld
		consumed []int
		accepted int   // puts of produce that returned nil
		putErr   error // the put of produce that failed
		returned bool  // produce has returned
		kept     func(int) error
		results  = map[int][]testLateResult{} // by late goroutine
		finished = map[int]bool{}
	)
	end := make(chan struct{})
	free := make(chan struct{})
	ends := sync.OnceFunc(func() { close(end) })
	frees := sync.OnceFunc(func() { close(free) })
	h.Own(ends)
	h.Own(frees)
	perr := testProduceErrors[s.produceErr].make()
	produce := func(ctx context.Context, put func(int) error) error {
		defer func() {
			mu.Lock()
			returned = true
			mu.Unlock()
		}()
		mu.Lock()
		kept = put
		mu.Unlock()
		n := s.items
		if s.blocked {
			n++
		}
		for v := 1; v <= n; v++ {
			if err := put(v); err != nil {
				mu.Lock()
				putErr = err
				mu.Unlock()
				return err
			}
			mu.Lock()
			accepted++
			mu.Unlock()
		}
		select {
		case <-end:
			if s.ending == testLateEnds {
				return perr
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	consume := func(ctx context.Context, v int) error {
		hd := &testLateHeld{item: v, result: make(chan error, 1)}
		mu.Lock()
		held = append(held, hd)
		consumed = append(consumed, v)
		mu.Unlock()
		var err error
		select {
		case err = <-hd.result:
		case <-free:
		}
		mu.Lock()
		held = slices.DeleteFunc(held, func(x *testLateHeld) bool { return x == hd })
		mu.Unlock()
		return err
	}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return Run(ctx, s.capacity, s.consumers, produce, consume)
	})
	if call.Broken() {
		return
	}
	mu.Lock()
	fits := accepted >= s.items && putErr == nil
	mu.Unlock()
	if !fits {
		call.Stop() // the puts that fit did not all return nil: R1 and R6 say so
		return
	}

	// ended reports whether produce has returned; the late puts are made
	// only then (if a stop did not end produce, R3 and R4 say so).
	ended := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return returned
	}
	// late lets the goroutines of phase put, all at once, and checks what
	// their puts returned; false if the scenario cannot go on.
	late := func(phase int) bool {
		mu.Lock()
		put := kept
		mu.Unlock()
		n := 0
		for g, p := range s.putters {
			if p.phase != phase {
				continue
			}
			n++
			go func() {
				for i := 1; i <= p.puts; i++ {
					v := testLateItem(g, i)
					err, panicked := testPut(put, v)
					mu.Lock()
					results[g] = append(results[g], testLateResult{v, err, panicked})
					mu.Unlock()
					if panicked != nil {
						break
					}
				}
				mu.Lock()
				finished[g] = true
				mu.Unlock()
			}()
		}
		if n == 0 {
			return true
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		after := s.when(phase)
		stopped := s.stopped() && phase != testLateDraining
		if stopped {
			after = fmt.Sprintf("%s (the run was stopped by %s)", after, s.stop())
		}
		for g, p := range s.putters {
			if p.phase != phase {
				continue
			}
			rs := results[g]
			for _, res := range rs {
				switch {
				case res.panicked != nil:
					h.Errorf("a put made after produce returned panicked (%v), %s: it must return ErrClosed; never "+
						"close the channel while a put may still send (check a closed mark under a mutex in put, "+
						"and close the channel once no put is in flight)", res.panicked, after)
					return false
				case res.err == nil:
					h.Errorf("a put made after produce returned returned nil, %s: once produce has returned, put "+
						"accepts nothing; a late put must return ErrClosed every time (check the closed mark before "+
						"the send)", after)
					return false
				case !errors.Is(res.err, ErrClosed) && stopped:
					h.Errorf("a put made after produce returned must return ErrClosed, on a stopped run too: the run "+
						"was stopped by %s, and put(%d), made %s, returned %s. ctx.Err() is for the puts made while "+
						"produce still runs; once produce has returned, every put says so with ErrClosed, whatever "+
						"stopped the run: check the closed mark in put before the stop", s.stop(), res.item,
						s.when(phase), testDescribe(res.err))
					return false
				case !errors.Is(res.err, ErrClosed):
					h.Errorf("a put made after produce returned must return ErrClosed: %s, put(%d) returned %s",
						after, res.item, testDescribe(res.err))
					return false
				}
			}
			if !finished[g] {
				h.Errorf("a put made after produce returned was still blocked, %s: it must return ErrClosed at once, "+
					"never wait", after)
				return false
			}
		}
		return true
	}
	// stopRun cancels or fails a held call; false if none was held.
	stopRun := func() bool {
		if !s.failing() {
			call.Cancel()
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		if len(held) == 0 {
			return false
		}
		hd := held[s.pick%len(held)]
		hd.result <- testFailures[s.fail].make(hd.item)
		return true
	}

	if !s.stopFirst() {
		ends()
		synctest.Wait()
		if !ended() || !late(testLateDraining) {
			call.Stop()
			return
		}
	}
	if s.stopped() {
		if !stopRun() {
			call.Stop() // no consume call was held: R2 and R4 say what went wrong
			return
		}
		synctest.Wait()
		if !ended() || !late(testLateStopped) {
			call.Stop()
			return
		}
	}
	frees()
	synctest.Wait()
	if !call.Returned() {
		call.Stop() // R2, R3 and R4 say why Run still waits
		return
	}
	stats, _ := call.Result()
	if !late(testLateReturned) {
		call.Stop()
		return
	}
	if _, _, ok := call.Finish("Run"); !ok {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	var lateItems []int
	for _, v := range consumed {
		if v > 1000 { // testLateItem: a late goroutine's
			lateItems = append(lateItems, v)
		}
	}
	switch {
	case len(lateItems) > 0:
		h.Errorf("consume got item(s) %v, put after produce returned: a late put is refused, so its item is never "+
			"consumed", lateItems)
	case putErr == nil && stats.Produced > accepted: // a put of produce that failed on the stop: R3 counts it
		h.Errorf("Stats.Produced is %d, but only %d puts returned nil: the late puts, which returned ErrClosed, "+
			"must not be counted", stats.Produced, accepted)
	}
}

func TestR5_ExploreLatePutsFailWithErrClosedHoweverRunEnds(t *testing.T) {
	katatest.Explore(t, 20, testDrawLatePuts, func(h *katatest.H, s testLatePuts) { s.play(h) })
	// Every run tries each stop, before and after produce returned, with
	// late puts while Run still waits and after it returned.
	katatest.Replay(t, []testLatePuts{
		{capacity: 1, consumers: 2, items: 3, ending: testLateFailFirst, fail: 1,
			putters: []testLatePutter{{testLateStopped, 2}, {testLateReturned, 1}}},
		{capacity: 0, consumers: 1, items: 1, blocked: true, ending: testLateCancelFirst,
			putters: []testLatePutter{{testLateStopped, 1}, {testLateReturned, 2}}},
		{capacity: 2, consumers: 2, items: 4, ending: testLateEndThenCancel,
			putters: []testLatePutter{{testLateDraining, 2}, {testLateDraining, 2}, {testLateStopped, 1}, {testLateReturned, 1}}},
		{capacity: 0, consumers: 3, items: 3, ending: testLateEndThenFail, pick: 2, fail: 4,
			putters: []testLatePutter{{testLateStopped, 1}, {testLateStopped, 2}, {testLateStopped, 1}}},
	}, func(h *katatest.H, s testLatePuts) { s.play(h) })
}

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
	"time"

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
	variant             int // testLateRun, testLateBatches or testLateDrainTimeout
	size                int // testLateBatches: Batch.Size, 1 or more
	behind              int // goroutines produce starts after its own puts, each putting one item, never waited for
}

// Which function a testLatePuts run calls.
const (
	testLateRun          = iota
	testLateBatches      // RunBatches with Batch{Size: size}, no FlushEvery
	testLateDrainTimeout // RunDrainTimeout with a deadline the clock never reaches
)

// full is how many items the queue and the held consumers take in.
func (s testLatePuts) full() int { return s.capacity + s.consumers*max(s.size, 1) }

// call names the function the run calls, with its arguments, for messages.
func (s testLatePuts) call() string {
	switch s.variant {
	case testLateBatches:
		return fmt.Sprintf("RunBatches(capacity %d, %d consumer(s), Batch{Size: %d})", s.capacity, s.consumers, s.size)
	case testLateDrainTimeout:
		return fmt.Sprintf("RunDrainTimeout(capacity %d, %d consumer(s), a drain deadline of 1h the clock never reaches)",
			s.capacity, s.consumers)
	}
	return fmt.Sprintf("Run(capacity %d, %d consumer(s))", s.capacity, s.consumers)
}

// testBehindItem is the item of the g-th goroutine (from 0) that produce
// leaves putting.
func testBehindItem(g int) int { return 501 + g }

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
	fmt.Fprintf(&b, "%s; produce puts %s and keeps put for goroutines it does not wait for; each consume call "+
		"waits until the test releases it (it ignores its ctx)", s.call(), what)
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
	if s.behind > 0 {
		room := max(s.full()-s.items, 0)
		what := "they wait on the full queue"
		if room > 0 {
			what = fmt.Sprintf("%d of them find room, the others wait on the full queue", min(room, s.behind))
		}
		if room >= s.behind {
			what = "they all find room"
		}
		line("produce starts %d goroutine(s) it does not wait for, each putting one item (%s), "+
			"while produce still runs: %s", s.behind, testItems(testBehindItem(0), s.behind), what)
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
	// What the put of each goroutine produce left putting returned, once done.
	behindRes, behindDone := make([]testLateResult, s.behind), make([]bool, s.behind)
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
		own := func(v int) error {
			if err := put(v); err != nil {
				mu.Lock()
				putErr = err
				mu.Unlock()
				return err
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			return nil
		}
		for v := 1; v <= s.items; v++ {
			if err := own(v); err != nil {
				return err
			}
		}
		for g := range s.behind {
			go func() {
				v := testBehindItem(g)
				err, panicked := testPut(put, v)
				mu.Lock()
				behindRes[g] = testLateResult{v, err, panicked}
				behindDone[g] = true
				mu.Unlock()
			}()
		}
		if s.blocked {
			if err := own(s.items + 1); err != nil {
				return err
			}
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
	hold := func(vs []int) error {
		hd := &testLateHeld{item: vs[0], result: make(chan error, 1)}
		mu.Lock()
		held = append(held, hd)
		consumed = append(consumed, vs...)
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
	consume := func(ctx context.Context, v int) error { return hold([]int{v}) }
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		switch s.variant {
		case testLateBatches:
			return RunBatches(ctx, h.Clk, s.capacity, s.consumers, Batch{Size: s.size}, produce,
				func(ctx context.Context, vs []int) error { return hold(vs) })
		case testLateDrainTimeout:
			return RunDrainTimeout(ctx, h.Clk, time.Hour, s.capacity, s.consumers, produce, consume)
		}
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

	// settle lets the code settle. With puts left in flight, a design may
	// make its closer or a late put wait on a lock while a put waits for
	// room: Settle does not hang on it, and names the lines that wait.
	settle := func() (stuck []string) {
		if s.behind == 0 {
			synctest.Wait()
			return nil
		}
		return h.Settle()
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
		stuck := settle()
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
				waiting := 0
				for i := range s.behind {
					if !behindDone[i] {
						waiting++
					}
				}
				if waiting == 0 {
					h.Errorf("a put made after produce returned was still blocked, %s: it must return ErrClosed at "+
						"once, never wait", after)
					return false
				}
				where := ""
				if len(stuck) > 0 {
					where = "; waiting on a lock: " + strings.Join(stuck, "; ")
				}
				h.Errorf("a put made after produce returned (%s) was still blocked, behind %d put(s) that started "+
					"before produce returned and still waited for room on the full queue: a late put must return "+
					"ErrClosed at once, never wait for the consumers to make room for the puts in flight. Check "+
					"the closed mark before anything that can wait. A lock the closer also takes is such a wait: "+
					"with a sync.RWMutex, the closer's Lock, waiting for the puts in flight that hold the read "+
					"lock, holds back every later RLock (a writer waiting blocks new readers); count the puts in "+
					"flight instead, under the mutex that guards the closed mark%s", after, waiting, where)
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
		settle() // a closer may wait on a lock for the puts in flight: not wrong by itself
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
		settle()
		if !ended() || !late(testLateStopped) {
			call.Stop()
			return
		}
	}
	frees()
	settle()
	if !call.Returned() {
		call.Stop() // R2, R3 and R4 say why Run still waits
		return
	}
	stats, _ := call.Result()
	if !late(testLateReturned) {
		call.Stop()
		return
	}
	mu.Lock()
	for g := range s.behind {
		if !behindDone[g] {
			mu.Unlock()
			h.Errorf("put(%d), which a goroutine of produce started before produce returned, was still blocked after "+
				"Run returned: a put in flight as produce returns either takes its item once the consumers make "+
				"room, or returns an error; Run must not return while it may still send", testBehindItem(g))
			call.Stop()
			return
		}
	}
	mu.Unlock()
	if _, _, ok := call.Finish("Run"); !ok {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	behindAccepted, behindStopped, ok := s.checkBehind(h, behindRes, consumed)
	if !ok {
		return
	}
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
	// A put of produce's that failed on the stop, or one it left in flight:
	// R3 and R4 say how they count.
	case putErr == nil && stats.Produced > accepted+behindAccepted+behindStopped:
		h.Errorf("Stats.Produced is %d, but only %d puts returned nil: the late puts, which returned ErrClosed, "+
			"must not be counted", stats.Produced, accepted+behindAccepted)
	case s.behind > 0 && putErr == nil && stats.Produced < accepted+behindAccepted:
		h.Errorf("Stats.Produced is %d, but %d puts returned nil (%d of produce, %d that started before produce "+
			"returned): Produced counts every put that returned nil, those in flight as produce returned too",
			stats.Produced, accepted+behindAccepted, accepted, behindAccepted)
	}
}

// checkBehind checks what the puts produce left in flight returned, once
// Run has returned: each took its item (nil: consumed once, unless a stop
// dropped it) or returned ErrClosed; one that still waited at a stop is
// left to R3 and R4, as long as its item is never consumed. It returns how
// many returned nil, and how many failed on the stop.
func (s testLatePuts) checkBehind(h *katatest.H, res []testLateResult, consumed []int) (accepted, stopped int, ok bool) {
	for _, r := range res {
		who := fmt.Sprintf("put(%d), which a goroutine of produce started before produce returned", r.item)
		got := 0
		for _, v := range consumed {
			if v == r.item {
				got++
			}
		}
		switch {
		case r.err == nil && r.panicked == nil && got > 1:
			h.Errorf("%s, returned nil, and consume got its item %d times: each accepted item is handed to consume "+
				"exactly once", who, got)
			return 0, 0, false
		case r.err == nil && r.panicked == nil && got == 0 && !s.stopped():
			h.Errorf("%s, returned nil once the consumers made room, but consume never got its item, and nothing "+
				"stopped the run: every accepted item is consumed before Run returns, those of the puts in flight "+
				"as produce returned too (close the queue only after they are done)", who)
			return 0, 0, false
		case r.err == nil && r.panicked == nil:
			accepted++
		case got > 0:
			outcome := "returned " + testDescribe(r.err)
			if r.panicked != nil {
				outcome = fmt.Sprintf("panicked (%v)", r.panicked)
			}
			h.Errorf("%s, %s, yet consume got its item: a put that fails has not taken its item", who, outcome)
			return 0, 0, false
		case s.stopped():
			stopped++ // it still waited on the full queue at the stop: R3 and R4 say what it returns
		case r.panicked != nil:
			h.Errorf("%s, panicked (%v): a put in flight as produce returns must never panic; close the channel "+
				"only once no put is in flight (count a put in flight in the same critical section as its check "+
				"of the closed mark, and wait for them before the close)", who, r.panicked)
			return 0, 0, false
		case !errors.Is(r.err, ErrClosed):
			h.Errorf("%s, returned %s, and nothing stopped the run: a put in flight as produce returns takes its "+
				"item once the consumers make room (nil) or returns ErrClosed", who, testDescribe(r.err))
			return 0, 0, false
		}
	}
	return accepted, stopped, true
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

package queue

// Explored drain deadline (B2): the deadline is one more way to stop, and
// the first stop decides the error. Each scenario puts its items, then
// plays events in a drawn order: consume calls released with nil or an
// error, the caller's cancel, produce returning, the clock moving (also at
// the very instant a call returns), with drain deadlines from 1ms to
// effectively never, and none at all.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// The events of a testDrainStop.
const (
	testEvRelease = iota // a held consume call returns
	testEvCancel         // the caller cancels ctx
	testEvEnd            // produce returns
	testEvClock          // the mock clock moves
)

type testDrainEvent struct {
	kind   int
	pick   int           // release: which held call, by position among them (mod their number)
	fail   int           // release: -1 returns nil, else it fails with testFailures[fail]
	d      time.Duration // clock, and release at once: how far the clock moves
	atOnce bool          // release: the clock moves d at the very instant the call returns
}

// testDrainStop is one RunDrainTimeout whose drain a consumer error, a
// cancel or the deadline may stop, in any order.
type testDrainStop struct {
	capacity, consumers, items int
	timeout                    time.Duration
	honours                    bool // a held consume call returns as soon as its ctx is done...
	ctxErr                     bool // ...with an error wrapping ctx.Err() (else nil)
	produceErr                 int  // index into testProduceErrors: what produce returns when the test lets it
	events                     []testDrainEvent
}

// testHuge is a drain deadline or a flush interval that never comes in a
// test: near the largest time.Duration.
const testHuge = time.Duration(math.MaxInt64)

func (s testDrainStop) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "RunDrainTimeout(drainTimeout %v, capacity %d, %d consumer(s)); produce puts %s (they all fit), then "+
		"waits until the test lets it return %s, or until its ctx is done; each consume call waits until the test "+
		"releases it", s.timeout, s.capacity, s.consumers, testItems(1, s.items), testProduceErrors[s.produceErr].how)
	switch {
	case s.honours && s.ctxErr:
		b.WriteString(" or its ctx is done (then it returns an error wrapping ctx.Err())")
	case s.honours:
		b.WriteString(" or its ctx is done (then it returns nil)")
	default:
		b.WriteString(" (it ignores its ctx)")
	}
	for i, ev := range s.events {
		fmt.Fprintf(&b, "\n  %d. ", i+1)
		switch ev.kind {
		case testEvRelease:
			fmt.Fprintf(&b, "release held call #%d (oldest is #0)", ev.pick)
			if ev.fail >= 0 {
				fmt.Fprintf(&b, ", which fails with %s", testFailures[ev.fail].how)
			} else {
				b.WriteString(", which returns nil")
			}
			if ev.atOnce {
				fmt.Fprintf(&b, ", and the clock moves %v at that very instant", ev.d)
			}
		case testEvCancel:
			b.WriteString("the caller cancels ctx")
		case testEvEnd:
			b.WriteString("produce returns")
		default:
			fmt.Fprintf(&b, "the clock moves %v", ev.d)
		}
	}
	b.WriteString("\n  then produce returns (if it has not), and every call still held is released with nil")
	return b.String()
}

// testDrawDrainTimeout draws a drain deadline: short, long, one that never
// comes, or none (zero and negative, down to the smallest).
func testDrawDrainTimeout(r *rapid.T) time.Duration {
	return rapid.SampledFrom([]time.Duration{time.Millisecond, 40 * time.Millisecond, 40 * time.Millisecond, time.Second,
		time.Second, testHuge, 1 << 62, 0, -time.Nanosecond, math.MinInt64}).Draw(r, "drainTimeout")
}

// testDrawClockMove draws how far the clock moves: around the deadline when
// there is one that can come.
func testDrawClockMove(r *rapid.T, timeout time.Duration) time.Duration {
	if timeout <= 0 || timeout > time.Hour {
		return rapid.SampledFrom([]time.Duration{time.Millisecond, time.Hour}).Draw(r, "clock moves")
	}
	return rapid.SampledFrom([]time.Duration{timeout / 4, timeout / 2, timeout - 1, timeout, timeout, 1,
		timeout * 5 / 4}).Draw(r, "clock moves")
}

func testDrawDrainStop(r *rapid.T) testDrainStop {
	var s testDrainStop
	s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
	s.capacity = rapid.IntRange(0, 2).Draw(r, "capacity")
	s.items = rapid.IntRange(1, s.capacity+s.consumers).Draw(r, "items")
	s.timeout = testDrawDrainTimeout(r)
	s.honours = rapid.Bool().Draw(r, "consume honours ctx")
	s.ctxErr = s.honours && rapid.Bool().Draw(r, "returns ctx.Err() wrapped")
	s.produceErr = rapid.IntRange(0, len(testProduceErrors)-1).Draw(r, "produce error")
	n := rapid.IntRange(2, 7).Draw(r, "events")
	end := rapid.IntRange(0, n).Draw(r, "produce returns at event") // n: after the events
	for i := range n {
		if i == end {
			s.events = append(s.events, testDrainEvent{kind: testEvEnd})
			continue
		}
		ev := testDrainEvent{kind: rapid.SampledFrom([]int{testEvRelease, testEvRelease, testEvRelease, testEvCancel,
			testEvClock, testEvClock, testEvClock}).Draw(r, "event"), fail: -1}
		switch ev.kind {
		case testEvRelease:
			ev.pick = rapid.IntRange(0, 3).Draw(r, "pick")
			if rapid.Bool().Draw(r, "fails") {
				ev.fail = rapid.IntRange(0, len(testFailures)-1).Draw(r, "failure")
			}
			if ev.atOnce = rapid.IntRange(0, 3).Draw(r, "the clock moves as it returns") == 0; ev.atOnce {
				ev.d = testDrawClockMove(r, s.timeout)
			}
		case testEvClock:
			ev.d = testDrawClockMove(r, s.timeout)
		}
		s.events = append(s.events, ev)
	}
	return s
}

// testDrainHeld is a consume call the test holds.
type testDrainHeld struct {
	item     int
	released bool
	result   chan error
}

// testStopKind is the first stop of a scenario, as the test saw it, and
// the errors RunDrainTimeout may return for it.
type testStopKind struct {
	what, want string
	ok         func(error) bool
}

func (s testDrainStop) play(h *katatest.H) {
	perr := testProduceErrors[s.produceErr].make()
	var (
		mu        sync.Mutex
		held      []*testDrainHeld
		started   int
		accepted  int
		endedAt   = time.Duration(-1) // when produce returned
		maybe     bool                // a stop may have come: a call's ctx may end
		early     []int               // calls whose ctx ended while nothing had stopped Run
		putFailed error
	)
	end := make(chan struct{})
	ended := sync.OnceFunc(func() { close(end) })
	h.Own(ended)
	// A stop after a failure lets every consume call go, now and later.
	abandon := make(chan struct{})
	h.Own(sync.OnceFunc(func() { close(abandon) }))
	produce := func(ctx context.Context, put func(int) error) error {
		defer func() {
			mu.Lock()
			endedAt = h.Elapsed()
			mu.Unlock()
		}()
		for v := 1; v <= s.items; v++ {
			if err := put(v); err != nil {
				mu.Lock()
				putFailed = err
				mu.Unlock()
				return err
			}
			mu.Lock()
			accepted++
			mu.Unlock()
		}
		select {
		case <-end:
			return perr
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	consume := func(ctx context.Context, v int) error {
		hd := &testDrainHeld{item: v, result: make(chan error, 1)}
		mu.Lock()
		held = append(held, hd)
		started++
		mu.Unlock()
		var done <-chan struct{}
		if s.honours {
			done = ctx.Done()
		}
		var err error
		select {
		case err = <-hd.result:
		case <-abandon:
		case <-done:
			mu.Lock()
			if !maybe {
				early = append(early, v)
			}
			mu.Unlock()
			if s.ctxErr {
				err = fmt.Errorf("insert order %d: %w", v, ctx.Err())
			}
		}
		mu.Lock()
		held = slices.DeleteFunc(held, func(x *testDrainHeld) bool { return x == hd })
		mu.Unlock()
		return err
	}
	// release lets held call #pick go, failing with testFailures[fail]
	// (-1: nil); pick -1 lets them all go with nil. It returns the error the
	// call returns, and whether a call was held.
	release := func(pick, fail int) (error, bool) {
		mu.Lock()
		defer mu.Unlock()
		var free []*testDrainHeld
		for _, hd := range held {
			if !hd.released {
				free = append(free, hd)
			}
		}
		if len(free) == 0 {
			return nil, false
		}
		if pick < 0 {
			for _, hd := range free {
				hd.released = true
				hd.result <- nil
			}
			return nil, true
		}
		hd := free[pick%len(free)]
		var err error
		if fail >= 0 {
			err = testFailures[fail].make(hd.item)
		}
		hd.released = true
		hd.result <- err
		return err, true
	}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return RunDrainTimeout(ctx, h.Clk, s.timeout, s.capacity, s.consumers, produce, consume)
	})
	if call.Broken() {
		return
	}
	mu.Lock()
	if accepted != s.items || putFailed != nil {
		mu.Unlock()
		h.Errorf("%d consumer(s) idle, room for %d items in the queue: produce put %d items, yet only %d puts returned "+
			"nil (a put failed with %v): with room in the queue and free consumers, put waits for nothing",
			s.consumers, s.capacity, s.items, accepted, putFailed)
		call.Stop()
		return
	}
	mu.Unlock()

	var first *testStopKind
	startedAtStop := -1
	// deadlineIn is how far the clock may move before the drain deadline
	// passes: -1 if no deadline runs.
	deadlineIn := func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		if s.timeout <= 0 || endedAt < 0 {
			return -1
		}
		gone := h.Elapsed() - endedAt
		return s.timeout - gone
	}
	deadline := func() *testStopKind {
		return &testStopKind{what: fmt.Sprintf("the drain deadline (%v after produce returned, with calls still running)", s.timeout),
			want: "an error matching ErrDrainTimeout", ok: func(err error) bool { return errors.Is(err, ErrDrainTimeout) }}
	}
	stopped := func(k *testStopKind) {
		first = k
		mu.Lock()
		maybe = true
		mu.Unlock()
	}
	for _, ev := range s.events {
		if call.Returned() {
			break
		}
		switch ev.kind {
		case testEvRelease:
			in := deadlineIn()
			crosses := ev.atOnce && in >= 0 && ev.d >= in
			mu.Lock()
			wasMaybe := maybe
			if first == nil && (ev.fail >= 0 || crosses) {
				maybe = true // set before the call returns: it may stop Run
			}
			lastWork := len(held) == 1 && started == accepted
			mu.Unlock()
			err, ok := release(ev.pick, ev.fail)
			if !ok { // nothing held: only the clock moves, if it does
				mu.Lock()
				maybe = wasMaybe
				mu.Unlock()
				if ev.atOnce {
					if first == nil && crosses {
						stopped(deadline())
					}
					h.Advance(ev.d)
				}
				break
			}
			if first == nil {
				switch {
				case crosses && err != nil:
					first = &testStopKind{what: fmt.Sprintf("the consumer error (%s) and the drain deadline, at the same instant,",
						testDescribe(err)), want: "an error matching one of them",
						ok: func(got error) bool { return errors.Is(got, err) || errors.Is(got, ErrDrainTimeout) }}
				case crosses && lastWork:
					first = &testStopKind{what: "the end of the drain and its deadline, at the same instant,",
						want: "what produce returned or an error matching ErrDrainTimeout", ok: func(got error) bool {
							return errors.Is(got, ErrDrainTimeout) || got == perr || errors.Is(got, perr)
						}}
				case crosses:
					first = deadline()
				case err != nil:
					first = &testStopKind{what: fmt.Sprintf("the consumer error (%s)", testDescribe(err)),
						want: "that very error", ok: func(got error) bool { return errors.Is(got, err) }}
				}
			}
			if ev.atOnce {
				h.Clk.Add(ev.d) // nothing settles between the call's return and the clock's move
			}
			synctest.Wait()
		case testEvCancel:
			if first == nil {
				stopped(&testStopKind{what: "the caller's cancel", want: "ctx.Err(), context.Canceled",
					ok: func(err error) bool { return errors.Is(err, context.Canceled) }})
			}
			call.Cancel()
			synctest.Wait()
		case testEvEnd:
			ended()
			synctest.Wait()
		default:
			if in := deadlineIn(); first == nil && in >= 0 && ev.d >= in {
				stopped(deadline())
			}
			h.Advance(ev.d)
		}
		if first != nil && startedAtStop < 0 {
			mu.Lock()
			startedAtStop = started
			mu.Unlock()
		}
	}
	ended()
	synctest.Wait()
	if first != nil && !call.Returned() {
		release(-1, -1)
		if !call.Returns("after %s stopped it, produce and every consume call had returned, yet RunDrainTimeout was "+
			"still waiting: after a stop Run returns once produce and every consumer have returned, without waiting "+
			"on the clock (not for the drain deadline either)", first.what) {
			return
		}
	}
	for range s.items + 2 {
		if call.Returned() {
			break
		}
		release(-1, -1)
		synctest.Wait()
	}
	if !call.Returns("nothing stopped RunDrainTimeout and every consume call had returned, with produce returned too, yet " +
		"it was still waiting: once the queue is drained it returns, without waiting for the drain deadline") {
		return
	}
	stats, err, ok := call.Finish("RunDrainTimeout")
	if !ok {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case len(early) > 0:
		h.Errorf("the consume calls for item(s) %v saw their ctx cancelled before anything stopped RunDrainTimeout "+
			"(produce returned %s): only a cancel, a consumer error or the drain deadline (%v after produce returned) "+
			"cancels their ctx; an error of produce stops nothing, the accepted items are still consumed",
			early, testDescribe(perr), s.timeout)
	case first != nil && !first.ok(err) && perr != nil && (err == perr || errors.Is(err, perr)):
		h.Errorf("RunDrainTimeout returned what produce returned, %s, but an error of produce stops nothing: %s "+
			"stopped the run, so it must return %s. Keep produce's error aside and return it only if nothing "+
			"stopped the run", testDescribe(perr), first.what, first.want)
	case first != nil && !first.ok(err):
		h.Errorf("%s came first, so RunDrainTimeout must return %s; it returned %s: the first stop decides the error, "+
			"whatever comes after it. At the drain deadline record ErrDrainTimeout only if nothing stopped the run "+
			"before (a consumer error or the caller's cancel, with a consume still running that ignores its ctx), and "+
			"record it before cancelling the consumers, so that what the cancel makes them return does not count first",
			first.what, first.want, testDescribe(err))
	case first == nil && err != perr && !errors.Is(err, perr):
		h.Errorf("nothing stopped RunDrainTimeout: the drain ended before its deadline (drainTimeout %v), so it must "+
			"return what produce returned, %s; it returned %s", s.timeout, testDescribe(perr), testDescribe(err))
	case startedAtStop >= 0 && started > startedAtStop:
		h.Errorf("after %s stopped RunDrainTimeout, %s started: after a stop no consumer starts a new consume; "+
			"the queued items are dropped", first.what, testMore(started-startedAtStop))
	case stats != Stats{Produced: accepted, Consumed: started, Dropped: accepted - started}:
		h.Errorf("%d puts returned nil and %d items were handed to consume: Stats must be %+v (Dropped counts the "+
			"accepted items never handed to consume); RunDrainTimeout returned %+v", accepted, started,
			Stats{Produced: accepted, Consumed: started, Dropped: accepted - started}, stats)
	}
}

func TestB2_ExploreTheFirstStopDecidesTheError(t *testing.T) {
	katatest.Explore(t, 12, testDrawDrainStop, func(h *katatest.H, s testDrainStop) { s.play(h) })
	// Every run tries each stop before a deadline that passes while a
	// consume that ignores its ctx still runs, and the deadline before a
	// consumer error, which a draw could miss.
	ms := time.Millisecond
	katatest.Replay(t, []testDrainStop{
		{capacity: 1, consumers: 2, items: 3, timeout: 40 * ms, events: []testDrainEvent{{kind: testEvEnd},
			{kind: testEvRelease, pick: 0, fail: 1}, {kind: testEvClock, d: 40 * ms}, {kind: testEvRelease, fail: -1}}},
		{capacity: 0, consumers: 2, items: 2, timeout: 40 * ms, events: []testDrainEvent{{kind: testEvEnd},
			{kind: testEvCancel}, {kind: testEvClock, d: time.Second}}},
		{capacity: 1, consumers: 2, items: 3, timeout: time.Second, events: []testDrainEvent{
			{kind: testEvRelease, pick: 1, fail: 0}, {kind: testEvClock, d: time.Second}, {kind: testEvEnd}}},
		{capacity: 2, consumers: 1, items: 3, timeout: 40 * ms, honours: true, ctxErr: true, produceErr: 1,
			events: []testDrainEvent{{kind: testEvEnd}, {kind: testEvClock, d: 40 * ms}}},
		{capacity: 0, consumers: 2, items: 2, timeout: 40 * ms, produceErr: 2, events: []testDrainEvent{{kind: testEvEnd},
			{kind: testEvClock, d: 40 * ms}, {kind: testEvRelease, pick: 0, fail: 3}}},
	}, func(h *katatest.H, s testDrainStop) { s.play(h) })
}

func TestB2_TheDeadlineIsTheErrorWhateverTheCancelledCallsReturn(t *testing.T) {
	// At the drain deadline 48 consume calls that honour their ctx return
	// at once: with an error wrapping ctx.Err() in every other repetition,
	// with nil (the consumer then looks at ctx itself) in the others. Each
	// is one chance for a design that cancels the consumers first and
	// records ErrDrainTimeout only afterwards to let what the cancel made
	// them do count as the first stop. A correct design records the
	// deadline before it cancels: it returns ErrDrainTimeout on every
	// schedule.
	ctxErr := false
	katatest.Repeat(t, 6, func(h *katatest.H) {
		ctxErr = !ctxErr
		s := testDrainStop{capacity: 2, consumers: testStopConsumers, items: testStopConsumers + 2,
			timeout: 40 * time.Millisecond, honours: true, ctxErr: ctxErr,
			events: []testDrainEvent{{kind: testEvEnd}, {kind: testEvClock, d: 40 * time.Millisecond}}}
		s.play(h)
		if h.Failed() {
			h.Logf("the scenario: %s", s)
		}
	})
}

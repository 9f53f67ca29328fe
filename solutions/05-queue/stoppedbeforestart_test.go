package queue

// A caller's ctx may be done before Run is even called: the request was
// cancelled while it waited in line, or its deadline passed on the way. That
// is a cancel that came first, before anything else happened, so the README's
// rules for a stop hold from the first line ("Stop", "Errors", R3, "Stats"):
// Run returns the caller's ctx.Err() (not the cancel's cause, not nil, not
// what produce said about the failed puts), no consume call ever starts,
// every put that produce makes returns ctx.Err() of the context produce got
// and its item is not counted, so Stats are all zero, nothing is left running
// and no timer is left on the clock (B1, B2). Run still calls produce once
// ("Stop": a ctx already done is a cancel like any other): a producer may
// own what it reads from, and close it only when it returns.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

// How the caller's ctx ended before Run was called.
const (
	testGoneCancelled      = iota // katatest.Cancelled(): cancelled, with katatest.ErrCallerLeft as its cause
	testGoneOwnCause              // context.WithCancelCause, cancelled with a cause of the caller's own
	testGoneExpired               // katatest.Expired(): its deadline has passed
	testGoneExpiredByCause        // context.WithDeadlineCause with a deadline in the past and a cause
)

var testGoneHow = [...]string{
	"cancelled (context.WithCancelCause, with a cause; ctx.Err() is context.Canceled)",
	"cancelled with context.WithCancelCause(ctx) and cancel(&callerGone{...}): ctx.Err() is context.Canceled, " +
		"context.Cause(ctx) the caller's own error",
	"past its deadline (ctx.Err() is context.DeadlineExceeded)",
	"past its deadline, set by context.WithDeadlineCause with a cause of the caller's own: ctx.Err() is " +
		"context.DeadlineExceeded, context.Cause(ctx) the caller's error",
}

// testGoneCause is the cause a caller gives when it cancels: a type of its
// own, so no constant text could match it.
type testGoneCause struct{ request int }

func (e *testGoneCause) Error() string {
	return fmt.Sprintf("request %d: the client disconnected", e.request)
}

// What produce returns once its puts are done.
const (
	testGoneRetOwn     = iota // an error of its own: one of testProduceErrors
	testGoneRetWrapped        // fmt.Errorf("read orders: %w", the first put error), nil if no put failed
	testGoneRetBare           // the first put error as it is, nil if no put failed
)

type testGone struct {
	variant      string // "Run", "RunBatches" or "RunDrainTimeout"
	kind         int    // how the caller's ctx ended: testGone…
	capacity     int
	consumers    int
	items        int           // produce puts 1…items
	putters      int           // goroutines that put at once (produce waits for them); putter g puts the items v with v % putters == g
	stopAtFirst  bool          // a putter returns at its first failed put (else it goes on putting the rest)
	ret          int           // what produce returns: testGoneRet…
	own          int           // testGoneRetOwn: testProduceErrors[own]
	size         int           // RunBatches: Batch.Size
	every        time.Duration // RunBatches: Batch.FlushEvery
	drainTimeout time.Duration // RunDrainTimeout
}

func (s testGone) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(capacity %d, %d consumers", s.variant, s.capacity, s.consumers)
	switch s.variant {
	case "RunBatches":
		fmt.Fprintf(&b, ", Batch{Size: %d, FlushEvery: %v}", s.size, s.every)
	case "RunDrainTimeout":
		fmt.Fprintf(&b, ", drainTimeout %v", s.drainTimeout)
	}
	fmt.Fprintf(&b, ") called with a ctx already %s;", testGoneHow[s.kind])
	switch {
	case s.items == 0:
		b.WriteString("\n  produce puts nothing")
	case s.putters == 1:
		fmt.Fprintf(&b, "\n  produce puts items 1…%d", s.items)
	default:
		fmt.Fprintf(&b, "\n  produce starts %d goroutines that put items 1…%d at once (goroutine g the items v with "+
			"v %% %d == g) and waits for them", s.putters, s.items, s.putters)
	}
	if s.items > 0 {
		if s.stopAtFirst {
			b.WriteString(", stopping at the first put that fails")
		} else {
			b.WriteString(", going on after a put that fails")
		}
	}
	switch s.ret {
	case testGoneRetOwn:
		fmt.Fprintf(&b, "\n  then produce returns %s", testProduceErrors[s.own].how)
	case testGoneRetWrapped:
		b.WriteString("\n  then produce returns fmt.Errorf(\"read orders: %w\", the first put error), or nil if no put failed")
	default:
		b.WriteString("\n  then produce returns the first put error as it is, or nil if no put failed")
	}
	b.WriteString("\n  every consume call returns nil at once")
	return b.String()
}

func testDrawGone(variant string) func(*rapid.T) testGone {
	return func(r *rapid.T) testGone {
		s := testGone{variant: variant}
		s.kind = rapid.IntRange(testGoneCancelled, testGoneExpiredByCause).Draw(r, "ctx kind")
		s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
		s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
		s.items = rapid.IntRange(0, 5).Draw(r, "items")
		s.putters = rapid.IntRange(1, 2).Draw(r, "putters")
		s.stopAtFirst = rapid.Bool().Draw(r, "stop at the first failed put")
		s.ret = rapid.IntRange(testGoneRetOwn, testGoneRetBare).Draw(r, "produce returns")
		if s.ret == testGoneRetOwn {
			s.own = rapid.IntRange(0, len(testProduceErrors)-1).Draw(r, "produce's own error")
		}
		switch variant {
		case "RunBatches":
			s.size = rapid.IntRange(0, 3).Draw(r, "Size")
			s.every = rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second}).Draw(r, "FlushEvery")
		case "RunDrainTimeout":
			s.drainTimeout = rapid.SampledFrom([]time.Duration{-time.Second, 0, time.Millisecond, time.Second}).Draw(r, "drainTimeout")
		}
		return s
	}
}

// testGonePut is what one put saw.
type testGonePut struct {
	item     int
	err      error
	panicked any
	ctxErr   error // ctx.Err() of produce's ctx right after the put returned
}

// testGoneState is what one play saw.
type testGoneState struct {
	s testGone

	mu       sync.Mutex
	produced bool // produce was called
	perr     error
	puts     []testGonePut
	consumed []int // the items consume got
}

func (x *testGoneState) produce(ctx context.Context, put func(int) error) error {
	x.mu.Lock()
	x.produced = true
	x.mu.Unlock()
	var first error
	putter := func(g int) {
		for v := 1; v <= x.s.items; v++ {
			if v%x.s.putters != g {
				continue
			}
			err, panicked := testPut(put, v)
			x.mu.Lock()
			x.puts = append(x.puts, testGonePut{item: v, err: err, panicked: panicked, ctxErr: ctx.Err()})
			if err != nil && first == nil {
				first = err
			}
			x.mu.Unlock()
			if panicked != nil || (err != nil && x.s.stopAtFirst) {
				return
			}
		}
	}
	if x.s.putters == 1 {
		putter(0) // on produce's own goroutine
	} else {
		var wg sync.WaitGroup
		for g := range x.s.putters {
			wg.Go(func() { putter(g) })
		}
		wg.Wait()
	}
	var perr error
	switch {
	case x.s.ret == testGoneRetOwn:
		perr = testProduceErrors[x.s.own].make()
	case first == nil:
	case x.s.ret == testGoneRetWrapped:
		perr = fmt.Errorf("read orders: %w", first)
	default:
		perr = first
	}
	x.mu.Lock()
	x.perr = perr
	x.mu.Unlock()
	return perr
}

func (x *testGoneState) consume(_ context.Context, items []int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.consumed = append(x.consumed, items...)
	return nil
}

func (s testGone) play(h *katatest.H) {
	x := &testGoneState{s: s}
	var opts []katatest.CtxOption
	switch s.kind {
	case testGoneCancelled:
		opts = append(opts, katatest.Cancelled())
	case testGoneExpired:
		opts = append(opts, katatest.Expired())
	}
	cause := &testGoneCause{request: 7}
	var callerErr error // the caller's ctx.Err() as Run was called
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		switch s.kind {
		case testGoneOwnCause:
			var cancel context.CancelCauseFunc
			ctx, cancel = context.WithCancelCause(ctx)
			cancel(cause)
		case testGoneExpiredByCause:
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadlineCause(ctx, time.Time{}, cause) // long past
			defer cancel()
		}
		callerErr = ctx.Err()
		switch s.variant {
		case "RunBatches":
			return RunBatches(ctx, h.Clk, s.capacity, s.consumers, Batch{Size: s.size, FlushEvery: s.every}, x.produce, x.consume)
		case "RunDrainTimeout":
			return RunDrainTimeout(ctx, h.Clk, s.drainTimeout, s.capacity, s.consumers, x.produce,
				func(ctx context.Context, v int) error { return x.consume(ctx, []int{v}) })
		}
		return Run(ctx, s.capacity, s.consumers, x.produce, func(ctx context.Context, v int) error { return x.consume(ctx, []int{v}) })
	}, opts...)
	if call.Broken() {
		return
	}
	if !call.Returns("the caller's ctx was done before %s was called, yet %s was still waiting: a ctx done at "+
		"entry is a cancel that came first, so Run stops at once, and returns once produce and every consumer "+
		"have returned, without waiting on any clock (the consumers must see ctx.Done() even with nothing queued)",
		s.variant, s.variant) {
		return
	}
	stats, err, ok := call.Finish(s.variant)
	if !ok {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	gone := fmt.Sprintf("the caller's ctx was already %s when %s was called", testGoneHow[s.kind], s.variant)
	if len(x.consumed) > 0 {
		h.Errorf("consume was called for items %v, but %s: no consume call may start after a stop (the stop came "+
			"first here); check ctx.Err() before each put and before a consumer takes an item (a select on the "+
			"queue and ctx.Done() picks either when both are ready)", x.consumed, gone)
		return
	}
	var accepted []int
	for _, p := range x.puts {
		if p.panicked != nil {
			h.Errorf("put(%d) panicked with %v, but %s: a put after a stop returns ctx.Err() of the context produce "+
				"got; it never panics", p.item, p.panicked, gone)
			return
		}
		if p.err == nil {
			accepted = append(accepted, p.item)
		}
	}
	if len(accepted) > 0 {
		h.Errorf("put returned nil for items %v of the %d puts produce made, but %s: every put after a stop "+
			"returns ctx.Err() and accepts nothing; check ctx.Err() itself before the send (a stop that Run records "+
			"only once a consumer notices it comes too late here, and with room in the queue a select on the send "+
			"and ctx.Done() picks either)", accepted, len(x.puts), gone)
		return
	}
	for _, p := range x.puts {
		want := p.ctxErr
		if want == nil {
			want = callerErr
		}
		if !errors.Is(p.err, want) || (errors.Is(want, context.DeadlineExceeded) && errors.Is(p.err, context.Canceled)) {
			h.Errorf("put(%d) returned %s, but %s, and ctx.Err() of the context produce got was %v: a put after a "+
				"stop returns that ctx.Err() (derive produce's ctx from the caller's), not the cancel's cause "+
				"(context.Cause) nor an error of its own", p.item, testDescribe(p.err), gone, want)
			return
		}
	}
	produceSaid := ""
	if x.produced {
		produceSaid = fmt.Sprintf(" (produce returned %s)", testDescribe(x.perr))
	}
	switch {
	case err == nil && x.produced && x.perr == nil:
		h.Errorf("%s returned nil, what produce returned, but %s: a ctx done at entry is a cancel that came first, "+
			"so Run returns ctx.Err() (%v); the error of produce, nil included, counts only when nothing stopped Run",
			s.variant, gone, callerErr)
		return
	case err == nil:
		h.Errorf("%s returned nil%s, but %s: a ctx done at entry is a cancel that came first, and after a cancel "+
			"Run returns ctx.Err(); record the stop even when no item ever reaches a consumer (a consumer that "+
			"finds the queue closed must still ask ctx.Err())", s.variant, produceSaid, gone)
		return
	case x.perr != nil && x.perr != callerErr && errors.Is(err, x.perr):
		h.Errorf("%s returned produce's error %s, but %s: the cancel came first, so Run returns ctx.Err() (%v); "+
			"the error of produce counts only when nothing stopped Run", s.variant, testDescribe(err), gone, callerErr)
		return
	case errors.Is(err, cause) && !errors.Is(err, callerErr):
		h.Errorf("%s returned the cancel's cause %s (context.Cause(ctx)), but %s: Run returns ctx.Err() (%v), "+
			"which callers match with errors.Is; the cause is the caller's to read", s.variant, testDescribe(err), gone, callerErr)
		return
	case errors.Is(err, katatest.ErrCallerLeft) && !errors.Is(err, callerErr):
		h.Errorf("%s returned the cancel's cause %s (context.Cause(ctx)), but %s: Run returns ctx.Err() (%v), "+
			"which callers match with errors.Is; the cause is the caller's to read", s.variant, testDescribe(err), gone, callerErr)
		return
	case !errors.Is(err, callerErr) || (errors.Is(callerErr, context.DeadlineExceeded) && errors.Is(err, context.Canceled)):
		h.Errorf("%s returned %s, but %s: after a cancel Run returns the caller's ctx.Err() (%v) as it is, not "+
			"an error of its own", s.variant, testDescribe(err), gone, callerErr)
		return
	}
	if stats != (Stats{}) {
		h.Errorf("%s returned %+v, but %s and no put returned nil: Produced counts the puts that returned nil, "+
			"so all of Stats is zero", s.variant, stats, gone)
		return
	}
	if !x.produced {
		h.Errorf("%s returned without calling produce, but %s: a ctx done at entry is a cancel like any other, so "+
			"Run still calls produce once, and each of its puts returns ctx.Err(); only a negative capacity or no "+
			"consumer skips produce. A producer may own what it reads from (a file, a cursor) and close it when it "+
			"returns", s.variant, gone)
		return
	}
	if s.variant != "Run" {
		if left := h.PendingTimer(); left != 0 {
			h.Errorf("%s left a timer on the clock, due %v later, but %s: stop every timer it makes before it "+
				"returns (defer t.Stop()), or make none", s.variant, left, gone)
		}
	}
}

// testExploreGone plays, for variant, a fixed case of each kind of ctx, then
// drawn ones. The first runs on one processor (GOMAXPROCS 1) without yields
// (shake.Off), produce putting on its own goroutine: Run's goroutine then
// makes all 20 puts before any goroutine it started runs, so a put that
// trusts a stop some consumer records, rather than ctx.Err() itself, meets
// a select with room and a done ctx at each of them, and accepts an item
// with probability 1 - 2^-20.
func testExploreGone(t *testing.T, variant string, checks int) {
	t.Helper()
	func() {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		katatest.Replay(t, []testGone{{variant: variant, kind: testGoneExpired, capacity: 3, consumers: 1, items: 20,
			putters: 1, ret: testGoneRetBare, size: 3, every: time.Millisecond, drainTimeout: time.Second},
		}, func(h *katatest.H, s testGone) {
			shake.Off()
			s.play(h)
		})
	}()
	katatest.Replay(t, []testGone{
		{variant: variant, kind: testGoneCancelled, capacity: 3, consumers: 2, items: 5, putters: 2,
			ret: testGoneRetOwn, own: 0, size: 2, drainTimeout: time.Second},
		{variant: variant, kind: testGoneOwnCause, capacity: 2, consumers: 1, items: 4, putters: 1,
			ret: testGoneRetWrapped, size: 1, every: time.Second, drainTimeout: time.Millisecond},
		{variant: variant, kind: testGoneExpiredByCause, capacity: 1, consumers: 3, items: 0, putters: 1,
			ret: testGoneRetOwn, own: 1},
	}, func(h *katatest.H, s testGone) { s.play(h) })
	katatest.Explore(t, checks, testDrawGone(variant), func(h *katatest.H, s testGone) { s.play(h) })
}

func TestR3_ExploreACtxDoneBeforeRunStopsItBeforeItStarts(t *testing.T) {
	// The caller's ctx is already cancelled, with or without a cause, or
	// past its deadline: Run returns ctx.Err(), no consume starts, every put
	// fails with ctx.Err() and Stats are zero, whatever produce does.
	testExploreGone(t, "Run", 6)
}

func TestB1_ExploreACtxDoneBeforeRunBatchesStopsItBeforeItStarts(t *testing.T) {
	testExploreGone(t, "RunBatches", 4)
}

func TestB2_ExploreACtxDoneBeforeRunDrainTimeoutStopsItBeforeItStarts(t *testing.T) {
	testExploreGone(t, "RunDrainTimeout", 4)
}

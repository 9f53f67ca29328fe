package bounded

// The calls keep the caller's deadline (R3, and B1 for ForEachWeighted):
// the ctx the calls get is derived from the caller's, so it carries the
// caller's values and deadline as they are, and it ends only when the
// caller's ctx ends or when ForEach cancels it (the first error, ForEach
// returning). A ctx of ForEach's own with an earlier deadline ("headroom
// for the caller") cuts off calls that would have finished in time.
//
// The caller's deadline here is on package time, as a real caller's is
// (ForEach takes no clock): in the test's bubble it passes only when every
// goroutine waits, so the calls finish at exact instants before it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDLKey is the key of the value every caller's ctx carries.
type testDLKey struct{}

// testDLCause is the cause of a caller's deadline (WithDeadlineCause).
var testDLCause = errors.New("nightly job: time limit reached")

// testDLKinds are the ways a caller's ctx gets its deadline, d ahead.
var testDLKinds = []string{
	"context.WithTimeout(ctx, d)",
	"context.WithDeadline(ctx, now+d)",
	"context.WithDeadlineCause(ctx, now+d, cause)",
	"context.WithTimeout(ctx, d), then a context.WithCancel on top (the deadline is an ancestor's)",
	"context.WithTimeout(ctx, d+1h), then context.WithTimeoutCause(ctx, d, cause) (the earlier wins)",
}

// testDLCall is one item's call of fn.
type testDLCall struct {
	gap    time.Duration // fn answers this long before the caller's deadline (gap == d: at once)
	waits  bool          // fn waits on its ctx instead, past the caller's deadline
	fails  bool          // fn fails when it answers
	weight int           // its weight, for ForEachWeighted
}

// testDLCaller is one goroutine calling ForEach (or ForEachWeighted).
type testDLCaller struct {
	kind  int           // index in testDLKinds
	left  time.Duration // the caller's deadline is this far ahead when ForEach starts
	limit int           // ForEach's limit, or ForEachWeighted's capacity: room for every item at once
	calls []testDLCall
}

type testDLScenario struct {
	all     bool
	callers []testDLCaller
}

func (s testDLScenario) what() string {
	if s.all {
		return "ForEachWeighted"
	}
	return "ForEach"
}

func (s testDLScenario) String() string {
	var b strings.Builder
	for k, c := range s.callers {
		limit := "limit"
		if s.all {
			limit = "capacity"
		}
		fmt.Fprintf(&b, "\n  caller %d: %s with %d items, %s %d, its ctx made with %s, d = %v, and a value (context.WithValue)",
			k, s.what(), len(c.calls), limit, c.limit, testDLKinds[c.kind], c.left)
		for i, e := range c.calls {
			switch {
			case e.waits:
				fmt.Fprintf(&b, "\n    item %d: fn waits on its ctx, past the caller's deadline", i)
			case e.gap == c.left:
				fmt.Fprintf(&b, "\n    item %d: fn answers at once", i)
			default:
				fmt.Fprintf(&b, "\n    item %d: fn answers %v before the caller's deadline", i, e.gap)
			}
			if e.fails {
				b.WriteString(", with an error")
			}
			if s.all {
				fmt.Fprintf(&b, " (weight %d)", e.weight)
			}
		}
	}
	return b.String()
}

// testDrawDeadline draws callers whose ctx has a deadline near or far,
// with calls that answer at once, well before it, just before it (1ns,
// 1µs, 1ms, in the last tenth), or wait past it.
func testDrawDeadline(all bool) func(*rapid.T) testDLScenario {
	return func(r *rapid.T) testDLScenario {
		s := testDLScenario{all: all}
		s.callers = make([]testDLCaller, rapid.IntRange(1, 2).Draw(r, "callers"))
		for k := range s.callers {
			c := &s.callers[k]
			c.kind = rapid.IntRange(0, len(testDLKinds)-1).Draw(r, fmt.Sprintf("caller %d ctx", k))
			if rapid.Bool().Draw(r, fmt.Sprintf("caller %d deadline far", k)) {
				c.left = rapid.SampledFrom([]time.Duration{time.Hour, 24 * time.Hour, 30 * 24 * time.Hour}).Draw(r, fmt.Sprintf("caller %d d", k))
			} else {
				c.left = time.Duration(rapid.IntRange(1, 3_000_000).Draw(r, fmt.Sprintf("caller %d d µs", k))) * time.Microsecond
			}
			n := rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("caller %d n", k))
			// Room for every item at once: the deadline's property does not
			// depend on the limit, and a correct design may hold a
			// sync.Mutex while an item waits for room, which stops package
			// time in the bubble (synctest cannot wait for a mutex).
			c.limit = rapid.IntRange(n, n+1).Draw(r, fmt.Sprintf("caller %d limit", k))
			late := false
			for i := range n {
				e := testDLCall{}
				switch rapid.IntRange(0, 5).Draw(r, fmt.Sprintf("caller %d item %d answers", k, i)) {
				case 0:
					e.waits = true
				case 1:
					e.gap = c.left // at once
				case 2:
					e.gap = c.left / 2
				case 3:
					e.gap = c.left / 10
				default:
					e.gap = rapid.SampledFrom([]time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond}).Draw(r, fmt.Sprintf("caller %d item %d gap", k, i))
				}
				e.gap = min(max(e.gap, time.Nanosecond), c.left)
				if all {
					e.weight = rapid.IntRange(-1, 3).Draw(r, fmt.Sprintf("caller %d item %d weight", k, i))
				}
				if !e.waits {
					e.fails = rapid.IntRange(0, 4).Draw(r, fmt.Sprintf("caller %d item %d fails", k, i)) == 0
				}
				late = late || e.waits || e.gap < c.left/10
				c.calls = append(c.calls, e)
			}
			if !late { // one call at least answers in the last tenth
				c.calls[0].gap = min(time.Nanosecond, c.left)
			}
			if all { // the capacity holds every weight (below 1 counts as 1)
				c.limit = 0
				for _, e := range c.calls {
					c.limit += max(e.weight, 1)
				}
				c.limit += rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("caller %d spare capacity", k))
			}
		}
		return s
	}
}

// testDLSeen is what the call for one element saw.
type testDLSeen struct {
	called    bool
	val       any
	dl        time.Time
	hasDL     bool
	ended     bool          // its ctx ended while fn waited (or before fn answered)
	endedAt   time.Duration // when, from the start
	err       error         // ctx.Err() then
	cause     error         // context.Cause(ctx) then
	callerErr error         // the caller's ctx.Err() then
}

// testDLRun is one caller's run.
type testDLRun struct {
	c      testDLCaller
	start  time.Time
	caller context.Context // the caller's ctx, as ForEach got it
	dl     time.Time       // the caller's deadline
	seen   []testDLSeen
}

func (x *testDLRun) call(all bool) func(ctx context.Context) (struct{}, error) {
	return func(ctx context.Context) (struct{}, error) {
		var cancel context.CancelFunc
		d := x.c.left
		switch x.c.kind {
		case 0:
			ctx, cancel = context.WithTimeout(ctx, d)
		case 1:
			ctx, cancel = context.WithDeadline(ctx, x.start.Add(d))
		case 2:
			ctx, cancel = context.WithDeadlineCause(ctx, x.start.Add(d), testDLCause)
		case 3:
			var outer context.CancelFunc
			ctx, outer = context.WithTimeout(ctx, d)
			var inner context.CancelFunc
			ctx, inner = context.WithCancel(ctx)
			cancel = func() { inner(); outer() }
		default:
			var outer context.CancelFunc
			ctx, outer = context.WithTimeout(ctx, d+time.Hour)
			var inner context.CancelFunc
			ctx, inner = context.WithTimeoutCause(ctx, d, testDLCause)
			cancel = func() { inner(); outer() }
		}
		defer cancel()
		ctx = context.WithValue(ctx, testDLKey{}, x)
		x.caller = ctx
		x.dl, _ = ctx.Deadline()
		in := make([]int, len(x.c.calls))
		for i := range in {
			in[i] = i
		}
		if all {
			weight := func(i int) int { return x.c.calls[i].weight }
			return struct{}{}, ForEachWeighted(ctx, in, x.c.limit, weight, x.fn)
		}
		return struct{}{}, ForEach(ctx, in, x.c.limit, x.fn)
	}
}

// fn is the call for item i: it records what its ctx carries, then answers
// at its instant, or returns ctx.Err() if its ctx ends first.
func (x *testDLRun) fn(ctx context.Context, i int) error {
	e, r := x.c.calls[i], &x.seen[i]
	r.called = true
	r.val = ctx.Value(testDLKey{})
	r.dl, r.hasDL = ctx.Deadline()
	ended := func() error {
		r.ended, r.endedAt = true, time.Since(x.start)
		r.err, r.cause, r.callerErr = ctx.Err(), context.Cause(ctx), x.caller.Err()
		return ctx.Err()
	}
	if ctx.Err() != nil {
		return ended()
	}
	if e.waits {
		<-ctx.Done()
		return ended()
	}
	answer, stop := context.WithDeadline(context.Background(), x.dl.Add(-e.gap)) // the service answers then
	defer stop()
	select {
	case <-answer.Done():
		if ctx.Err() != nil { // ended at that same instant
			return ended()
		}
	case <-ctx.Done():
		return ended()
	}
	if e.fails {
		return fmt.Errorf("store: put #%d: status 503", i)
	}
	return nil
}

// firstFailure is when the first call to fail answers, from the start, or
// -1 if none fails.
func (x *testDLRun) firstFailure() time.Duration {
	first := time.Duration(-1)
	for _, e := range x.c.calls {
		if e.fails && (first < 0 || x.c.left-e.gap < first) {
			first = x.c.left - e.gap
		}
	}
	return first
}

func (s testDLScenario) play(h *katatest.H) {
	start := time.Now()
	runs := make([]*testDLRun, len(s.callers))
	calls := make([]*katatest.Call[struct{}], len(s.callers))
	last := time.Duration(0)
	for k, c := range s.callers {
		runs[k] = &testDLRun{c: c, start: start, seen: make([]testDLSeen, len(c.calls))}
		calls[k] = katatest.Start(h, runs[k].call(s.all))
		last = max(last, c.left)
	}
	// Package time runs on while every goroutine waits: the calls answer,
	// fail, and the callers' deadlines pass.
	end, stop := context.WithDeadline(context.Background(), start.Add(last+time.Second))
	<-end.Done()
	stop()
	for k, c := range calls {
		if !c.Returns("%s (caller %d) was still waiting a second after the caller's deadline passed: the calls' ctx did not end "+
			"with the caller's; each call gets a ctx derived from the caller's, which ends when the caller's ends", s.what(), k) {
			katatest.Unwind(h, calls...)
			return
		}
	}
	for k, c := range calls {
		_, err, ok := c.Finish(s.what())
		if !ok || !s.check(h, k, runs[k], err) {
			return
		}
	}
}

// check judges one caller's run.
func (s testDLScenario) check(h *katatest.H, k int, x *testDLRun, err error) bool {
	what := s.what()
	stopAt := x.firstFailure() // when ForEach may cancel the calls
	for i, r := range x.seen {
		if !r.called {
			continue // a stop, or the caller's deadline, came before its slot: R2's and R3's other tests
		}
		if r.val != x {
			h.Errorf("the ctx fn got for item %d (caller %d) does not carry the caller's values (ctx.Value(key) is %v): "+
				"each call gets a ctx derived from the caller's, which keeps its values and its deadline", i, k, r.val)
			return false
		}
		if !r.hasDL {
			h.Errorf("the calls got no deadline although the caller's ctx has one (%v after %s started): fn for item %d "+
				"(caller %d) saw ctx.Deadline() report none; each call gets a ctx derived from the caller's, which "+
				"keeps the caller's deadline as it is", x.c.left, what, i, k)
			return false
		}
		if !r.dl.Equal(x.dl) {
			rel := "earlier"
			diff := x.dl.Sub(r.dl)
			if diff < 0 {
				rel, diff = "later", -diff
			}
			h.Errorf("the calls got a deadline %s than the caller's: fn for item %d (caller %d) saw ctx.Deadline() %v %s "+
				"than the caller's deadline, %v after %s started; each call gets a ctx derived from the caller's "+
				"(context.WithCancel(ctx)), which keeps the caller's deadline exactly: the time left is the caller's, "+
				"not %s's to share out, and a call that would answer just before the caller's deadline must not be "+
				"cut off with context.DeadlineExceeded while the caller still waits", rel, i, k, diff, rel, x.c.left,
				what, what)
			return false
		}
		if !r.ended {
			continue
		}
		if r.callerErr == nil && (stopAt < 0 || r.endedAt < stopAt) {
			because, reasons := "no call had failed", "the first error, "+what+" returning"
			h.Errorf("the calls' ctx ended before the caller's deadline: the ctx fn got for item %d (caller %d) ended "+
				"%v after %s started with ctx.Err() = %v, %v before the caller's deadline, while the caller's ctx "+
				"was live and %s; a call's ctx ends only when the caller's ctx ends or when %s cancels it for a "+
				"reason the README gives (%s)", i, k, r.endedAt, what, r.err,
				x.dl.Sub(x.start)-r.endedAt, because, what, reasons)
			return false
		}
		if r.callerErr != nil && (stopAt < 0 || r.endedAt < stopAt) {
			if r.endedAt != x.dl.Sub(x.start) || !errors.Is(r.err, context.DeadlineExceeded) {
				h.Errorf("the calls' ctx did not end with the caller's deadline: the ctx fn got for item %d (caller %d) ended "+
					"%v after %s started with ctx.Err() = %v, the caller's deadline passed at %v; a ctx derived from "+
					"the caller's ends at its deadline with context.DeadlineExceeded", i, k, r.endedAt, what, r.err, x.c.left)
				return false
			}
			if want := context.Cause(x.caller); r.cause != want {
				h.Errorf("the calls' ctx did not end with the caller's cause: the ctx fn got for item %d (caller %d) ended "+
					"at the caller's deadline with context.Cause %v, the caller's is %v; a ctx derived from the "+
					"caller's ends with the caller's cause", i, k, r.cause, want)
				return false
			}
		}
	}
	waits, fails := false, false
	for _, e := range x.c.calls {
		waits, fails = waits || e.waits, fails || e.fails
	}
	switch {
	case !waits && !fails:
		if err != nil {
			h.Errorf("%s (caller %d) returned the error %v, although every call finished before the caller's "+
				"deadline: it returns nil when every call succeeds", what, k, err)
			return false
		}
	case waits && !fails && !errors.Is(err, context.DeadlineExceeded):
		h.Errorf("%s (caller %d) returned the error %v once the caller's deadline passed with calls waiting on it: "+
			"its error matches ctx.Err(), context.DeadlineExceeded", what, k, err)
		return false
	}
	return true
}

func TestR3_ExploreTheCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The caller's ctx has a deadline near or far (and a value, and
	// sometimes a cause): every call sees that deadline exactly, a call
	// that finishes 1ns before it is not cut off, and only a failure or
	// the deadline itself ends the calls' ctx.
	katatest.Explore(t, 7, testDrawDeadline(false), func(h *katatest.H, s testDLScenario) { s.play(h) })
}

func TestB1_ExploreWeightedCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The same for ForEachWeighted.
	katatest.Explore(t, 5, testDrawDeadline(true), func(h *katatest.H, s testDLScenario) { s.play(h) })
}

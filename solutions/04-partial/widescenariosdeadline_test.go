package partial

// The calls keep the caller's deadline (R2, and B1, B2 for GatherWith):
// every call gets the caller's ctx or one derived from it, so it carries
// the caller's values and deadline as they are, and it ends only when the
// caller's ctx ends or when GatherWith stops (FailFast, MaxFailures). A
// ctx of Gather's own with an earlier deadline ("a margin to render the
// page") cuts off calls that would have answered in time.
//
// The caller's deadline here is on package time, as a real caller's is
// (Gather takes no clock): in the test's bubble it passes only when every
// goroutine waits, so the calls answer at exact instants before it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDLKey is the key of the value every caller's ctx carries.
type testDLKey struct{}

// testDLCause is the cause of a caller's deadline (WithDeadlineCause).
var testDLCause = errors.New("product page: pricing budget spent")

// testDLErr is the error of a call that fails.
var testDLErr = errors.New("pricing: 404: no price")

// testDLKinds are the ways a caller's ctx gets its deadline, d ahead.
var testDLKinds = []string{
	"context.WithTimeout(ctx, d)",
	"context.WithDeadline(ctx, now+d)",
	"context.WithDeadlineCause(ctx, now+d, cause)",
	"context.WithTimeout(ctx, d), then a context.WithCancel on top (the deadline is an ancestor's)",
	"context.WithTimeout(ctx, d+1h), then context.WithTimeoutCause(ctx, d, cause) (the earlier wins)",
}

// testDLCall is one input's call of fn.
type testDLCall struct {
	gap   time.Duration // fn answers this long before the caller's deadline (gap == d: at once)
	waits bool          // fn waits on its ctx instead, past the caller's deadline
	fails bool          // fn fails when it answers
}

// testDLCaller is one goroutine calling Gather (or GatherWith).
type testDLCaller struct {
	kind  int           // index in testDLKinds
	left  time.Duration // the caller's deadline is this far ahead when Gather starts
	opt   *Options      // nil: Gather
	calls []testDLCall
}

func (c testDLCaller) what() string {
	if c.opt == nil {
		return "Gather"
	}
	return "GatherWith"
}

type testDLScenario struct {
	item    string // R2 (Gather), B1 (FailFast), B2 (MaxFailures)
	callers []testDLCaller
}

func (s testDLScenario) String() string {
	var b strings.Builder
	for k, c := range s.callers {
		call := "Gather(ctx, inputs, fn)"
		if c.opt != nil {
			call = fmt.Sprintf("GatherWith(ctx, inputs, fn, %+v)", *c.opt)
		}
		fmt.Fprintf(&b, "\n  caller %d: %s with %d inputs, its ctx made with %s, d = %v, and a value (context.WithValue)",
			k, call, len(c.calls), testDLKinds[c.kind], c.left)
		for i, e := range c.calls {
			switch {
			case e.waits:
				fmt.Fprintf(&b, "\n    input %d: fn waits on its ctx, past the caller's deadline", i)
			case e.gap == c.left:
				fmt.Fprintf(&b, "\n    input %d: fn answers at once", i)
			default:
				fmt.Fprintf(&b, "\n    input %d: fn answers %v before the caller's deadline", i, e.gap)
			}
			if e.fails {
				b.WriteString(", with an error")
			}
		}
	}
	return b.String()
}

// testDrawDeadline draws callers whose ctx has a deadline near or far,
// with calls that answer at once, well before it, just before it (1ns,
// 1µs, 1ms, in the last tenth), or wait past it; for B1 and B2, with
// options that stop after some failures (or never).
func testDrawDeadline(item string) func(*rapid.T) testDLScenario {
	return func(r *rapid.T) testDLScenario {
		s := testDLScenario{item: item}
		s.callers = make([]testDLCaller, rapid.IntRange(1, 2).Draw(r, "callers"))
		for k := range s.callers {
			c := &s.callers[k]
			c.kind = rapid.IntRange(0, len(testDLKinds)-1).Draw(r, fmt.Sprintf("caller %d ctx", k))
			if rapid.Bool().Draw(r, fmt.Sprintf("caller %d deadline far", k)) {
				c.left = rapid.SampledFrom([]time.Duration{time.Hour, 24 * time.Hour, 30 * 24 * time.Hour}).Draw(r, fmt.Sprintf("caller %d d", k))
			} else {
				c.left = time.Duration(rapid.IntRange(1, 3_000_000).Draw(r, fmt.Sprintf("caller %d d µs", k))) * time.Microsecond
			}
			switch item {
			case "B1":
				c.opt = &Options{FailFast: true, MaxFailures: rapid.IntRange(-1, 3).Draw(r, fmt.Sprintf("caller %d MaxFailures", k))}
			case "B2":
				c.opt = &Options{MaxFailures: rapid.IntRange(-1, 3).Draw(r, fmt.Sprintf("caller %d MaxFailures", k))}
			}
			n := rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("caller %d n", k))
			late := false
			for i := range n {
				e := testDLCall{}
				switch rapid.IntRange(0, 5).Draw(r, fmt.Sprintf("caller %d input %d answers", k, i)) {
				case 0:
					e.waits = true
				case 1:
					e.gap = c.left // at once
				case 2:
					e.gap = c.left / 2
				case 3:
					e.gap = c.left / 10
				default:
					e.gap = rapid.SampledFrom([]time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond}).Draw(r, fmt.Sprintf("caller %d input %d gap", k, i))
				}
				e.gap = min(max(e.gap, time.Nanosecond), c.left)
				if !e.waits {
					e.fails = rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("caller %d input %d fails", k, i)) == 0
				}
				late = late || e.waits || e.gap < c.left/10
				c.calls = append(c.calls, e)
			}
			if !late { // one call at least answers in the last tenth
				c.calls[0].gap = min(time.Nanosecond, c.left)
			}
		}
		return s
	}
}

// testDLSeen is what the call for one input saw.
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
	caller context.Context // the caller's ctx, as Gather got it
	dl     time.Time       // the caller's deadline
	seen   []testDLSeen
}

func (x *testDLRun) call(ctx context.Context) ([]Outcome[int, string], error) {
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
	if x.c.opt == nil {
		return Gather(ctx, in, x.fn), nil
	}
	return GatherWith(ctx, in, x.fn, *x.c.opt), nil
}

// fn is the call for input i: it records what its ctx carries, then
// answers at its instant, or returns ctx.Err() if its ctx ends first.
func (x *testDLRun) fn(ctx context.Context, i int) (string, error) {
	e, r := x.c.calls[i], &x.seen[i]
	r.called = true
	r.val = ctx.Value(testDLKey{})
	r.dl, r.hasDL = ctx.Deadline()
	ended := func() (string, error) {
		r.ended, r.endedAt = true, time.Since(x.start)
		r.err, r.cause, r.callerErr = ctx.Err(), context.Cause(ctx), x.caller.Err()
		return "", ctx.Err()
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
		return "", fmt.Errorf("input %d: %w", i, testDLErr)
	}
	return fmt.Sprintf("price of #%d", i), nil
}

// stopAt is when GatherWith may stop, from the start: when more inputs
// than it tolerates have failed; -1 if it never stops (Gather, too few
// failures).
func (x *testDLRun) stopAt() time.Duration {
	if x.c.opt == nil {
		return -1
	}
	tolerate := len(x.c.calls)
	if x.c.opt.FailFast {
		tolerate = 0
	} else if x.c.opt.MaxFailures > 0 {
		tolerate = x.c.opt.MaxFailures
	}
	var at []time.Duration
	for _, e := range x.c.calls {
		if e.fails {
			at = append(at, x.dl.Sub(x.start)-e.gap)
		}
	}
	if len(at) <= tolerate {
		return -1
	}
	slices.Sort(at)
	return at[tolerate]
}

func (s testDLScenario) play(h *katatest.H) {
	start := time.Now()
	runs := make([]*testDLRun, len(s.callers))
	calls := make([]*katatest.Call[[]Outcome[int, string]], len(s.callers))
	last := time.Duration(0)
	for k, c := range s.callers {
		runs[k] = &testDLRun{c: c, start: start, seen: make([]testDLSeen, len(c.calls))}
		calls[k] = katatest.Start(h, runs[k].call)
		last = max(last, c.left)
	}
	// Package time runs on while every goroutine waits: the calls answer,
	// fail, and the callers' deadlines pass.
	end, stop := context.WithDeadline(context.Background(), start.Add(last+time.Second))
	<-end.Done()
	stop()
	for k, c := range calls {
		if !c.Returns("%s (caller %d) was still waiting a second after the caller's deadline passed: the calls' ctx did not end "+
			"with the caller's; every call gets the caller's ctx or one derived from it, which ends when the caller's ends",
			s.callers[k].what(), k) {
			katatest.Unwind(h, calls...)
			return
		}
	}
	for k, c := range calls {
		if _, _, ok := c.Finish(s.callers[k].what()); !ok || !s.check(h, k, runs[k]) {
			return
		}
	}
}

// check judges one caller's run.
func (s testDLScenario) check(h *katatest.H, k int, x *testDLRun) bool {
	what := x.c.what()
	stopAt := x.stopAt()
	for i, r := range x.seen {
		if !r.called {
			if stopAt < 0 {
				h.Errorf("%s never called fn for input %d (caller %d), with the caller's ctx live and no stop: it calls "+
					"fn once per input, all at the same time", what, i, k)
				return false
			}
			continue
		}
		if r.val != x {
			h.Errorf("the ctx fn got for input %d (caller %d) does not carry the caller's values (ctx.Value(key) is %v): "+
				"every call gets the caller's ctx or one derived from it, which keeps its values and its deadline",
				i, k, r.val)
			return false
		}
		if !r.hasDL {
			h.Errorf("the calls got no deadline although the caller's ctx has one (%v after %s started): fn for input %d "+
				"(caller %d) saw ctx.Deadline() report none; every call gets the caller's ctx or one derived from it, "+
				"which keeps the caller's deadline as it is", x.c.left, what, i, k)
			return false
		}
		if !r.dl.Equal(x.dl) {
			rel := "earlier"
			diff := x.dl.Sub(r.dl)
			if diff < 0 {
				rel, diff = "later", -diff
			}
			h.Errorf("the calls got a deadline %s than the caller's: fn for input %d (caller %d) saw ctx.Deadline() %v %s "+
				"than the caller's deadline, %v after %s started; every call gets the caller's ctx or one derived "+
				"from it, which keeps the caller's deadline exactly: the time left is the caller's, not %s's to "+
				"share out, and a call that would answer just before the caller's deadline must not be cut off with "+
				"context.DeadlineExceeded while the other calls keep the caller's ctx", rel, i, k, diff, rel,
				x.c.left, what, what)
			return false
		}
		if !r.ended {
			continue
		}
		if r.callerErr == nil && (stopAt < 0 || r.endedAt < stopAt) {
			because := "no failure cancels anything in Gather"
			if x.c.opt != nil {
				because = fmt.Sprintf("GatherWith had not stopped (%+v)", *x.c.opt)
			}
			h.Errorf("the calls' ctx ended before the caller's deadline: the ctx fn got for input %d (caller %d) ended "+
				"%v after %s started with ctx.Err() = %v, %v before the caller's deadline, while the caller's ctx "+
				"was live and %s; a call's ctx ends only when the caller's ctx ends or when GatherWith stops "+
				"(FailFast, MaxFailures)", i, k, r.endedAt, what, r.err, x.dl.Sub(x.start)-r.endedAt, because)
			return false
		}
		if r.callerErr != nil && (stopAt < 0 || r.endedAt < stopAt) {
			if r.endedAt != x.dl.Sub(x.start) || !errors.Is(r.err, context.DeadlineExceeded) {
				h.Errorf("the calls' ctx did not end with the caller's deadline: the ctx fn got for input %d (caller %d) "+
					"ended %v after %s started with ctx.Err() = %v, the caller's deadline passed at %v; a ctx derived "+
					"from the caller's ends at its deadline with context.DeadlineExceeded", i, k, r.endedAt, what,
					r.err, x.c.left)
				return false
			}
			if want := context.Cause(x.caller); r.cause != want {
				h.Errorf("the calls' ctx did not end with the caller's cause: the ctx fn got for input %d (caller %d) "+
					"ended at the caller's deadline with context.Cause %v, the caller's is %v; a ctx derived from "+
					"the caller's ends with the caller's cause", i, k, r.cause, want)
				return false
			}
		}
	}
	return true
}

func TestR2_ExploreTheCallsKeepTheCallersDeadlineExactly(t *testing.T) {
	// The caller's ctx has a deadline near or far (and a value, and
	// sometimes a cause): every call sees that deadline exactly, a call
	// that answers 1ns before it is not cut off, and only the deadline
	// itself ends the calls' ctx.
	katatest.Explore(t, 7, testDrawDeadline("R2"), func(h *katatest.H, s testDLScenario) { s.play(h) })
}

func TestB1_ExploreFailFastKeepsTheCallersDeadlineUntilItStops(t *testing.T) {
	// The same for GatherWith with FailFast: until the first failure, the
	// calls keep the caller's ctx and its deadline.
	katatest.Explore(t, 5, testDrawDeadline("B1"), func(h *katatest.H, s testDLScenario) { s.play(h) })
}

func TestB2_ExploreMaxFailuresKeepsTheCallersDeadlineUntilItStops(t *testing.T) {
	// The same with MaxFailures (or none): until more inputs than that
	// have failed, the calls keep the caller's ctx and its deadline.
	katatest.Explore(t, 5, testDrawDeadline("B2"), func(h *katatest.H, s testDLScenario) { s.play(h) })
}

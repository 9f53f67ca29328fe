package katatest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"pgregory.net/rapid"
)

// CallerDeadline explores a README sentence several katas share: each call
// the code makes gets a ctx that keeps the caller's values and deadline
// exactly, and that ends only when the caller's ends or when the code
// cancels it for a reason the README gives. A ctx of the code's own with an
// earlier deadline ("headroom for the caller") cuts off calls that would
// have answered in time.
//
// A scenario has one or two callers, each calling the code under test
// ([CallerDeadline.Call]) on a goroutine of its own, with a ctx that carries
// a value and a deadline d ahead, near (1µs to 3s) or far (an hour to a
// month), made one of five ways (WithTimeout, WithDeadline,
// WithDeadlineCause, a WithCancel over a deadline, the earlier of two). The
// code calls fn once an element (1 to 4 of them); each fn records what its
// ctx carries, then answers at once, well before the deadline, just before
// it (1ns, 1µs, 1ms, or in the last tenth), or waits on its ctx past it,
// and some fail. The deadline is on package time, as a real caller's is:
// in the test's bubble it passes only when every goroutine waits, so the
// calls answer at exact instants before it.
//
// Each check of a call's ctx fails with the mistake first: no value, no
// deadline or another one, an end before the caller's deadline with no
// reason the README gives, an end at the deadline with the wrong error or
// cause. K is the kata's own part of a caller (its options, its limit). A
// kata's test file fills in its words and its API, and calls Explore
// itself (Explore finds the learner's directory from its caller):
//
//	d := testDeadline(false) // a *katatest.CallerDeadline[…]
//	katatest.Explore(t, 7, d.Draw, d.Play)
type CallerDeadline[K any] struct {
	Words DeadlineWords
	// Cause is the cause of a caller's deadline made with one
	// (WithDeadlineCause, WithTimeoutCause), in the kata's story.
	Cause error
	// FailOneIn: a call that answers fails one time in FailOneIn.
	FailOneIn int
	// Own draws the kata's own part of caller k once the rest is drawn;
	// nil leaves it zero.
	Own func(r *rapid.T, k int, c DeadlineCaller[K]) K
	// Show is caller c's call, for the scenario: "Map(ctx, 3 elements)".
	Show func(c DeadlineCaller[K]) string
	// ShowCall, if set, adds to the line of element i: " (weight 2)".
	ShowCall func(c DeadlineCaller[K], i int) string
	// Rules is what caller c's call may do to its calls' ctx.
	Rules func(c DeadlineCaller[K]) DeadlineRules
	// Call calls the code under test with the caller's ctx, on x.In(),
	// with an fn that calls x.Answer, and returns its error.
	Call func(ctx context.Context, x *DeadlineRun[K]) error
	// Returned, if set, judges the error of caller k's call once every
	// call's ctx passed; it reports through h and returns false on a
	// failure.
	Returned func(h *H, k int, x *DeadlineRun[K], err error) bool
}

// DeadlineWords are a kata's words in the exploration's messages.
type DeadlineWords struct {
	Elem string // element i, a format: "in[%d]", "item %d"
	// Gets is what the README promises each call: "each call gets a ctx
	// derived from the caller's".
	Gets string
	// Hint follows Gets where a call saw another deadline: " (context.WithCancel(ctx))", or "".
	Hint string
	// Meanwhile is who counts on a call cut off just before the caller's
	// deadline: "the caller still waits".
	Meanwhile string
	// Uncalled is why fn must have been called for every element when the
	// code had no reason to stop: "no call failed: every call of fn starts
	// at once"; "" when the kata's other tests check that.
	Uncalled string
}

// DeadlineRules are what one caller's call may do to its calls' ctx, and
// the words for it.
type DeadlineRules struct {
	What string // the code under test, as messages name it: "Map"
	// StopAt is when, from the start, the code may cancel the calls' ctx
	// for a reason the README gives; -1 if never.
	StopAt time.Duration
	// Because is why it may not have done so yet: "no call had failed".
	Because string
	// OrWhen is when else a call's ctx may end: "Map cancels it for a
	// reason the README gives (the first failure, Map returning)".
	OrWhen string
}

// deadlineKinds are the ways a caller's ctx gets its deadline, d ahead.
var deadlineKinds = []string{
	"context.WithTimeout(ctx, d)",
	"context.WithDeadline(ctx, now+d)",
	"context.WithDeadlineCause(ctx, now+d, cause)",
	"context.WithTimeout(ctx, d), then a context.WithCancel on top (the deadline is an ancestor's)",
	"context.WithTimeout(ctx, d+1h), then context.WithTimeoutCause(ctx, d, cause) (the earlier wins)",
}

// DeadlineCall is how fn answers for one element.
type DeadlineCall struct {
	Gap   time.Duration // fn answers this long before the caller's deadline (Gap == Left: at once)
	Waits bool          // fn waits on its ctx instead, past the caller's deadline
	Fails bool          // fn fails when it answers
}

// DeadlineCaller is one goroutine calling the code under test.
type DeadlineCaller[K any] struct {
	Kind  int            // index in deadlineKinds
	Left  time.Duration  // the caller's deadline is this far ahead when the call starts
	Calls []DeadlineCall // one an element; the elements are 0 to len(Calls)-1
	Own   K              // the kata's own part
}

// Failure is when, from the start, the call to fail after n others
// answers (Failure(0): the first failure), or -1 if no more than n fail.
func (c DeadlineCaller[K]) Failure(n int) time.Duration {
	var at []time.Duration
	for _, e := range c.Calls {
		if e.Fails {
			at = append(at, c.Left-e.Gap)
		}
	}
	if len(at) <= n {
		return -1
	}
	slices.Sort(at)
	return at[n]
}

// DeadlineScenario is one scenario of a [CallerDeadline].
type DeadlineScenario[K any] struct {
	Callers []DeadlineCaller[K]
	d       *CallerDeadline[K]
}

func (s DeadlineScenario[K]) String() string {
	var b strings.Builder
	w := s.d.Words
	for k, c := range s.Callers {
		fmt.Fprintf(&b, "\n  caller %d: %s, its ctx made with %s, d = %v, and a value (context.WithValue)",
			k, s.d.Show(c), deadlineKinds[c.Kind], c.Left)
		for i, e := range c.Calls {
			elem := fmt.Sprintf(w.Elem, i)
			switch {
			case e.Waits:
				fmt.Fprintf(&b, "\n    %s: fn waits on its ctx, past the caller's deadline", elem)
			case e.Gap == c.Left:
				fmt.Fprintf(&b, "\n    %s: fn answers at once", elem)
			default:
				fmt.Fprintf(&b, "\n    %s: fn answers %v before the caller's deadline", elem, e.Gap)
			}
			if e.Fails {
				b.WriteString(", with an error")
			}
			if s.d.ShowCall != nil {
				b.WriteString(s.d.ShowCall(c, i))
			}
		}
	}
	return b.String()
}

// Draw draws callers whose ctx has a deadline near or far, with calls that
// answer at once, well before it, just before it (1ns, 1µs, 1ms, in the
// last tenth), or wait past it: one at least answers in the last tenth or
// waits.
func (d *CallerDeadline[K]) Draw(r *rapid.T) DeadlineScenario[K] {
	s := DeadlineScenario[K]{d: d}
	s.Callers = make([]DeadlineCaller[K], rapid.IntRange(1, 2).Draw(r, "callers"))
	for k := range s.Callers {
		c := &s.Callers[k]
		c.Kind = rapid.IntRange(0, len(deadlineKinds)-1).Draw(r, fmt.Sprintf("caller %d ctx", k))
		if rapid.Bool().Draw(r, fmt.Sprintf("caller %d deadline far", k)) {
			c.Left = rapid.SampledFrom([]time.Duration{time.Hour, 24 * time.Hour, 30 * 24 * time.Hour}).Draw(r, fmt.Sprintf("caller %d d", k))
		} else {
			c.Left = time.Duration(rapid.IntRange(1, 3_000_000).Draw(r, fmt.Sprintf("caller %d d µs", k))) * time.Microsecond
		}
		n := rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("caller %d n", k))
		late := false
		for i := range n {
			e := DeadlineCall{}
			elem := fmt.Sprintf(d.Words.Elem, i)
			switch rapid.IntRange(0, 5).Draw(r, fmt.Sprintf("caller %d %s answers", k, elem)) {
			case 0:
				e.Waits = true
			case 1:
				e.Gap = c.Left // at once
			case 2:
				e.Gap = c.Left / 2
			case 3:
				e.Gap = c.Left / 10
			default:
				e.Gap = rapid.SampledFrom([]time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond}).Draw(r, fmt.Sprintf("caller %d %s gap", k, elem))
			}
			e.Gap = min(max(e.Gap, time.Nanosecond), c.Left)
			if !e.Waits {
				e.Fails = rapid.IntRange(0, d.FailOneIn-1).Draw(r, fmt.Sprintf("caller %d %s fails", k, elem)) == 0
			}
			late = late || e.Waits || e.Gap < c.Left/10
			c.Calls = append(c.Calls, e)
		}
		if !late { // one call at least answers in the last tenth
			c.Calls[0].Gap = min(time.Nanosecond, c.Left)
		}
		if d.Own != nil {
			c.Own = d.Own(r, k, *c)
		}
	}
	return s
}

// deadlineKey is the key of the value every caller's ctx carries.
type deadlineKey struct{}

// deadlineSeen is what the call for one element saw.
type deadlineSeen struct {
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

// DeadlineRun is one caller's run, as [CallerDeadline.Call] gets it.
type DeadlineRun[K any] struct {
	DeadlineCaller[K]
	start  time.Time
	caller context.Context // the caller's ctx, as the code got it
	dl     time.Time       // the caller's deadline
	seen   []deadlineSeen
}

// In is the elements to call the code under test on: 0 to len(Calls)-1.
func (x *DeadlineRun[K]) In() []int {
	in := make([]int, len(x.Calls))
	for i := range in {
		in[i] = i
	}
	return in
}

// Answer is what fn does for element i with the ctx it got: it records
// what ctx carries, then waits for its instant to answer and returns nil,
// or returns ctx.Err() if ctx ends first. After a nil, fn answers: with an
// error of the kata's story if x.Calls[i].Fails.
func (x *DeadlineRun[K]) Answer(ctx context.Context, i int) error {
	e, r := x.Calls[i], &x.seen[i]
	r.called = true
	r.val = ctx.Value(deadlineKey{})
	r.dl, r.hasDL = ctx.Deadline()
	ended := func() error {
		r.ended, r.endedAt = true, time.Since(x.start)
		r.err, r.cause, r.callerErr = ctx.Err(), context.Cause(ctx), x.caller.Err()
		return ctx.Err()
	}
	if ctx.Err() != nil {
		return ended()
	}
	if e.Waits {
		<-ctx.Done()
		return ended()
	}
	answer, stop := context.WithDeadline(context.Background(), x.dl.Add(-e.Gap)) // the service answers then
	defer stop()
	select {
	case <-answer.Done():
		if ctx.Err() != nil { // ended at that same instant
			return ended()
		}
	case <-ctx.Done():
		return ended()
	}
	return nil
}

// callerCtx is the caller's ctx, made from ctx the way of deadlineKinds[kind].
func (d *CallerDeadline[K]) callerCtx(ctx context.Context, kind int, left time.Duration, start time.Time) (context.Context, context.CancelFunc) {
	switch kind {
	case 0:
		return context.WithTimeout(ctx, left)
	case 1:
		return context.WithDeadline(ctx, start.Add(left))
	case 2:
		return context.WithDeadlineCause(ctx, start.Add(left), d.Cause)
	case 3:
		ctx, outer := context.WithTimeout(ctx, left)
		ctx, inner := context.WithCancel(ctx)
		return ctx, func() { inner(); outer() }
	default:
		ctx, outer := context.WithTimeout(ctx, left+time.Hour)
		ctx, inner := context.WithTimeoutCause(ctx, left, d.Cause)
		return ctx, func() { inner(); outer() }
	}
}

// Play plays s: the callers call at once, package time runs on while every
// goroutine waits, and each call's ctx is judged once its caller returned.
func (d *CallerDeadline[K]) Play(h *H, s DeadlineScenario[K]) {
	start := time.Now()
	runs := make([]*DeadlineRun[K], len(s.Callers))
	calls := make([]ErrCall, len(s.Callers))
	last := time.Duration(0)
	for k, c := range s.Callers {
		x := &DeadlineRun[K]{DeadlineCaller: c, start: start, seen: make([]deadlineSeen, len(c.Calls))}
		runs[k] = x
		calls[k] = StartErr(h, func(ctx context.Context) error {
			ctx, cancel := d.callerCtx(ctx, x.Kind, x.Left, start)
			defer cancel()
			ctx = context.WithValue(ctx, deadlineKey{}, x)
			x.caller = ctx
			x.dl, _ = ctx.Deadline()
			return d.Call(ctx, x)
		})
		last = max(last, c.Left)
	}
	// Package time runs on while every goroutine waits: the calls answer,
	// fail, and the callers' deadlines pass.
	end, stop := context.WithDeadline(context.Background(), start.Add(last+time.Second))
	<-end.Done()
	stop()
	for k, c := range calls {
		if !c.Returns("%s (caller %d) was still waiting a second after the caller's deadline passed: the calls' ctx did not end "+
			"with the caller's; %s, which ends when the caller's ends", d.Rules(s.Callers[k]).What, k, d.Words.Gets) {
			Unwind(h, calls...)
			return
		}
	}
	for k, c := range calls {
		rules := d.Rules(s.Callers[k])
		err, ok := c.Finish(rules.What)
		if !ok {
			return
		}
		if msg := d.verdict(k, runs[k], rules); msg != "" {
			h.Errorf("%s", msg)
			return
		}
		if d.Returned != nil && !d.Returned(h, k, runs[k], err) {
			return
		}
	}
}

// verdict judges the ctx of each call of caller k's run: "" if each kept
// the caller's values and deadline, and ended only when it could.
func (d *CallerDeadline[K]) verdict(k int, x *DeadlineRun[K], rules DeadlineRules) string {
	w, what, stopAt := d.Words, rules.What, rules.StopAt
	for i, r := range x.seen {
		elem := fmt.Sprintf(w.Elem, i)
		if !r.called {
			if stopAt < 0 && w.Uncalled != "" {
				return fmt.Sprintf("%s never called fn for %s (caller %d), with the caller's ctx live and %s",
					what, elem, k, w.Uncalled)
			}
			continue
		}
		if r.val != x {
			return fmt.Sprintf("the ctx fn got for %s (caller %d) does not carry the caller's values (ctx.Value(key) is %v): "+
				"%s, which keeps its values and its deadline", elem, k, r.val, w.Gets)
		}
		if !r.hasDL {
			return fmt.Sprintf("the calls got no deadline although the caller's ctx has one (%v after %s started): fn for %s "+
				"(caller %d) saw ctx.Deadline() report none; %s, which keeps the caller's deadline as it is",
				x.Left, what, elem, k, w.Gets)
		}
		if !r.dl.Equal(x.dl) {
			rel := "earlier"
			diff := x.dl.Sub(r.dl)
			if diff < 0 {
				rel, diff = "later", -diff
			}
			return fmt.Sprintf("the calls got a deadline %s than the caller's: fn for %s (caller %d) saw ctx.Deadline() %v %s "+
				"than the caller's deadline, %v after %s started; %s%s, which keeps the caller's deadline exactly: "+
				"the time left is the caller's, not %s's to share out, and a call that would answer just before the "+
				"caller's deadline must not be cut off with context.DeadlineExceeded while %s", rel, elem, k, diff, rel,
				x.Left, what, w.Gets, w.Hint, what, w.Meanwhile)
		}
		if !r.ended || stopAt >= 0 && r.endedAt >= stopAt {
			continue
		}
		if r.callerErr == nil {
			return fmt.Sprintf("the calls' ctx ended before the caller's deadline: the ctx fn got for %s (caller %d) ended "+
				"%v after %s started with ctx.Err() = %v, %v before the caller's deadline, while the caller's ctx "+
				"was live and %s; a call's ctx ends only when the caller's ctx ends or when %s", elem, k, r.endedAt,
				what, r.err, x.dl.Sub(x.start)-r.endedAt, rules.Because, rules.OrWhen)
		}
		if r.endedAt != x.dl.Sub(x.start) || !errors.Is(r.err, context.DeadlineExceeded) {
			return fmt.Sprintf("the calls' ctx did not end with the caller's deadline: the ctx fn got for %s (caller %d) ended "+
				"%v after %s started with ctx.Err() = %v, the caller's deadline passed at %v; a ctx derived from "+
				"the caller's ends at its deadline with context.DeadlineExceeded", elem, k, r.endedAt, what, r.err, x.Left)
		}
		if want := context.Cause(x.caller); r.cause != want {
			return fmt.Sprintf("the calls' ctx did not end with the caller's cause: the ctx fn got for %s (caller %d) ended "+
				"at the caller's deadline with context.Cause %v, the caller's is %v; a ctx derived from the "+
				"caller's ends with the caller's cause", elem, k, r.cause, want)
		}
	}
	return ""
}

package ratelimit

// R6, B1 and B2 for a ctx whose deadline is at or before clk.Now() but
// whose Done is not closed yet. Such contexts are real: the mock clock's
// clk.WithDeadline cancels from a goroutine that runs a moment after the
// clock reached the deadline, and a ctx type of the caller's may report a
// deadline it has not acted on. Not done is not "the deadline is ahead":
// the README compares the token's due time with ctx.Deadline() always, a
// token due now included. Each scenario draws the deadline before, at and
// after now, and before, at and after the token's due time, and checks
// the README's rule: a token due at or after the deadline fails at once
// with ErrWouldExceedDeadline, taking nothing; an earlier one is taken
// (at once if it is due now, else when it is due).

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

// testUndoneCtx is the call's own ctx (its Done and Err), reporting the
// deadline dl, an instant on the mock clock, which the test never acts on.
type testUndoneCtx struct {
	context.Context
	dl time.Time
}

func (c testUndoneCtx) Deadline() (time.Time, bool) { return c.dl, true }

// testUndoneScenario: the limiter (or a Multi of two, or a Keyed's key) is
// made at 0; allows Allow calls and waits Waits (no deadline, each still
// waiting or done) are made at 0; the clock moves to now; then the probe,
// a Wait whose ctx reports the deadline dl and is never done, and after it
// a plain Wait that shows whether the probe took a token.
type testUndoneScenario struct {
	kind   int // testAfterLimiter, testAfterMulti or testAfterKeyed
	r      float64
	burst  int
	allows int
	waits  int
	now    time.Duration
	dl     time.Duration // mock time since the start; may be before 0
}

func (s testUndoneScenario) String() string {
	var b strings.Builder
	switch s.kind {
	case testAfterLimiter:
		fmt.Fprintf(&b, "l := New(clk, %v per second, burst %d)", s.r, s.burst)
	case testAfterMulti:
		fmt.Fprintf(&b, "l := Combine(New(clk, %v per second, burst %d), New(clk, %v per second, burst %d))",
			s.r, s.burst, 2*s.r, s.burst)
	case testAfterKeyed:
		fmt.Fprintf(&b, "k := NewKeyed(clk, %v per second, burst %d, idle 1h), every call on key %q",
			s.r, s.burst, testKeys[0])
	}
	if s.allows > 0 {
		fmt.Fprintf(&b, "; at 0: Allow ×%d", s.allows)
	}
	if s.waits > 0 {
		fmt.Fprintf(&b, "; at 0: %d Wait(s) with no deadline, each on a goroutine of its own", s.waits)
	}
	if s.now > 0 {
		fmt.Fprintf(&b, "; the clock moves to %v", s.now)
	}
	fmt.Fprintf(&b, "; then, at %v, Wait with a ctx whose Deadline() is %v (%s now) and whose Done is not "+
		"closed; then a plain Wait", s.now, s.dl, testSince(s.dl-s.now))
	return b.String()
}

// testSince says how far t is from now: "1ns before", "at", "2s after".
func testSince(d time.Duration) string {
	switch {
	case d < 0:
		return fmt.Sprintf("%v before", -d)
	case d == 0:
		return "exactly"
	}
	return fmt.Sprintf("%v after", d)
}

// testUndoneModel is the README's limiter (or a Multi's two): one bucket
// each, one call at a time.
type testUndoneModel []testBucket

func (m testUndoneModel) next(now time.Duration) time.Duration {
	due := now
	for i := range m {
		due = max(due, m[i].next(now))
	}
	return due
}

func (m testUndoneModel) take() {
	for i := range m {
		m[i].taken++
	}
}

func (s testUndoneScenario) model() testUndoneModel {
	m := testUndoneModel{{r: s.r, burst: s.burst}}
	if s.kind == testAfterMulti {
		m = append(m, testBucket{r: 2 * s.r, burst: s.burst})
	}
	return m
}

func testDrawUndone(kind int) func(*rapid.T) testUndoneScenario {
	return func(r *rapid.T) testUndoneScenario {
		s := testUndoneScenario{
			kind:  kind,
			r:     rapid.SampledFrom([]float64{10, 3, 2, 0.5}).Draw(r, "rate"),
			burst: rapid.SampledFrom([]int{1, 1, 2, 3}).Draw(r, "burst"),
		}
		iv := testDue(s.r, 0, 1)
		s.allows = rapid.IntRange(0, s.burst).Draw(r, "Allow calls")
		s.waits = rapid.SampledFrom([]int{0, 0, 0, 1, 2}).Draw(r, "Waits")
		s.now = iv / 2 * time.Duration(rapid.IntRange(0, 4).Draw(r, "now, in half intervals"))
		if rapid.Bool().Draw(r, "now off the half interval") {
			s.now += time.Duration(rapid.IntRange(1, 3).Draw(r, "ns"))
		}
		m := s.model()
		for range s.allows {
			if m.next(0) <= 0 {
				m.take()
			}
		}
		for range s.waits {
			m.next(0)
			m.take()
		}
		due := m.next(s.now)
		// The deadline: before, at or after now, and before, at or after
		// the token's due time (the same instants when the token is there).
		dls := []time.Duration{s.now - iv, s.now - 1, s.now - 1, s.now, s.now, s.now, s.now + 1, due - 1, due, due + 1,
			due + iv}
		if due <= s.now && s.burst > 1 {
			// A token of a burst of 2 or more that is there now: the README
			// says it is due "at once", but not how long before now a ctx's
			// deadline may have passed for it to still count as before the
			// token (one reading puts the token at anchor + ⌈(j − burst)·1e9/r⌉,
			// before now). With burst 1 a token that is there is due exactly
			// now, the anchor, in every reading: those draws test the past.
			dls = []time.Duration{s.now + 1, s.now + iv}
		}
		s.dl = rapid.SampledFrom(dls).Draw(r, "deadline")
		return s
	}
}

func (s testUndoneScenario) play(h *katatest.H) {
	h.T.Helper()
	var (
		allow func() bool
		wait  func(context.Context) error
	)
	switch s.kind {
	case testAfterLimiter:
		l := New(h.Clk, s.r, s.burst)
		allow, wait = l.Allow, l.Wait
	case testAfterMulti:
		m := Combine(New(h.Clk, s.r, s.burst), New(h.Clk, 2*s.r, s.burst))
		allow, wait = m.Allow, m.Wait
	case testAfterKeyed:
		k := NewKeyed(h.Clk, s.r, s.burst, time.Hour)
		allow = func() bool { return k.Allow(testKeys[0]) }
		wait = func(ctx context.Context) error { return k.Wait(ctx, testKeys[0]) }
	}
	m := s.model()
	for i := range s.allows {
		want := m.next(0) <= 0
		if want {
			m.take()
		}
		if got := allow(); got != want {
			h.Errorf("precondition: Allow #%d at 0 returned %v, want %v (%s)\nThe scenario: %s", i+1, got, want,
				testArithmetic, s)
			return
		}
	}
	var all []katatest.ErrCall
	var dues []time.Duration
	for range s.waits {
		dues = append(dues, m.next(0))
		m.take()
		all = append(all, katatest.StartErr(h, wait))
		if !testSettle(h, "Waits at 0", all...) || testBroken(h, all...) {
			return
		}
	}
	h.Advance(s.now)
	start := h.Clk.Now().Add(-s.now)
	due := m.next(s.now)
	tooLate := due >= s.dl
	probe := katatest.StartErr(h, func(ctx context.Context) error {
		return wait(testUndoneCtx{ctx, start.Add(s.dl)})
	})
	all = append(all, probe)
	if !testSettle(h, "the Wait with a deadline", all...) || testBroken(h, all...) {
		return
	}
	rule := fmt.Sprintf("its token was due at %v, and its ctx's Deadline() was %v, %s now (%v), with its Done "+
		"not closed yet", due, s.dl, testSince(s.dl-s.now), s.now)
	switch {
	case tooLate:
		if !probe.Returned() {
			h.Errorf("a Wait was still waiting with the mock clock stopped, but %s: a token due at or after "+
				"the deadline fails at once with ErrWouldExceedDeadline\nThe scenario: %s", rule, s)
			katatest.Unwind(h, all...)
			return
		}
		err := probe.Err()
		if err == nil && due <= s.now {
			h.Errorf("a Wait returned nil at once and took the token that was there, but %s. The README: "+
				"\"If the token would be due at or after ctx.Deadline(), Wait returns an error matching "+
				"ErrWouldExceedDeadline at once: no token taken\", a token due now included. A ctx not done "+
				"yet is not a deadline still ahead: the mock clock's contexts are cancelled by a goroutine "+
				"that runs a moment after the clock reaches the deadline, and a ctx may report a deadline it "+
				"has not acted on. Compare the due time with ctx.Deadline() on every path, not only when "+
				"there is a wait to cut short\nThe scenario: %s", rule, s)
			katatest.Unwind(h, all...)
			return
		}
		if !errors.Is(err, ErrWouldExceedDeadline) {
			h.Errorf("a Wait returned %s, but %s: a token due at or after the deadline fails at once with an "+
				"error matching ErrWouldExceedDeadline (errors.Is; wrap with %%w to add context)\nThe scenario: %s",
				katatest.Chain(err), rule, s)
			katatest.Unwind(h, all...)
			return
		}
	case due <= s.now:
		if !probe.Returned() {
			h.Errorf("a Wait was still waiting with the mock clock stopped, but %s: the token is there "+
				"before the deadline, so Wait takes it and returns nil at once\nThe scenario: %s", rule, s)
			katatest.Unwind(h, all...)
			return
		}
		if err := probe.Err(); err != nil {
			h.Errorf("a Wait returned %v, but %s: a token due before the deadline is taken, and one due now "+
				"returns nil at once\nThe scenario: %s", err, rule, s)
			katatest.Unwind(h, all...)
			return
		}
		m.take()
	default:
		if probe.Returned() {
			h.Errorf("a Wait returned %v at once, but %s: a token due before the deadline is waited for, "+
				"and nil returned when it is due\nThe scenario: %s", probe.Err(), rule, s)
			katatest.Unwind(h, all...)
			return
		}
		dues = append(dues, due)
		m.take()
	}
	// The plain Wait after the probe gets the token after the probe's, or
	// the probe's own if the probe took nothing.
	next := m.next(s.now)
	after := katatest.StartErr(h, wait)
	all = append(all, after)
	if !testSettle(h, "the Wait after it", all...) || testBroken(h, all...) {
		return
	}
	took := "took nothing, as it must"
	if !tooLate {
		took = "took its token"
	}
	why := fmt.Sprintf("the Wait with the deadline %s (%s)", took, rule)
	if next > s.now {
		h.Advance(next - s.now - 1)
		if !after.Waits("the Wait right after had returned by %v, before its token was due at %v: %s\n"+
			"The scenario: %s", h.Elapsed(), next, why, s) {
			katatest.Unwind(h, all...)
			return
		}
		h.Advance(1)
	}
	if !after.Returns("the Wait right after was still waiting at %v, when its token was due: %s\nThe scenario: %s",
		next, why, s) {
		katatest.Unwind(h, all...)
		return
	}
	if err := after.Err(); err != nil {
		h.Errorf("the Wait right after returned %v at %v, when its token was due; want nil: %s\nThe scenario: %s",
			err, next, why, s)
		katatest.Unwind(h, all...)
		return
	}
	// Every other Wait returns nil by the last due time.
	last := h.Elapsed()
	for _, d := range dues {
		last = max(last, d)
	}
	h.Advance(last - h.Elapsed())
	for _, w := range all {
		if !w.Returns("a Wait was still waiting at %v, when every token reserved was due\nThe scenario: %s",
			h.Elapsed(), s) {
			katatest.Unwind(h, all...)
			return
		}
	}
	for _, w := range all {
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		if err != nil && !errors.Is(err, ErrWouldExceedDeadline) {
			h.Errorf("a Wait that nothing cancelled returned %v\nThe scenario: %s", err, s)
			return
		}
	}
}

// testUndoneFixed: the token is there now and the deadline is now, 1ns
// before it, or half a second before it.
var testUndoneFixed = []testUndoneScenario{
	{r: 10, burst: 1},
	{r: 2, burst: 1, allows: 1, now: 700 * time.Millisecond, dl: 700*time.Millisecond - 1},
	{r: 3, burst: 1, allows: 1, now: time.Second, dl: time.Second / 2},
}

func testPlayUndone(t *testing.T, kind, fixed, explored int) {
	var cases []testUndoneScenario
	for _, s := range testUndoneFixed[:fixed] {
		s.kind = kind
		cases = append(cases, s)
	}
	katatest.Replay(t, cases, func(h *katatest.H, s testUndoneScenario) { s.play(h) })
	katatest.Explore(t, explored, testDrawUndone(kind), func(h *katatest.H, s testUndoneScenario) { s.play(h) })
}

func TestR6_ExploreADeadlineAlreadyPassedOnACtxNotYetDone(t *testing.T) {
	testPlayUndone(t, testAfterLimiter, 3, 5)
}

func TestB1_ExploreADeadlineAlreadyPassedOnACtxNotYetDone(t *testing.T) {
	testPlayUndone(t, testAfterMulti, 2, 3)
}

func TestB2_ExploreADeadlineAlreadyPassedOnAKeyedCtxNotYetDone(t *testing.T) {
	testPlayUndone(t, testAfterKeyed, 2, 3)
}

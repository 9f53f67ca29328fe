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
// with ErrWouldExceedDeadline, taking nothing; an earlier one is taken (at
// once if it is due now, else when it is due).

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
// made at 0 and allows Allow calls are made then; the clock moves to now;
// then the probe, a Wait whose ctx reports the deadline dl and is never
// done; if it failed with a token there, an Allow that must find it.
type testUndoneScenario struct {
	kind   int // testAfterLimiter, testAfterMulti or testAfterKeyed
	r      float64
	burst  int
	allows int
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
	if s.now > 0 {
		fmt.Fprintf(&b, "; the clock moves to %v", s.now)
	}
	fmt.Fprintf(&b, "; then, at %v, Wait with a ctx whose Deadline() is %v (%s now) and whose Done is not "+
		"closed", s.now, s.dl, testSince(s.dl-s.now))
	return b.String()
}

// testSince says how far t is from now: "1ns before", "exactly", "2s after".
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

// model is the bucket(s) at now, once the Allow calls at 0 are made.
func (s testUndoneScenario) model() testUndoneModel {
	m := testUndoneModel{{r: s.r, burst: s.burst}}
	if s.kind == testAfterMulti {
		m = append(m, testBucket{r: 2 * s.r, burst: s.burst})
	}
	for range s.allows {
		if m.next(0) <= 0 {
			m.take()
		}
	}
	return m
}

func testDrawUndone(kind int) func(*rapid.T) testUndoneScenario {
	return func(r *rapid.T) testUndoneScenario {
		// Rates whose interval is a whole number of milliseconds: every due
		// time is exact however the arithmetic is written, and only the
		// deadline is under test.
		s := testUndoneScenario{
			kind:  kind,
			r:     rapid.SampledFrom([]float64{10, 4, 2, 1, 0.5}).Draw(r, "rate"),
			burst: rapid.SampledFrom([]int{1, 1, 2, 3}).Draw(r, "burst"),
		}
		iv := testDue(s.r, 0, 1)
		s.allows = rapid.IntRange(0, s.burst).Draw(r, "Allow calls")
		s.now = iv / 2 * time.Duration(rapid.IntRange(0, 4).Draw(r, "now, in half intervals"))
		due := s.model().next(s.now)
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
	for i := range s.allows {
		if !allow() {
			h.Errorf("precondition: Allow #%d at 0 returned false; a new limiter starts with burst (%d) "+
				"tokens\nThe scenario: %s", i+1, s.burst, s)
			return
		}
	}
	h.Advance(s.now)
	start := h.Clk.Now().Add(-s.now)
	due := s.model().next(s.now)
	probe := katatest.StartErr(h, func(ctx context.Context) error {
		return wait(testUndoneCtx{ctx, start.Add(s.dl)})
	})
	if !testSettle(h, "a Wait with a deadline", probe) || testBroken(h, probe) {
		return
	}
	rule := fmt.Sprintf("its token was due at %v, and its ctx's Deadline() was %v, %s now (%v), with its Done "+
		"not closed yet", due, s.dl, testSince(s.dl-s.now), s.now)
	if b := s.model()[0]; s.allows > 0 && b.full(s.now) {
		rule += fmt.Sprintf(" (the bucket was full again at %v: the token taken at %v starts a new anchor, and "+
			"the time the bucket sat full is lost)", b.anchor+testDue(s.r, 0, b.taken), s.now)
	}
	switch {
	case due >= s.dl:
		if !probe.Returns("a Wait was still waiting with the mock clock stopped, but %s: a token due at or after "+
			"the deadline fails at once with ErrWouldExceedDeadline\nThe scenario: %s", rule, s) {
			return
		}
		err, ok := probe.Finish("Wait")
		if !ok {
			return
		}
		if err == nil && due <= s.now {
			exactly := ""
			if due == s.dl {
				exactly = " A ctx is done at its deadline, so a token due exactly then is too late: fail when it " +
					"is due at or after the deadline (!due.Before(deadline)), not only after it."
			}
			h.Errorf("a Wait returned nil at once and took the token that was there, but %s. The README: "+
				"\"If the token would be due at or after ctx.Deadline(), Wait returns an error matching "+
				"ErrWouldExceedDeadline at once: no token taken\", a token due now included.%s A ctx not done "+
				"yet is not a deadline still ahead: the mock clock's contexts are cancelled by a goroutine that "+
				"runs a moment after the clock reaches the deadline, and a ctx may report a deadline it has not "+
				"acted on. Compare the due time with ctx.Deadline() on every path, not only when there is a wait "+
				"to cut short\nThe scenario: %s", rule, exactly, s)
			return
		}
		if !errors.Is(err, ErrWouldExceedDeadline) {
			h.Errorf("a Wait returned %s, but %s: a token due at or after the deadline fails at once with an "+
				"error matching ErrWouldExceedDeadline (errors.Is; wrap with %%w to add context)\nThe scenario: %s",
				katatest.Chain(err), rule, s)
			return
		}
		if due <= s.now && !allow() {
			h.Errorf("after a Wait failed with ErrWouldExceedDeadline (%s), Allow found no token: the Wait "+
				"must take nothing when its token is too late\nThe scenario: %s", rule, s)
		}
	case due <= s.now:
		if !probe.Returns("a Wait was still waiting with the mock clock stopped, but %s: the token is there "+
			"before the deadline, so Wait takes it and returns nil at once\nThe scenario: %s", rule, s) {
			return
		}
		if err, ok := probe.Finish("Wait"); ok && err != nil {
			h.Errorf("a Wait returned %v, but %s: a token due before the deadline is taken, and one due now "+
				"returns nil at once\nThe scenario: %s", err, rule, s)
		}
	default:
		if !probe.Waits("a Wait returned at once, but %s: a token due before the deadline is waited for, and "+
			"nil returned when it is due\nThe scenario: %s", rule, s) {
			return
		}
		h.Advance(due - s.now)
		if !probe.Returns("a Wait was still waiting at %v, but %s: a token due before the deadline is waited "+
			"for, and nil returned when it is due\nThe scenario: %s", due, rule, s) {
			return
		}
		if err, ok := probe.Finish("Wait"); ok && err != nil {
			h.Errorf("a Wait returned %v at %v, but %s: a token due before the deadline is waited for, and nil "+
				"returned when it is due\nThe scenario: %s", err, h.Elapsed(), rule, s)
		}
	}
}

// testUndoneFixed: the token is there now and the deadline is 1ns before
// now, exactly now, or half a second before now.
var testUndoneFixed = []testUndoneScenario{
	{r: 2, burst: 1, allows: 1, now: 750 * time.Millisecond, dl: 750*time.Millisecond - 1},
	{r: 10, burst: 1},
	{r: 1, burst: 1, allows: 1, now: 2 * time.Second, dl: 1500 * time.Millisecond},
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
	testPlayUndone(t, testAfterLimiter, 3, 6)
}

func TestB1_ExploreADeadlineAlreadyPassedOnACtxNotYetDone(t *testing.T) {
	testPlayUndone(t, testAfterMulti, 2, 4)
}

func TestB2_ExploreADeadlineAlreadyPassedOnAKeyedCtxNotYetDone(t *testing.T) {
	testPlayUndone(t, testAfterKeyed, 2, 4)
}

package retry

// A Retry-After in the past: a server that sends Retry-After as a date, with
// a clock behind ours, asks for a pause below 0. That is no pause at all,
// not a pause that gives time back: the budget (MaxElapsed) still holds. An
// attempt that ran past the budget leaves no time for another, so Do gives
// up at once, as if the attempts had run out, however far in the past the
// Retry-After is.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testPastRA struct {
	fast   int           // attempts 1…fast fail at once with a plain retryable error
	base   time.Duration // BaseDelay; the pauses double, no jitter
	spare  time.Duration // the budget left once the pauses after them are over
	over   time.Duration // attempt fast+1 ends this long past MaxElapsed
	d      time.Duration // and fails with RetryAfter(d, …), d ≤ 0
	budget time.Duration // MaxElapsed
}

func (s testPastRA) String() string {
	before := ""
	if s.fast > 0 {
		before = fmt.Sprintf("attempts 1 to %d fail at once with a retryable error; ", s.fast)
	}
	return fmt.Sprintf("Policy{MaxAttempts: %d, BaseDelay: %v, no jitter, MaxElapsed: %v}; %sattempt %d takes until "+
		"%v on the mock clock, %v past MaxElapsed, and fails with RetryAfter(%v, &statusError{503})",
		s.fast+4, s.base, s.budget, before, s.fast+1, s.budget+s.over, s.over, s.d)
}

func testDrawPastRA(r *rapid.T) testPastRA {
	const ms = time.Millisecond
	s := testPastRA{
		fast: rapid.IntRange(0, 3).Draw(r, "fast failures"),
		base: time.Duration(rapid.IntRange(1, 50).Draw(r, "base ms")) * ms,
	}
	s.spare = time.Duration(rapid.IntRange(0, 100).Draw(r, "spare ms")) * ms
	s.over = time.Duration(rapid.SampledFrom([]int64{1, 1000, int64(ms), int64(40 * ms), int64(time.Second)}).Draw(r, "over"))
	switch rapid.IntRange(0, 3).Draw(r, "how far in the past") {
	case 0:
		s.d = -s.over // exactly back to the budget
	case 1:
		s.d = -s.over - time.Duration(rapid.IntRange(1, 5000).Draw(r, "further ms"))*ms
	case 2:
		s.d = time.Duration(math.MinInt64)
	default:
		s.d = -time.Duration(rapid.IntRange(0, 5000).Draw(r, "past ms")) * ms
	}
	s.budget = max(s.base*(1<<s.fast-1)+s.spare, 1) // above 0: a budget
	return s
}

// run plays the scenario with a Retry-After of d and returns how many
// attempts Do made, what it returned and the last op error; ok is false
// when the call was reported already.
func (s testPastRA) run(h *katatest.H, d time.Duration) (calls int, err, last error, ok bool) {
	var made atomic.Int32
	slow := make(chan struct{})
	released := false
	release := func() {
		if !released {
			released = true
			close(slow)
		}
	}
	h.Own(release)
	last = RetryAfter(d, &testStatus{503})
	op := func(ctx context.Context) (int, error) {
		n := int(made.Add(1))
		switch {
		case n <= s.fast:
			return 0, &testStatus{502}
		case n == s.fast+1:
			<-slow // it ignores its ctx: a slow reply
			return 0, last
		}
		return 42, nil
	}
	p := Policy{MaxAttempts: s.fast + 4, BaseDelay: s.base, MaxElapsed: s.budget}
	c := katatest.Start(h, func(ctx context.Context) (int, error) { return Do(ctx, h.Clk, p, op) })
	if c.Broken() {
		return 0, nil, last, false
	}
	h.Advance(s.budget + s.over) // the pauses, then attempt fast+1 runs past the budget
	if got := int(made.Load()); got != s.fast+1 {
		h.Errorf("B2: attempt %d should be running once the pauses before it were over, but %d attempt(s) were made",
			s.fast+1, got)
		c.Stop()
		return 0, nil, last, false
	}
	release()
	if !c.Returns("B2: a Retry-After in the past kept Do waiting: RetryAfter(%v, …) is no pause at all, and the "+
		"attempt that returned it ended %v past MaxElapsed %v, so Do gives up at once", d, s.over, s.budget) {
		return 0, nil, last, false
	}
	_, err, ok = c.Finish("Do")
	return int(made.Load()), err, last, ok
}

func (s testPastRA) play(h *katatest.H) {
	// First a Retry-After of 0: a Do that retries after it does not count
	// the time spent inside op against the budget, which B1 grades.
	if calls, _, _, ok := s.run(h, 0); !ok || calls != s.fast+1 {
		return
	}
	calls, err, last, ok := s.run(h, s.d)
	if !ok {
		return
	}
	if calls != s.fast+1 {
		h.Errorf("B2: a Retry-After in the past let Do retry past MaxElapsed: attempt %d ended %v on the mock clock, "+
			"%v past MaxElapsed %v, and failed with RetryAfter(%v, …), yet Do made %d attempt(s) in all, not %d "+
			"(with RetryAfter(0, …) it gave up at once): a Retry-After of 0 or below is no pause (take max(d, 0)), "+
			"not a pause that gives time back, so elapsed plus that pause already exceeds the budget and Do gives "+
			"up at once, as if the attempts had run out", s.fast+1, s.budget+s.over, s.over, s.budget, s.d, calls,
			s.fast+1)
		return
	}
	if !errors.Is(err, ErrExhausted) || !errors.Is(err, last) {
		h.Errorf("B2: when MaxElapsed runs out, even after a Retry-After in the past, the error matches ErrExhausted "+
			"and the last op error, %s; Do returned %s", testDescribe(last), testDescribe(err))
	}
}

func TestB2_ExploreARetryAfterInThePastKeepsTheBudget(t *testing.T) {
	katatest.Replay(t, []testPastRA{
		{fast: 1, base: 10 * time.Millisecond, spare: 0, over: time.Second, d: -5 * time.Second, budget: 10 * time.Millisecond},
	}, func(h *katatest.H, s testPastRA) { s.play(h) })
	katatest.Explore(t, 8, testDrawPastRA, func(h *katatest.H, s testPastRA) { s.play(h) })
}

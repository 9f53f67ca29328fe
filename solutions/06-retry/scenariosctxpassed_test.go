package retry

// "Each attempt gets ctx as it is": op is called with the caller's ctx
// itself, in every attempt (the first, those after a pause or a Retry-After
// pause, the one that succeeds and those that fail), whatever kind of ctx
// the caller has. "As it is" is identity: nothing in the contract lets Do
// put anything of its own between the caller and op, and a ctx derived
// from the caller's is a ctx of Do's own, whose end Do decides. The
// mistake this catches: a child ctx per attempt, cancelled when op
// returns, which kills whatever a successful op handed back tied to its
// ctx (a response body, a stream, a goroutine) before the caller reads it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// The kinds of ctx the caller passes to Do.
const (
	testPassedBackground = iota // context.Background() itself
	testPassedCancel            // a cancellable ctx, live
	testPassedValue             // a live ctx that carries a value
	testPassedDeadline          // a live ctx with a deadline far ahead
	testPassedCause             // already cancelled, with a cause (context.WithCancelCause)
	testPassedCancelled         // already cancelled
	testPassedExpired           // its deadline already passed
	testPassedKinds
)

var testPassedKindHow = [...]string{"context.Background() itself", "a cancellable ctx, still live",
	"a live ctx that carries a value (a request id)", "a live ctx whose deadline is 2h away (on the mock clock)",
	"a ctx already cancelled with a cause", "a ctx already cancelled", "a ctx whose deadline already passed"}

// testPassedLive reports whether the caller's ctx of that kind stays live
// for the whole call.
func testPassedLive(kind int) bool { return kind < testPassedCause }

// What an attempt returns.
const (
	testPassedFail       = iota // a retryable error
	testPassedRetryAfter        // RetryAfter(d, a retryable error)
	testPassedOK                // success: a stream tied to the ctx op got
	testPassedPermanent         // Permanent(err)
)

type testPassedAttempt struct {
	outcome int
	after   time.Duration // the d of RetryAfter
}

func (a testPassedAttempt) String() string {
	switch a.outcome {
	case testPassedFail:
		return "fails with a retryable error"
	case testPassedRetryAfter:
		return fmt.Sprintf("fails with RetryAfter(%v, err)", a.after)
	case testPassedOK:
		return "succeeds, returning a stream that reads from the ctx op got"
	}
	return "fails with Permanent(err)"
}

type testPassedScenario struct {
	kind     int
	base     time.Duration       // BaseDelay; the pauses double, no jitter
	attempts []testPassedAttempt // MaxAttempts is len(attempts); only the last may succeed or be permanent
}

func (s testPassedScenario) String() string {
	steps := make([]string, len(s.attempts))
	for i, a := range s.attempts {
		steps[i] = fmt.Sprintf("attempt %d %s", i+1, a)
	}
	return fmt.Sprintf("Do called with %s, Policy{MaxAttempts: %d, BaseDelay: %v, no jitter}; %s",
		testPassedKindHow[s.kind], len(s.attempts), s.base, strings.Join(steps, ", "))
}

func testDrawPassed(r *rapid.T) testPassedScenario {
	s := testPassedScenario{kind: rapid.IntRange(0, testPassedKinds-1).Draw(r, "kind of ctx")}
	s.base = rapid.SampledFrom([]time.Duration{0, time.Millisecond, 7 * time.Millisecond, 100 * time.Millisecond}).Draw(r, "BaseDelay")
	n := rapid.IntRange(1, 5).Draw(r, "attempts")
	for i := 1; i < n; i++ {
		a := testPassedAttempt{outcome: rapid.IntRange(testPassedFail, testPassedRetryAfter).Draw(r, "failure")}
		if a.outcome == testPassedRetryAfter {
			a.after = time.Duration(rapid.IntRange(0, 50).Draw(r, "Retry-After ms")) * time.Millisecond
		}
		s.attempts = append(s.attempts, a)
	}
	last := testPassedAttempt{outcome: rapid.SampledFrom([]int{testPassedOK, testPassedOK, testPassedFail,
		testPassedPermanent}).Draw(r, "the last attempt")}
	s.attempts = append(s.attempts, last)
	return s
}

// testStream is what a successful op returns: something that goes on
// reading from the ctx op got, as an http.Response's body does.
type testStream struct{ ctx context.Context }

// testPassedOp records the ctx of each attempt.
type testPassedOp struct {
	s    testPassedScenario
	mu   sync.Mutex
	ctxs []context.Context
	okay *testStream // what the successful attempt returned
}

func (o *testPassedOp) call(ctx context.Context) (*testStream, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ctxs = append(o.ctxs, ctx)
	n := len(o.ctxs)
	if n > len(o.s.attempts) {
		return nil, fmt.Errorf("stock lookup %d: an attempt past MaxAttempts", n)
	}
	err := fmt.Errorf("stock lookup %d: 503 from the replica", n)
	switch a := o.s.attempts[n-1]; a.outcome {
	case testPassedRetryAfter:
		return nil, RetryAfter(a.after, err)
	case testPassedOK:
		o.okay = &testStream{ctx}
		return o.okay, nil
	case testPassedPermanent:
		return nil, Permanent(err)
	}
	return nil, err
}

// testPassedKey is the key of the value the caller's ctx carries.
type testPassedKey struct{}

// testPassedTheCause is the cause the caller cancelled its ctx with.
var testPassedTheCause = errors.New("checkout: the customer closed the tab")

// before says what came before attempt n, for a message.
func (s testPassedScenario) before(n int) string {
	if n == 1 {
		return "the first attempt"
	}
	if a := s.attempts[n-2]; a.outcome == testPassedRetryAfter {
		return fmt.Sprintf("attempt %d, after the Retry-After pause of %v", n, a.after)
	}
	return fmt.Sprintf("attempt %d, after a pause", n)
}

func (s testPassedScenario) play(h *katatest.H) {
	op := &testPassedOp{s: s}
	p := Policy{MaxAttempts: len(s.attempts), BaseDelay: s.base}
	var opts []katatest.CtxOption
	switch s.kind {
	case testPassedDeadline:
		opts = append(opts, katatest.Timeout(2*time.Hour))
	case testPassedCancelled:
		opts = append(opts, katatest.Cancelled())
	case testPassedExpired:
		opts = append(opts, katatest.Expired())
	}
	var (
		mu     sync.Mutex
		caller context.Context // the ctx the caller passed to Do
	)
	c := katatest.Start(h, func(ctx context.Context) (*testStream, error) {
		switch s.kind {
		case testPassedBackground:
			ctx = context.Background()
		case testPassedValue:
			ctx = context.WithValue(ctx, testPassedKey{}, "request 7f3a")
		case testPassedCause:
			var cancel context.CancelCauseFunc
			ctx, cancel = context.WithCancelCause(ctx)
			cancel(testPassedTheCause)
		}
		mu.Lock()
		caller = ctx
		mu.Unlock()
		return Do(ctx, h.Clk, p, op.call)
	}, opts...)
	if c.Broken() {
		return
	}
	h.Advance(time.Hour) // every pause ends
	if !c.Returns("Do was still running after an hour of mock time (%s): does it wait on something other than "+
		"a timer from clk?", s) {
		return
	}
	v, err, ok := c.Finish("Do")
	if !ok {
		return
	}
	mu.Lock()
	ctx := caller
	mu.Unlock()
	op.mu.Lock()
	defer op.mu.Unlock()
	if len(op.ctxs) == 0 {
		h.Errorf("Do returned %s without calling op: the first attempt is always made, and it gets ctx as it is",
			testDescribe(err))
		return
	}
	if err == nil && v == op.okay && v != nil && ctx.Err() == nil {
		if end := v.ctx.Err(); end != nil {
			h.Errorf("Do cancelled the ctx op got in attempt %d (%s), though that attempt succeeded and the caller's "+
				"ctx is still live: when Do returned, that ctx's Err() was %v, its cause %v. Each attempt gets ctx as "+
				"it is, the caller's, not a child ctx of Do's own that Do cancels once op returns: whatever a "+
				"successful op hands back tied to its ctx (an http.Response body, a stream, a goroutine it "+
				"started) is dead before the caller reads it", len(op.ctxs), s.before(len(op.ctxs)), end,
				context.Cause(v.ctx))
			return
		}
	}
	for i, got := range op.ctxs {
		if got != ctx {
			h.Errorf("Do gave op a ctx of its own in %s (%s) instead of the ctx the caller passed to Do (%s): "+
				"each attempt gets ctx as it is, the caller's very ctx, not one Do derives from it "+
				"(context.WithCancel, context.WithoutCancel, context.WithValue): the caller's ctx alone says "+
				"when op must stop and what it carries", s.before(i+1), testPassedName(got), testPassedName(ctx))
			return
		}
	}
}

// testPassedName shows a ctx: its type and how it was built.
func testPassedName(ctx context.Context) string {
	if ctx == nil {
		return "nil"
	}
	name := fmt.Sprintf("%T", ctx)
	if s, ok := ctx.(fmt.Stringer); ok {
		name = fmt.Sprintf("%s, %s", name, s.String())
	}
	return name
}

func TestR4_ExploreEveryAttemptGetsTheCallersCtxAsItIs(t *testing.T) {
	// Every attempt, whatever came before it, gets the very ctx the caller
	// passed to Do, of any kind: Background, cancellable, carrying a value,
	// with a deadline, already cancelled (with a cause or not) or expired;
	// and after a success, the ctx the successful attempt got is still
	// live while the caller's is.
	katatest.Replay(t, testPassedEachKind, func(h *katatest.H, s testPassedScenario) { s.play(h) })
	katatest.Explore(t, 10, testDrawPassed, func(h *katatest.H, s testPassedScenario) { s.play(h) })
}

// testPassedEachKind is every kind of ctx with one pause before a success,
// in every check: ten draws can miss a kind, and each kind is a different
// parent to whatever Do may derive from it (the mock clock's deadline ctx,
// say, is one the context package can only watch from a goroutine).
var testPassedEachKind = func() []testPassedScenario {
	var ss []testPassedScenario
	for kind := range testPassedKinds {
		ss = append(ss, testPassedScenario{kind: kind, base: 7 * time.Millisecond,
			attempts: []testPassedAttempt{{outcome: testPassedFail}, {outcome: testPassedOK}}})
	}
	return ss
}()

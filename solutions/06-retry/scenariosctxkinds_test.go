package retry

// The caller's ctx is not always cancelled by hand: it has a deadline, and
// it carries values (a request id, a trace). op gets ctx, so every attempt
// sees both, and when the deadline passes during an attempt, an op that
// honours its ctx fails with context.DeadlineExceeded, which Do returns as
// it is, never a context.Canceled that nobody asked for.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testKindKey is the key of a value the caller's ctx carries.
type testKindKey struct{}

// How the attempt in which the deadline passes ends.
const (
	testKindWrapped = iota // it sees its ctx end: fmt.Errorf("stock lookup: %w", ctx.Err())
	testKindBare           // it sees its ctx end: ctx.Err() as it is
	testKindReply          // a reply arrives at the same instant as the deadline passes: 42
	testKindFails          // a reply arrives at the same instant as the deadline passes: a retryable error
)

var testKindHow = [...]string{"returns fmt.Errorf(\"stock lookup: %w\", ctx.Err()) once its ctx ends",
	"returns ctx.Err() once its ctx ends", "gets a reply, 42, at the same instant as the deadline passes (or sees its ctx end, and returns ctx.Err())",
	"gets a retryable error at the same instant as the deadline passes (or sees its ctx end, and returns ctx.Err())"}

type testKindScenario struct {
	attempts int           // MaxAttempts
	base     time.Duration // BaseDelay; the pauses double, no jitter
	k        int           // attempts 1…k-1 fail at once with a retryable error; the deadline passes in attempt k
	offset   time.Duration // this long into attempt k
	end      int           // how attempt k ends, testKind…
}

func (s testKindScenario) String() string {
	before := ""
	switch {
	case s.k == 2:
		before = "attempt 1 fails at once with a retryable error; "
	case s.k > 2:
		before = fmt.Sprintf("attempts 1 to %d fail at once with a retryable error; ", s.k-1)
	}
	return fmt.Sprintf("Policy{MaxAttempts: %d, BaseDelay: %v, no jitter}, a ctx that carries a value and whose deadline "+
		"passes %v into attempt %d (on the mock clock); %sattempt %d %s", s.attempts, s.base, s.offset, s.k, before, s.k,
		testKindHow[s.end])
}

// pause is the pause after the n-th failure: BaseDelay·2ⁿ⁻¹.
func (s testKindScenario) pause(n int) time.Duration { return s.base << (n - 1) }

func testDrawKinds(r *rapid.T) testKindScenario {
	s := testKindScenario{attempts: rapid.IntRange(1, 4).Draw(r, "MaxAttempts")}
	s.base = rapid.SampledFrom([]time.Duration{time.Millisecond, 7 * time.Millisecond, 100 * time.Millisecond}).Draw(r, "BaseDelay")
	s.k = rapid.IntRange(1, s.attempts).Draw(r, "the attempt in which the deadline passes")
	s.offset = time.Duration(rapid.IntRange(1, 50).Draw(r, "ms into it")) * time.Millisecond
	s.end = rapid.IntRange(testKindWrapped, testKindFails).Draw(r, "how it ends")
	return s
}

// testKindOp is the op: it records what ctx each attempt got.
type testKindOp struct {
	s     testKindScenario
	reply chan struct{} // closed when attempt k's reply arrives

	mu   sync.Mutex
	seen []katatest.CtxSeen // per attempt: its ctx's value and deadline
	errs []error            // per attempt: what it returned
	end  error              // ctx.Err() when attempt k saw its ctx end; nil if it did not
}

func (o *testKindOp) call(ctx context.Context) (int, error) {
	o.mu.Lock()
	n := len(o.seen) + 1
	o.seen = append(o.seen, katatest.SeeCtx(ctx, testKindKey{}))
	o.mu.Unlock()
	v, err := o.attempt(ctx, n)
	o.mu.Lock()
	o.errs = append(o.errs, err)
	o.mu.Unlock()
	return v, err
}

func (o *testKindOp) attempt(ctx context.Context, n int) (int, error) {
	if n < o.s.k {
		return 0, fmt.Errorf("stock lookup %d: connection reset", n)
	}
	if n > o.s.k {
		return 0, fmt.Errorf("stock lookup %d: attempt made after the deadline passed", n)
	}
	reply := o.reply
	if o.s.end < testKindReply {
		reply = nil
	}
	select {
	case <-reply:
		if o.s.end == testKindReply {
			return 42, nil
		}
		return 0, fmt.Errorf("stock lookup %d: 503 from the replica", n)
	case <-ctx.Done():
		end := ctx.Err()
		o.mu.Lock()
		o.end = end
		o.mu.Unlock()
		if o.s.end == testKindWrapped {
			return 0, fmt.Errorf("stock lookup: %w", end)
		}
		return 0, end
	}
}

func (s testKindScenario) play(h *katatest.H) {
	op := &testKindOp{s: s, reply: make(chan struct{})}
	var once sync.Once
	h.Own(func() { once.Do(func() { close(op.reply) }) })
	total := s.offset
	for n := 1; n < s.k; n++ {
		total += s.pause(n)
	}
	const value = "request 7f3a"
	deadline := h.Clk.Now().Add(total)
	p := Policy{MaxAttempts: s.attempts, BaseDelay: s.base}
	c := katatest.Start(h, func(ctx context.Context) (int, error) {
		return Do(context.WithValue(ctx, testKindKey{}, value), h.Clk, p, op.call)
	}, katatest.Timeout(total))
	if c.Broken() {
		return
	}
	for n := 1; n < s.k; n++ { // the pauses before attempt k (R1's business)
		h.Advance(s.pause(n))
	}
	if s.offset > 1 {
		h.Advance(s.offset - 1)
	}
	synctest.Wait()
	h.Clk.Add(1) // the deadline passes, and a reply arrives at the same instant
	once.Do(func() { close(op.reply) })
	if !c.Returns("the caller's deadline passed in attempt %d and op returned, but Do never "+
		"returned: Do was still waiting with the mock clock stopped", s.k) {
		return
	}
	got, err, ok := c.Finish("Do")
	if !ok {
		return
	}
	op.mu.Lock()
	defer op.mu.Unlock()
	for i, seen := range op.seen {
		if seen.Value != value {
			h.Errorf("the ctx op got in attempt %d does not carry the caller's values (ctx.Value(key) is %v, want %q, "+
				"which the caller's ctx holds): op gets ctx, the caller's, which keeps its values (a request id, a "+
				"trace); not one built on context.Background()", i+1, seen.Value, value)
			return
		}
		if has := seen.LostDeadline(deadline, deadline.Add(-total)); has != "" {
			h.Errorf("the caller's ctx has a deadline, %v after the start, but the ctx op got in attempt %d has %s: "+
				"op gets ctx as it is, the caller's, which keeps its deadline, "+
				"so that op sees how long it has, and when the deadline passes its ctx.Err() is "+
				"context.DeadlineExceeded; a ctx of Do's own (context.WithoutCancel(ctx), context.Background()) that "+
				"only forwards the caller's cancel loses the deadline and ends with context.Canceled", total, i+1, has)
			return
		}
	}
	if op.end != nil && (!errors.Is(op.end, context.DeadlineExceeded) || errors.Is(op.end, context.Canceled)) {
		h.Errorf("nobody cancelled, but when the caller's deadline passed in attempt %d, op saw its ctx end with %v: "+
			"op gets ctx, the caller's, so when the caller's deadline passes its ctx.Err() is "+
			"context.DeadlineExceeded, not a context.Canceled of Do's own", s.k, op.end)
		return
	}
	last := op.errs[len(op.errs)-1]
	switch {
	case last == nil:
		if err != nil || got != 42 {
			h.Errorf("attempt %d succeeded with 42 as the caller's deadline passed, but Do returned (%v, %s): "+
				"a success returns the op's value", s.k, got, testKindDescribe(err))
		}
	case op.end != nil:
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			h.Errorf("attempt %d saw the caller's deadline pass and returned %s, but Do returned %s: an error "+
				"matching context.DeadlineExceeded is never retried and is returned as it is", s.k,
				testKindDescribe(last), testKindDescribe(err))
		}
	case s.k < s.attempts:
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || !errors.Is(err, last) {
			h.Errorf("attempt %d failed with %s as the caller's deadline passed, so ctx was done before the pause: "+
				"the error must match both ctx.Err(), context.DeadlineExceeded, and the last op error; Do returned %s",
				s.k, testKindDescribe(last), testKindDescribe(err))
		}
	}
}

func TestR4_ExploreTheCallersDeadlineReachesEveryAttempt(t *testing.T) {
	// The caller's ctx carries a value and has a deadline: every attempt
	// sees both, and when the deadline passes during an attempt (with a
	// reply arriving at the same instant, or not), op and Do see
	// context.DeadlineExceeded.
	katatest.Explore(t, 10, testDrawKinds, func(h *katatest.H, s testKindScenario) { s.play(h) })
}

// testKindDescribe shows an error with its type and chain.
func testKindDescribe(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T, chain %s)", strings.TrimSpace(err.Error()), err, katatest.Chain(err))
}

package firstwins

// The caller's ctx is not always cancelled by hand: it has a deadline of
// its own, apart from First's timeout, and it carries values (a request
// id, a trace). Every replica gets a ctx derived from the caller's, so each
// sees both, and when the caller's deadline passes First's error matches
// ctx.Err(), context.DeadlineExceeded, never a context.Canceled that nobody
// asked for.

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

// How a replica of the scenario behaves.
const (
	testKindWrapped  = iota // waits for its ctx: fmt.Errorf("replica: %w", ctx.Err())
	testKindBare            // waits for its ctx: ctx.Err() as it is
	testKindEarly           // fails before the deadline with an error of its own
	testKindTogether        // ignores its ctx; fails at the same instant as the deadline passes
)

var testKindHow = [...]string{"returns fmt.Errorf(\"replica: %w\", ctx.Err()) once its ctx ends",
	"returns ctx.Err() once its ctx ends", "fails with an error of its own before the deadline",
	"ignores its ctx and fails with an error of its own at the same instant as the deadline passes"}

type testKindScenario struct {
	kinds    []int
	deadline time.Duration // the caller's ctx's deadline, after the start
	timeout  time.Duration // First's: 0 (none), or later than the caller's deadline
}

func (s testKindScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "First with timeout %v and %d replicas, with a ctx that carries a value and whose deadline is %v "+
		"after the start (on the mock clock):", s.timeout, len(s.kinds), s.deadline)
	for i, k := range s.kinds {
		fmt.Fprintf(&b, "\n  replica %d %s", i, testKindHow[k])
	}
	return b.String()
}

func testDrawKinds(r *rapid.T) testKindScenario {
	n := rapid.IntRange(1, 3).Draw(r, "replicas")
	s := testKindScenario{kinds: rapid.SliceOfN(rapid.IntRange(testKindWrapped, testKindTogether), n, n).Draw(r, "kinds")}
	if !rapid.Bool().Draw(r, "one replica honours its ctx") {
		s.kinds[rapid.IntRange(0, n-1).Draw(r, "which")] = rapid.IntRange(testKindWrapped, testKindBare).Draw(r, "how")
	}
	s.deadline = time.Duration(rapid.IntRange(2, 3000).Draw(r, "deadline ms")) * time.Millisecond
	if rapid.Bool().Draw(r, "a timeout") {
		s.timeout = s.deadline + time.Duration(rapid.IntRange(1, 1000).Draw(r, "later by ms"))*time.Millisecond
	}
	return s
}

type testKindRun struct {
	s       testKindScenario
	release []chan struct{} // per replica, for testKindEarly and testKindTogether

	mu   sync.Mutex
	seen []katatest.CtxSeen // per replica: its ctx's value and deadline as it started
	own  []error
}

func (x *testKindRun) call(i int) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		x.mu.Lock()
		x.seen[i] = katatest.SeeCtx(ctx, testKindKey{})
		x.mu.Unlock()
		switch x.s.kinds[i] {
		case testKindWrapped:
			<-ctx.Done()
			return "stale", fmt.Errorf("replica: %w", ctx.Err())
		case testKindBare:
			<-ctx.Done()
			return "", ctx.Err()
		}
		<-x.release[i]
		return "stale", x.own[i]
	}
}

func (x *testKindRun) releaseAll() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, c := range x.release {
		if c != nil {
			close(c)
			x.release[i] = nil
		}
	}
}

func (x *testKindRun) releaseKind(kind int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for i, c := range x.release {
		if c != nil && x.s.kinds[i] == kind {
			close(c)
			x.release[i] = nil
		}
	}
}

func (s testKindScenario) play(h *katatest.H) {
	n := len(s.kinds)
	x := &testKindRun{s: s, release: make([]chan struct{}, n), seen: make([]katatest.CtxSeen, n),
		own: make([]error, n)}
	calls := make([]func(context.Context) (string, error), n)
	for i := range n {
		x.release[i] = make(chan struct{})
		x.own[i] = fmt.Errorf("replica %d: 503 from the price service", i)
		calls[i] = x.call(i)
	}
	h.Own(x.releaseAll)
	const value = "request 7f3a"
	deadline := h.Clk.Now().Add(s.deadline)
	c := katatest.Start(h, func(ctx context.Context) (string, error) {
		return First(context.WithValue(ctx, testKindKey{}, value), h.Clk, s.timeout, calls...)
	}, katatest.Timeout(s.deadline))
	synctest.Wait()
	x.releaseKind(testKindEarly)
	h.Advance(s.deadline - 1)
	h.Clk.Add(1) // the caller's deadline passes, and some replicas fail at the same instant
	x.releaseKind(testKindTogether)
	if !c.Returns("the caller's deadline passed, but First did not return: when the caller's ctx is done, " +
		"First returns at once with an error matching ctx.Err()") {
		return
	}
	_, err, ok := c.Finish("First")
	if !ok {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	for i := range n {
		if x.seen[i].Value != value {
			h.Errorf("the ctx replica %d got does not carry the caller's values (ctx.Value(key) is %v, want %q, "+
				"which the caller's ctx holds): every replica gets a ctx derived from the caller's "+
				"(context.WithCancel(ctx)), which keeps its values, not one built on context.Background()", i, x.seen[i].Value, value)
			return
		}
		if has := x.seen[i].LostDeadline(deadline, deadline.Add(-s.deadline)); has != "" {
			h.Errorf("the caller's ctx has a deadline, %v after the start, but the ctx replica %d got has %s: every "+
				"replica gets a ctx derived from the caller's (context.WithCancel(ctx)), which keeps its deadline, so "+
				"that a replica sees how long it has, and when the deadline passes its ctx.Err() is "+
				"context.DeadlineExceeded; a ctx of First's own (context.WithoutCancel(ctx), context.Background()) "+
				"that only forwards the caller's cancel loses the deadline and ends with context.Canceled",
				s.deadline, i, has)
			return
		}
	}
	honour := true // every replica honours its ctx: none failed on its own, so ctx.Err() is First's error
	for _, k := range s.kinds {
		honour = honour && k < testKindEarly
	}
	if errors.Is(err, context.Canceled) || honour && !errors.Is(err, context.DeadlineExceeded) {
		h.Errorf("the caller's deadline passed and nobody cancelled, so the caller's ctx.Err() is "+
			"context.DeadlineExceeded, but First returned %v, chain %s: its error must match ctx.Err(), "+
			"context.DeadlineExceeded, and not context.Canceled; give the replicas a ctx derived from the "+
			"caller's (context.WithCancel(ctx)), and return the caller's ctx.Err()", err, katatest.Chain(err))
	}
}

func TestR4_ExploreTheCallersDeadlineReachesEveryReplica(t *testing.T) {
	// The caller's ctx carries a value and has a deadline (before First's
	// timeout, if any): every replica sees both, and when the deadline
	// passes (with some replicas failing at the same instant), First's
	// error matches context.DeadlineExceeded.
	katatest.Explore(t, 8, testDrawKinds, func(h *katatest.H, s testKindScenario) { s.play(h) })
}

package firstwins

// Hedge's and Collect's replicas keep the caller's deadline (B1, B2), as
// First's do (R4's scenariosctxkinds_test.go): every replica gets a ctx
// derived from the caller's, so it carries the caller's values and
// deadline as they are, and it ends only when the caller's ctx ends or the
// call returns. A ctx with an earlier deadline of the code's own
// ("headroom for the caller") cuts off replicas that would answer in time.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testHRKey is the key of the value the caller's ctx carries.
type testHRKey struct{}

type testHRScenario struct {
	collect  bool          // Collect, else Hedge
	n        int           // replicas
	deadline time.Duration // the caller's, on the mock clock, after the start
	timeout  time.Duration // the call's: 0 (none) or after the caller's deadline
	delay    time.Duration // Hedge's delay: 0, or so that every replica starts before the deadline
}

func (s testHRScenario) String() string {
	call := fmt.Sprintf("Hedge(ctx, clk, %v, %v, %d replicas)", s.timeout, s.delay, s.n)
	if s.collect {
		call = fmt.Sprintf("Collect(ctx, clk, %v, %d replicas)", s.timeout, s.n)
	}
	return fmt.Sprintf("%s; the caller's ctx carries a value and has a deadline %v after the start (on the mock "+
		"clock); every replica waits on its ctx; the clock moves to 1ns before the caller's deadline, then past it",
		call, s.deadline)
}

func testDrawHR(collect bool) func(*rapid.T) testHRScenario {
	return func(r *rapid.T) testHRScenario {
		s := testHRScenario{collect: collect, n: rapid.IntRange(1, 3).Draw(r, "replicas")}
		if rapid.Bool().Draw(r, "deadline far") {
			s.deadline = rapid.SampledFrom([]time.Duration{time.Hour, 24 * time.Hour}).Draw(r, "deadline")
		} else {
			s.deadline = time.Duration(rapid.IntRange(4, 3_000_000).Draw(r, "deadline µs")) * time.Microsecond
		}
		if rapid.Bool().Draw(r, "a timeout after the deadline") {
			s.timeout = s.deadline + time.Duration(rapid.IntRange(1, 1000).Draw(r, "timeout after, ms"))*time.Millisecond
		}
		if !collect && rapid.Bool().Draw(r, "hedged") {
			s.delay = s.deadline / time.Duration(2*s.n)
		}
		return s
	}
}

func (s testHRScenario) play(h *katatest.H) {
	what := "Hedge"
	if s.collect {
		what = "Collect"
	}
	var mu sync.Mutex
	ctxs := make([]context.Context, s.n)
	calls := make([]func(context.Context) (int, error), s.n)
	for i := range calls {
		calls[i] = func(ctx context.Context) (int, error) {
			mu.Lock()
			ctxs[i] = ctx
			mu.Unlock()
			<-ctx.Done()
			return 0, ctx.Err()
		}
	}
	var dl time.Time
	c := katatest.Start(h, func(ctx context.Context) (struct{}, error) {
		ctx = context.WithValue(ctx, testHRKey{}, "request-7")
		dl, _ = ctx.Deadline()
		if s.collect {
			Collect(ctx, h.Clk, s.timeout, calls...)
			return struct{}{}, nil
		}
		_, err := Hedge(ctx, h.Clk, s.timeout, s.delay, calls...)
		return struct{}{}, err
	}, katatest.Timeout(s.deadline))
	if c.Broken() {
		return
	}
	moved := time.Duration(0)
	for range s.n - 1 { // Hedge starts the next replica a delay later
		if s.delay > 0 {
			h.Advance(s.delay)
			moved += s.delay
		}
	}
	h.Advance(s.deadline - 1 - moved) // 1ns before the caller's deadline
	mu.Lock()
	seen := append([]context.Context(nil), ctxs...)
	mu.Unlock()
	for i, ctx := range seen {
		if ctx == nil {
			h.Errorf("%s had not called replica %d 1ns before the caller's deadline, with no replica failed", what, i)
			c.Stop()
			return
		}
		if got := ctx.Value(testHRKey{}); got != "request-7" {
			h.Errorf("the ctx replica %d got does not carry the caller's values (ctx.Value(key) is %v): every replica "+
				"gets a ctx derived from the caller's, which keeps its values and its deadline", i, got)
			c.Stop()
			return
		}
		if got, ok := ctx.Deadline(); !ok || !got.Equal(dl) {
			rel := "no deadline"
			if ok && got.Before(dl) {
				rel = fmt.Sprintf("a deadline %v earlier than the caller's", dl.Sub(got))
			} else if ok {
				rel = fmt.Sprintf("a deadline %v later than the caller's", got.Sub(dl))
			}
			h.Errorf("the replicas got a deadline other than the caller's: replica %d of %s saw %s (the caller's is %v "+
				"after the start); every replica gets a ctx derived from the caller's (context.WithCancel(ctx)), "+
				"which keeps the caller's deadline exactly, so that a replica that would answer just before it is "+
				"not cut off while the caller still waits", i, what, rel, s.deadline)
			c.Stop()
			return
		}
		if err := ctx.Err(); err != nil {
			h.Errorf("the replicas' ctx ended before the caller's deadline: replica %d of %s saw ctx.Err() = %v 1ns "+
				"before the caller's deadline, with the caller's ctx live and no replica answered; a replica's ctx "+
				"ends only when the caller's ctx ends or %s returns", i, what, err, what)
			c.Stop()
			return
		}
	}
	h.Advance(1) // the caller's deadline passes
	if !c.Returns("%s was still waiting once the caller's deadline had passed: when the caller's ctx is done it "+
		"returns at once", what) {
		return
	}
	c.Finish(what)
}

func TestB1_ExploreHedgedReplicasKeepTheCallersDeadlineExactly(t *testing.T) {
	katatest.Explore(t, 6, testDrawHR(false), func(h *katatest.H, s testHRScenario) { s.play(h) })
}

func TestB2_ExploreCollectedReplicasKeepTheCallersDeadlineExactly(t *testing.T) {
	katatest.Explore(t, 6, testDrawHR(true), func(h *katatest.H, s testHRScenario) { s.play(h) })
}

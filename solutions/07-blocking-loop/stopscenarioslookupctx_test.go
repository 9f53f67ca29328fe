package blockingloop

// R5 (and the README's "a lookup runs with Run's ctx"): every lookup,
// started at once or after a wait in the queue, gets Run's ctx itself or
// one derived from it. It carries Run's values (a trace id, credentials),
// and when Run's ctx ends the lookups still running see it end the same
// way: the same error, the same cause. A ctx of the cache's own, made from
// context.Background() and cancelled at the stop, has none of that.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testRunCtxValueKey keys a value of Run's ctx that every lookup must see.
type testRunCtxValueKey struct{}

const testRunCtxValue = "trace-7f3a"

// testErrDeploy is the cause of a cancel of Run's ctx.
var testErrDeploy = errors.New("service: new version deployed")

var testLookupCtxEnds = []string{
	"it is cancelled (context.WithCancel)",
	"it is cancelled with a cause (context.WithCancelCause)",
	"its timeout on the injected clock passes (clk.WithTimeout)",
}

// testLookupCtx is one scenario: misses for distinct keys, some lookups
// released so that queued ones start, then Run's ctx ends.
type testLookupCtx struct {
	maxInFlight int
	misses      int
	released    int // the first released lookups return a value before the stop
	way         int // testLookupCtxEnds
}

func (s testLookupCtx) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d; Run's ctx carries a value (context.WithValue) and ends when %s",
		s.maxInFlight, testLookupCtxEnds[s.way])
	fmt.Fprintf(&b, "\n  Get %d distinct keys, one after the other; every lookup waits until released or its ctx ends", s.misses)
	if s.released > 0 {
		fmt.Fprintf(&b, "\n  the first %d lookup(s) to start return a value, one after the other, so queued ones start", s.released)
	}
	fmt.Fprintf(&b, "\n  Run's ctx ends")
	return b.String()
}

func testDrawLookupCtx(r *rapid.T) testLookupCtx {
	s := testLookupCtx{maxInFlight: rapid.IntRange(0, 2).Draw(r, "MaxInFlight")}
	s.misses = rapid.IntRange(1, 4).Draw(r, "misses")
	s.released = rapid.IntRange(0, s.misses-1).Draw(r, "released")
	s.way = rapid.IntRange(0, len(testLookupCtxEnds)-1).Draw(r, "way")
	return s
}

// testCtxSeen is what a lookup saw of its ctx.
type testCtxSeen struct {
	value      any
	ended      bool
	err, cause error
}

func (s testLookupCtx) play(h *katatest.H) {
	key := func(i int) string { return fmt.Sprintf("K%d", i+1) }
	var mu sync.Mutex
	seen := map[string]*testCtxSeen{}
	gates := map[string]chan struct{}{}
	for i := range s.misses {
		gates[key(i)] = make(chan struct{})
	}
	released := map[string]bool{} // gates closed by the test
	var once sync.Once
	h.Own(func() {
		once.Do(func() {
			for k, g := range gates {
				if !released[k] {
					close(g)
				}
			}
		})
	})
	var started []string // the keys whose lookup started, in order
	lookup := func(ctx context.Context, k string) (string, error) {
		rec := &testCtxSeen{value: ctx.Value(testRunCtxValueKey{})}
		mu.Lock()
		seen[k] = rec
		started = append(started, k)
		mu.Unlock()
		select {
		case <-gates[k]:
			return "v:" + k, nil
		case <-ctx.Done():
			mu.Lock()
			rec.ended, rec.err, rec.cause = true, ctx.Err(), context.Cause(ctx)
			mu.Unlock()
			return "", fmt.Errorf("lookup %q: %w", k, ctx.Err())
		}
	}
	cache := New(h.Clk, lookup, Config{MaxInFlight: s.maxInFlight})
	ready := make(chan context.Context, 1)
	var end func()
	run := katatest.StartErr(h, func(ctx context.Context) error {
		ctx = context.WithValue(ctx, testRunCtxValueKey{}, testRunCtxValue)
		var cancel context.CancelFunc
		switch s.way {
		case 0:
			ctx, cancel = context.WithCancel(ctx)
			end = cancel
		case 1:
			var cause context.CancelCauseFunc
			ctx, cause = context.WithCancelCause(ctx)
			end, cancel = func() { cause(testErrDeploy) }, func() { cause(nil) }
		default:
			ctx, cancel = h.Clk.WithTimeout(ctx, testEndAfter)
			end = func() { h.Advance(testEndAfter) }
		}
		defer cancel()
		ready <- ctx
		return cache.Run(ctx)
	})
	runCtx := <-ready
	for i := range s.misses {
		katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, key(i)) })
		synctest.Wait()
	}
	// Release the lookups that started first, whatever order the queue
	// started them in: R4's tests check that order.
	for i := range s.released {
		mu.Lock()
		if i >= len(started) {
			mu.Unlock()
			return // fewer lookups run than MaxInFlight allows: R4's tests say so
		}
		k := started[i]
		mu.Unlock()
		close(gates[k])
		released[k] = true
		synctest.Wait()
	}
	end()
	if !run.Returns("Run did not return once its ctx had ended (%s) and every lookup had returned",
		testLookupCtxEnds[s.way]) {
		return
	}
	if _, ok := run.Finish("Run"); !ok {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range s.misses {
		rec := seen[key(i)]
		if rec == nil {
			continue // never started: R4 and the queue's tests say whether it should have
		}
		if rec.value != testRunCtxValue {
			h.Errorf("the lookup of %q got a ctx without the values of Run's ctx (ctx.Value returned %v; Run's "+
				"ctx carries %q): a lookup runs with Run's ctx, or one derived from it, so it sees what the "+
				"service put there (a trace id, credentials); a ctx of the cache's own, made from "+
				"context.Background(), loses them", key(i), rec.value, testRunCtxValue)
			return
		}
		if !rec.ended {
			continue
		}
		want, wantCause := runCtx.Err(), context.Cause(runCtx)
		if !errors.Is(rec.err, want) || rec.cause != wantCause {
			h.Errorf("when Run's ctx ended (%s) with %v (cause %v), the running lookup of %q saw its ctx end with "+
				"%v (cause %v): a lookup runs with Run's ctx, or one derived from it, so it sees Run's ctx end "+
				"as it ended, deadline or cause included, not a cancel of a ctx of the cache's own",
				testLookupCtxEnds[s.way], want, wantCause, key(i), rec.err, rec.cause)
			return
		}
	}
}

func TestR5_ExploreLookupsRunWithRunsCtxItsValuesAndItsEnd(t *testing.T) {
	play := func(h *katatest.H, s testLookupCtx) { s.play(h) }
	katatest.Replay(t, []testLookupCtx{{maxInFlight: 1, misses: 2, released: 1, way: 1}}, play)
	katatest.Explore(t, 8, testDrawLookupCtx, play)
}

package bounded

// The README's "Fail fast": the ctx the calls got ends "when the caller's
// ctx ends or when ForEach returns", after a success too, as errgroup's
// Wait cancels its ctx. A call may leave something watching its ctx (a
// context.AfterFunc, a goroutine of its own) that only its end stops. The
// test looks at each call's ctx on the goroutine that called ForEach, the
// moment it returned: a cancel a moment later, or only on a stop, is too
// late.

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gokata/internal/katatest"
)

type testAtReturn struct {
	api string
	run func(ctx context.Context, items []int, fn func(context.Context, int) error) error
}

// testAtReturns is the API each requirement checks.
var testAtReturns = map[string]testAtReturn{
	"R6": {"ForEach", func(ctx context.Context, items []int, fn func(context.Context, int) error) error {
		return ForEach(ctx, items, 2, fn)
	}},
	"B1": {"ForEachWeighted", func(ctx context.Context, items []int, fn func(context.Context, int) error) error {
		return ForEachWeighted(ctx, items, 2, func(int) int { return 1 }, fn)
	}},
	"B2": {"TryForEach", func(ctx context.Context, items []int, fn func(context.Context, int) error) error {
		b, err := NewBulkhead(len(items))
		if err != nil {
			return err
		}
		return TryForEach(ctx, b, items, fn)
	}},
}

func testCtxEndsAtReturn(t *testing.T, req string) {
	a := testAtReturns[req]
	for _, n := range []int{1, 3} {
		katatest.Run(t, func(h *katatest.H) {
			var (
				mu   sync.Mutex
				ctxs = make([]context.Context, n)
				live []int // items whose ctx was not done when the call returned
			)
			fn := func(ctx context.Context, i int) error {
				mu.Lock()
				ctxs[i] = ctx
				mu.Unlock()
				return nil
			}
			c := katatest.StartErr(h, func(ctx context.Context) error {
				err := a.run(ctx, testItems(n), fn)
				mu.Lock()
				defer mu.Unlock()
				for i, got := range ctxs {
					if got != nil && got.Err() == nil {
						live = append(live, i)
					}
				}
				return err
			})
			setup := fmt.Sprintf("%s over %d item(s), every call succeeding at once, the caller's ctx live", a.api, n)
			if c.Broken() || !c.Returns("%s: %s did not return", setup, a.api) {
				return
			}
			if err, ok := testResult(c); !ok || err != nil {
				if ok {
					h.T.Errorf("%s: %s returned %v; want nil", setup, a.api, err)
				}
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if len(live) > 0 {
				h.T.Errorf("%s: %s returned, but the ctx it gave the call(s) for item(s) %v was not cancelled yet: "+
					"the calls' ctx ends when %s returns, after a success too (defer cancel() right after "+
					"context.WithCancel, as errgroup's Wait does); otherwise whatever a call left watching its "+
					"ctx (a context.AfterFunc, a goroutine) outlives %s", setup, a.api, live, a.api, a.api)
			}
		})
	}
}

func TestR6_TheCallsCtxEndsWhenForEachReturns(t *testing.T) { testCtxEndsAtReturn(t, "R6") }

func TestB1_TheCallsCtxEndsWhenForEachWeightedReturns(t *testing.T) { testCtxEndsAtReturn(t, "B1") }

func TestB2_TheCallsCtxEndsWhenTryForEachReturns(t *testing.T) { testCtxEndsAtReturn(t, "B2") }

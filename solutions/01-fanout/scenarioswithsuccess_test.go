package fanout

// R4 after a success, every run: the explorations draw a batch where every
// call succeeds only now and then, so this fixed case makes sure a ctx left
// live after a success is caught on every check. Every call succeeds, with
// the caller's ctx live throughout; the moment Map returns, the ctx each
// call got must be done.

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"gokata/internal/katatest"
)

// testSuccess: n calls that all succeed, returning at once or when
// released, last index first.
type testSuccess struct {
	n      int
	atOnce bool
}

func (s testSuccess) String() string {
	how := "each released in turn, last index first"
	if s.atOnce {
		how = "each at once"
	}
	return fmt.Sprintf("Map over %d elements, every call succeeds, %s; the caller's ctx live throughout", s.n, how)
}

func (s testSuccess) play(h *katatest.H) {
	in, gates := testGatedInputs(h, s.n)
	ctxs := make([]context.Context, s.n)
	var mu sync.Mutex
	fn := func(ctx context.Context, v int) (string, error) {
		i := v - testBase
		mu.Lock()
		ctxs[i] = ctx
		mu.Unlock()
		if !s.atOnce {
			_ = gates[i].Hold(context.Background())
		}
		return testResult(v), nil
	}
	var live []int
	c := katatest.Start(h, func(ctx context.Context) ([]string, error) {
		out, err := Map(ctx, in, fn)
		mu.Lock() // the moment Map returns, before anything else runs
		for i, cx := range ctxs {
			if cx != nil && cx.Err() == nil {
				live = append(live, i)
			}
		}
		mu.Unlock()
		return out, err
	})
	if c.Broken() {
		return
	}
	if !s.atOnce {
		for i := s.n - 1; i >= 0; i-- {
			gates[i].Release()
			h.Settle()
		}
	}
	if !c.Returns("every call of fn had returned, but Map was still waiting") {
		return
	}
	_, err, ok := c.Finish("Map")
	if !ok {
		return
	}
	if err != nil {
		h.Errorf("every call of fn succeeded, but Map returned %v", err)
		return
	}
	if len(live) > 0 {
		h.Errorf("Map returned, but the ctx it gave the calls for %s was not cancelled yet, after a success: Map must "+
			"cancel it before it returns, after a success too (defer cancel() right after context.WithCancel, as "+
			"errgroup's Wait does); otherwise whatever a call left watching that ctx (a goroutine, a "+
			"context.AfterFunc) lives on until the caller's ctx ends, which may be never", testElements(live))
	}
}

func TestR4_EveryRunASuccessStillCancelsTheCallsCtx(t *testing.T) {
	katatest.Replay(t, []testSuccess{{n: 3}, {n: 1, atOnce: true}, {n: 4, atOnce: true}},
		func(h *katatest.H, s testSuccess) { s.play(h) })
}

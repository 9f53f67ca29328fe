package fanout

// R4 after a success, every run: the explorations draw a batch where every
// call succeeds only now and then, so this fixed case makes sure a ctx left
// live after a success is caught on every check. Every call succeeds, with
// the caller's ctx live throughout; the moment Map returns, the ctx each
// call got must be done. MapAll (B1) is like Map here: a failure cancels
// nothing while it runs, but its return cancels the ctx of every call.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"gokata/internal/katatest"
)

// testSuccess: n calls that all succeed, returning at once or when
// released, last index first; with mapAll, MapAll's calls, of which the
// one at index fail-1 fails (fail 0: none fails), or panics with panics.
type testSuccess struct {
	n      int
	atOnce bool
	mapAll bool
	fail   int
	panics bool
}

func (s testSuccess) name() string {
	if s.mapAll {
		return "MapAll"
	}
	return "Map"
}

func (s testSuccess) String() string {
	how := "each released in turn, last index first"
	if s.atOnce {
		how = "each at once"
	}
	outcome := "every call succeeds"
	if s.fail > 0 {
		outcome = fmt.Sprintf("the call for in[%d] fails, the others succeed", s.fail-1)
		if s.panics {
			outcome = fmt.Sprintf("the call for in[%d] panics, the others succeed", s.fail-1)
		}
	}
	return fmt.Sprintf("%s over %d elements, %s, %s; the caller's ctx live throughout", s.name(), s.n, outcome, how)
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
		if i == s.fail-1 {
			if s.panics {
				panic("index out of range [7] with length 7")
			}
			return "", errors.New("status 503")
		}
		return testResult(v), nil
	}
	run := Map[int, string]
	if s.mapAll {
		run = MapAll[int, string]
	}
	var live []int
	panicked := false // with the *PanicError B2 asks for
	c := katatest.Start(h, func(ctx context.Context) (out []string, err error) {
		defer func() {
			mu.Lock() // the moment Map returns or panics, before anything else runs
			for i, cx := range ctxs {
				if cx != nil && cx.Err() == nil {
					live = append(live, i)
				}
			}
			mu.Unlock()
			if !s.panics {
				return
			}
			r := recover()
			if _, ok := r.(*PanicError); !ok && r != nil {
				panic(r) // the harness reports it
			}
			panicked = r != nil
		}()
		return run(ctx, in, fn)
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
	if !c.Returns("every call of fn had returned, but %s was still waiting", s.name()) {
		return
	}
	_, err, ok := c.Finish(s.name())
	if !ok {
		return
	}
	if s.panics {
		if panicked && len(live) > 0 {
			h.Errorf("%s raised the call's panic again as a *PanicError, but the ctx it gave the calls for %s was not "+
				"cancelled yet: a panic is a way out too; cancel that ctx on every way out (defer its cancel right "+
				"after context.WithCancel), or whatever a call left watching it lives on", s.name(), testElements(live))
		}
		return // a panic not raised again as a *PanicError: B2's other tests say so
	}
	if s.fail == 0 && err != nil {
		h.Errorf("every call of fn succeeded, but %s returned %v", s.name(), err)
		return
	}
	if s.fail > 0 && err == nil {
		h.Errorf("the call for in[%d] failed, but %s returned a nil error", s.fail-1, s.name())
		return
	}
	if len(live) == 0 {
		return
	}
	if s.mapAll {
		h.Errorf("MapAll returned, but the ctx it gave the calls for %s was not cancelled yet: MapAll is like Map "+
			"here — a failure cancels nothing while it runs, but before it returns it cancels the ctx it gave the "+
			"calls (give them a ctx of its own, from context.WithCancel of the caller's, and defer its cancel); "+
			"with the caller's ctx itself, whatever a call started watching it lives on until the caller's ctx "+
			"ends, which may be never", testElements(live))
		return
	}
	h.Errorf("Map returned, but the ctx it gave the calls for %s was not cancelled yet, after a success: Map must "+
		"cancel it before it returns, after a success too (defer cancel() right after context.WithCancel, as "+
		"errgroup's Wait does); otherwise whatever a call left watching that ctx (a goroutine, a "+
		"context.AfterFunc) lives on until the caller's ctx ends, which may be never", testElements(live))
}

// B2 with B1: a panic in one of MapAll's calls cancels nothing while the
// others run, but the panic raised again on the caller's goroutine leaves
// MapAll as a return does, and the ctx the calls got must be done by then.
func TestB2_MapAllCancelsTheCallsCtxWhenItPanics(t *testing.T) {
	katatest.Replay(t, []testSuccess{{n: 3, atOnce: true, mapAll: true, fail: 2, panics: true},
		{n: 3, mapAll: true, fail: 3, panics: true}},
		func(h *katatest.H, s testSuccess) { s.play(h) })
}

func TestR4_EveryRunASuccessStillCancelsTheCallsCtx(t *testing.T) {
	katatest.Replay(t, []testSuccess{{n: 3}, {n: 1, atOnce: true}, {n: 4, atOnce: true}},
		func(h *katatest.H, s testSuccess) { s.play(h) })
}

func TestB1_MapAllCancelsTheCallsCtxWhenItReturns(t *testing.T) {
	katatest.Replay(t, []testSuccess{{n: 3, mapAll: true}, {n: 4, atOnce: true, mapAll: true, fail: 2},
		{n: 1, atOnce: true, mapAll: true}},
		func(h *katatest.H, s testSuccess) { s.play(h) })
}

package bounded

// The caller's ctx is not always cancelled by hand: it has a deadline, and
// it carries values (a request id, a trace). Every call gets a context
// derived from the caller's, so each call sees both, and when the deadline
// passes, the calls in flight and ForEach see context.DeadlineExceeded, the
// caller's ctx.Err(), never a context.Canceled that nobody asked for.

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

// What a call does when its ctx ends before the test releases it.
const (
	testKindWrapped = iota // returns fmt.Errorf("thumb-%d: %w", i, ctx.Err())
	testKindBare           // returns ctx.Err() as it is
	testKindNil            // finishes its work anyway and returns nil
	testKindDeaf           // ignores its ctx: returns nil only when released
)

var testKindHow = [...]string{"on its ctx's end returns fmt.Errorf(\"thumb-%d: %w\", ctx.Err())",
	"on its ctx's end returns ctx.Err()", "on its ctx's end returns nil", "ignores its ctx and returns nil when released"}

type testKindScenario struct {
	limit    int
	kinds    []int         // per item, testKind…
	deadline time.Duration // the caller's ctx's deadline, after the start
	before   [][]int       // steps before the deadline: which calls in flight return (index mod their number, oldest first)
	together []int         // the calls in flight that return at the same instant as the deadline passes
}

func (s testKindScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ForEach with limit %d over %d items, with a ctx that carries a value and whose deadline is %v after the start (on the mock clock):",
		s.limit, len(s.kinds), s.deadline)
	for i, k := range s.kinds {
		fmt.Fprintf(&b, "\n  item %d %s", i, testKindHow[k])
	}
	for n, st := range s.before {
		fmt.Fprintf(&b, "\n  step %d: the calls in flight number %v (counted from the oldest, from 0) return nil", n+1, st)
	}
	fmt.Fprintf(&b, "\n  step %d: the clock moves %v: the caller's deadline passes", len(s.before)+1, s.deadline)
	if len(s.together) > 0 {
		fmt.Fprintf(&b, ", and at the same instant the calls in flight number %v return nil", s.together)
	}
	b.WriteString("\n  then every call left is released")
	return b.String()
}

func testDrawKinds(r *rapid.T) testKindScenario {
	s := testKindScenario{limit: rapid.IntRange(1, 3).Draw(r, "limit")}
	n := rapid.IntRange(1, 6).Draw(r, "items")
	s.kinds = rapid.SliceOfN(rapid.IntRange(testKindWrapped, testKindDeaf), n, n).Draw(r, "kinds")
	s.deadline = time.Duration(rapid.IntRange(1, 3000).Draw(r, "deadline ms")) * time.Millisecond
	s.before = rapid.SliceOfN(rapid.SliceOfN(rapid.IntRange(0, 2), 1, 2), 0, 2).Draw(r, "before")
	s.together = rapid.SliceOfN(rapid.IntRange(0, 2), 0, 2).Draw(r, "together")
	return s
}

// testKindRun is one ForEach call of a scenario and what its calls saw.
type testKindRun struct {
	s     testKindScenario
	gates []chan struct{}

	mu       sync.Mutex
	order    []int              // the items in the order their calls started
	returned []bool             // per item
	seen     []katatest.CtxSeen // per item: its ctx's value and deadline as the call started
	ends     []error            // per item: ctx.Err() when the call saw its ctx end; nil if it did not
	rets     []error            // per item: what the call returned
	released []bool
}

func (x *testKindRun) fn(ctx context.Context, i int) error {
	seen := katatest.SeeCtx(ctx, testKindKey{})
	x.mu.Lock()
	x.order = append(x.order, i)
	x.seen[i] = seen
	x.mu.Unlock()
	done := ctx.Done()
	if x.s.kinds[i] == testKindDeaf {
		done = nil
	}
	var err, end error
	select {
	case <-x.gates[i]:
	case <-done:
		end = ctx.Err()
		switch x.s.kinds[i] {
		case testKindWrapped:
			err = fmt.Errorf("thumb-%d: %w", i, end)
		case testKindBare:
			err = end
		}
	}
	x.mu.Lock()
	x.returned[i], x.ends[i], x.rets[i] = true, end, err
	x.mu.Unlock()
	return err
}

func (x *testKindRun) release(i int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.released[i] {
		x.released[i] = true
		close(x.gates[i])
	}
}

func (x *testKindRun) releaseAll() {
	for i := range x.gates {
		x.release(i)
	}
}

// releasePicks releases the calls in flight at the given positions (oldest
// first, modulo their number), all picked before any is released.
func (x *testKindRun) releasePicks(picks []int) {
	x.mu.Lock()
	var fl []int
	for _, i := range x.order {
		if !x.returned[i] {
			fl = append(fl, i)
		}
	}
	x.mu.Unlock()
	if len(fl) == 0 {
		return
	}
	for _, p := range picks {
		x.release(fl[p%len(fl)])
	}
}

func (s testKindScenario) play(h *katatest.H) {
	n := len(s.kinds)
	x := &testKindRun{s: s, gates: make([]chan struct{}, n), returned: make([]bool, n), seen: make([]katatest.CtxSeen, n),
		ends: make([]error, n), rets: make([]error, n), released: make([]bool, n)}
	for i := range x.gates {
		x.gates[i] = make(chan struct{})
	}
	h.Own(x.releaseAll)
	const value = "request 7f3a"
	deadline := h.Clk.Now().Add(s.deadline)
	c := katatest.StartErr(h, func(ctx context.Context) error {
		return ForEach(context.WithValue(ctx, testKindKey{}, value), testItems(n), s.limit, x.fn)
	}, katatest.Timeout(s.deadline))
	synctest.Wait()
	for _, st := range s.before {
		x.releasePicks(st)
		synctest.Wait()
	}
	// The deadline passes, and some calls return at the same instant.
	h.Clk.Add(s.deadline)
	x.releasePicks(s.together)
	synctest.Wait()
	x.releaseAll() // the calls that ignore their ctx
	if !c.Returns("every call of fn returned and every gate was open, but ForEach did not return") {
		return
	}
	if c.Panicked() {
		return // already reported
	}
	err := c.Err()
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, i := range x.order {
		if x.seen[i].Value != value {
			h.Errorf("the ctx the call for item %d got does not carry the caller's values (ctx.Value(key) is %v, "+
				"want %q, which the caller's ctx holds): give every call a ctx derived from the caller's "+
				"(context.WithCancel(ctx)), which keeps its values (a request id, a trace), not one built on "+
				"context.Background()", i, x.seen[i].Value, value)
			return
		}
		if has := x.seen[i].LostDeadline(deadline, deadline.Add(-s.deadline)); has != "" {
			h.Errorf("the caller's ctx has a deadline, %v after the start, but the ctx the call for item %d got has %s: "+
				"give every call a ctx derived from the caller's (context.WithCancel(ctx)), which keeps its deadline, so "+
				"that a call sees how long it has, and when the deadline passes its ctx.Err() is "+
				"context.DeadlineExceeded; a ctx of ForEach's own (context.WithoutCancel(ctx), context.Background()) that "+
				"only forwards the caller's cancel loses the deadline and ends with context.Canceled", s.deadline, i, has)
			return
		}
	}
	var failed []int
	for _, i := range x.order {
		if end := x.ends[i]; end != nil && (!errors.Is(end, context.DeadlineExceeded) || errors.Is(end, context.Canceled)) {
			h.Errorf("no call failed and nobody cancelled, but when the caller's deadline passed, the call for item %d saw "+
				"its ctx end with %v: the calls' ctx is derived from the caller's (context.WithCancel(ctx)), so when "+
				"the caller's deadline passes, their ctx.Err() is the caller's, context.DeadlineExceeded; cancel it "+
				"yourself only after a call failed", i, end)
			return
		}
		if x.rets[i] != nil {
			failed = append(failed, i)
		}
	}
	if err != nil && (!errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		why := fmt.Sprintf("only %d of the %d items started, so ForEach returns ctx.Err()", len(x.order), n)
		if len(failed) > 0 {
			why = fmt.Sprintf("the call for item %d returned %q, its ctx's end, and ForEach returns the first error a "+
				"call returned, as it is", failed[0], x.rets[failed[0]])
		}
		h.Errorf("the caller's deadline passed and nobody cancelled, so the caller's ctx.Err() is "+
			"context.DeadlineExceeded, but ForEach returned %v, which does not match it (%s): give every call a ctx "+
			"derived from the caller's (context.WithCancel(ctx)), and return the caller's ctx.Err(), not a "+
			"context.Canceled of your own", katatest.Chain(err), why)
	}
}

func TestR3_ExploreTheCallersDeadlineReachesEveryCall(t *testing.T) {
	// The caller's ctx carries a value and has a deadline: every call sees
	// both, and when the deadline passes (with some calls returning at the
	// same instant), the calls and ForEach see context.DeadlineExceeded.
	katatest.Explore(t, 8, testDrawKinds, func(h *katatest.H, s testKindScenario) { s.play(h) })
}

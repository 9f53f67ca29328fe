package fanout

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"gokata/internal/katatest"
)

// testBase is the first input value: in[i] = testBase + i, so a result
// that lands in the wrong slot cannot look right by accident.
const testBase = 100

// testResult is what the fake fn returns for the input v.
func testResult(v int) string { return fmt.Sprintf("price of #%d", v) }

// testResults is the output Map must return for testInputs(n).
func testResults(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = testResult(testBase + i)
	}
	return out
}

// testEmpty reports whether r is the zero value: an out[i] nothing was put in.
func testEmpty(r string) bool { return r == "" }

// testCalls is a fake fn for Map[int, string]. The call for in[i] waits at
// gate i until the test releases it (or, unless it ignores its ctx, until
// its ctx is done), then returns fail[i] if set, panics with panics[i] if
// set, and otherwise returns testResult(in[i]). It remembers the ctx each
// call got. The test owns its gates: Stop on a call (and so Returns)
// opens them all, so calls that ignore ctx end too.
type testCalls struct {
	in        []int
	gates     []*katatest.Gate
	fail      map[int]error
	panics    map[int]any
	ignoreCtx bool         // hold without ctx: calls that, like a slow query, do not honour cancellation
	deaf      map[int]bool // the calls that hold without ctx when ignoreCtx is false

	mu       sync.Mutex
	released map[*katatest.Gate]bool
	ctxs     []context.Context
}

func testNewCalls(h *katatest.H, n int) *testCalls {
	c := &testCalls{
		in:       make([]int, n),
		gates:    make([]*katatest.Gate, n),
		fail:     map[int]error{},
		panics:   map[int]any{},
		deaf:     map[int]bool{},
		released: map[*katatest.Gate]bool{},
		ctxs:     make([]context.Context, n),
	}
	for i := range c.in {
		c.in[i] = testBase + i
		c.gates[i] = katatest.NewGate()
	}
	h.Own(c.releaseAll)
	return c
}

func (c *testCalls) fn(ctx context.Context, v int) (string, error) {
	i := v - testBase
	c.mu.Lock()
	c.ctxs[i] = ctx
	c.mu.Unlock()
	hold := ctx
	if c.ignoreCtx || c.deaf[i] {
		hold = context.Background()
	}
	if err := c.gates[i].Hold(hold); err != nil {
		return "", fmt.Errorf("price lookup #%d: %w", v, err)
	}
	if err := c.fail[i]; err != nil {
		return "", err
	}
	if p := c.panics[i]; p != nil {
		panic(p)
	}
	return testResult(v), nil
}

// oneGate makes every call wait at the same gate, so that releasing it
// lets them all return in one step: a race between two of them is then
// there for the race detector to see, whatever the number of CPUs.
func (c *testCalls) oneGate() {
	for i := range c.gates {
		c.gates[i] = c.gates[0]
	}
}

// release lets the call for in[i] (or a later one) through its gate.
func (c *testCalls) release(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g := c.gates[i]; !c.released[g] {
		c.released[g] = true
		g.Release()
	}
}

// releaseAll opens every gate.
func (c *testCalls) releaseAll() {
	for i := range c.gates {
		c.release(i)
	}
}

// distinct lists each gate once.
func (c *testCalls) distinct() []*katatest.Gate {
	var gs []*katatest.Gate
	for _, g := range c.gates {
		if !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	return gs
}

// waiting counts the calls held at their gates right now.
func (c *testCalls) waiting() int {
	n := 0
	for _, g := range c.distinct() {
		n += g.Waiting()
	}
	return n
}

// entered counts the calls of fn so far.
func (c *testCalls) entered() int {
	n := 0
	for _, g := range c.distinct() {
		n += g.Entered()
	}
	return n
}

// cancelled counts the calls that left their gate because their ctx was
// done.
func (c *testCalls) cancelled() int {
	n := 0
	for _, g := range c.distinct() {
		n += g.Cancelled()
	}
	return n
}

// notCancelled lists the indexes, other than skip, whose call has started
// and whose ctx is not done.
func (c *testCalls) notCancelled(skip int) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var idx []int
	for i, ctx := range c.ctxs {
		if i != skip && ctx != nil && ctx.Err() == nil {
			idx = append(idx, i)
		}
	}
	return idx
}

// testElements names elements for a message: "in[0], in[3]".
func testElements(idx []int) string {
	names := make([]string, len(idx))
	for k, i := range idx {
		names[k] = fmt.Sprintf("in[%d]", i)
	}
	return strings.Join(names, ", ")
}

// testStart runs Map (or MapAll) on the calls' input in a goroutine of the
// test, with a ctx of its own.
func testStart(h *katatest.H, calls *testCalls, mapFn func(context.Context, []int, func(context.Context, int) (string, error)) ([]string, error), opts ...katatest.CtxOption) *katatest.Call[[]string] {
	return katatest.Start(h, func(ctx context.Context) ([]string, error) { return mapFn(ctx, calls.in, calls.fn) }, opts...)
}

// testAllInFlight checks the precondition of a scenario that needs every
// call running at once (R1) and ends the call if they are not. No call has
// been released yet, so a Map that already returned did not wait for its
// calls: that is said first, as the cause of the calls it then cancelled.
func testAllInFlight[T any](h *katatest.H, c *katatest.Call[T], calls *testCalls, what, scenario string) bool {
	h.T.Helper()
	if c.Returned() && !c.Panicked() {
		got, n := calls.entered(), len(calls.in)
		h.T.Errorf("%s: %s returned before any call of fn had returned (%d of %d calls had even started): "+
			"it must wait for every call it starts. Call wg.Add(1) before the go statement, not inside the "+
			"goroutine: an Add that comes after wg.Wait() is not waited for", scenario, what, got, n)
		c.Stop()
		return false
	}
	got, n := calls.waiting(), len(calls.in)
	return c.Reaches(got == n, "precondition (R1): %s needs all %d calls of fn in flight at once, but only %d had "+
		"started: start a goroutine for every element before waiting for any of them", scenario, n, got)
}

// testGatedInputs is n inputs, testBase, testBase+1, …, and a gate for
// each, where the test holds its call.
func testGatedInputs(h *katatest.H, n int) ([]int, []*katatest.Gate) {
	in := make([]int, n)
	gates := make([]*katatest.Gate, n)
	for i := range in {
		in[i] = testBase + i
		gates[i] = h.Gate()
	}
	return in, gates
}

package bounded

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"gokata/internal/katatest"
)

// testSettle lets the code settle between the steps of a weighted run,
// while calls are held. A correct design may hold a lock while it waits for
// room for the next item (the head of the line waits, and the items behind
// it wait too, B1): the workers whose calls returned gave their room back,
// and then queue on that lock until room comes. A goroutine on a mutex is
// not durably blocked, so synctest.Wait would never return; h.Settle counts
// it as settled. A real hang still fails where the test expects the call
// to return (testReturns).
func testSettle(h *katatest.H) {
	h.Settle() // calls may be queued on a lock whose holder waits for room: fine
}

// testReturns is c.Returns for a run whose goroutines may have been queued
// on a lock while it went (testSettle): once the run should be over, a
// goroutine still stuck on a mutex is a hang, reported with where it waits.
func testReturns(h *katatest.H, c katatest.ErrCall, format string, args ...any) bool {
	h.T.Helper()
	if stuck := h.Settle(); stuck != nil {
		h.Errorf("%s: goroutines were stuck on a mutex that a goroutine of yours holds while it waits for "+
			"something that never comes. Stuck:\n\t%s", fmt.Sprintf(format, args...), strings.Join(stuck, "\n\t"))
		katatest.Unwind(h, c)
		return false
	}
	return c.Returns(format, args...)
}

// testItems returns the items 0, 1, …, n-1.
func testItems(n int) []int {
	items := make([]int, n)
	for i := range items {
		items[i] = i
	}
	return items
}

// testWork is the fn the tests pass to ForEach for the items 0…n-1: the
// call for item i counts itself, then waits at gates[i] until the test
// releases it (honouring its ctx, unless deaf[i]) and returns errs[i]. If
// its ctx ends first, it returns onCancel(i, ctx.Err()), by default
// "item i: context canceled".
type testWork struct {
	gates    []*katatest.Gate
	errs     []error
	deaf     map[int]bool
	onCancel func(i int, err error) error
	peak     katatest.Peak

	mu     sync.Mutex
	calls  []int
	opened []bool
}

func testNewWork(n int) *testWork {
	w := &testWork{gates: make([]*katatest.Gate, n), errs: make([]error, n), deaf: map[int]bool{},
		calls: make([]int, n), opened: make([]bool, n)}
	for i := range w.gates {
		w.gates[i] = katatest.NewGate()
	}
	return w
}

func (w *testWork) call(ctx context.Context, i int) error {
	w.mu.Lock()
	w.calls[i]++
	w.mu.Unlock()
	leave := w.peak.Enter()
	defer leave()
	hold := ctx
	if w.deaf[i] {
		hold = context.Background()
	}
	if err := w.gates[i].Hold(hold); err != nil {
		if w.onCancel != nil {
			return w.onCancel(i, err)
		}
		return fmt.Errorf("item %d: %w", i, err)
	}
	return w.errs[i]
}

// open releases gates[i] (once; later calls do nothing).
func (w *testWork) open(i int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.opened[i] {
		w.opened[i] = true
		w.gates[i].Release()
	}
}

// openAll releases every gate, so the calls return at once.
func (w *testWork) openAll() {
	for i := range w.gates {
		w.open(i)
	}
}

// started counts the calls made so far, repeated ones included.
func (w *testWork) started() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, c := range w.calls {
		n += c
	}
	return n
}

// callsOf returns how many times fn was called for each item.
func (w *testWork) callsOf() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.calls...)
}

// running lists the items whose call is waiting at its gate right now.
func (w *testWork) running() []int {
	var items []int
	for i, g := range w.gates {
		if g.Waiting() > 0 {
			items = append(items, i)
		}
	}
	return items
}

// cancelled counts the calls that returned because their ctx ended.
func (w *testWork) cancelled() int {
	n := 0
	for _, g := range w.gates {
		n += g.Cancelled()
	}
	return n
}

// testRunning reports whether want calls of w are running; if not, it
// reports a failed precondition and ends the call.
func testRunning(h *katatest.H, w *testWork, want int, c katatest.ErrCall, setup string) bool {
	h.T.Helper()
	if got := w.running(); len(got) != want {
		if testReturnedEarly(h, c, "ForEach", setup) {
			w.openAll()
			return false
		}
		h.T.Errorf("precondition failed: %s: want %d calls running, got %d (items %v); see R1", setup, want, len(got), got)
		w.openAll() // calls that ignore their ctx return too
		c.Stop()
		return false
	}
	return true
}

// testRandomHint ends every message about a call started after a cancel.
const testRandomHint = "check ctx again after you got a slot: a select on ctx.Done() and a free slot " +
	"picks at random when both are ready"

// testResult collects the error of a call that has returned, without the
// leak check of Finish: the scenarios repeated in many bubbles leave that
// to the check at the end of each bubble, which is just as strict and
// much cheaper. ok is false if the call panicked (already reported).
func testResult(c katatest.ErrCall) (err error, ok bool) {
	if c.Panicked() {
		return nil, false
	}
	return c.Err(), true
}

// testFinish collects the error of a call of ForEach that has returned, as
// Finish does, but checks for leaked goroutines only if last is true. A test
// that makes several calls checks after its last one only: each call has a
// ctx of its own that stays live until the test ends (or is cancelled before
// the call returns anyway), so a goroutine an earlier call leaked is still
// blocked at that check and caught just as surely, while every check (a dump
// of every goroutine's stack) costs as much as a whole small call.
func testFinish(c katatest.ErrCall, last bool) (err error, ok bool) {
	if last {
		return c.Finish("ForEach")
	}
	return testResult(c)
}

// testReturnedEarly reports whether c, a call of the API under test (what),
// has returned at a point where calls it started must still be running or
// items were left; if so, it says so first, since everything else the test
// could report would be a symptom of that.
func testReturnedEarly(h *katatest.H, c katatest.ErrCall, what, setup string) bool {
	h.T.Helper()
	if !c.Returned() || c.Panicked() {
		return false
	}
	err := c.Err()
	h.T.Errorf("%s: %s had already returned (with %v) while the calls it started should still be running, or "+
		"items were left: return only after every item has started (or was skipped after a cancel or an error) "+
		"and every call you started has returned; count each call with wg.Add(1) before the go statement, not "+
		"inside the goroutine it counts, or wg.Wait may run before it", setup, what, err)
	return true
}

// testGates is one gate per item for the calls of a scenario: a call waits
// at its item's gate, and the test opens each gate once, from its own
// goroutine.
type testGates struct {
	gates    []chan struct{}
	released []bool // per item: the test let its call return
}

func testNewGates(n int) testGates {
	g := testGates{gates: make([]chan struct{}, n), released: make([]bool, n)}
	for i := range g.gates {
		g.gates[i] = make(chan struct{})
	}
	return g
}

func (g *testGates) release(i int) {
	if !g.released[i] {
		g.released[i] = true
		close(g.gates[i])
	}
}

// releaseAll opens every gate.
func (g *testGates) releaseAll() {
	for i := range g.gates {
		g.release(i)
	}
}

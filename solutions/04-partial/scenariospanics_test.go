package partial

// Explored panics, read as Gather returns (R4): a panic in fn becomes that
// input's error, and Gather returns only when every call has returned, so
// the error is in the outcome by the time Gather returns. Each scenario is
// one to three Gather calls at once, each on inputs whose calls succeed,
// fail or panic (with a string, an error value, a value of a type of its
// own, or a runtime error: a nil map write, an index out of range, a nil
// pointer), at least one of them panicking; some return as soon as they are
// called, the others once the test releases them. The inputs are values
// with a String method, their %v text, and the test holds every call of
// String for an input whose call panics, wherever the code makes it: a
// goroutine that names such an input is held there until the test lets it
// go. A Gather that returns while one is held returned before that input's
// error was made. Every caller reads its outcomes on its own goroutine as
// soon as Gather returns, with nothing in between that would order them
// after a late write (the race detector sees it).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testVPanicKinds are the ways a call panics: those of the other explored
// tests, and a nil pointer dereference.
var testVPanicKinds = append(slices.Clone(testYPanicKinds), struct {
	how string
	do  func(k int)
}{"a nil pointer dereference (a runtime error)", func(k int) {
	var line *testYItem
	line.Qty += k
}})

// testVValue is what recover gives for panic kind p of call k.
func testVValue(p, k int) (r any) {
	defer func() { r = recover() }()
	testVPanicKinds[p].do(k)
	return nil
}

// testVHold holds the String calls of the inputs whose calls panic until
// the test opens it; every caller has one, all of them opened at once.
type testVHold struct {
	open <-chan struct{}
	mu   sync.Mutex
	held []string // the inputs named while it was closed, in order
}

func (p *testVHold) wait(sku string) {
	select {
	case <-p.open:
		return
	default:
	}
	p.mu.Lock()
	p.held = append(p.held, sku)
	p.mu.Unlock()
	<-p.open
}

func (p *testVHold) names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.held)
}

// testVSKU is an input: its %v text is its String, which waits at hold
// (nil for an input whose call does not panic).
type testVSKU struct {
	sku  string
	i    int
	hold *testVHold
}

func (in testVSKU) String() string {
	if in.hold != nil {
		in.hold.wait(in.sku)
	}
	return in.sku
}

type testVCall struct {
	does int // testYSucceed, testYFail, testYPanics
	kind int // index into testYErrs or testVPanicKinds
	slow bool
}

type testVScenario struct{ callers [][]testVCall }

func (s testVScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d Gather call(s) at once, on inputs whose %%v text is their String method; a String call for "+
		"an input whose call panics waits until the test lets it go:", len(s.callers))
	for c, calls := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d, on %d input(s):", c+1, len(calls))
		for i, call := range calls {
			fmt.Fprintf(&b, "\n    the call for \"sku-%d\" ", i+1)
			switch call.does {
			case testYSucceed:
				fmt.Fprintf(&b, "succeeds with %d", testVWorth(i))
			case testYFail:
				b.WriteString("fails with " + testYErrs[call.kind].how)
			default:
				b.WriteString("panics with " + testVPanicKinds[call.kind].how)
			}
			if call.slow {
				b.WriteString(", once the test releases it")
			} else {
				b.WriteString(", as soon as it is called")
			}
		}
	}
	b.WriteString("\n  step 1: the calls that return at once have returned; step 2: the test releases the others; " +
		"step 3: the test lets the held String calls go")
	return b.String()
}

// testVWorth is the value the call for input i succeeds with.
func testVWorth(i int) int { return 100*(i+1) + 7 }

func testDrawV(r *rapid.T) testVScenario {
	var s testVScenario
	for c := range rapid.IntRange(1, 3).Draw(r, "callers") {
		n := rapid.IntRange(1, 6).Draw(r, fmt.Sprintf("inputs %d", c))
		var calls []testVCall
		panics := false
		for i := range n {
			call := testVCall{does: rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("does %d.%d", c, i))}
			switch call.does {
			case testYFail:
				call.kind = rapid.IntRange(0, len(testYErrs)-1).Draw(r, fmt.Sprintf("error %d.%d", c, i))
			case testYPanics:
				call.kind = rapid.IntRange(0, len(testVPanicKinds)-1).Draw(r, fmt.Sprintf("panic %d.%d", c, i))
				panics = true
			}
			call.slow = rapid.Bool().Draw(r, fmt.Sprintf("slow %d.%d", c, i))
			calls = append(calls, call)
		}
		if !panics {
			i := rapid.IntRange(0, n-1).Draw(r, fmt.Sprintf("the input that panics %d", c))
			calls[i].does = testYPanics
			calls[i].kind = rapid.IntRange(0, len(testVPanicKinds)-1).Draw(r, fmt.Sprintf("its panic %d", c))
		}
		s.callers = append(s.callers, calls)
	}
	return s
}

// testVRun is one call of Gather and what its calls of fn did.
type testVRun struct {
	calls  []testVCall
	inputs []testVSKU
	errs   []error
	hold   *testVHold
	slow   *katatest.Gate
	c      *katatest.Call[[]Outcome[testVSKU, int]]

	mu       sync.Mutex
	panicked map[int]any // input index: what its call panicked with

	// Read by the goroutine that called Gather, as soon as it returned.
	out []Outcome[testVSKU, int]
}

func (x *testVRun) fn(ctx context.Context, in testVSKU) (int, error) {
	if in.i < 0 || in.i >= len(x.calls) || x.inputs[in.i] != in {
		return 0, fmt.Errorf("fn got %v, which is not one of the inputs", in.sku)
	}
	call := x.calls[in.i]
	if call.slow {
		if err := x.slow.Hold(ctx); err != nil {
			return 0, err
		}
	}
	switch call.does {
	case testYFail:
		return 0, x.errs[in.i]
	case testYPanics:
		x.mu.Lock()
		x.panicked[in.i] = testVValue(call.kind, in.i)
		x.mu.Unlock()
		testVPanicKinds[call.kind].do(in.i)
	}
	return testVWorth(in.i), nil
}

// testVFind is the outcome, read as Gather returned, whose Input is input
// i (where the outcomes are is R1's to grade).
func (x *testVRun) find(i int) (Outcome[testVSKU, int], bool) {
	for _, o := range x.out {
		if o.Input == x.inputs[i] {
			return o, true
		}
	}
	return Outcome[testVSKU, int]{}, false
}

func (x *testVRun) describe(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T, chain %s)", err.Error(), err, katatest.Chain(err))
}

func testVPlay(h *katatest.H, s testVScenario) {
	open := make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(open) }) }
	h.Own(letGo) // Stop lets every held String go
	runs := make([]*testVRun, len(s.callers))
	for c, calls := range s.callers {
		x := &testVRun{calls: calls, errs: make([]error, len(calls)), hold: &testVHold{open: open}, slow: h.Gate(),
			panicked: map[int]any{}}
		for i, call := range calls {
			in := testVSKU{sku: fmt.Sprintf("sku-%d", i+1), i: i}
			switch call.does {
			case testYFail:
				x.errs[i] = testYErrs[call.kind].make(i)
			case testYPanics:
				in.hold = x.hold
			}
			x.inputs = append(x.inputs, in)
		}
		runs[c] = x
	}
	for _, x := range runs {
		x.c = katatest.Start(h, func(ctx context.Context) ([]Outcome[testVSKU, int], error) {
			out := Gather(ctx, x.inputs, x.fn)
			// Read at once, on the caller's goroutine: no settle orders this
			// after a write Gather's goroutines make once it has returned.
			x.out = slices.Clone(out)
			return out, nil
		})
	}
	calls := make([]*katatest.Call[[]Outcome[testVSKU, int]], len(runs))
	for c, x := range runs {
		calls[c] = x.c
	}
	slow := slices.ContainsFunc(s.callers, func(calls []testVCall) bool {
		return slices.ContainsFunc(calls, func(call testVCall) bool { return call.slow })
	})
	for step := 1; step <= 2; step++ {
		if step == 2 {
			if !slow {
				break // step 2 releases nothing
			}
			for _, x := range runs {
				x.slow.Release()
			}
		}
		// Settle, not synctest.Wait: a design may name the input under a
		// lock of its own, and the goroutines queued on that lock while the
		// test holds the naming are not durably blocked.
		h.Settle()
		for c, x := range runs {
			held := x.hold.names()
			if len(held) == 0 || !x.c.Returned() {
				continue
			}
			i := slices.IndexFunc(x.inputs, func(in testVSKU) bool { return in.sku == held[0] })
			x.mu.Lock()
			p, did := x.panicked[i]
			x.mu.Unlock()
			what := "panicked"
			if did {
				what = fmt.Sprintf("panicked with %v (%T)", p, p)
			}
			seen := ""
			if o, ok := x.find(i); ok {
				seen = fmt.Sprintf("; its outcome, read as soon as Gather returned, was {Value: %d, Err: %s}", o.Value,
					x.describe(o.Err))
			}
			h.Errorf("R4: a panic in fn becomes that input's error, and Gather returns only when every call has "+
				"returned, but caller %d's Gather returned while a goroutine it started was still formatting the "+
				"input %q with %%v for the error of its call, which %s%s: the call was counted done before its "+
				"outcome was written, so the caller reads the outcome while it is being written (a data race) and "+
				"may take a zero-valued success for the answer. Write the panic's error into the outcome before "+
				"the call counts as done: a recover deferred after wg.Done runs before it, so defer wg.Done() "+
				"first (deferred calls run last in, first out)", c+1, held[0], what, seen)
			letGo()
			katatest.Unwind(h, calls...)
			return
		}
	}
	letGo()
	for c, x := range runs {
		if !x.c.Returns("every call of caller %d had returned and its held String calls were let go, but its "+
			"Gather had not returned: return once every call has returned", c+1) {
			katatest.Unwind(h, calls...)
			return
		}
	}
	for _, x := range runs {
		if _, _, ok := x.c.Finish("Gather"); !ok {
			return
		}
	}
	for c, x := range runs {
		for i := range x.inputs {
			x.mu.Lock()
			p, did := x.panicked[i]
			x.mu.Unlock()
			if !did {
				continue
			}
			o, ok := x.find(i)
			if !ok {
				continue
			}
			sku, shown := x.inputs[i].sku, fmt.Sprint(p)
			switch {
			case o.Err == nil:
				h.Errorf("R4: a panic in fn becomes that input's error, but caller %d's call for %q panicked with "+
					"%s (%T), and its outcome, read as soon as Gather returned, had no error (Value %d): the caller "+
					"takes a zero-valued success for the answer. Recover in the goroutine that calls fn and write "+
					"the panic's error into the outcome before the call counts as done (defer wg.Done() first, so "+
					"it runs after the recover)", c+1, sku, shown, p, o.Value)
			case !errors.Is(o.Err, ErrPanic):
				h.Errorf("R4: a panic becomes an error matching ErrPanic, but caller %d's call for %q panicked with "+
					"%s (%T) and its outcome's error, read as soon as Gather returned, is %s: wrap ErrPanic with %%w",
					c+1, sku, shown, p, x.describe(o.Err))
			case !strings.Contains(o.Err.Error(), shown):
				h.Errorf("R4: a panic's error shows the panic value, but caller %d's call for %q panicked with %q "+
					"(%T) and its outcome's error says %q: format the recovered value with %%v, whatever its type",
					c+1, sku, shown, p, o.Err)
			case !strings.Contains(o.Err.Error(), sku):
				h.Errorf("R4: a panic's error names its input like any failure, but caller %d's call for %q "+
					"panicked and its outcome's error says %q", c+1, sku, o.Err)
			default:
				continue
			}
			return
		}
	}
}

func TestR4_ExplorePanicsAreRecordedBeforeGatherReturns(t *testing.T) {
	katatest.Explore(t, 8, testDrawV, func(h *katatest.H, s testVScenario) { testVPlay(h, s) })
}

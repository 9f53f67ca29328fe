package partial

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them. One scenario is one to
// three Gather (or GatherWith) calls made at once, each on its own inputs;
// every call waits until the test releases it, in any order and several at
// once (or returns as soon as it is called, while Gather may still be
// starting the others), and then succeeds, fails with an error of some
// kind, or panics with a value of some kind; a call that ignores its ctx
// may look at it once released and return ctx.Err(); a caller may cancel
// (or its deadline pass) before or after a failure, and before or after a
// stop of GatherWith.
// After every step and once Gather returned, the test compares what it saw
// with a small model of the README.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testYPanic is a panic value of a type of its own.
type testYPanic struct{ code int }

func (p testYPanic) String() string { return fmt.Sprintf("decoder state %d", p.code) }

// What a call does once released (or once its ctx ends, see onCancel).
const (
	testYSucceed = iota
	testYFail
	testYPanics
)

// testYErrs are the ways a call fails; each call makes a fresh error, so
// that "matches fn's error" is checked against that very value. Texts use
// words a context error uses: an error is fn's error whatever it says.
var testYErrs = []struct {
	how  string
	make func(k int) error
}{
	{"an error wrapping context.Canceled", func(k int) error { return fmt.Errorf("price feed %d: %w", k, context.Canceled) }},
	{"errors.New(\"404: no price\")", func(int) error { return errors.New("404: no price") }},
	{"an error wrapped with %w", func(k int) error { return fmt.Errorf("lookup %d: %w", k, errors.New("connection reset")) }},
	{"&statusError{503}", func(int) error { return &testStatusError{503} }},
	{"errors.New(\"request canceled by the proxy\")", func(int) error { return errors.New("request canceled by the proxy") }},
	{"an error wrapping context.DeadlineExceeded (a timeout of its own)", func(k int) error {
		return fmt.Errorf("price feed %d: upstream timeout: %w", k, context.DeadlineExceeded)
	}},
}

// testYPanics are the values a call panics with; do panics as a call
// would, and the value is what recover gives.
var testYPanicKinds = []struct {
	how string
	do  func(k int)
}{
	{"panic(decoderState{…}) (a value of a type of its own)", func(k int) { panic(testYPanic{k}) }},
	{"panic(\"price table corrupt\")", func(k int) { panic(fmt.Sprintf("price table %d corrupt", k)) }},
	{"panic(errors.New(…))", func(k int) { panic(fmt.Errorf("currency %d unknown", k)) }},
	{"a nil map write (a runtime error)", func(int) {
		var m map[string]int
		m["sku"]++
	}},
	{"an index out of range (a runtime error)", func(k int) {
		var table []int
		_ = table[k]
	}},
}

// testYValue is what recover gives for panic kind p of call k.
func testYValue(p, k int) (r any) {
	defer func() { r = recover() }()
	testYPanicKinds[p].do(k)
	return nil
}

// What a call returns when its ctx ends before the test releases it.
const (
	testYCancelBare    = iota // ctx.Err()
	testYCancelWrapped        // fmt.Errorf("sku: %w", ctx.Err())
	testYCancelValue          // it finishes anyway and succeeds
)

type testYCall struct {
	does     int // testYSucceed, testYFail, testYPanics
	kind     int // index into testYErrs or testYPanicKinds
	deaf     bool
	late     bool // deaf, and once released it returns as onCancel says if its ctx has ended by then
	onCancel int
	instant  bool // it returns as soon as it is called, while Gather may still be starting the others
}

type testYCaller struct {
	inputs   []string
	calls    []testYCall // per input position; equal inputs take them in the order their calls arrive
	opt      *Options
	deadline bool // its ctx has a deadline (on a clock of its own), and its ctx ends by that deadline passing
}

// testYCtxKey is the key of a value every caller puts in its ctx (a
// request ID, say): the calls' ctx must carry it.
type testYCtxKey struct{}

// testYDeadlineIn is how far ahead a caller's deadline is.
const testYDeadlineIn = time.Hour

// testYStep happens at once: cancels first, then releases, nothing settled
// in between.
type testYStep struct {
	cancel  []int
	release [][2]int // (caller, k): the call in flight number k counted from the oldest, or -1-k from the newest
	slots   [][2]int // (caller, i): the call for input i, if it is in flight (fixed cases of distinct inputs)
}

type testYScenario struct {
	callers []testYCaller
	steps   []testYStep
}

func (s testYScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d call(s) at once:", len(s.callers))
	for c, cl := range s.callers {
		what := "Gather"
		if cl.opt != nil {
			what = fmt.Sprintf("GatherWith(Options{FailFast: %v, MaxFailures: %d})", cl.opt.FailFast, cl.opt.MaxFailures)
		}
		fmt.Fprintf(&b, "\n  caller %d: %s on %q, its ctx carrying a request ID", c+1, what, cl.inputs)
		if cl.deadline {
			b.WriteString(" and a deadline 1h ahead")
		}
		for i, call := range cl.calls {
			var parts []string
			switch call.does {
			case testYSucceed:
				parts = append(parts, fmt.Sprintf("succeeds with %d", testYWorth(c, i)))
			case testYFail:
				parts = append(parts, "fails with "+testYErrs[call.kind].how)
			case testYPanics:
				parts = append(parts, "panics with "+testYPanicKinds[call.kind].how)
			}
			switch {
			case call.instant:
				parts = append(parts, "at once, as soon as it is called")
			case call.deaf && call.late:
				parts = append(parts, [...]string{"ignores its ctx until released, then returns ctx.Err() if its ctx has ended",
					"ignores its ctx until released, then returns fmt.Errorf(\"…: %w\", ctx.Err()) if its ctx has ended"}[call.onCancel])
			case call.deaf:
				parts = append(parts, "ignores its ctx")
			default:
				parts = append(parts, [...]string{"on cancel returns ctx.Err()",
					"on cancel returns fmt.Errorf(\"…: %w\", ctx.Err())", "on cancel finishes anyway and succeeds"}[call.onCancel])
			}
			fmt.Fprintf(&b, "\n    call number %d for %q %s", i+1, cl.inputs[i], strings.Join(parts, ", "))
		}
	}
	for n, st := range s.steps {
		var parts []string
		for _, c := range st.cancel {
			if s.callers[c].deadline {
				parts = append(parts, fmt.Sprintf("caller %d's deadline passes", c+1))
				continue
			}
			parts = append(parts, fmt.Sprintf("caller %d cancels its ctx", c+1))
		}
		for _, r := range st.release {
			if r[1] >= 0 {
				parts = append(parts, fmt.Sprintf("caller %d's call in flight number %d, counted from the oldest, returns", r[0]+1, r[1]+1))
			} else {
				parts = append(parts, fmt.Sprintf("caller %d's call in flight number %d, counted from the newest, returns", r[0]+1, -r[1]))
			}
		}
		fmt.Fprintf(&b, "\n  step %d, all at once: %s", n+1, strings.Join(parts, "; "))
	}
	b.WriteString("\n  then every call still in flight returns (counted round: number k of n in flight is number (k-1) mod n + 1)")
	return b.String()
}

// testYWorth is the value call i of caller c succeeds with: every call's own.
func testYWorth(c, i int) int { return 1000*(c+1) + 10*i + 7 }

// testYSize bounds a draw: the callers at once, the inputs of each, the
// releases in one step, and the MaxFailures B2 draws (beside huge ones).
type testYSize struct {
	callers, minInputs, maxInputs, releases int
	maxFailures                             []int
}

var (
	// testYSmall: a few inputs each, every one of them in view.
	testYSmall = testYSize{callers: 3, maxInputs: 6, releases: 3, maxFailures: []int{1, 2, 3}}
	// testYWide: more inputs than a small limit, buffer or count (10, say)
	// holds, as a page of twenty prices has.
	testYWide = testYSize{callers: 2, minInputs: 11, maxInputs: 40, releases: 8,
		maxFailures: []int{1, 2, 9, 10, 11, 12, 15, 20, 25, 30, 39}}
)

// testDrawY draws a scenario for req: "R6" draws equal inputs, "B1" and
// "B2" draw GatherWith with FailFast or MaxFailures; cancels says whether
// callers cancel (or their deadline passes), before or after a stop; errs
// is the first of testYErrs the calls fail with.
func testDrawY(req string, cancels bool, errs int) func(*rapid.T) testYScenario {
	return testDrawYSized(req, cancels, errs, testYSmall)
}

// testDrawYSized is testDrawY with the sizes of z.
func testDrawYSized(req string, cancels bool, errs int, z testYSize) func(*rapid.T) testYScenario {
	return func(r *rapid.T) testYScenario {
		var s testYScenario
		callers := rapid.IntRange(1, z.callers).Draw(r, "callers")
		for c := range callers {
			var cl testYCaller
			n := rapid.IntRange(z.minInputs, z.maxInputs).Draw(r, fmt.Sprintf("inputs %d", c))
			for i := range n {
				in := fmt.Sprintf("sku-%d", i+1)
				if req == "R6" {
					in = fmt.Sprintf("sku-%d", rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("input %d.%d", c, i)))
				}
				cl.inputs = append(cl.inputs, in)
				does := 1 // panics only where R4 grades them (TestB2_PanicsCountAsFailures counts them)
				if req == "R4" {
					does = 2
				}
				call := testYCall{does: rapid.IntRange(0, does).Draw(r, fmt.Sprintf("does %d.%d", c, i))}
				switch call.does {
				case testYFail:
					call.kind = rapid.IntRange(errs, len(testYErrs)-1).Draw(r, fmt.Sprintf("error %d.%d", c, i))
				case testYPanics:
					call.kind = rapid.IntRange(0, len(testYPanicKinds)-1).Draw(r, fmt.Sprintf("panic %d.%d", c, i))
				}
				call.deaf = rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("deaf %d.%d", c, i)) == 0
				call.instant = rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("instant %d.%d", c, i)) == 0
				call.onCancel = rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("on cancel %d.%d", c, i))
				if call.deaf && !call.instant && call.onCancel != testYCancelValue {
					call.late = rapid.Bool().Draw(r, fmt.Sprintf("late %d.%d", c, i))
				}
				cl.calls = append(cl.calls, call)
			}
			switch req {
			case "B1":
				// MaxFailures set as well changes nothing: FailFast wins.
				cl.opt = &Options{FailFast: true}
				if rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("max failures too? %d", c)) == 0 {
					cl.opt.MaxFailures = rapid.SampledFrom([]int{-1, 1, 2, 3, math.MaxInt}).Draw(r, fmt.Sprintf("max failures %d", c))
				}
			case "B2":
				cl.opt = &Options{MaxFailures: rapid.SampledFrom(z.maxFailures).Draw(r, fmt.Sprintf("max failures %d", c))}
				if rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("huge max failures? %d", c)) == 0 {
					cl.opt.MaxFailures = rapid.SampledFrom(testHugeMaxFailures).Draw(r, fmt.Sprintf("huge max failures %d", c))
				}
			}
			cl.deadline = rapid.Bool().Draw(r, fmt.Sprintf("deadline %d", c))
			s.callers = append(s.callers, cl)
		}
		for n := range rapid.IntRange(1, 8).Draw(r, "steps") {
			var st testYStep
			if cancels && rapid.IntRange(0, 4).Draw(r, fmt.Sprintf("cancel? %d", n)) == 0 {
				st.cancel = append(st.cancel, rapid.IntRange(0, callers-1).Draw(r, fmt.Sprintf("cancel %d", n)))
			}
			for k := range rapid.IntRange(1, z.releases).Draw(r, fmt.Sprintf("releases %d", n)) {
				which := rapid.IntRange(0, z.maxInputs).Draw(r, fmt.Sprintf("release which %d.%d", n, k))
				if rapid.Bool().Draw(r, fmt.Sprintf("newest first %d.%d", n, k)) {
					which = -1 - which
				}
				st.release = append(st.release, [2]int{rapid.IntRange(0, callers-1).Draw(r, fmt.Sprintf("release caller %d.%d", n, k)), which})
			}
			s.steps = append(s.steps, st)
		}
		return s
	}
}

// testYDone is what one call of fn did.
type testYDone struct {
	slot   int // the call's behaviour: cl.calls[slot]
	in     string
	err    error // what fn returned (nil for a panic)
	value  int
	panic  any    // what fn panicked with, if it did
	viaCtx bool   // it returned because its ctx ended
	ctxErr error  // ctx.Err() then
	lost   string // what of the caller's ctx its ctx lacked, if anything
	step   int    // the step in which it returned
	ctx    context.Context
}

// testYRun is one call of Gather and what its calls of fn did.
type testYRun struct {
	c      *katatest.Call[testOutcomes]
	cl     testYCaller
	id     int
	gates  []chan struct{}
	errs   []error
	peak   katatest.Peak
	cancel map[int]bool // steps in which the caller cancelled (or its deadline passed)

	clk      *katatest.Clock // the clock of the caller's deadline, if it has one
	deadline time.Time

	mu       sync.Mutex
	now      int
	claimed  []bool // per slot: a call took it
	order    []int  // slots in the order their calls started
	done     map[int]testYDone
	released []bool

	// Read by the goroutine that called Gather right after it returned.
	out            testOutcomes
	insideAtReturn int
}

func (x *testYRun) fn(ctx context.Context, in string) (int, error) {
	x.mu.Lock()
	slot := -1
	for i, v := range x.cl.inputs {
		if v == in && !x.claimed[i] {
			slot = i
			break
		}
	}
	if slot < 0 { // more calls for in than positions hold it
		x.order = append(x.order, -1)
		x.mu.Unlock()
		return 0, fmt.Errorf("one call too many for %s", in)
	}
	x.claimed[slot] = true
	x.order = append(x.order, slot)
	x.mu.Unlock()
	leave := x.peak.Enter()
	defer leave()
	call := x.cl.calls[slot]
	d := testYDone{slot: slot, in: in, ctx: ctx}
	var lost []string
	if ctx.Value(testYCtxKey{}) != x {
		lost = append(lost, "the caller's values (ctx.Value of the caller's request ID was nil)")
	}
	if dl, ok := ctx.Deadline(); x.clk != nil && (!ok || !dl.Equal(x.deadline)) {
		lost = append(lost, "the caller's deadline")
	}
	d.lost = strings.Join(lost, " and ")
	finish := func() {
		x.mu.Lock()
		d.step = x.now
		x.done[slot] = d
		x.mu.Unlock()
	}
	wait := ctx.Done()
	if call.deaf || call.instant { // an instant call's gate is open from the start
		wait = nil
	}
	ended := false
	select {
	case <-x.gates[slot]:
		ended = call.late && ctx.Err() != nil // it looks at its ctx only now
	case <-wait:
		ended = true
	}
	if ended {
		d.viaCtx = true
		d.ctxErr = ctx.Err()
		switch call.onCancel {
		case testYCancelBare:
			d.err = ctx.Err()
		case testYCancelWrapped:
			d.err = fmt.Errorf("%s: %w", in, ctx.Err())
		default:
			d.value = testYWorth(x.id, slot)
		}
		finish()
		return d.value, d.err
	}
	switch call.does {
	case testYFail:
		d.err = x.errs[slot]
	case testYPanics:
		d.panic = testYValue(call.kind, slot)
		finish()
		testYPanicKinds[call.kind].do(slot)
	default:
		d.value = testYWorth(x.id, slot)
	}
	finish()
	return d.value, d.err
}

func (x *testYRun) inFlight() []int {
	x.mu.Lock()
	defer x.mu.Unlock()
	var r []int
	for _, s := range x.order {
		if _, ok := x.done[s]; !ok && s >= 0 {
			r = append(r, s)
		}
	}
	return r
}

func (x *testYRun) release(slot int) {
	if !x.released[slot] {
		x.released[slot] = true
		close(x.gates[slot])
	}
}

// releaseAll opens every gate.
func (x *testYRun) releaseAll() {
	for i := range x.gates {
		x.release(i)
	}
}

// testYFinding is one break of a requirement, in the README's terms.
type testYFinding struct{ req, msg string }

type testYCheck struct {
	req      string
	findings []testYFinding
}

func (k *testYCheck) add(req, format string, args ...any) {
	k.findings = append(k.findings, testYFinding{req, req + ": " + fmt.Sprintf(format, args...)})
}

// testYPlay plays s and reports the first break of req.
func testYPlay(h *katatest.H, s testYScenario, req string) {
	k := &testYCheck{req: req}
	runs := make([]*testYRun, len(s.callers))
	for c, cl := range s.callers {
		n := len(cl.inputs)
		x := &testYRun{cl: cl, id: c, gates: make([]chan struct{}, n), errs: make([]error, n), cancel: map[int]bool{},
			claimed: make([]bool, n), done: map[int]testYDone{}, released: make([]bool, n)}
		for i, call := range cl.calls {
			x.gates[i] = make(chan struct{})
			if call.does == testYFail {
				x.errs[i] = testYErrs[call.kind].make(i)
			}
			if call.instant {
				x.release(i)
			}
		}
		if cl.deadline {
			x.clk = katatest.NewClock()
			x.deadline = x.clk.Now().Add(testYDeadlineIn)
		}
		h.Own(x.releaseAll) // Stop opens every gate
		runs[c] = x
	}
	for _, x := range runs {
		x.c = katatest.Start(h, func(ctx context.Context) (testOutcomes, error) {
			ctx = context.WithValue(ctx, testYCtxKey{}, x)
			if x.clk != nil {
				var cancel context.CancelFunc
				ctx, cancel = x.clk.WithDeadline(ctx, x.deadline)
				defer cancel()
			}
			var out testOutcomes
			if x.cl.opt != nil {
				out = GatherWith(ctx, x.cl.inputs, x.fn, *x.cl.opt)
			} else {
				out = Gather(ctx, x.cl.inputs, x.fn)
			}
			x.insideAtReturn = x.peak.Now()
			if req == "R1" {
				// Read at once: no settle orders this after the calls'
				// writes, so a write after wg.Done is a race the race
				// detector reports. (It reports a race once per run, so
				// one test reads this way.)
				x.out = slices.Clone(out)
			}
			return out, nil
		})
	}
	stopAll := func() { // the first Stop opens every caller's gates
		for _, x := range runs {
			x.c.Stop()
		}
	}
	synctest.Wait()
	for c, x := range runs {
		x.mu.Lock()
		started := len(x.order)
		x.mu.Unlock()
		// GatherWith may skip inputs once calls that return at once have
		// failed: whether they stopped it before the others started is the
		// schedule's to say.
		mayStop := x.cl.opt != nil && slices.ContainsFunc(x.cl.calls, func(c testYCall) bool {
			return c.instant && c.does != testYSucceed
		})
		if started != len(x.cl.inputs) && !mayStop {
			k.add("R1", "Gather calls fn once per input, all at the same time, but caller %d's Gather had made %d "+
				"call(s) for %d inputs %q while none of them could return yet: start every call on its own goroutine "+
				"before you wait for any, and limit nothing: no semaphore, no pool of workers, however many the "+
				"inputs", c+1, started, len(x.cl.inputs), x.cl.inputs)
			stopAll()
			testYReport(h, k)
			return
		}
	}
	stopped := make([]int, len(runs)) // the step of each caller's stop by failures, or -1
	for c := range stopped {
		stopped[c] = -1
	}
	for c, x := range runs { // step 0: the calls that returned at once
		testYStepCheck(k, c, x, 0, &stopped[c])
	}
	if slices.ContainsFunc(k.findings, func(f testYFinding) bool { return f.req == req }) {
		stopAll()
		testYReport(h, k)
		return
	}
	for n, st := range s.steps {
		now := n + 1
		for _, x := range runs {
			x.mu.Lock()
			x.now = now
			x.mu.Unlock()
		}
		var picks [][]int
		for _, x := range runs {
			picks = append(picks, x.inFlight())
		}
		for _, c := range st.cancel {
			runs[c].cancel[now] = true
			if runs[c].clk != nil {
				runs[c].clk.Add(testYDeadlineIn) // the deadline passes
			} else {
				runs[c].c.Cancel()
			}
		}
		for _, r := range st.release {
			if fl := picks[r[0]]; len(fl) > 0 {
				i := r[1]
				if i < 0 {
					i = len(fl) - (-1-i)%len(fl) - 1
				}
				runs[r[0]].release(fl[i%len(fl)])
			}
		}
		for _, r := range st.slots {
			if slices.Contains(picks[r[0]], r[1]) {
				runs[r[0]].release(r[1])
			}
		}
		synctest.Wait()
		for c, x := range runs {
			testYStepCheck(k, c, x, now, &stopped[c])
		}
		if len(k.findings) > 0 && slices.ContainsFunc(k.findings, func(f testYFinding) bool { return f.req == req }) {
			stopAll()
			testYReport(h, k)
			return
		}
	}
	last := len(s.steps) + 1
	for _, x := range runs {
		x.mu.Lock()
		x.now = last
		x.mu.Unlock()
		for i := range x.gates {
			x.release(i)
		}
	}
	synctest.Wait()
	for c, x := range runs {
		testYStepCheck(k, c, x, last, &stopped[c])
		if !x.c.Returned() {
			wait := testYWaitReq(x)
			k.add(wait, "Gather returns once every call has returned, but caller %d's calls had all "+
				"returned and Gather had not", c+1)
			for _, req := range []string{"R1", k.req} { // R1: no outcome at all
				if req != wait {
					k.add(req, "Gather returns one outcome per input once every call has returned, but caller %d's "+
						"%d calls had all returned and its Gather had not: it waits for something no goroutine will do "+
						"any more. Every way out of each goroutine, the early ones too (a gather already stopped), "+
						"must count it done and leave its outcome; and whatever holds the outcomes until Gather "+
						"returns needs room for every input (a channel with room for fewer results than inputs, "+
						"read only after wg.Wait, blocks the calls that finish last)", c+1,
						len(x.cl.inputs))
				}
			}
			testYReport(h, k)
			// No Stop: it would report the Gather that never returns once
			// more, as a deadlock, which the checker shows first, and spend
			// its time moving the clock. Every call has returned already:
			// cancel every caller and open every gate, so that the other
			// callers' Gathers return; the leak check at the end names
			// what still waits.
			for _, x := range runs {
				x.c.Cancel()
				x.releaseAll()
			}
			synctest.Wait()
			return
		}
	}
	for c, x := range runs {
		if x.c.Panicked() {
			return // already reported: a panic escaped
		}
		if req != "R1" {
			x.out, _ = x.c.Result()
		}
		testYOutcomes(k, c, x, stopped[c])
	}
	testYReport(h, k)
}

// testYWaitReq is the requirement that says Gather waits for every call.
func testYWaitReq(x *testYRun) string {
	if len(x.cancel) > 0 {
		return "R5"
	}
	return "R2"
}

func testYReport(h *katatest.H, k *testYCheck) {
	for _, f := range k.findings {
		if f.req == k.req {
			h.Errorf("%s", f.msg)
			return
		}
	}
}

// testYTolerates is how many failures caller x's gather tolerates.
func testYTolerates(x *testYRun) int {
	switch {
	case x.cl.opt == nil:
		return len(x.cl.inputs)
	case x.cl.opt.FailFast:
		return 0
	case x.cl.opt.MaxFailures > 0:
		return x.cl.opt.MaxFailures
	}
	return len(x.cl.inputs)
}

// testYOptReq is the requirement of what a caller's options promise about
// stopping: R2 without FailFast or MaxFailures, else B1 or B2.
func testYOptReq(x *testYRun) string {
	switch {
	case x.cl.opt != nil && x.cl.opt.FailFast:
		return "B1"
	case x.cl.opt != nil && x.cl.opt.MaxFailures > 0:
		return "B2"
	}
	return "R2"
}

// testYStepCheck checks caller c after a settled step.
func testYStepCheck(k *testYCheck, c int, x *testYRun, now int, stopped *int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var running []int
	for _, s := range x.order {
		if _, ok := x.done[s]; !ok && s >= 0 {
			running = append(running, s)
		}
	}
	who := fmt.Sprintf("caller %d", c+1)
	if x.c.Returned() && len(running) > 0 {
		var ins []string
		for _, s := range running {
			ins = append(ins, x.cl.inputs[s])
		}
		k.add(testYWaitReq(x), "Gather returns only when every call has returned, but %s's Gather returned after "+
			"step %d while the calls for %q still ran: their goroutines are orphaned and their results lost; wait "+
			"for every call (wg.Add(1) before each go statement, wg.Wait before you return)", who, now, ins)
	}
	for _, s := range x.order {
		if d, ok := x.done[s]; ok && d.lost != "" {
			k.add("R2", "the calls keep the caller's ctx, but %s's call for %q got a ctx without %s: give every "+
				"call the caller's ctx, or a context derived from it (context.WithCancel(ctx)); a context of your "+
				"own made from context.Background() loses the caller's values and deadline, even when the "+
				"caller's cancel is forwarded to it", who, d.in, d.lost)
			break
		}
	}
	for _, s := range x.order {
		// A call that looks at its ctx only once released may find it
		// ended long before: only a call that waits on ctx.Done() says
		// how it ended when the deadline passed.
		if d, ok := x.done[s]; ok && x.afterDeadline(d) && x.cl.opt == nil && d.viaCtx && !x.cl.calls[s].late &&
			!errors.Is(d.ctxErr, context.DeadlineExceeded) {
			k.add("R5", "when the caller's ctx ends, the calls see it through their ctx, but %s's deadline passed "+
				"and the call for %q saw ctx.Err() = %v, not context.DeadlineExceeded: give every call the "+
				"caller's ctx, or a context derived from it (context.WithCancel(ctx)), which ends as the "+
				"caller's does; a context of your own that the caller's cancel is forwarded to reports every "+
				"end as context.Canceled", who, d.in, d.ctxErr)
			break
		}
	}
	cancelled := false
	for st := range x.cancel {
		cancelled = cancelled || st <= now
	}
	// Failures so far: errors and panics of calls that were released, and
	// the errors of calls cancelled by the caller (they are failures too).
	failures := 0
	for _, d := range x.done {
		if d.panic != nil || d.err != nil && (!d.viaCtx || x.cancel[d.step] || *stopped < 0 && cancelled) {
			failures++
		}
	}
	if *stopped < 0 && failures > testYTolerates(x) {
		*stopped = now
	}
	if !x.c.Returned() && !cancelled && *stopped < 0 && len(running) > 0 {
		for _, s := range x.order {
			d, ok := x.done[s]
			if !ok || d.viaCtx || d.ctx.Err() == nil {
				continue
			}
			k.add(testYOptReq(x), "the ctx a call gets ends only when the caller's ctx ends, the gather stops early or Gather "+
				"has returned, but in %s the ctx of the call for %q had ended after step %d, once that call had "+
				"returned, while Gather still waited for %d other call(s): what a call started on its ctx (a "+
				"request, a goroutine, a context.AfterFunc) is cut short before the batch is done. Give the calls "+
				"the gather's one ctx, not a context of each call's own cancelled when that call returns",
				who, d.in, now, len(running))
			break
		}
	}
	for _, s := range running {
		call := x.cl.calls[s]
		if call.deaf {
			continue
		}
		switch {
		case cancelled:
			k.add("R5", "when the caller cancels, the calls in flight see it through their ctx, but %s cancelled and "+
				"the call for %q, which returns as soon as its ctx ends, still ran after step %d: give every call "+
				"the caller's ctx, or a context derived from it", who, x.cl.inputs[s], now)
		case *stopped >= 0:
			req := "B1"
			if !x.cl.opt.FailFast {
				req = "B2"
			}
			when := fmt.Sprintf("step %d", now)
			if now == 0 {
				when = "the start, where calls that returned at once failed while the others were still starting"
			}
			k.add(req, "stopping cancels the calls still running and starts no new call, but %s's gather had %d "+
				"failure(s), more than the %d it tolerates, and the call for %q, which returns as soon as its ctx "+
				"ends, still ran after %s: a call that starts while the stop goes through must get a ctx already "+
				"cancelled; derive every call's ctx from one context the stop cancels (context.WithCancelCause), "+
				"rather than look at a stopped flag and then register a ctx of the call's own",
				who, failures, testYTolerates(x), x.cl.inputs[s], when)
		}
	}
	// Nothing was cancelled by a failure that may not stop the gather.
	for _, d := range x.done {
		if !d.viaCtx || cancelled || *stopped >= 0 && *stopped <= d.step {
			continue
		}
		req := testYOptReq(x)
		if req == "R2" && k.req == "R4" && slices.ContainsFunc(slices.Collect(maps.Values(x.done)), testYDone.panicked) {
			req = "R4"
		}
		hint := ""
		switch {
		case testYTolerates(x) > math.MaxInt32:
			hint = fmt.Sprintf(" (MaxFailures %d is a valid tolerance, however large: keep it and the failure count "+
				"an int; int32(opt.MaxFailures) wraps it to %d)", x.cl.opt.MaxFailures, int32(x.cl.opt.MaxFailures))
		case req == "B2":
			hint = fmt.Sprintf(" (MaxFailures %d tolerates %d failures, however many that is: stop only once more "+
				"inputs than that have failed)", x.cl.opt.MaxFailures, x.cl.opt.MaxFailures)
		case x.cl.opt == nil:
			hint = ", however many calls fail: Gather never stops early"
		}
		k.add(req, "a failure cancels nothing (up to the failures tolerated), but in %s the call for %q saw its "+
			"ctx end at step %d although the caller did not cancel and %d call(s) had failed: give every call the "+
			"caller's ctx; do not cancel it when a call fails or panics%s", who, x.cl.inputs[d.slot], d.step, failures,
			hint)
		return
	}
}

// testYOutcomes checks what caller c's Gather returned.
func testYOutcomes(k *testYCheck, c int, x *testYRun, stopped int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	who := fmt.Sprintf("caller %d", c+1)
	out, n := x.out, len(x.cl.inputs)
	if x.insideAtReturn > 0 {
		k.add(testYWaitReq(x), "Gather returns only when every call has returned, but when %s's Gather returned "+
			"%d call(s) of fn were still running: wg.Add(1) before each go statement, not inside the goroutine", who,
			x.insideAtReturn)
	}
	if len(out) != n {
		k.add("R1", "Gather returns one outcome per input, but %s's Gather returned %d outcome(s) for %d inputs", who, len(out), n)
		return
	}
	for i, o := range out {
		if o.Input != x.cl.inputs[i] {
			k.add("R1", "out[i] is the outcome of inputs[i], with Input set to it, but %s's out[%d].Input is %q; "+
				"want %q (the inputs: %q): write each outcome at its input's index, whatever order the calls "+
				"finish in and whether they fail", who, i, o.Input, x.cl.inputs[i], x.cl.inputs)
			return
		}
	}
	if msg := testSplitKeepsOrder(slices.Clone(out)); msg != "" { // a Split that writes to out is graded elsewhere
		k.add("R1", "%s (%s's outcomes)", msg, who)
	}
	// Equal inputs may get each other's calls: match every outcome with a
	// call made for its input, one call per outcome (a bipartite matching:
	// a context error, say, can be the outcome of several such calls).
	fits := make([][]int, len(out))
	whys := make([]string, len(out))
	for i, o := range out {
		why := ""
		for s, v := range x.cl.inputs {
			d, ok := x.done[s]
			if !ok || v != x.cl.inputs[i] {
				continue
			}
			if w := testYExplains(x, d, o, stopped); w == "" {
				fits[i] = append(fits[i], s)
			} else if why == "" {
				why = w
			}
		}
		whys[i] = why
		if len(fits[i]) == 0 {
			req, msg := testYSplit(why)
			k.add(req, "%s, in %s's out[%d] for %q", msg, who, i, x.cl.inputs[i])
			return
		}
	}
	owner := map[int]int{} // call slot -> outcome index
	var try func(i int, seen map[int]bool) bool
	try = func(i int, seen map[int]bool) bool {
		for _, s := range fits[i] {
			if seen[s] {
				continue
			}
			seen[s] = true
			if j, taken := owner[s]; !taken || try(j, seen) {
				owner[s] = i
				return true
			}
		}
		return false
	}
	for i := range out {
		if !try(i, map[int]bool{}) {
			// A collision shows as an outcome that only a call of its own
			// (a value, fn's own error, a panic) explains, and that call
			// is another input's. Context errors explain many outcomes.
			own := slices.ContainsFunc(fits[i], func(s int) bool { d := x.done[s]; return !d.viaCtx || d.err == nil })
			if !own && whys[i] != "" {
				req, msg := testYSplit(whys[i])
				k.add(req, "%s, in %s's out[%d] for %q", msg, who, i, x.cl.inputs[i])
				return
			}
			k.add("R6", "equal inputs stay separate, each with its own call and its own outcome, but in %s's "+
				"outcomes, out[%d] for %q repeats the outcome of another call for %q (%d equal inputs): their "+
				"results collided; key the outcomes by index, never by input", who, i, x.cl.inputs[i],
				x.cl.inputs[i], testYCount(x.cl.inputs, x.cl.inputs[i]))
			return
		}
	}
	joined := Join(out)
	anyFailed := slices.ContainsFunc(out, func(o Outcome[string, int]) bool { return o.Err != nil })
	switch {
	case !anyFailed && joined != nil:
		k.add("R3", "Join is nil when nothing failed, but for %s's outcomes, none of which failed, it returned %q", who, joined)
	case anyFailed && joined == nil:
		k.add("R3", "Join matches the error of every failed outcome, but for %s's outcomes it returned nil", who)
	default:
		for _, o := range out {
			if o.Err != nil && !errors.Is(joined, o.Err) {
				k.add("R3", "Join matches the error of every failed outcome (errors.Join), but for %s's outcomes it "+
					"does not match %q, the error of the outcome for %q", who, o.Err, o.Input)
				return
			}
		}
	}
}

func testYCount(inputs []string, in string) int {
	n := 0
	for _, v := range inputs {
		if v == in {
			n++
		}
	}
	return n
}

// testYSplit separates "Rn: message".
func testYSplit(why string) (req, msg string) {
	req, msg, _ = strings.Cut(why, ": ")
	return req, msg
}

// testYExplains says why outcome o cannot be the outcome of call d
// ("Rn: …"), or "" if it is.
func testYExplains(x *testYRun, d testYDone, o Outcome[string, int], stopped int) string {
	in := d.in
	bonus := "R3"
	if x.cl.opt != nil {
		bonus = "B2"
		if x.cl.opt.FailFast {
			bonus = "B1"
		}
	}
	if x.cl.opt != nil && d.err != nil && errors.Is(d.err, context.Canceled) {
		// A call that returns an error matching context.Canceled after
		// the gather stopped is skipped; after the caller's cancel, it
		// is not. When they came in one step, either is right.
		callerAt := -1
		for st := range x.cancel {
			if callerAt < 0 || st < callerAt {
				callerAt = st
			}
		}
		afterStop := stopped >= 0 && (d.step > stopped || d.step == stopped && d.viaCtx && !x.cancel[stopped])
		sameStep := stopped >= 0 && d.step == stopped && !afterStop
		if sameStep {
			// d failed in the step of the stop: if the other failures
			// up to then do not make a stop on their own, d's failure
			// came before the stop, whatever the order in that step.
			others := 0
			for _, e := range x.done {
				if e.slot != d.slot && e.step <= stopped && (e.panic != nil || e.err != nil && (!e.viaCtx || x.cancel[e.step])) {
					others++
				}
			}
			sameStep = others > testYTolerates(x)
		}
		callerFirst := callerAt >= 0 && (stopped < 0 || callerAt <= stopped) && d.step >= callerAt
		switch {
		case callerFirst || sameStep:
			if errors.Is(o.Err, ErrSkipped) || errors.Is(o.Err, context.Canceled) {
				return ""
			}
			return fmt.Sprintf("%s: a call that returns an error matching context.Canceled keeps it (or, after the "+
				"gather stopped, gets ErrSkipped), but the call for %q returned %q and its outcome's error is %s: "+
				"keep what each call returned; do not replace a real error with ctx.Err() because ctx ended",
				bonus, in, d.err, testYDescribe(o.Err))
		case afterStop:
			if errors.Is(o.Err, ErrSkipped) && !errors.Is(o.Err, context.Canceled) {
				return ""
			}
			if callerAt > stopped {
				ended := " cancelled its ctx"
				if x.cl.deadline {
					ended = "'s deadline passed"
				}
				return fmt.Sprintf("%s: a call cut short by the stop stays skipped when the caller's ctx ends later: "+
					"the gather stopped at step %d and the caller%s only at step %d; the call for %q returned %q "+
					"at step %d, so its outcome's error must match ErrSkipped and not context.Canceled, but it "+
					"is %s: tell the stop from a caller's cancel by what cancelled the calls' ctx first "+
					"(context.Cause(inner) is your stop's cause, or a flag set when you stop), not by whether "+
					"the caller's ctx is still live when the call returns or when the gather returns",
					bonus, stopped, ended, callerAt, in, d.err, d.step, testYDescribe(o.Err))
			}
			return fmt.Sprintf("%s: after the gather stopped, a call that returns an error matching "+
				"context.Canceled gets an error matching ErrSkipped and not context.Canceled; the call for %q "+
				"returned %q after the stop at step %d, and its outcome's error is %s",
				bonus, in, d.err, stopped, testYDescribe(o.Err))
		}
		if errors.Is(o.Err, ErrSkipped) {
			failed := 0 // by the step d returned in
			for _, e := range x.done {
				if e.step <= d.step && (e.panic != nil || e.err != nil && (!e.viaCtx || x.cancel[e.step])) {
					failed++
				}
			}
			return fmt.Sprintf("%s: only a stop of the gather makes an input skipped, but the call for %q failed with "+
				"%q of its own before any stop or cancel (%d input(s) had failed by then, and the gather tolerates "+
				"%d), and its outcome's error is %s: it is a failure like any other (and counts towards the stop); "+
				"whether a context error is a skip depends on the stop, not on the error or on the caller's ctx",
				bonus, in, d.err, failed, testYTolerates(x), testYDescribe(o.Err))
		}
	}
	if x.cl.opt == nil && d.err != nil && errors.Is(o.Err, ErrSkipped) {
		return fmt.Sprintf("R2: Gather never stops early, so no outcome is skipped, but the call for %q returned "+
			"%q and its outcome's error is %s: a failure cancels nothing and skips nothing", in, d.err,
			testYDescribe(o.Err))
	}
	switch {
	case d.panicked():
		p := fmt.Sprint(d.panic)
		switch {
		case o.Err == nil:
			return fmt.Sprintf("R4: a panic in fn becomes that input's error, but the call for %q panicked with %s "+
				"(%T) and its outcome has no error: recover in the goroutine that calls fn and record the panic as "+
				"the outcome's error", in, p, d.panic)
		case !errors.Is(o.Err, ErrPanic):
			return fmt.Sprintf("R4: a panic becomes an error matching ErrPanic, but the call for %q panicked with %s "+
				"(%T) and its outcome's error is %s: wrap ErrPanic with %%w", in, p, d.panic, testYDescribe(o.Err))
		case !strings.Contains(o.Err.Error(), p):
			return fmt.Sprintf("R4: a panic's error shows the panic value, but the call for %q panicked with %q "+
				"(%T) and its outcome's error says %q: format the recovered value with %%v, whatever its type",
				in, p, d.panic, o.Err)
		case !strings.Contains(o.Err.Error(), in):
			return fmt.Sprintf("R4: a panic's error names its input like any failure, but the call for %q panicked "+
				"and its outcome's error says %q", in, o.Err)
		}
		return ""
	case d.err == nil:
		if o.Err != nil || o.Value != d.value {
			req := "R1"
			if d.viaCtx {
				req = "R5"
			}
			return fmt.Sprintf("%s: every outcome keeps what its call returned, but the call for %q succeeded with "+
				"%d and its outcome is {Value: %d, Err: %s}", req, in, d.value, o.Value, testYDescribe(o.Err))
		}
		return ""
	case d.viaCtx:
		want, wantName, ended := context.Canceled, "context.Canceled", "the caller cancelled"
		if x.afterDeadline(d) {
			want, wantName, ended = context.DeadlineExceeded, "context.DeadlineExceeded", "the caller's deadline passed"
		}
		if !errors.Is(o.Err, want) {
			return fmt.Sprintf("R5: a call that returned ctx.Err() after %s has an error matching "+
				"%s, but the call for %q returned %q and its outcome's error is %s", ended, wantName, in, d.err,
				testYDescribe(o.Err))
		}
		if x.cl.opt != nil && errors.Is(o.Err, ErrSkipped) && len(x.cancel) > 0 && stopped < 0 {
			return fmt.Sprintf("R5: a caller's cancel is not a stop of the gather, but the call for %q returned %q "+
				"after the caller cancelled, and its outcome's error matches ErrSkipped", in, d.err)
		}
		return ""
	}
	// fn failed on its own.
	req := "R3"
	var st *testStatusError
	if x.cl.opt != nil && stopped >= 0 && errors.Is(o.Err, ErrSkipped) && !errors.Is(o.Err, d.err) {
		return fmt.Sprintf("%s: the failures keep their own errors when the gather stops, but the call for %q "+
			"failed with %s of its own and its outcome's error is %s: only an error matching context.Canceled, "+
			"returned once the gather stopped, becomes ErrSkipped (a timeout, context.DeadlineExceeded, is a "+
			"failure)", bonus, in, testYDescribe(d.err), testYDescribe(o.Err))
	}
	switch {
	case o.Err == nil:
		return fmt.Sprintf("%s: a failed outcome's error matches fn's error, but the call for %q failed with %s and "+
			"its outcome has no error (Value %d): keep every error, whatever its text says", req, in, testYDescribe(d.err), o.Value)
	case !errors.Is(o.Err, d.err):
		if len(x.cancel) > 0 {
			return fmt.Sprintf("R5: after the caller cancels, Gather keeps what each call returned, but the call "+
				"for %q failed with %s of its own and its outcome's error is %s: do not replace a real error "+
				"with ctx.Err() because ctx ended", in, testYDescribe(d.err), testYDescribe(o.Err))
		}
		return fmt.Sprintf("%s: a failed outcome's error matches fn's error (errors.Is), but the call for %q failed "+
			"with %s and its outcome's error is %s: wrap fn's error with %%w, do not rebuild it or replace it",
			req, in, testYDescribe(d.err), testYDescribe(o.Err))
	case errors.As(d.err, &st):
		var got *testStatusError
		if !errors.As(o.Err, &got) || got != st {
			return fmt.Sprintf("%s: errors.As finds fn's error of its own type in the outcome's error, but for %q it "+
				"found %v", req, in, got)
		}
	}
	if !strings.Contains(o.Err.Error(), in) {
		return fmt.Sprintf("%s: a failed outcome's error names its input (its message contains the input, "+
			"formatted with %%v), but the call for %q failed and its outcome's error says %q", req, in, o.Err)
	}
	return ""
}

func (d testYDone) panicked() bool { return d.panic != nil }

func (x *testYRun) cancelIn(step int) bool { return x.cancel[step] }

// afterDeadline says whether call d returned once caller x's deadline had
// passed (a ctx that ended earlier ended for another reason).
func (x *testYRun) afterDeadline(d testYDone) bool {
	if !x.cl.deadline {
		return false
	}
	for st := range x.cancel {
		if st <= d.step {
			return true
		}
	}
	return false
}

func testYDescribe(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T, chain %s)", err.Error(), err, katatest.Chain(err))
}

func TestR1_ExploreOutcomesFollowTheInputs(t *testing.T) {
	katatest.Explore(t, 15, testDrawY("R1", false, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "R1") })
}

func TestR2_ExploreAFailureCancelsNothing(t *testing.T) {
	katatest.Explore(t, 15, testDrawY("R2", false, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "R2") })
}

func TestR3_ExploreErrorsKeepTheirIdentity(t *testing.T) {
	katatest.Explore(t, 15, testDrawY("R3", true, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "R3") })
}

func TestR4_ExplorePanicsOfEveryKind(t *testing.T) {
	katatest.Explore(t, 30, testDrawY("R4", false, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "R4") })
}

func TestR5_ExploreCallerCancels(t *testing.T) {
	katatest.Explore(t, 15, testDrawY("R5", true, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "R5") })
}

func TestR6_ExploreEqualInputs(t *testing.T) {
	katatest.Explore(t, 15, testDrawY("R6", true, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "R6") })
}

// testYStopThenCallerEnds is a fixed case of what the drawn scenarios hold
// only now and then: two callers of GatherWith(opt), each on n inputs
// whose calls ignore their ctx and, once released, fail on their own if it
// is still live and return ctx.Err() (bare or wrapped) if not. Step 1
// releases enough of them to stop both gathers; in step 2 the first caller
// cancels and the second's deadline passes, and one more call of each
// returns; then the rest return. The calls that return after step 1 were
// cut short by the stop, which came first.
func testYStopThenCallerEnds(opt Options, n, stopAfter int) testYScenario {
	var s testYScenario
	for c := range 2 {
		cl := testYCaller{opt: &opt, deadline: c == 1}
		for i := range n {
			cl.inputs = append(cl.inputs, fmt.Sprintf("sku-%d", i+1))
			cl.calls = append(cl.calls, testYCall{does: testYFail, kind: 1 + i%(len(testYErrs)-1), deaf: true, late: true,
				onCancel: i % 2})
		}
		s.callers = append(s.callers, cl)
	}
	var first testYStep
	for k := range stopAfter {
		first.release = append(first.release, [2]int{0, k}, [2]int{1, k})
	}
	s.steps = []testYStep{first, {cancel: []int{0, 1}, release: [][2]int{{0, 0}, {1, -1}}}}
	return s
}

// testYOwnTimeoutAfterStop is a fixed case of GatherWith(opt) on 6 inputs:
// 5 calls that fail when released, or return ctx.Err() once their ctx
// ends, and last a call that ignores its ctx and, released in step 2,
// fails with a timeout of its own (an error wrapping
// context.DeadlineExceeded). Step 1 releases the first calls, enough to
// stop the gather. Only an error matching context.Canceled becomes
// ErrSkipped: the timeout keeps its error.
func testYOwnTimeoutAfterStop(opt Options, stopAfter int) testYScenario {
	cl := testYCaller{opt: &opt}
	var first testYStep
	for i := range 5 {
		cl.calls = append(cl.calls, testYCall{does: testYFail, kind: 1 + i%4})
	}
	for i := range stopAfter {
		first.slots = append(first.slots, [2]int{0, i})
	}
	cl.calls = append(cl.calls, testYCall{does: testYFail, kind: len(testYErrs) - 1, deaf: true})
	for i := range cl.calls {
		cl.inputs = append(cl.inputs, fmt.Sprintf("sku-%d", i+1))
	}
	return testYScenario{callers: []testYCaller{cl}, steps: []testYStep{first, {slots: [][2]int{{0, 5}}}}}
}

func TestB1_ExploreFailFast(t *testing.T) {
	fixed := testYStopThenCallerEnds(Options{FailFast: true}, 4, 1)
	katatest.Run(t, func(h *katatest.H) { testYPlay(h, fixed, "B1") })
	timeout := testYOwnTimeoutAfterStop(Options{FailFast: true}, 1)
	katatest.Run(t, func(h *katatest.H) { testYPlay(h, timeout, "B1") })
	katatest.Explore(t, 40, testDrawY("B1", true, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "B1") })
}

func TestB2_ExploreMaxFailures(t *testing.T) {
	fixed := testYStopThenCallerEnds(Options{MaxFailures: 1}, 5, 2)
	katatest.Run(t, func(h *katatest.H) { testYPlay(h, fixed, "B2") })
	timeout := testYOwnTimeoutAfterStop(Options{MaxFailures: 1}, 2)
	katatest.Run(t, func(h *katatest.H) { testYPlay(h, timeout, "B2") })
	katatest.Explore(t, 20, testDrawY("B2", true, 0), func(h *katatest.H, s testYScenario) { testYPlay(h, s, "B2") })
}

// Inputs of other types than string: the error names the input as %v
// formats it, whatever its type. testYItem is a struct input, as a
// basket line would be; testYSKU formats itself.
type testYItem struct {
	SKU string
	Qty int
}

type testYLine struct {
	Item testYItem
	Note string
}

type testYSKU int

func (s testYSKU) String() string { return fmt.Sprintf("SKU-%04d", int(s)) }

var testYTypes = []string{"string", "int", "struct testYItem{SKU string; Qty int}", "*testYItem (a pointer to a struct)",
	"struct testYLine{Item testYItem; Note string} (a struct in a struct)", "testYSKU (an int type with a String method)"}

// testYTyped is one Gather over inputs of one type; fails[i] is -1 for a
// call that succeeds, otherwise the testYErrs it fails with.
type testYTyped struct {
	typ   int
	with  bool // GatherWith(ctx, inputs, fn, Options{}) instead of Gather
	fails []int
}

func (s testYTyped) String() string {
	what := "Gather"
	if s.with {
		what = "GatherWith(…, Options{})"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s over %d input(s) of type %s; every call returns at once:", what, len(s.fails), testYTypes[s.typ])
	for i, k := range s.fails {
		if k < 0 {
			fmt.Fprintf(&b, "\n  input %d succeeds", i)
		} else {
			fmt.Fprintf(&b, "\n  input %d fails with %s", i, testYErrs[k].how)
		}
	}
	return b.String()
}

func testDrawYTyped(r *rapid.T) testYTyped {
	// The struct types, where %v differs from %+v, %#v and %q, twice as often.
	typ := rapid.SampledFrom([]int{0, 1, 2, 3, 4, 5, 2, 3, 4}).Draw(r, "input type")
	s := testYTyped{typ: typ, with: rapid.Bool().Draw(r, "GatherWith")}
	n := rapid.IntRange(1, 5).Draw(r, "inputs")
	failed := false
	for i := range n {
		k := -1
		if rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("input %d fails", i)) > 0 {
			k = rapid.IntRange(0, len(testYErrs)-1).Draw(r, fmt.Sprintf("input %d error", i))
			failed = true
		}
		s.fails = append(s.fails, k)
	}
	if !failed {
		s.fails[rapid.IntRange(0, n-1).Draw(r, "the input that fails")] = 1
	}
	return s
}

func (s testYTyped) play(h *katatest.H) {
	switch s.typ {
	case 0:
		testYPlayTyped(h, s, func(i int) string { return fmt.Sprintf("sku-%d", i+1) })
	case 1:
		testYPlayTyped(h, s, func(i int) int { return 40 + i })
	case 2:
		testYPlayTyped(h, s, func(i int) testYItem { return testYItem{SKU: fmt.Sprintf("sku-%d", i+1), Qty: i + 2} })
	case 3:
		items := make([]*testYItem, len(s.fails))
		for i := range items {
			items[i] = &testYItem{SKU: fmt.Sprintf("sku-%d", i+1), Qty: i + 2}
		}
		testYPlayTyped(h, s, func(i int) *testYItem { return items[i] })
	case 4:
		testYPlayTyped(h, s, func(i int) testYLine {
			return testYLine{Item: testYItem{SKU: fmt.Sprintf("sku-%d", i+1), Qty: i + 2}, Note: "gift"}
		})
	default:
		testYPlayTyped(h, s, func(i int) testYSKU { return testYSKU(700 + i) })
	}
}

func testYPlayTyped[In comparable](h *katatest.H, s testYTyped, input func(i int) In) {
	n := len(s.fails)
	inputs := make([]In, n)
	errs := make([]error, n)
	for i := range inputs {
		inputs[i] = input(i)
		if k := s.fails[i]; k >= 0 {
			errs[i] = testYErrs[k].make(i)
		}
	}
	fn := func(ctx context.Context, in In) (int, error) {
		i := slices.Index(inputs, in)
		if i < 0 {
			return 0, fmt.Errorf("fn got %v, which is not one of the inputs", in)
		}
		if errs[i] != nil {
			return 0, errs[i]
		}
		return 100 + i, nil
	}
	c := katatest.Start(h, func(ctx context.Context) ([]Outcome[In, int], error) {
		if s.with {
			return GatherWith(ctx, inputs, fn, Options{}), nil
		}
		return Gather(ctx, inputs, fn), nil
	})
	if c.Broken() {
		return
	}
	out, _, ok := c.Finish("Gather")
	if !ok {
		return
	}
	// Only the naming is graded here: where the outcomes are (R1), whether
	// a failure stops anything (R2) and whether the error matches fn's
	// (the other R3 tests) are graded elsewhere.
	for i, in := range inputs {
		j := slices.IndexFunc(out, func(o Outcome[In, int]) bool { return o.Input == in })
		if j < 0 || errs[i] == nil || !errors.Is(out[j].Err, errs[i]) {
			continue
		}
		if want := fmt.Sprintf("%v", in); !strings.Contains(out[j].Err.Error(), want) {
			h.Errorf("a failed outcome's error names its input, formatted with %%v, but for input %d of type %s, "+
				"which %%v formats as %q, the error says %q: format the input with %%v (not %%+v, %%#v or %%q, "+
				"which read differently for a struct or a pointer to one), e.g. fmt.Errorf(\"input %%d (%%v): %%w\", "+
				"i, in, err)", i, testYTypes[s.typ], want, out[j].Err.Error())
			return
		}
	}
}

func TestR3_ExploreInputsOfEveryTypeAreNamedWithPercentV(t *testing.T) {
	katatest.Explore(t, 8, testDrawYTyped, func(h *katatest.H, s testYTyped) { s.play(h) })
}

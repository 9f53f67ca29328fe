package partial

// Explored nested gathers: a gather run inside the fn of another. The
// inner gather's caller is the outer gather's call, and its ctx is that
// call's: when the outer gather stops early, or its own caller cancels (or
// its deadline passes), the inner gather sees its caller's ctx end. Its
// calls that then return ctx.Err() keep it (context.Canceled or
// context.DeadlineExceeded): the inner gather did not stop, unless its own
// failures stopped it. Only the stop of a gather skips its own inputs.

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

// What one call of an inner gather does.
const (
	testNSucceed     = iota // returns its value at once
	testNFail               // fails at once with an error of its own
	testNWait               // waits until its ctx ends, then returns ctx.Err()
	testNWaitWrapped        // waits until its ctx ends, then returns fmt.Errorf("…: %w", ctx.Err())
)

var testNCallNames = []string{"succeeds at once", "fails at once with an error of its own",
	"waits until its ctx ends, then returns ctx.Err()", "waits until its ctx ends, then returns fmt.Errorf(\"…: %w\", ctx.Err())"}

// How the outer gather's caller ends it, and when the outer inputs that
// fail (and may stop the outer gather) are released.
const (
	testNFailuresFirst = iota // step 1: the failing outer calls return; step 2: the caller's ctx ends
	testNCallerFirst          // step 1: the caller's ctx ends; step 2: the failing outer calls return
	testNAtOnce               // step 1: the caller's ctx ends and the failing outer calls return, all at once
)

type testNInner struct {
	opt   *Options // nil: Gather
	calls []int    // testNSucceed …
}

type testNScenario struct {
	outer    *Options // nil: Gather
	inners   []testNInner
	failing  int  // outer inputs that ignore their ctx and fail when released
	deadline bool // the outer caller's ctx ends by its deadline passing
	order    int
}

func testNWhat(opt *Options) string {
	if opt == nil {
		return "Gather"
	}
	return fmt.Sprintf("GatherWith(Options{FailFast: %v, MaxFailures: %d})", opt.FailFast, opt.MaxFailures)
}

func (s testNScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the outer %s on %q, its caller's ctx ending by ", testNWhat(s.outer), s.inputs())
	if s.deadline {
		b.WriteString("its deadline passing")
	} else {
		b.WriteString("a cancel")
	}
	for k, in := range s.inners {
		fmt.Fprintf(&b, "\n  the call for %q runs the inner %s on %q with the ctx it got, then returns "+
			"fmt.Errorf(\"…: %%w\", ctx.Err()) if that ctx has ended, and a value if not", testNNest(k),
			testNWhat(in.opt), testNInnerInputs(k, len(in.calls)))
		for j, c := range in.calls {
			fmt.Fprintf(&b, "\n    inner call for %q %s", testNInnerInputs(k, len(in.calls))[j], testNCallNames[c])
		}
	}
	if s.failing > 0 {
		fmt.Fprintf(&b, "\n  the calls for %q ignore their ctx and fail with an error of their own when released",
			s.inputs()[len(s.inners):])
	}
	switch s.order {
	case testNFailuresFirst:
		b.WriteString("\n  step 1: the failing outer calls return; step 2: the outer caller's ctx ends")
	case testNCallerFirst:
		b.WriteString("\n  step 1: the outer caller's ctx ends; step 2: the failing outer calls return")
	default:
		b.WriteString("\n  step 1, all at once: the outer caller's ctx ends and the failing outer calls return")
	}
	return b.String()
}

func testNNest(k int) string { return fmt.Sprintf("nest-%d", k+1) }

func (s testNScenario) inputs() []string {
	var ins []string
	for k := range s.inners {
		ins = append(ins, testNNest(k))
	}
	for k := range s.failing {
		ins = append(ins, fmt.Sprintf("fail-%d", k+1))
	}
	return ins
}

func testNInnerInputs(k, n int) []string {
	ins := make([]string, n)
	for j := range ins {
		ins[j] = fmt.Sprintf("nest-%d/sku-%d", k+1, j+1)
	}
	return ins
}

// testNTolerates is how many failures a gather with opt tolerates (-1: no limit).
func testNTolerates(opt *Options) int {
	switch {
	case opt == nil:
		return -1
	case opt.FailFast:
		return 0
	case opt.MaxFailures > 0:
		return opt.MaxFailures
	}
	return -1
}

// testNDrawOpt draws the options of an inner gather: none, or those of
// the item graded (an inner GatherWith with FailFast for B1, with
// MaxFailures for B2).
func testNDrawOpt(r *rapid.T, req, label string) *Options {
	switch rapid.IntRange(0, 3).Draw(r, label) {
	case 0:
		return nil
	case 1:
		return &Options{}
	}
	if req == "B1" {
		return &Options{FailFast: true}
	}
	return &Options{MaxFailures: rapid.IntRange(1, 2).Draw(r, label+" max failures")}
}

// testDrawN draws a nested scenario for req: "R5" nests Gather in Gather,
// "B1" and "B2" nest any gather in GatherWith with FailFast or MaxFailures.
func testDrawN(req string) func(*rapid.T) testNScenario {
	return func(r *rapid.T) testNScenario {
		var s testNScenario
		switch req {
		case "B1":
			s.outer = &Options{FailFast: true}
			s.failing = rapid.IntRange(1, 2).Draw(r, "failing outer calls")
		case "B2":
			s.outer = &Options{MaxFailures: rapid.IntRange(1, 2).Draw(r, "outer max failures")}
			s.failing = rapid.IntRange(0, s.outer.MaxFailures+1).Draw(r, "failing outer calls")
		default:
			s.failing = rapid.IntRange(0, 2).Draw(r, "failing outer calls")
		}
		for k := range rapid.IntRange(1, 2).Draw(r, "inner gathers") {
			var in testNInner
			if req != "R5" {
				in.opt = testNDrawOpt(r, req, fmt.Sprintf("inner options %d", k))
			}
			for j := range rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("inner inputs %d", k)) {
				// Mostly calls that wait for their ctx: they see the outer end.
				c := rapid.SampledFrom([]int{testNSucceed, testNFail, testNWait, testNWaitWrapped, testNWait,
					testNWaitWrapped}).Draw(r, fmt.Sprintf("inner call %d.%d", k, j))
				in.calls = append(in.calls, c)
			}
			s.inners = append(s.inners, in)
		}
		s.deadline = rapid.Bool().Draw(r, "deadline")
		s.order = rapid.IntRange(testNFailuresFirst, testNAtOnce).Draw(r, "order")
		return s
	}
}

// testNDone is what one call of fn did, inner or outer.
type testNDone struct {
	started bool
	called  bool  // it returned
	err     error // what it returned
	value   int
	step    int
}

type testNRun struct {
	s       testNScenario
	gate    chan struct{} // the failing outer calls return once it is closed
	open    sync.Once
	unstick chan struct{} // closed when the test stops the gathers: the inner calls stop waiting
	stop    sync.Once
	clk     *katatest.Clock
	dline   time.Time

	mu    sync.Mutex
	now   int
	outer map[string]*testNDone
	inner [][]testNDone    // per inner gather, per input
	errs  [][]error        // the inner calls' own errors
	outs  []testOutcomes   // what each inner gather returned
	fails map[string]error // the failing outer calls' own errors
}

func (x *testNRun) release() { x.open.Do(func() { close(x.gate) }) }

func (x *testNRun) unstickAll() {
	x.release()
	x.stop.Do(func() { close(x.unstick) })
}

// waiting lists the inner calls that wait for their ctx and have not
// returned.
func (x *testNRun) waiting() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var ins []string
	for k, in := range x.s.inners {
		for j, c := range in.calls {
			if d := x.inner[k][j]; (c == testNWait || c == testNWaitWrapped) && d.started && !d.called {
				ins = append(ins, testNInnerInputs(k, len(in.calls))[j])
			}
		}
	}
	return ins
}

func (x *testNRun) record(d *testNDone, err error, value int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	d.called, d.err, d.value, d.step = true, err, value, x.now
}

func (x *testNRun) innerFn(k int) func(context.Context, string) (int, error) {
	ins := testNInnerInputs(k, len(x.s.inners[k].calls))
	return func(ctx context.Context, in string) (int, error) {
		j := -1
		for i, v := range ins {
			if v == in {
				j = i
			}
		}
		if j < 0 {
			return 0, fmt.Errorf("fn got %q, which is not one of the inner inputs", in)
		}
		d := &x.inner[k][j]
		x.mu.Lock()
		d.started = true
		x.mu.Unlock()
		var err error
		value := 0
		switch x.s.inners[k].calls[j] {
		case testNSucceed:
			value = 100*(k+1) + j
		case testNFail:
			err = x.errs[k][j]
		case testNWait, testNWaitWrapped:
			select {
			case <-ctx.Done():
			case <-x.unstick: // the test is over
				return 0, nil
			}
			err = ctx.Err()
			if x.s.inners[k].calls[j] == testNWaitWrapped {
				err = fmt.Errorf("%s: %w", in, err)
			}
		}
		x.record(d, err, value)
		return value, err
	}
}

func (x *testNRun) outerFn(ctx context.Context, in string) (int, error) {
	d := &testNDone{}
	x.mu.Lock()
	x.outer[in] = d
	x.mu.Unlock()
	var err error
	value := 0
	if want, ok := x.fails[in]; ok {
		<-x.gate // it ignores its ctx
		err = want
	} else {
		var k int
		fmt.Sscanf(in, "nest-%d", &k)
		k--
		ins := testNInnerInputs(k, len(x.s.inners[k].calls))
		var out testOutcomes
		if opt := x.s.inners[k].opt; opt != nil {
			out = GatherWith(ctx, ins, x.innerFn(k), *opt)
		} else {
			out = Gather(ctx, ins, x.innerFn(k))
		}
		x.mu.Lock()
		x.outs[k] = out
		x.mu.Unlock()
		if ctx.Err() != nil {
			err = fmt.Errorf("%s: %w", in, ctx.Err())
		} else {
			value = 1000 * (k + 1)
		}
	}
	x.record(d, err, value)
	return value, err
}

func (x *testNRun) step(n int) {
	x.mu.Lock()
	x.now = n
	x.mu.Unlock()
}

func testNPlay(h *katatest.H, s testNScenario, req string) {
	x := &testNRun{s: s, gate: make(chan struct{}), unstick: make(chan struct{}), outer: map[string]*testNDone{}, fails: map[string]error{},
		inner: make([][]testNDone, len(s.inners)), errs: make([][]error, len(s.inners)), outs: make([]testOutcomes, len(s.inners))}
	for k, in := range s.inners {
		x.inner[k] = make([]testNDone, len(in.calls))
		x.errs[k] = make([]error, len(in.calls))
		for j := range in.calls {
			x.errs[k][j] = &testStatusError{500 + 10*k + j}
		}
	}
	inputs := s.inputs()
	for _, in := range inputs[len(s.inners):] {
		x.fails[in] = fmt.Errorf("%s: %w", in, testErrNotFound)
	}
	h.Own(x.unstickAll)
	if s.deadline {
		x.clk = katatest.NewClock()
		x.dline = x.clk.Now().Add(time.Hour)
	}
	c := katatest.Start(h, func(ctx context.Context) (testOutcomes, error) {
		if x.clk != nil {
			var cancel context.CancelFunc
			ctx, cancel = x.clk.WithDeadline(ctx, x.dline)
			defer cancel()
		}
		if s.outer != nil {
			return GatherWith(ctx, inputs, x.outerFn, *s.outer), nil
		}
		return Gather(ctx, inputs, x.outerFn), nil
	})
	if c.Broken() {
		return
	}
	end := func() {
		if x.clk != nil {
			x.clk.Add(time.Hour) // the deadline passes
		} else {
			c.Cancel()
		}
	}
	synctest.Wait()
	x.step(1)
	switch s.order {
	case testNFailuresFirst:
		x.release()
		synctest.Wait()
		x.step(2)
		end()
	case testNCallerFirst:
		end()
		synctest.Wait()
		x.step(2)
		x.release()
	default:
		end()
		x.release()
	}
	synctest.Wait()
	if ins := x.waiting(); len(ins) > 0 {
		h.Errorf("%s: when the caller's ctx ends, the calls see it through their ctx, but the outer caller's ctx had "+
			"ended and the calls for %q of a gather run inside the outer gather's fn, which return as soon as their "+
			"ctx ends, still waited: give every call the caller's ctx, or a context derived from it "+
			"(context.WithCancel(ctx)); a context of your own made from context.Background() loses the caller's "+
			"cancel, and a gather inside a gather then never sees it", req, ins)
		c.Stop()
		return
	}
	if !c.Returns("%s: the outer gather's caller's ctx had ended and every call had returned, but the outer %s had "+
		"not: a gather returns once every call has returned", req, testNWhat(s.outer)) {
		return
	}
	out, _, ok := c.Finish("the outer " + testNWhat(s.outer))
	if !ok {
		return
	}
	if msg := x.check(out); msg != "" {
		h.Errorf("%s: %s", req, msg)
	}
}

// check compares what the gathers returned with the README, and says the
// first break, or "".
func (x *testNRun) check(out testOutcomes) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.s
	inputs := s.inputs()
	if len(out) != len(inputs) {
		return "" // one outcome per input is R1's
	}
	// The outer gather's stop, if the failing outer calls stopped it on
	// their own before its caller's ctx ended.
	tol := testNTolerates(s.outer)
	stopAt := -1
	if s.order == testNFailuresFirst && tol >= 0 && s.failing > tol {
		stopAt = 1
	}
	callerAt := 1
	if s.order == testNFailuresFirst {
		callerAt = 2
	}
	// The outer call's ctx, which the inner gathers got, ended then.
	ctxEnd := callerAt
	if stopAt >= 0 {
		ctxEnd = min(stopAt, callerAt)
	}
	for k, in := range s.inners {
		if msg := x.checkInner(k, in, ctxEnd); msg != "" {
			return msg
		}
	}
	// Each outcome is looked up by its Input: where it is, is R1's.
	for _, in := range inputs {
		o, found := testNFind(out, in)
		d := x.outer[in]
		switch {
		case !found:
			continue
		case d == nil || !d.called:
			return fmt.Sprintf("the outer %s never called fn for %q, or that call never returned", testNWhat(s.outer), in)
		case d.err == nil:
			if o.Err != nil || o.Value != d.value {
				return fmt.Sprintf("the call for %q of the outer %s succeeded with %d, but its outcome is {Value: %d, Err: %s}",
					in, testNWhat(s.outer), d.value, o.Value, testYDescribe(o.Err))
			}
		case errors.Is(d.err, context.DeadlineExceeded):
			if !errors.Is(o.Err, context.DeadlineExceeded) || errors.Is(o.Err, ErrSkipped) {
				return fmt.Sprintf("the call for %q of the outer %s returned %q after its caller's deadline passed: "+
					"its outcome's error must match context.DeadlineExceeded, and not ErrSkipped (only an error "+
					"matching context.Canceled becomes ErrSkipped), but it is %s", in, testNWhat(s.outer), d.err,
					testYDescribe(o.Err))
			}
		case errors.Is(d.err, context.Canceled):
			skipped := errors.Is(o.Err, ErrSkipped) && !errors.Is(o.Err, context.Canceled)
			cancelled := errors.Is(o.Err, context.Canceled) && !errors.Is(o.Err, ErrSkipped)
			switch {
			case d.step < ctxEnd:
				// Its ctx ended before its caller's did, and before a
				// stop: a failure cancelled it, which the tests of a
				// single gather grade.
			case stopAt >= 0 && d.step == stopAt:
				if !skipped {
					return fmt.Sprintf("the outer %s stopped at step %d, when %d of its calls had failed, and then "+
						"the call for %q returned %q: its outcome's error must match ErrSkipped and not "+
						"context.Canceled, but it is %s", testNWhat(s.outer), stopAt, s.failing, in, d.err,
						testYDescribe(o.Err))
				}
			case s.outer == nil && !cancelled:
				return fmt.Sprintf("the caller of the outer Gather cancelled, and the call for %q returned %q: its "+
					"outcome's error must match context.Canceled and not ErrSkipped (Gather never stops early), "+
					"but it is %s", in, d.err, testYDescribe(o.Err))
			case !skipped && !cancelled:
				return fmt.Sprintf("the caller of the outer %s cancelled, and the call for %q returned %q: its "+
					"outcome's error must match context.Canceled (or, once the gather stopped, ErrSkipped), but "+
					"it is %s", testNWhat(s.outer), in, d.err, testYDescribe(o.Err))
			}
		default: // a failing outer call's own error, returned before the caller's ctx ended
			if s.order == testNFailuresFirst && (!errors.Is(o.Err, d.err) || errors.Is(o.Err, ErrSkipped)) {
				return fmt.Sprintf("the call for %q of the outer %s failed with %q of its own: its outcome's error "+
					"must match it, and not ErrSkipped, but it is %s", in, testNWhat(s.outer), d.err, testYDescribe(o.Err))
			}
		}
	}
	return ""
}

// testNFind returns the outcome whose Input is in (inputs are distinct).
func testNFind(out testOutcomes, in string) (Outcome[string, int], bool) {
	for _, o := range out {
		if o.Input == in {
			return o, true
		}
	}
	return Outcome[string, int]{}, false
}

// checkInner checks inner gather k, which ran inside the outer call for
// nest-k+1 with that call's ctx, which ended at step ctxEnd.
func (x *testNRun) checkInner(k int, in testNInner, ctxEnd int) string {
	s := x.s
	ins := testNInnerInputs(k, len(in.calls))
	out := x.outs[k]
	what := fmt.Sprintf("the inner %s run inside the fn of the outer %s (for %q)", testNWhat(in.opt),
		testNWhat(s.outer), testNNest(k))
	if len(out) != len(ins) {
		return "" // one outcome per input is R1's
	}
	tol := testNTolerates(in.opt)
	failedAtOnce := 0
	for _, c := range in.calls {
		if c == testNFail {
			failedAtOnce++
		}
	}
	// The inner gather stops on its own only when its calls that fail at
	// once are more than it tolerates: that is before anything else.
	stoppedItself := tol >= 0 && failedAtOnce > tol
	// Until its own failures pass the limit, every call that returned
	// ctx.Err() after its caller's ctx ended is a failure and keeps it.
	mustKeep := 0
	for _, c := range in.calls {
		if c == testNWait || c == testNWaitWrapped {
			mustKeep++
		}
	}
	switch {
	case stoppedItself:
		mustKeep = 0
	case tol >= 0:
		mustKeep = min(mustKeep, tol+1-failedAtOnce)
	}
	for j, c := range in.calls {
		if d := x.inner[k][j]; (c == testNWait || c == testNWaitWrapped) && d.called && d.step < ctxEnd && !stoppedItself {
			// Its ctx ended before its caller's did, although the inner
			// gather did not stop: a failure cancelled it, which the
			// tests of a single gather grade.
			return ""
		}
	}
	kept := 0
	for j, c := range in.calls {
		o, found := testNFind(out, ins[j])
		d := x.inner[k][j]
		switch {
		case !found:
			continue
		case stoppedItself && !d.called:
			if !errors.Is(o.Err, ErrSkipped) {
				return fmt.Sprintf("%s stopped on its own (%d of its calls failed at once), and never called fn for "+
					"%q: its outcome's error must match ErrSkipped, but it is %s", what, failedAtOnce, ins[j],
					testYDescribe(o.Err))
			}
		case !d.called:
			return fmt.Sprintf("%s never called fn for %q, or that call never returned", what, ins[j])
		case c == testNSucceed:
			if o.Err != nil || o.Value != d.value {
				return fmt.Sprintf("in %s, the call for %q succeeded with %d, but its outcome is {Value: %d, Err: %s}",
					what, ins[j], d.value, o.Value, testYDescribe(o.Err))
			}
		case c == testNFail:
			if !errors.Is(o.Err, d.err) || errors.Is(o.Err, ErrSkipped) {
				return fmt.Sprintf("in %s, the call for %q failed with %q of its own at once, before the outer "+
					"caller's ctx ended: its outcome's error must match it, and not ErrSkipped, but it is %s: keep "+
					"fn's own error; do not replace a real error with ctx.Err() because ctx ended later",
					what, ins[j], d.err, testYDescribe(o.Err))
			}
		case stoppedItself:
			if !errors.Is(o.Err, ErrSkipped) || errors.Is(o.Err, context.Canceled) {
				return fmt.Sprintf("%s stopped on its own (%d of its calls failed at once), and then the call for %q "+
					"returned %q: its outcome's error must match ErrSkipped and not context.Canceled, but it is %s",
					what, failedAtOnce, ins[j], d.err, testYDescribe(o.Err))
			}
		case errors.Is(d.err, context.DeadlineExceeded):
			if !errors.Is(o.Err, context.DeadlineExceeded) || errors.Is(o.Err, ErrSkipped) {
				return fmt.Sprintf("in %s, the outer caller's deadline passed and the call for %q returned %q: its "+
					"outcome's error must match context.DeadlineExceeded and not ErrSkipped, but it is %s",
					what, ins[j], d.err, testYDescribe(o.Err))
			}
			kept++
		default: // it returned context.Canceled: its caller's ctx was cancelled
			cancelled := errors.Is(o.Err, context.Canceled) && !errors.Is(o.Err, ErrSkipped)
			skipped := errors.Is(o.Err, ErrSkipped) && !errors.Is(o.Err, context.Canceled)
			switch {
			case cancelled:
				kept++
			case !skipped:
				return fmt.Sprintf("in %s, the call for %q returned %q after the inner gather's caller cancelled "+
					"its ctx: its outcome's error must match context.Canceled, but it is %s", what, ins[j], d.err,
					testYDescribe(o.Err))
			}
		}
	}
	if kept < mustKeep {
		var cause string
		if s.order == testNCallerFirst || s.outer == nil {
			cause = "its caller (the outer gather's call) was cancelled by the outer caller's cancel"
		} else {
			cause = "the outer gather's stop cancelled its caller (the outer gather's call): from inside, that is a " +
				"cancel by its caller"
		}
		return fmt.Sprintf("a gather inside the fn of another took its caller's cancel for a stop of its own: in "+
			"%s, %s, and its calls that waited for their ctx returned ctx.Err(), but only %d of them have an "+
			"error matching context.Canceled, where %d must (the others match ErrSkipped), although that gather "+
			"never stopped on its own: give each gather a stop cause of its own (errors.New inside GatherWith, "+
			"or a flag of its own), never one package-level error, since context.Cause of a ctx derived from the "+
			"outer gather's is the outer gather's cause", what, cause, kept, mustKeep)
	}
	return ""
}

func TestR5_ExploreAGatherInsideAGather(t *testing.T) {
	katatest.Explore(t, 10, testDrawN("R5"), func(h *katatest.H, s testNScenario) { testNPlay(h, s, "R5") })
}

// testNFixed is a fixed case of what the drawn scenarios hold only now and
// then: the failing outer calls stop the outer gather first, while inner
// gathers that have not stopped wait on their calls.
func testNFixed(outer, inner Options, failing int) testNScenario {
	return testNScenario{outer: &outer, failing: failing, order: testNFailuresFirst, inners: []testNInner{
		{calls: []int{testNWait, testNSucceed, testNWaitWrapped, testNFail}},
		{opt: &inner, calls: []int{testNWait, testNWaitWrapped}},
	}}
}

func TestB1_ExploreAGatherInsideAStoppedGather(t *testing.T) {
	fixed := testNFixed(Options{FailFast: true}, Options{FailFast: true}, 1)
	katatest.Run(t, func(h *katatest.H) { testNPlay(h, fixed, "B1") })
	katatest.Explore(t, 12, testDrawN("B1"), func(h *katatest.H, s testNScenario) { testNPlay(h, s, "B1") })
}

func TestB2_ExploreAGatherInsideAStoppedGather(t *testing.T) {
	fixed := testNFixed(Options{MaxFailures: 1}, Options{MaxFailures: 1}, 2)
	katatest.Run(t, func(h *katatest.H) { testNPlay(h, fixed, "B2") })
	katatest.Explore(t, 12, testDrawN("B2"), func(h *katatest.H, s testNScenario) { testNPlay(h, s, "B2") })
}

package partial

// What a stop of GatherWith leaves in the outcomes. One to three callers at
// once, each on inputs of its own with FailFast or MaxFailures n: n+1 calls
// fail on their own, with an error or a panic of any kind (context.Canceled,
// or an error wrapping it, among the panic values: a panic is a failure
// whatever its value, and counts), some as soon as they are called, the
// others when the test releases them, all at once; so every gather stops.
// Every other call waits for its ctx to end, at once or only once the test
// releases it after the stop, and then returns ctx.Err() (bare or wrapped),
// panics with ctx.Err() (bare or wrapped) or with a string, fails with an
// error of its own, or succeeds anyway: whatever it does comes after the
// stop, since nothing else ends its ctx. Then:
//   - a skipped outcome (a call that returned an error matching
//     context.Canceled after the stop, or an input whose call never started)
//     is a failed outcome, and its error names its input like any other;
//   - a call that panicked has an error matching ErrPanic, whatever it
//     panicked with and whenever: only a call that returns an error matching
//     context.Canceled is skipped.

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

// What a call does.
const (
	testKFail  = iota // fails with an error of its own: testKErrs[kind]
	testKPanic        // panics: testKPanics[kind]
	testKCut          // waits for its ctx to end, then does testKReactions[kind]
)

// testKErrs are the errors of the failures that stop the gather: none
// matches context.Canceled.
var testKErrs = []struct {
	how  string
	make func() error
}{
	{"&statusError{503}", func() error { return &testStatusError{503} }},
	{"errors.New(\"404: no price\")", func() error { return errors.New("404: no price") }},
	{"an error wrapping context.DeadlineExceeded (a timeout of its own)", func() error {
		return fmt.Errorf("upstream timeout: %w", context.DeadlineExceeded)
	}},
}

// testKPanics are the values the failures that stop the gather panic with.
var testKPanics = []struct {
	how   string
	value any
}{
	{"context.Canceled", context.Canceled},
	{"fmt.Errorf(\"price feed: %w\", context.Canceled)", fmt.Errorf("price feed: %w", context.Canceled)},
	{"\"price table corrupt\"", "price table corrupt"},
	{"errors.New(\"currency unknown\")", errors.New("currency unknown")},
}

// What a call cut short by the stop does once it sees its ctx ended.
const (
	testKReturnErr = iota
	testKReturnWrapped
	testKPanicErr
	testKPanicWrapped
	testKPanicString
	testKOwnError
	testKSucceed
)

var testKReactions = []string{
	"returns ctx.Err()",
	"returns fmt.Errorf(\"price feed: %w\", ctx.Err())",
	"panics with ctx.Err()",
	"panics with fmt.Errorf(\"price feed: %w\", ctx.Err())",
	"panics with \"price table corrupt\"",
	"fails with &statusError{502} of its own",
	"finishes anyway and succeeds",
}

type testKCall struct {
	does    int
	kind    int
	instant bool // a failure: it fails as soon as it is called
	late    bool // cut short: it ignores its ctx until released after the stop, then looks at it
}

type testKCaller struct {
	opt   Options
	calls []testKCall
}

type testKScenario struct {
	req     string
	callers []testKCaller
}

// testKInput is the input of call i of caller c: its %v is its own, and no
// other input's is part of it.
func testKInput(c, i int) string { return fmt.Sprintf("aisle %d, bin %02d", c+1, i+1) }

// testKWorth is the value call i of caller c succeeds with.
func testKWorth(c, i int) int { return 1000*(c+1) + 10*i + 7 }

func (cl testKCaller) tolerates() int {
	if cl.opt.FailFast {
		return 0
	}
	return cl.opt.MaxFailures
}

func (cl testKCaller) what() string {
	return fmt.Sprintf("GatherWith(Options{FailFast: %v, MaxFailures: %d})", cl.opt.FailFast, cl.opt.MaxFailures)
}

func (cl testKCaller) inputs(c int) []string {
	ins := make([]string, len(cl.calls))
	for i := range ins {
		ins[i] = testKInput(c, i)
	}
	return ins
}

func (k testKCall) String() string {
	switch k.does {
	case testKFail, testKPanic:
		how := "fails with " + testKErrs[k.kind].how
		if k.does == testKPanic {
			how = "panics with " + testKPanics[k.kind].how
		}
		if k.instant {
			return how + ", at once, as soon as it is called"
		}
		return how + ", ignoring its ctx, when released in step 1"
	}
	if k.late {
		return "ignores its ctx until released in step 2, then, its ctx having ended, " + testKReactions[k.kind]
	}
	return "waits for its ctx to end, then " + testKReactions[k.kind]
}

func (s testKScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d call(s) at once:", len(s.callers))
	for c, cl := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d: %s on %q", c+1, cl.what(), cl.inputs(c))
		for i, k := range cl.calls {
			fmt.Fprintf(&b, "\n    the call for %q %s", testKInput(c, i), k)
		}
	}
	b.WriteString("\n  step 1, all at once: the failures not yet failed are released (the gathers stop)" +
		"\n  step 2, all at once: the calls that ignore their ctx are released")
	return b.String()
}

// testDrawK draws a scenario of req: "B1" (FailFast, MaxFailures set too
// now and then) or "B2" (MaxFailures 1 to 3).
func testDrawK(req string) func(*rapid.T) testKScenario {
	return func(r *rapid.T) testKScenario {
		s := testKScenario{req: req}
		for c := range rapid.IntRange(1, 3).Draw(r, "callers") {
			var cl testKCaller
			if req == "B1" {
				cl.opt.FailFast = true
				if rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("max failures too? %d", c)) == 0 {
					cl.opt.MaxFailures = rapid.SampledFrom([]int{-1, 1, 2, 3}).Draw(r, fmt.Sprintf("max failures %d", c))
				}
			} else {
				cl.opt.MaxFailures = rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("max failures %d", c))
			}
			// All of them at once now and then: the gather may then stop
			// while it is still starting the others, which it skips.
			allAtOnce := rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("all at once %d", c)) == 0
			for k := range cl.tolerates() + 1 {
				call := testKCall{does: rapid.IntRange(testKFail, testKPanic).Draw(r, fmt.Sprintf("fails how %d.%d", c, k))}
				if call.does == testKFail {
					call.kind = rapid.IntRange(0, len(testKErrs)-1).Draw(r, fmt.Sprintf("error %d.%d", c, k))
				} else {
					call.kind = rapid.IntRange(0, len(testKPanics)-1).Draw(r, fmt.Sprintf("panic %d.%d", c, k))
				}
				call.instant = allAtOnce || rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("at once %d.%d", c, k)) == 0
				cl.calls = append(cl.calls, call)
			}
			for k := range rapid.IntRange(1, 5).Draw(r, fmt.Sprintf("cut short %d", c)) {
				cl.calls = append(cl.calls, testKCall{does: testKCut,
					kind: rapid.IntRange(0, len(testKReactions)-1).Draw(r, fmt.Sprintf("then %d.%d", c, k)),
					late: rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("late %d.%d", c, k)) == 0})
			}
			cl.calls = rapid.Permutation(cl.calls).Draw(r, fmt.Sprintf("inputs %d", c))
			s.callers = append(s.callers, cl)
		}
		return s
	}
}

// testKDone is what one call did.
type testKDone struct {
	err      error
	panicked any  // what it panicked with, if it did
	cut      bool // its ctx had ended when it returned
	returned bool
}

func (s testKScenario) play(h *katatest.H) {
	type slot struct{ c, i int }
	where := map[string]slot{}
	gates := make([][]chan struct{}, len(s.callers))
	opened := make([][]bool, len(s.callers))
	for c, cl := range s.callers {
		for i := range cl.calls {
			where[testKInput(c, i)] = slot{c, i}
			gates[c] = append(gates[c], make(chan struct{}))
			opened[c] = append(opened[c], false)
		}
	}
	release := func(c, i int) {
		if !opened[c][i] {
			opened[c][i] = true
			close(gates[c][i])
		}
	}
	h.Own(func() {
		for c := range gates {
			for i := range gates[c] {
				release(c, i)
			}
		}
	})
	var mu sync.Mutex
	done := map[slot]*testKDone{}
	fn := func(ctx context.Context, in string) (int, error) {
		at, ok := where[in]
		if !ok {
			return 0, fmt.Errorf("no such input: %q", in)
		}
		d := &testKDone{}
		mu.Lock()
		done[at] = d
		mu.Unlock()
		record := func(err error, p any) {
			mu.Lock()
			defer mu.Unlock()
			d.err, d.panicked, d.cut, d.returned = err, p, ctx.Err() != nil, true
		}
		k := s.callers[at.c].calls[at.i]
		gate := gates[at.c][at.i]
		switch {
		case k.does != testKCut:
			if !k.instant {
				<-gate // it ignores its ctx
			}
			if k.does == testKPanic {
				p := testKPanics[k.kind].value
				record(nil, p)
				panic(p)
			}
			err := testKErrs[k.kind].make()
			record(err, nil)
			return 0, err
		case k.late:
			<-gate
		default:
			select {
			case <-ctx.Done():
			case <-gate: // only when the test ends it
			}
		}
		if ctx.Err() == nil { // never stopped: other checks say so
			record(nil, nil)
			return testKWorth(at.c, at.i), nil
		}
		var p any
		switch k.kind {
		case testKReturnErr:
			record(ctx.Err(), nil)
			return 0, ctx.Err()
		case testKReturnWrapped:
			err := fmt.Errorf("price feed: %w", ctx.Err())
			record(err, nil)
			return 0, err
		case testKPanicErr:
			p = ctx.Err()
		case testKPanicWrapped:
			p = fmt.Errorf("price feed: %w", ctx.Err())
		case testKPanicString:
			p = "price table corrupt"
		case testKOwnError:
			err := &testStatusError{502}
			record(err, nil)
			return 0, err
		default:
			record(nil, nil)
			return testKWorth(at.c, at.i), nil
		}
		record(nil, p)
		panic(p)
	}
	calls := make([]*katatest.Call[testOutcomes], len(s.callers))
	for c, cl := range s.callers {
		calls[c] = katatest.Start(h, func(ctx context.Context) (testOutcomes, error) {
			return GatherWith(ctx, cl.inputs(c), fn, cl.opt), nil
		})
	}
	stopAll := func() {
		for _, call := range calls {
			call.Stop()
		}
	}
	synctest.Wait()
	// Step 0: the failures that fail as soon as they are called have. A
	// gather that has not made every call yet may skip the rest only if
	// they stopped it.
	for c, cl := range s.callers {
		instant := 0
		for _, k := range cl.calls {
			if k.does != testKCut && k.instant {
				instant++
			}
		}
		mu.Lock()
		started := 0
		for i := range cl.calls {
			if done[slot{c, i}] != nil {
				started++
			}
		}
		mu.Unlock()
		if started < len(cl.calls) && instant <= cl.tolerates() {
			stopAll() // the calls are not all at once: other tests say so
			return
		}
	}
	// Step 1: the other failures, all at once; every gather stops.
	for c, cl := range s.callers {
		for i, k := range cl.calls {
			if k.does != testKCut {
				release(c, i)
			}
		}
	}
	synctest.Wait()
	for c, cl := range s.callers {
		var failed []string
		waiting, cut, panicked := 0, 0, false
		mu.Lock()
		for i, k := range cl.calls {
			d := done[slot{c, i}]
			switch {
			case d == nil:
			case k.does == testKFail:
				failed = append(failed, fmt.Sprintf("%q failed with %s", testKInput(c, i), testKErrs[k.kind].how))
			case k.does == testKPanic:
				failed = append(failed, fmt.Sprintf("%q panicked with %s", testKInput(c, i), testKPanics[k.kind].how))
				panicked = true
			case !k.late:
				cut++
				if !d.returned {
					waiting++
				}
			}
		}
		mu.Unlock()
		if waiting > 0 {
			why := "once more inputs than it tolerates have failed, cancel the calls still running"
			if panicked {
				why = "a panic is a failure and counts towards MaxFailures like an error (with FailFast, it is the " +
					"first failure as an error is), whatever it panicked with, context.Canceled or an error wrapping " +
					"it too; only a call that returns an error matching context.Canceled after the stop is skipped"
			}
			h.Errorf("%s: stopping cancels the calls still running, but caller %d's %s tolerates %d failure(s), %d "+
				"input(s) failed (%s), and %d of the %d calls waiting on their ctx still ran: %s", s.req, c+1,
				cl.what(), cl.tolerates(), len(failed), strings.Join(failed, ", "), waiting, cut, why)
			stopAll()
			return
		}
	}
	// Step 2: the calls that ignored their ctx look at it.
	for c, cl := range s.callers {
		for i := range cl.calls {
			release(c, i)
		}
	}
	synctest.Wait()
	outs := make([]testOutcomes, len(s.callers))
	for c, call := range calls {
		if !call.Returns("every call had returned, but caller %d's GatherWith had not: return as soon as the last "+
			"call has returned", c+1) {
			stopAll()
			return
		}
		out, _, ok := call.Finish("GatherWith")
		if !ok {
			stopAll()
			return
		}
		outs[c] = out
	}
	mu.Lock()
	defer mu.Unlock()
	for c, cl := range s.callers {
		if len(outs[c]) != len(cl.calls) {
			return // one outcome per input: graded by R1
		}
		for i, o := range outs[c] {
			if o.Input != testKInput(c, i) {
				continue // out[i] is the outcome of inputs[i]: graded by R1
			}
			if msg := testKCheck(s.callers[c], c, i, done[slot{c, i}], o); msg != "" {
				h.Errorf("%s: %s", s.req, msg)
				return
			}
		}
	}
}

// testKCheck says what outcome o of call i of caller c breaks, if anything
// ("" if nothing), given what the call did (d; nil if it was never made).
func testKCheck(cl testKCaller, c, i int, d *testKDone, o Outcome[string, int]) string {
	in := testKInput(c, i)
	who := fmt.Sprintf("caller %d's %s stopped once more than %d input(s) had failed", c+1, cl.what(), cl.tolerates())
	if cl.opt.FailFast {
		who = fmt.Sprintf("caller %d's %s stopped at the first failure", c+1, cl.what())
	}
	switch {
	case d == nil, d.returned && d.panicked == nil && d.cut && errors.Is(d.err, context.Canceled):
		what := fmt.Sprintf("the call for %q never started", in)
		if d != nil {
			what = fmt.Sprintf("the call for %q returned %q after the stop", in, d.err)
		}
		if !errors.Is(o.Err, ErrSkipped) {
			return fmt.Sprintf("%s, and %s, so its outcome's error must match ErrSkipped, but it is %s", who, what,
				testYDescribe(o.Err))
		}
		if !strings.Contains(o.Err.Error(), in) {
			return fmt.Sprintf("a skipped outcome is a failed one, and the error of every failed outcome names its "+
				"input (its message contains the input, formatted with %%v), but %s, %s, and its outcome's error "+
				"says only %q: wrap ErrSkipped with %%w in an error that names the input, as every other failure's "+
				"(\"input %%d (%%v): %%w\"), not the bare ErrSkipped", who, what, o.Err)
		}
	case d.panicked != nil:
		when := "before the stop, or as it went through"
		if d.cut {
			when = "after the stop, its ctx having ended"
		}
		if !errors.Is(o.Err, ErrPanic) {
			return fmt.Sprintf("a panic in fn becomes that input's error, matching ErrPanic, whatever it panicked "+
				"with and even after the gather stopped: only a call that returns an error matching "+
				"context.Canceled is skipped. But %s, the call for %q panicked with %v (%T) %s, and its outcome's "+
				"error is %s: decide what the call did (it returned, or it panicked) before you look at what its "+
				"error matches; a recovered error that wraps context.Canceled is still a panic", who, in,
				d.panicked, d.panicked, when, testYDescribe(o.Err))
		}
	}
	return ""
}

// testKFixed are cases every run plays before the drawn ones: two callers,
// each with calls cut short by the stop that return or panic with ctx.Err()
// (bare or wrapped), and failures that panic with context.Canceled (or an
// error wrapping it) before the stop; in each case, one of the gathers
// stops only once such a panic, its last failure, is counted.
func testKFixed(req string) []testKScenario {
	fail := func(kind int, instant bool) testKCall {
		return testKCall{does: testKFail, kind: kind, instant: instant}
	}
	panics := func(kind int, instant bool) testKCall {
		return testKCall{does: testKPanic, kind: kind, instant: instant}
	}
	cut := func(kind int, late bool) testKCall { return testKCall{does: testKCut, kind: kind, late: late} }
	if req == "B1" {
		return []testKScenario{{req: req, callers: []testKCaller{
			{opt: Options{FailFast: true}, calls: []testKCall{cut(testKReturnErr, false), fail(0, false),
				cut(testKPanicErr, false), cut(testKPanicWrapped, true), cut(testKReturnWrapped, true), cut(testKSucceed, false)}},
			{opt: Options{FailFast: true, MaxFailures: 2}, calls: []testKCall{cut(testKPanicWrapped, false),
				panics(0, false), cut(testKReturnErr, true), cut(testKOwnError, false), cut(testKPanicString, false)}},
		}}}
	}
	return []testKScenario{{req: req, callers: []testKCaller{
		{opt: Options{MaxFailures: 1}, calls: []testKCall{panics(1, true), cut(testKReturnErr, false), fail(0, false),
			cut(testKPanicErr, true), cut(testKReturnWrapped, false), cut(testKPanicWrapped, false)}},
		{opt: Options{MaxFailures: 2}, calls: []testKCall{cut(testKPanicErr, false), fail(1, true), panics(2, true),
			cut(testKReturnErr, true), panics(0, false), cut(testKSucceed, true)}},
	}}}
}

func TestB1_ExploreWhatAStopLeavesInTheOutcomes(t *testing.T) {
	katatest.Replay(t, testKFixed("B1"), func(h *katatest.H, s testKScenario) { s.play(h) })
	katatest.Explore(t, 8, testDrawK("B1"), func(h *katatest.H, s testKScenario) { s.play(h) })
}

func TestB2_ExploreWhatAStopLeavesInTheOutcomes(t *testing.T) {
	katatest.Replay(t, testKFixed("B2"), func(h *katatest.H, s testKScenario) { s.play(h) })
	katatest.Explore(t, 8, testDrawK("B2"), func(h *katatest.H, s testKScenario) { s.play(h) })
}

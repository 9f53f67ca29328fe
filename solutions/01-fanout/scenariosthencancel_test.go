package fanout

// R3 where the order of a failure and the caller's cancel is certain: a
// call fails with its own error, the test learns it from fn's last act
// before it returns that error, and cancels the caller's ctx at once,
// with no settle in between, while every other call is still held and
// ignores the cancel. The failure came first, so it is Map's error
// ("The first error in time ... Map returns nil and that error,
// wrapped"), however late Map gets round to taking it. (A cancel that
// comes before the failure is another matter: there R5 says Map's error
// matches ctx.Err(), and this test never plays it.)

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testThenCancel is one scenario: callers goroutines call Map at once,
// each over an input of its own with the same n elements.
type testThenCancel struct {
	callers int
	n       int
	k       int           // the call that fails; the caller cancels right after it returned its error
	elems   []testFanElem // what each call does once released; elems[k] fails
	before  []int         // calls released (with their results) before in[k] fails, at one instant
	after   [][]int       // the other calls, released after the cancel, one group at a time
}

func (s testThenCancel) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Map over %d elements", s.n)
	if s.callers > 1 {
		fmt.Fprintf(&b, ", called by %d goroutines at once (each with an input of its own)", s.callers)
	}
	b.WriteString("; every call ignores its ctx until it is released;")
	for i, e := range s.elems {
		what := strings.Replace(testReactionNames[e.react], "Map ", "", 1)
		if i == s.k {
			what = "once released, it returns its error at once"
		}
		fmt.Fprintf(&b, "\n  in[%d]: %s, %s", i, e.describe(), what)
	}
	step := 1
	if len(s.before) > 0 {
		fmt.Fprintf(&b, "\n  step %d: released at the same instant: %s", step, testElements(s.before))
		step++
	}
	fmt.Fprintf(&b, "\n  step %d: in[%d] is released and returns its error; the moment it has, with no pause, the caller "+
		"cancels ctx (each caller in turn)", step, s.k)
	for _, group := range s.after {
		step++
		fmt.Fprintf(&b, "\n  step %d: released at the same instant: %s", step, testElements(group))
	}
	return b.String()
}

// testDrawThenCancel draws the sizes, the call that fails, how it fails
// (its text may even say "context canceled"), what the other calls do
// once released (a result, an error of their own, or ctx.Err() they look
// at late) and the order they are released in, before the failure or
// after the cancel.
func testDrawThenCancel(r *rapid.T) testThenCancel {
	s := testThenCancel{}
	s.callers = rapid.IntRange(1, 3).Draw(r, "callers")
	s.n = rapid.IntRange(1, 6).Draw(r, "n")
	s.k = rapid.IntRange(0, s.n-1).Draw(r, "the call that fails, then the caller cancels")
	fail := func(what string) testFanElem {
		e := testFanElem{fails: true, panic: -1, react: testIgnores}
		e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, what+" error kind")
		if e.kind == testStatusValue || e.kind == testWrappedValue {
			e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, what+" status")
		} else {
			e.text = rapid.SampledFrom(testFailTexts).Draw(r, what+" error text")
		}
		return e
	}
	var others, calm []int
	for i := range s.n {
		name := fmt.Sprintf("in[%d]", i)
		if i == s.k {
			e := fail(name)
			if e.kind == testPlainError && rapid.Bool().Draw(r, name+" says context canceled") {
				e.text = testCancelWords
			}
			s.elems = append(s.elems, e)
			continue
		}
		others = append(others, i)
		react := rapid.SampledFrom([]int{testIgnores, testChecksLate}).Draw(r, name+" reaction")
		if react == testIgnores && rapid.IntRange(0, 2).Draw(r, name+" fails (after the cancel)") == 0 {
			s.elems = append(s.elems, fail(name))
			continue
		}
		s.elems = append(s.elems, testFanElem{panic: -1, react: react,
			text: rapid.SampledFrom(testValues).Draw(r, name+" value")})
		if react == testIgnores {
			calm = append(calm, i)
		}
	}
	// Some calls that succeed may return before the failure.
	if len(calm) > 0 {
		calm = rapid.Permutation(calm).Draw(r, "calls that may return first")
		s.before = calm[:rapid.IntRange(0, len(calm)).Draw(r, "calls that return their results before the failure")]
		slices.Sort(s.before)
	}
	rest := slices.DeleteFunc(others, func(i int) bool { return slices.Contains(s.before, i) })
	if len(rest) > 0 {
		rest = rapid.Permutation(rest).Draw(r, "release order, after the cancel")
	}
	for len(rest) > 0 {
		g := rapid.IntRange(1, len(rest)).Draw(r, "released together, after the cancel")
		s.after, rest = append(s.after, rest[:g]), rest[g:]
	}
	return s
}

// testThenCancelFx is one caller's fn: every call waits at its gate
// without looking at its ctx; the call for in[k], once released, tells
// the test that it failed as the very last thing before it returns its
// error.
type testThenCancelFx struct {
	s      *testThenCancel
	caller int
	in     []int
	gates  []*katatest.Gate
	errs   []error       // each element's own error, a fresh value per caller
	failed chan struct{} // closed by the call for in[k] just before it returns its error
}

func testNewThenCancelFx(h *katatest.H, s *testThenCancel, caller int) *testThenCancelFx {
	f := &testThenCancelFx{s: s, caller: caller, in: make([]int, s.n), errs: make([]error, s.n),
		failed: make(chan struct{})}
	for i, e := range s.elems {
		f.in[i] = 1000*caller + i
		f.gates = append(f.gates, katatest.NewGate())
		if !e.fails {
			continue
		}
		switch e.kind {
		case testPlainError:
			f.errs[i] = errors.New(e.text)
		case testStatusValue:
			f.errs[i] = &testStatusError{testCode(e.text)}
		case testWrappedValue:
			f.errs[i] = fmt.Errorf("pricing: %w", &testStatusError{testCode(e.text)})
		default:
			f.errs[i] = errors.Join(errors.New(e.text), errors.New("retry later"))
		}
	}
	h.Own(f.releaseAll)
	return f
}

func (f *testThenCancelFx) releaseAll() {
	for _, g := range f.gates {
		g.Release()
	}
}

func (f *testThenCancelFx) fn(ctx context.Context, v int) (string, error) {
	i := v % 1000
	e := f.s.elems[i]
	f.gates[i].Hold(context.Background()) // ignores ctx: only the test's release ends the wait
	switch {
	case i == f.s.k:
		close(f.failed) // fn has failed: nothing but the return is left
		return "", f.errs[i]
	case e.fails:
		return "", f.errs[i]
	case e.react == testChecksLate && ctx.Err() != nil:
		return "", fmt.Errorf("price lookup #%d: %w", v, ctx.Err())
	}
	return fmt.Sprintf("caller %d: in[%d]: %s", f.caller, i, e.text), nil
}

// waiting counts the calls held at their gates.
func (f *testThenCancelFx) waiting() int {
	n := 0
	for _, g := range f.gates {
		n += g.Waiting()
	}
	return n
}

func (s testThenCancel) play(h *katatest.H) {
	fxs := make([]*testThenCancelFx, s.callers)
	calls := make([]*katatest.Call[[]string], s.callers)
	for c := range fxs {
		f := testNewThenCancelFx(h, &s, c)
		fxs[c] = f
		calls[c] = katatest.Start(h, func(ctx context.Context) ([]string, error) { return Map(ctx, f.in, f.fn) })
	}
	stop := func() { katatest.Unwind(h, calls...) }
	synctest.Wait()
	for c, call := range calls {
		if call.Returned() && call.Panicked() { // the stub's TODO, or a panic of the code: already reported
			stop()
			return
		}
		if call.Returned() {
			h.Errorf("Map returned before any call of fn had returned: it must wait for every call it starts")
			stop()
			return
		}
		if got := fxs[c].waiting(); got != s.n {
			h.Errorf("precondition (R1): only %d of the %d calls of fn were in flight at once; want all of them: start "+
				"a goroutine for every element before waiting for any", got, s.n)
			stop()
			return
		}
	}
	for _, f := range fxs {
		for _, i := range s.before {
			f.gates[i].Release()
		}
	}
	synctest.Wait()
	// The window: in[k]'s fn returns its error, and the caller cancels
	// the moment it has, before Map may have taken that error.
	for c, f := range fxs {
		f.gates[s.k].Release()
		<-f.failed
		calls[c].Cancel()
	}
	synctest.Wait()
	for c, call := range calls {
		if call.Returned() && fxs[c].waiting() > 0 {
			stop() // returning before the calls that ignore ctx is R4's to report
			return
		}
	}
	for _, group := range s.after {
		for _, f := range fxs {
			for _, i := range group {
				f.gates[i].Release()
			}
		}
		synctest.Wait()
	}
	for _, call := range calls {
		if !call.Returned() {
			h.Errorf("every call of fn had returned, but Map was still waiting: does it wait for something else?")
			stop()
			return
		}
	}
	results := make([][]string, s.callers)
	errs := make([]error, s.callers)
	for c, call := range calls {
		var ok bool
		if results[c], errs[c], ok = call.Finish("Map"); !ok {
			return
		}
	}
	for c, f := range fxs {
		if !s.check(h, f, results[c], errs[c]) {
			return
		}
	}
}

// check: Map's error is in[k]'s, the first in time, wrapped with its
// index, and nothing else.
func (s testThenCancel) check(h *katatest.H, f *testThenCancelFx, out []string, err error) bool {
	x := f.errs[s.k]
	switch {
	case err == nil:
		h.Errorf("in[%d] failed with %q, then the caller cancelled ctx, and Map returned no error (results %q): the "+
			"first error in time is Map's error", s.k, x, out)
		return false
	case !errors.Is(err, x) && errors.Is(err, context.Canceled) && !strings.Contains(err.Error(), "in["):
		h.Errorf("in[%d] failed with %q, and only once its fn had returned that error did the caller cancel ctx, while "+
			"the other calls still ran (they ignore the cancel); Map returned %q, the caller's ctx.Err() in place of that "+
			"failure: the first error in time is Map's error, wrapped with its index, and a cancel that comes after it "+
			"never replaces it, whichever of the two Map happens to notice first. Map let "+
			"the caller's cancel compete with a failure it had not taken yet (a select on ctx.Done() beside the calls' "+
			"failures picks either when both are ready): the caller's cancel reaches Map only through the calls' own "+
			"errors, so keep the first error a call returns, recorded by the goroutine that got it (sync.Once), and do "+
			"not take ctx.Done() as a cause of its own", s.k, x, err)
		return false
	case !errors.Is(err, x) && errors.Is(err, context.Canceled):
		h.Errorf("in[%d] failed first with %q, and only then did the caller cancel ctx; Map returned %q, the error of "+
			"a call that ended after the cancel: the first error in time is Map's error, in[%d]'s, and the errors that "+
			"come after it are dropped", s.k, x, err, s.k)
		return false
	case !errors.Is(err, x):
		if msg := katatest.LostWrap(err, x, `fmt.Errorf("fanout: in[%d]: %w", i, err)`); msg != "" {
			h.Errorf("in[%d] failed first, then the caller cancelled, and Map returned %q: %s", s.k, err, msg)
			return false
		}
		h.Errorf("in[%d] failed first with %q, and only then did the caller cancel ctx; Map returned %q (chain %s): the "+
			"first error in time is Map's error, in[%d]'s, whatever the cancel and the calls after it return",
			s.k, x, err, katatest.Chain(err), s.k)
		return false
	case errors.Is(err, context.Canceled) && !errors.Is(x, context.Canceled):
		h.Errorf("in[%d] failed first with %q, and only then did the caller cancel ctx; Map returned %q, which also "+
			"matches context.Canceled (chain %s): Map's error is that first error wrapped with its index, and nothing "+
			"else. A cancel that comes after the failure adds nothing to it: a caller that finds context.Canceled in "+
			"the error believes it gave up itself, and the failure was not its doing", s.k, x, err, katatest.Chain(err))
		return false
	}
	for i, other := range f.errs {
		if i != s.k && other != nil && errors.Is(err, other) {
			h.Errorf("in[%d] failed first with %q, and Map returned %q, which also carries the error of in[%d] (%q), a "+
				"call that failed after it: Map returns the first error only", s.k, x, err, i, other)
			return false
		}
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("in[%d]", s.k)) {
		h.Errorf("in[%d] failed first with %q, and Map returned %q: the error must name the element, as in "+
			"fmt.Errorf(\"fanout: in[%%d]: %%w\", i, err)", s.k, x, err)
		return false
	}
	var want *testStatusError
	if errors.As(x, &want) {
		var got *testStatusError
		if !errors.As(err, &got) || got != want {
			h.Errorf("in[%d] failed first with %q, which holds a *statusError, and errors.As on Map's error %q did not "+
				"find that one: wrap with %%w", s.k, x, err)
			return false
		}
	}
	if out != nil {
		h.Errorf("in[%d] failed: on an error Map returns nil results, not %q", s.k, out)
		return false
	}
	return true
}

func TestR3_ExploreAnErrorJustBeforeTheCallersCancelWins(t *testing.T) {
	// A call fails, and the caller cancels the moment it has, while the
	// others still run: its error is Map's. The cancel lands before Map
	// may have taken the failure, so the scenario is played often, with
	// several callers, each with the schedule shaken.
	katatest.Explore(t, 12, testDrawThenCancel, func(h *katatest.H, s testThenCancel) { s.play(h) })
}

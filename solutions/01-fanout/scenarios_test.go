package fanout

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them: how many elements,
// which calls fail and with what, how each call reacts to a cancel, in
// which order the calls return (several at the same instant too), when the
// caller cancels, and how many goroutines call Map at once.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

// How a call reacts when its ctx is done while it waits.
const (
	testWrapsCtx   = iota // returns fmt.Errorf("price lookup #v: %w", ctx.Err())
	testReturnsCtx        // returns ctx.Err() as it is
	testOwnError          // returns an error of its own that does not match ctx.Err()
	testPartial           // returns a partial value and a nil error
	testIgnores           // keeps waiting until released, then does its work
	testChecksLate        // keeps waiting until released, then returns ctx.Err() (wrapped) if ctx is done
	testAtOnce            // returns at once, without waiting to be released (and without looking at ctx)
	testReactions
)

var testReactionNames = [...]string{
	"honours ctx (returns ctx.Err() wrapped)",
	"honours ctx (returns ctx.Err() as it is)",
	"honours ctx (returns an error of its own, \"lookup aborted\")",
	"honours ctx (returns a partial value, nil error)",
	"ignores ctx",
	"ignores ctx while it waits, then returns ctx.Err() wrapped if ctx is done",
	"returns at once, while Map may still be starting the other calls",
}

func testHonours(react int) bool { return react < testIgnores }

// How a call fails.
const (
	testPlainError   = iota // errors.New(text)
	testStatusValue         // &testStatusError{code}
	testWrappedValue        // fmt.Errorf("pricing: %w", &testStatusError{code})
	testJoinedError         // errors.Join(errors.New(text), errors.New("retry later"))
	testFailKinds
	// Drawn only where a test asks for it: the error of a fan-out nested
	// in fn, which already names an element of the inner input.
	testNestedError = testFailKinds // fmt.Errorf("fanout: in[12]: %w", errors.New(text))
	// The panic of a fan-out nested in fn, which fn recovered and returned
	// as an error: a *PanicError, as it is or wrapped. A returned error,
	// whatever it wraps.
	testNestedPanic        = testFailKinds + 1 // &PanicError{Index: 12, Value: "price table corrupted: " + text}
	testNestedPanicWrapped = testFailKinds + 2 // fmt.Errorf("price options: %w", &PanicError{Index: 12, Value: "price table corrupted: " + text})
)

// testFromNested: the failure is a nested fan-out's, and names in[12].
func testFromNested(kind int) bool { return kind >= testNestedError }

// testWrapsPanicError: the failure fn returns is a *PanicError, or wraps one.
func testWrapsPanicError(kind int) bool {
	return kind == testNestedPanic || kind == testNestedPanicWrapped
}

// testInnerIndex is the element a nested fan-out names: no outer input is
// that long, so its tag never names an outer element.
const testInnerIndex = 12

var testFailNames = [...]string{"errors.New(%q)", "&statusError{%s}", "fmt.Errorf(\"pricing: %%w\", &statusError{%s})",
	"errors.Join(errors.New(%q), …)", "the error of a Map nested in fn, fmt.Errorf(\"fanout: in[12]: %%w\", errors.New(%q))",
	"the panic of a Map nested in fn, recovered by fn and returned as an error as it is, &PanicError{Index: 12, Value: \"price table corrupted: %s\"}",
	"the panic of a Map nested in fn, recovered by fn and returned as an error, fmt.Errorf(\"price options: %%w\", &PanicError{Index: 12, Value: \"price table corrupted: %s\"})"}

// How a call panics (B2).
const (
	testPanicString  = iota // panic("…")
	testPanicError          // panic(errors.New("…"))
	testPanicRuntime        // a nil map write: a runtime.Error
	// The panic of a Map nested in fn that fn did not recover: a
	// *PanicError naming an element of the inner input, as it is or
	// inside an error. A value like any other: the outer Map wraps it.
	testPanicNested        // panic(&PanicError{Index: 12, Value: "…"})
	testPanicNestedWrapped // panic(fmt.Errorf("price options: %w", &PanicError{Index: 12, Value: "…"}))
	testPanicKinds
)

var testPanicNames = [...]string{"panic(%q)", "panic(errors.New(%q))", "a runtime error (assignment to entry in nil map)",
	"panic(&PanicError{Index: 12, Value: %q}), the panic of a Map nested in fn that fn did not recover",
	"panic(fmt.Errorf(\"price options: %%w\", &PanicError{Index: 12, Value: %q})), the panic of a Map nested in fn, wrapped by fn"}

// testNestedPanicValue: the panic kind is a nested Map's *PanicError, as
// it is or wrapped.
func testNestedPanicValue(kind int) bool {
	return kind == testPanicNested || kind == testPanicNestedWrapped
}

// Texts a call fails with. Some repeat across elements (distinct values,
// the same words), and one says "context canceled" without being a cancel.
var testFailTexts = []string{"503", "connection refused", "503", "timeout", "503", "429"}

// testCancelWords is a failure whose text says "context canceled" without
// being a cancel: the caller did not cancel, and nothing wraps ctx.Err().
const testCancelWords = "upstream said: context canceled"

// Results a call returns: the zero value and duplicates included.
var testValues = []string{"9.99", "", "12.50", "9.99", "0.00"}

// testFanElem is what the call for one element does.
type testFanElem struct {
	fails bool
	kind  int    // testFailKinds, when fails
	text  string // the failure's text, or the result
	react int
	panic int // -1, or the testPanicKinds it panics with once released
}

// testFanScenario is one run of Map (or MapAll).
type testFanScenario struct {
	all      bool // MapAll
	same     bool // In and Out are one type: Map[string, string], in[i] the decimal text of what fn gets
	n        int
	nilIn    bool // n == 0 as a nil slice
	pre      int  // 0: a live ctx; 1: already cancelled; 2: deadline already passed
	callers  int  // goroutines calling at once, each with an input of its own
	elems    []testFanElem
	steps    [][]int // the elements released at each step, together
	cancelAt int     // the step at which the caller cancels, with that step's releases; 0: never
	focus    string  // the requirement the test grades: only its statements are reported
	early    bool    // read what Map returned on the caller's goroutine, the moment it returns
	rush     bool    // some calls return at once, while Map may still be starting the others
	cancelOn int     // -1, or the element whose call, as it starts, cancels the caller's ctx
	// > 0: the caller's ctx has a deadline that far on the mock clock, and
	// at cancelAt the deadline passes (the clock moves) instead of a cancel.
	deadline time.Duration
	big      bool // hundreds of elements (drawBig): described by counts, not element by element
}

// testWrapReqs grade an error that lost the one fn returned (wrapped with
// %v, or rebuilt): the tests of R3, R4, R5 and B1 say so.
const testWrapReqs = "R3 R4 R5 B1"

// report fails the scenario when reqs (space-separated, "*" for all)
// name the requirement under test; otherwise the scenario just ends
// there, since another test grades that statement. It returns false.
func (s testFanScenario) report(h *katatest.H, reqs string, format string, args ...any) bool {
	h.Helper()
	if reqs == "*" || slices.Contains(strings.Fields(reqs), s.focus) {
		h.Errorf(format, args...)
	}
	return false
}

func (s testFanScenario) String() string {
	var b strings.Builder
	what := "Map"
	if s.all {
		what = "MapAll"
	}
	in := fmt.Sprintf("%d elements", s.n)
	if s.n == 0 {
		in = "an empty input ([]int{})"
		if s.nilIn {
			in = "a nil input"
		}
	}
	fmt.Fprintf(&b, "%s over %s", what, in)
	if s.same {
		b.WriteString(" (In and Out are one type: Map[string, string], in[i] = \"1000·caller + i\" as text)")
	}
	if s.callers > 1 {
		fmt.Fprintf(&b, ", called by %d goroutines at once (each with an input of its own)", s.callers)
	}
	if s.cancelOn >= 0 {
		fmt.Fprintf(&b, "; the caller cancels ctx the moment the call for in[%d] starts", s.cancelOn)
	}
	if s.deadline > 0 {
		fmt.Fprintf(&b, ", with a ctx whose deadline is %v after the start (on the mock clock)", s.deadline)
	}
	switch s.pre {
	case 1:
		b.WriteString(", with a ctx already cancelled")
	case 2:
		b.WriteString(", with a ctx whose deadline already passed")
	}
	b.WriteString(";")
	if s.big {
		s.describeBig(&b)
		return b.String()
	}
	for i, e := range s.elems {
		fmt.Fprintf(&b, "\n  in[%d]: %s, %s", i, e.describe(), strings.Replace(testReactionNames[e.react], "Map ", what+" ", 1))
	}
	for k, group := range s.steps {
		fmt.Fprintf(&b, "\n  step %d:", k+1)
		if s.cancelAt == k+1 && s.deadline > 0 {
			fmt.Fprintf(&b, " the clock moves %v: the caller's deadline passes;", s.deadline)
		} else if s.cancelAt == k+1 {
			b.WriteString(" the caller cancels ctx;")
		}
		if len(group) == 0 {
			b.WriteString(" no call is released")
		} else {
			b.WriteString(" released at the same instant: " + testElements(group))
		}
	}
	return b.String()
}

func (e testFanElem) describe() string {
	switch {
	case e.panic == testPanicRuntime:
		return "panics with " + testPanicNames[e.panic]
	case e.panic >= 0:
		return "panics with " + fmt.Sprintf(testPanicNames[e.panic], "price table corrupted")
	case !e.fails:
		return fmt.Sprintf("returns %q", e.text)
	default:
		return "fails with " + fmt.Sprintf(testFailNames[e.kind], e.text)
	}
}

// testFanDraw is what a test lets vary.
type testFanDraw struct {
	focus     string // the requirement under test
	early     bool   // read Map's results the moment it returns
	all       bool
	same      bool // In and Out are one type (Map[string, string])
	minN      int
	maxN      int
	maxCall   int  // callers: 1..maxCall
	fail      bool // calls may fail
	panics    bool // calls may panic (B2)
	reacts    []int
	together  bool // several calls may be released in one step
	cancel    bool // the caller may cancel while the calls run
	pre       bool // the ctx may be done already, the input empty
	mustCause bool // at least one failure (or cancel)
	failOdds  int  // a call fails one time in failOdds (3 unless set)
	words     bool // half the failures say "context canceled" in their text
	twins     bool // in[0] and the last element fail with distinct errors of the same text
	lateFail  bool // the caller cancels first; a call that ignores ctx fails afterwards
	alone     bool // one call fails first, alone, while every other waits on its ctx
	onlyPre   bool // the ctx is done before Map starts, or the input is empty
	rush      bool // some calls return at once (some failing), or the caller cancels as one starts, while Map may still be starting calls
	nested    bool // the failure that comes first (alone), or one of MapAll's, is a nested fan-out's error
	recovered bool // with nested: that error is the nested fan-out's panic, recovered by fn and returned (a *PanicError)
	mustPanic bool // at least one call panics
	// Two or three calls panic, each ignoring its ctx (so it panics even
	// after a cancel), released one at a time with the lowest of them
	// after another one: the panics come out of index order.
	manyPanics bool
	either     bool // Map or MapAll, drawn
	// One call panics with a nested Map's *PanicError as it is, and
	// maybe another with one wrapped in an error.
	nestedPanic bool
	mustCancel  bool // with cancel: the caller always cancels, while a call that honours ctx still waits
	// The caller's ctx has a deadline on the mock clock, and the caller's
	// cancel (with cancel) is that deadline passing.
	deadline bool
	// The last calls to return are the point (drawFinale): every other
	// call has returned a result, then at one instant the last ones fail
	// (with fail), or the caller cancels while they wait on their ctx
	// (with cancel; with deadline, its deadline may pass instead).
	finale  bool
	minCall int  // callers: at least minCall (1 unless set)
	late    bool // with finale and cancel: calls that ignore the cancel return after it, one at least failing
	// Hundreds of elements (drawBig): one call fails first, alone or with
	// a few others, while all the rest are still in flight.
	big bool
	// Two to four calls panic at one instant (drawPanicsTogether), each
	// ignoring its ctx, among calls that succeed or fail before or after.
	panicsTogether bool
}

func (d testFanDraw) draw(r *rapid.T) testFanScenario {
	s := testFanScenario{all: d.all, same: d.same, focus: d.focus, early: d.early, cancelOn: -1}
	if d.either {
		s.all = rapid.Bool().Draw(r, "MapAll")
	}
	if d.rush {
		return d.drawRush(r, s)
	}
	if d.finale {
		return d.drawFinale(r, s)
	}
	if d.big {
		return d.drawBig(r, s)
	}
	if d.panicsTogether {
		return d.drawPanicsTogether(r, s)
	}
	s.callers = rapid.IntRange(1, d.maxCall).Draw(r, "callers")
	if d.deadline {
		s.deadline = time.Duration(rapid.IntRange(1, 3000).Draw(r, "the caller's deadline, ms")) * time.Millisecond
	}
	if d.onlyPre {
		// 0: an empty input with a live ctx; 1: cancelled; 2: past its deadline.
		s.pre = rapid.SampledFrom([]int{0, 1, 2, 2}).Draw(r, "ctx already done")
		if s.pre == 0 {
			s.nilIn = rapid.Bool().Draw(r, "nil input")
			return s
		}
	} else if d.pre {
		s.pre = rapid.IntRange(0, 2).Draw(r, "ctx already done")
	}
	lo := d.minN
	if d.pre && s.pre == 0 {
		lo = 0
	}
	s.n = rapid.IntRange(lo, d.maxN).Draw(r, "n")
	if s.n == 0 {
		s.pre = 0 // an empty input with a done ctx: the README allows either answer
		s.nilIn = rapid.Bool().Draw(r, "nil input")
		return s
	}
	for i := range s.n {
		e := testFanElem{panic: -1, react: rapid.SampledFrom(d.reacts).Draw(r, fmt.Sprintf("in[%d] reaction", i))}
		odds := d.failOdds
		if odds == 0 {
			odds = 3
		}
		if d.fail && rapid.IntRange(0, odds-1).Draw(r, fmt.Sprintf("in[%d] fails", i)) == 0 {
			e.fails = true
			e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, fmt.Sprintf("in[%d] error kind", i))
			e.text = rapid.SampledFrom(testFailTexts).Draw(r, fmt.Sprintf("in[%d] error text", i))
			if d.words && rapid.Bool().Draw(r, fmt.Sprintf("in[%d] says context canceled", i)) {
				e.kind, e.text = testPlainError, testCancelWords
			}
			if e.kind == testStatusValue || e.kind == testWrappedValue {
				e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, fmt.Sprintf("in[%d] status", i))
			}
		} else {
			e.text = rapid.SampledFrom(testValues).Draw(r, fmt.Sprintf("in[%d] value", i))
		}
		if d.panics && rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("in[%d] panics", i)) == 0 {
			e.panic = rapid.IntRange(0, testPanicKinds-1).Draw(r, fmt.Sprintf("in[%d] panic kind", i))
		}
		s.elems = append(s.elems, e)
	}
	if d.mustPanic && !slices.ContainsFunc(s.elems, func(e testFanElem) bool { return e.panic >= 0 }) {
		i := rapid.IntRange(0, s.n-1).Draw(r, "the element that must panic")
		s.elems[i].panic = rapid.IntRange(0, testPanicKinds-1).Draw(r, "its panic kind")
	}
	if d.manyPanics && s.n >= 2 {
		idx := rapid.Permutation(seq(s.n)).Draw(r, "the elements that panic")
		for _, i := range idx[:rapid.IntRange(2, min(3, s.n)).Draw(r, "how many panic")] {
			s.elems[i].panic = rapid.IntRange(0, testPanicKinds-1).Draw(r, fmt.Sprintf("in[%d] panic kind", i))
			s.elems[i].react = testIgnores
		}
	}
	if d.nestedPanic {
		idx := rapid.Permutation(seq(s.n)).Draw(r, "the elements that panic with a nested *PanicError")
		s.elems[idx[0]].panic = testPanicNested
		if s.n >= 2 && rapid.Bool().Draw(r, "another panics with one wrapped") {
			s.elems[idx[1]].panic = testPanicNestedWrapped
		}
	}
	if d.mustCause && !slices.ContainsFunc(s.elems, func(e testFanElem) bool { return e.fails || e.panic >= 0 }) {
		i := rapid.IntRange(0, s.n-1).Draw(r, "the element that must fail")
		if d.panics {
			s.elems[i].panic = rapid.IntRange(0, testPanicKinds-1).Draw(r, "its panic kind")
		} else {
			s.elems[i].fails, s.elems[i].kind, s.elems[i].text = true, testPlainError, "503"
		}
	}
	if d.twins && s.n >= 2 {
		for _, i := range []int{0, s.n - 1} {
			s.elems[i].fails, s.elems[i].kind, s.elems[i].text, s.elems[i].panic = true, testPlainError, "503", -1
		}
	}
	if lo, hi := 0, s.n-1; d.nested && !d.alone && (!d.twins || s.n > 2) {
		if d.twins && s.n >= 2 {
			lo, hi = 1, s.n-2 // the twins stay twins
		}
		i := rapid.IntRange(lo, hi).Draw(r, "the element whose failure comes from a nested Map")
		s.elems[i].fails, s.elems[i].kind, s.elems[i].panic = true, d.nestedKind(r), -1
		s.elems[i].text = rapid.SampledFrom(testFailTexts).Draw(r, "its inner error text")
	}
	alone := -1
	if d.alone {
		// One call fails while all the others wait on their ctx: the
		// cancel wakes them, and their errors come right after the first.
		alone = rapid.IntRange(0, s.n-1).Draw(r, "the call that fails first")
		e := &s.elems[alone]
		e.fails, e.panic = true, -1
		e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, "its error kind")
		e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, "its status")
		if e.kind == testPlainError || e.kind == testJoinedError {
			e.text = rapid.SampledFrom(testFailTexts).Draw(r, "its error text")
		}
		if d.nested {
			e.kind = d.nestedKind(r)
			e.text = rapid.SampledFrom(testFailTexts).Draw(r, "its inner error text")
		}
	}
	if d.lateFail {
		i := rapid.IntRange(0, s.n-1).Draw(r, "the call that fails after the cancel")
		s.elems[i].fails, s.elems[i].kind, s.elems[i].react = true, testPlainError, testIgnores
	}
	if s.pre != 0 {
		return s // nothing may be called
	}
	order := rapid.Permutation(seq(s.n)).Draw(r, "release order")
	if d.manyPanics {
		// The first panic to come is never the lowest index's.
		var at []int // positions in order of the panicking elements
		for k, i := range order {
			if s.elems[i].panic >= 0 {
				at = append(at, k)
			}
		}
		lowest := slices.MinFunc(at, func(a, b int) int { return order[a] - order[b] })
		if len(at) >= 2 && lowest == at[0] {
			order[at[0]], order[at[1]] = order[at[1]], order[at[0]]
		}
	}
	for len(order) > 0 {
		k := 1
		if d.together {
			k = rapid.IntRange(1, len(order)).Draw(r, "released together")
		}
		s.steps, order = append(s.steps, order[:k]), order[k:]
	}
	if alone >= 0 {
		for k, group := range s.steps {
			s.steps[k] = slices.DeleteFunc(group, func(i int) bool { return i == alone })
		}
		s.steps = slices.DeleteFunc(s.steps, func(g []int) bool { return len(g) == 0 })
		s.steps = slices.Insert(s.steps, 0, []int{alone})
	}
	if d.lateFail {
		s.steps = slices.Insert(s.steps, 0, []int{}) // the cancel comes before any call returns
		s.cancelAt = 1
	} else if d.cancel && (d.mustCancel || rapid.Bool().Draw(r, "the caller cancels")) {
		// A step of its own, or with the releases of a step: before the
		// first failure, after it, or with it.
		last := len(s.steps)
		if d.mustCancel {
			// Before the last step, whose first call honours its ctx: it
			// is still waiting when the cancel comes.
			last--
			i := s.steps[last][0]
			s.elems[i].react = rapid.SampledFrom(slices.DeleteFunc(slices.Clone(d.reacts), func(r int) bool { return !testHonours(r) })).
				Draw(r, fmt.Sprintf("in[%d] reaction (it waits at the cancel)", i))
		}
		at := rapid.IntRange(0, last).Draw(r, "cancel before step")
		if d.together && at < last && rapid.Bool().Draw(r, "with that step's releases") {
			s.cancelAt = at + 1
		} else {
			s.steps = slices.Insert(s.steps, at, []int{})
			s.cancelAt = at + 1
		}
	}
	return s
}

// drawRush draws calls of which some return at once, one of them failing
// or cancelling the caller's ctx as it starts, while Map may still be
// starting the others; the others wait to be released. A Map may stop
// starting calls once ctx is done, so no call is required to start then.
func (d testFanDraw) drawRush(r *rapid.T, s testFanScenario) testFanScenario {
	s.rush = true
	s.callers = rapid.IntRange(1, d.maxCall).Draw(r, "callers")
	s.n = rapid.IntRange(max(d.minN, 2), d.maxN).Draw(r, "n")
	var gated []int
	for i := range s.n {
		e := testFanElem{panic: -1, react: testAtOnce}
		if rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("in[%d] waits to be released", i)) > 0 {
			e.react = rapid.SampledFrom(d.reacts).Draw(r, fmt.Sprintf("in[%d] reaction", i))
		}
		if e.react == testAtOnce && rapid.Bool().Draw(r, fmt.Sprintf("in[%d] fails", i)) {
			e.fails = true
			e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, fmt.Sprintf("in[%d] error kind", i))
			e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, fmt.Sprintf("in[%d] status", i))
		} else {
			e.text = rapid.SampledFrom(testValues).Draw(r, fmt.Sprintf("in[%d] value", i))
		}
		s.elems = append(s.elems, e)
	}
	// What stops the batch early: a call that fails at once, the caller's
	// cancel as a call starts, or both; near the start of the input, so
	// that Map still has calls to start.
	early := func(what string) int { return rapid.IntRange(0, min(2, s.n-2)).Draw(r, what) }
	stops := rapid.IntRange(0, 2)
	if s.all {
		stops = rapid.IntRange(1, 2) // a failure stops nothing in MapAll: the caller's cancel, with a failure or not
	}
	switch stops.Draw(r, "what stops the batch (0: a failure, 1: a cancel, 2: both)") {
	case 0:
		i := early("the call that fails at once")
		s.elems[i].react, s.elems[i].fails, s.elems[i].kind, s.elems[i].text = testAtOnce, true, testPlainError, "503"
	case 1:
		s.cancelOn = early("the call whose start the caller's cancel follows")
	default:
		i := early("the call that fails at once")
		s.elems[i].react, s.elems[i].fails, s.elems[i].kind, s.elems[i].text = testAtOnce, true, testPlainError, "503"
		s.cancelOn = rapid.IntRange(0, s.n-1).Draw(r, "the call whose start the caller's cancel follows")
	}
	for i, e := range s.elems {
		if e.react != testAtOnce {
			gated = append(gated, i)
		}
	}
	if len(gated) > 0 {
		order := rapid.Permutation(gated).Draw(r, "release order")
		for len(order) > 0 {
			k := rapid.IntRange(1, len(order)).Draw(r, "released together")
			s.steps, order = append(s.steps, order[:k]), order[k:]
		}
	}
	return s
}

// nestedKind is how a nested fan-out's failure reaches fn's caller: its
// error, or its panic recovered by fn and returned as it is or wrapped.
func (d testFanDraw) nestedKind(r *rapid.T) int {
	if !d.recovered {
		return testNestedError
	}
	return rapid.SampledFrom([]int{testNestedPanic, testNestedPanicWrapped}).Draw(r, "the recovered panic, as it is or wrapped")
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// testFx is one caller's fn: it holds the call for in[i] at a gate of its
// own and records when and how each call returned. The test owns the gates:
// Stop on a call opens them all.
type testFx struct {
	s        *testFanScenario
	caller   int
	in       []int
	gates    []*katatest.Gate
	errs     []error // the failure of each element, a fresh value per caller
	panics   []any
	cancel   context.CancelFunc // cancels the caller's ctx (set before Map is called)
	deadline time.Time          // the caller's ctx's deadline; zero: none
	inText   []string           // with s.same: the input Map[string, string] gets, in[i] = strconv.Itoa(f.in[i])

	mu      sync.Mutex
	step    int
	ctxs    []context.Context
	state   []int // 0: not called, 1: running, 2: returned, 3: panicked
	calls   []int
	retStep []int
	retErr  []error
	viaCtx  []bool // it returned because its ctx was done
	panicG  []int  // the goroutine each element panicked on
}

func testNewFx(h *katatest.H, s *testFanScenario, caller int) *testFx {
	f := &testFx{s: s, caller: caller, ctxs: make([]context.Context, s.n), state: make([]int, s.n),
		calls: make([]int, s.n), retStep: make([]int, s.n), retErr: make([]error, s.n), viaCtx: make([]bool, s.n),
		panicG: make([]int, s.n)}
	if s.n > 0 || !s.nilIn {
		f.in = make([]int, s.n)
	}
	if s.same && f.in != nil {
		f.inText = make([]string, s.n)
	}
	for i, e := range s.elems {
		f.in[i] = 1000*caller + i
		if s.same {
			f.inText[i] = strconv.Itoa(f.in[i])
		}
		f.gates = append(f.gates, katatest.NewGate())
		var err error
		switch e.kind {
		case testPlainError:
			err = errors.New(e.text)
		case testStatusValue:
			err = &testStatusError{testCode(e.text)}
		case testWrappedValue:
			err = fmt.Errorf("pricing: %w", &testStatusError{testCode(e.text)})
		case testJoinedError:
			err = errors.Join(errors.New(e.text), errors.New("retry later"))
		case testNestedError:
			err = fmt.Errorf("fanout: in[%d]: %w", testInnerIndex, errors.New(e.text))
		case testNestedPanic:
			err = &PanicError{Index: testInnerIndex, Value: "price table corrupted: " + e.text, Stack: []byte("goroutine 9 [running]:\n")}
		case testNestedPanicWrapped:
			err = fmt.Errorf("price options: %w", &PanicError{Index: testInnerIndex, Value: "price table corrupted: " + e.text, Stack: []byte("goroutine 9 [running]:\n")})
		}
		f.errs = append(f.errs, err)
		var p any
		switch e.panic {
		case testPanicString:
			p = "price table corrupted"
		case testPanicError:
			p = errors.New("price table corrupted")
		case testPanicNested:
			p = &PanicError{Index: testInnerIndex, Value: "price table corrupted", Stack: []byte("goroutine 9 [running]:\n")}
		case testPanicNestedWrapped:
			p = fmt.Errorf("price options: %w",
				&PanicError{Index: testInnerIndex, Value: "price table corrupted", Stack: []byte("goroutine 9 [running]:\n")})
		}
		f.panics = append(f.panics, p)
	}
	h.Own(f.releaseAll)
	return f
}

func testCode(s string) int {
	var c int
	fmt.Sscan(s, &c)
	return c
}

// result is what the call for in[i] returns on success.
func (f *testFx) result(i int) string {
	return fmt.Sprintf("caller %d: in[%d]: %s", f.caller, i, f.s.elems[i].text)
}

func (f *testFx) fn(ctx context.Context, v int) (out string, err error) {
	i := v % 1000
	e := f.s.elems[i]
	f.mu.Lock()
	f.ctxs[i], f.state[i] = ctx, 1
	f.calls[i]++
	f.mu.Unlock()
	if f.s.cancelOn == i {
		f.cancel() // the caller gives up just as this call starts
	}
	panicked, via := true, false
	defer func() {
		f.mu.Lock()
		f.state[i], f.retStep[i], f.retErr[i], f.viaCtx[i] = 2, f.step, err, via
		if panicked {
			f.state[i] = 3
		}
		f.mu.Unlock()
	}()
	hold := ctx
	if !testHonours(e.react) {
		hold = context.Background()
	}
	if e.react == testAtOnce {
		shake.Point()
	} else if herr := f.gates[i].Hold(hold); herr != nil {
		panicked, via = false, true
		switch e.react {
		case testWrapsCtx:
			return "", fmt.Errorf("price lookup #%d: %w", v, herr)
		case testReturnsCtx:
			return "", herr
		case testOwnError:
			return "", errors.New("lookup aborted")
		default:
			return "partial", nil
		}
	}
	if e.react == testChecksLate && ctx.Err() != nil {
		panicked, via = false, true
		return "", fmt.Errorf("price lookup #%d: %w", v, ctx.Err())
	}
	if e.panic >= 0 {
		g := katatest.Goroutine()
		f.mu.Lock()
		f.panicG[i] = g
		f.mu.Unlock()
	}
	switch e.panic {
	case testPanicString, testPanicError, testPanicNested, testPanicNestedWrapped:
		panic(f.panics[i])
	case testPanicRuntime:
		var m map[int]int
		m[v] = 1
	}
	panicked = false
	if e.fails {
		return "", f.errs[i]
	}
	return f.result(i), nil
}

// snapshot is a caller's view of its calls.
type testFxView struct {
	state   []int
	calls   []int
	retStep []int
	retErr  []error
	viaCtx  []bool
	ctxs    []context.Context
}

func (f *testFx) view() testFxView {
	f.mu.Lock()
	defer f.mu.Unlock()
	return testFxView{slices.Clone(f.state), slices.Clone(f.calls), slices.Clone(f.retStep), slices.Clone(f.retErr),
		slices.Clone(f.viaCtx), slices.Clone(f.ctxs)}
}

// liveCtxs lists the calls whose ctx is not done yet.
func (f *testFx) liveCtxs() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var live []int
	for i, ctx := range f.ctxs {
		if ctx != nil && ctx.Err() == nil {
			live = append(live, i)
		}
	}
	return live
}

func (f *testFx) setStep(k int) {
	f.mu.Lock()
	f.step = k
	f.mu.Unlock()
}

func (f *testFx) releaseAll() {
	for _, g := range f.gates {
		g.Release()
	}
}

// testSeen is what a caller's goroutine saw the moment Map returned: read
// right there, with nothing in between that would order it after a late
// write of Map's goroutines, so the race detector sees such a write.
type testSeen struct {
	out      []string
	outNil   bool
	err      error
	msg      string
	panicked bool
	value    any // what Map panicked with
	raw      []string
	in       []string // the caller's input, read the moment Map returned (ints as text)
	live     []int    // the calls whose ctx was not done yet the moment Map returned
}

// read copies what Map returned and reads its error's text.
func (seen testSeen) read() testSeen {
	seen.out = slices.Clone(seen.raw)
	if seen.err != nil {
		seen.msg = seen.err.Error()
	}
	return seen
}

// input is the caller's input as text: with s.same the []string Map got,
// otherwise the []int.
func (f *testFx) input() []string {
	if f.s.same {
		return f.inText
	}
	if f.in == nil {
		return nil
	}
	text := make([]string, len(f.in))
	for i, v := range f.in {
		text[i] = strconv.Itoa(v)
	}
	return text
}

// testCallerKey is the key of a value the caller's ctx carries: the
// caller's number.
type testCallerKey struct{}

// testCaller is one goroutine calling Map.
type testCaller struct {
	f    *testFx
	c    *katatest.Call[testSeen]
	seen testSeen
	done bool // its return was checked
	hung bool // it was still waiting once every call of fn had returned
}

func (s *testFanScenario) start(h *katatest.H, f *testFx) *katatest.Call[testSeen] {
	var opts []katatest.CtxOption
	switch s.pre {
	case 1:
		opts = append(opts, katatest.Cancelled())
	case 2:
		opts = append(opts, katatest.Expired())
	}
	if s.deadline > 0 {
		opts = append(opts, katatest.Timeout(s.deadline))
		f.deadline = h.Clk.Now().Add(s.deadline)
	}
	mapFn := Map[int, string]
	sameFn := Map[string, string]
	if s.all {
		mapFn, sameFn = MapAll[int, string], MapAll[string, string]
	}
	call := func(ctx context.Context) ([]string, error) {
		if !s.same {
			return mapFn(ctx, f.in, f.fn)
		}
		return sameFn(ctx, f.inText, func(ctx context.Context, v string) (string, error) {
			n, _ := strconv.Atoi(v)
			return f.fn(ctx, n)
		})
	}
	return katatest.Start(h, func(ctx context.Context) (seen testSeen, _ error) {
		ctx, f.cancel = context.WithCancel(ctx)
		ctx = context.WithValue(ctx, testCallerKey{}, f.caller) // what a request carries: its id, a trace
		defer f.cancel()
		defer func() {
			if r := recover(); r != nil {
				if str, ok := r.(string); ok && strings.HasPrefix(str, "TODO") {
					panic(r) // the stub: reported as not implemented
				}
				seen = testSeen{panicked: true, value: r, in: f.input()}
			}
		}()
		out, err := call(ctx)
		seen = testSeen{raw: out, outNil: out == nil, err: err, in: f.input(), live: f.liveCtxs()}
		if !s.early {
			return seen, nil
		}
		return seen.read(), nil
	}, opts...)
}

// play runs the scenario and checks it with check after every step.
func (s testFanScenario) play(h *katatest.H) {
	callers := make([]*testCaller, s.callers)
	for k := range callers {
		f := testNewFx(h, &s, k)
		callers[k] = &testCaller{f: f, c: s.start(h, f)}
	}
	stop := func() { // the first Stop opens every caller's gates; a caller that never returns ends it there
		if slices.ContainsFunc(callers, func(c *testCaller) bool { return c.hung }) {
			// A call that waits with nothing left to wait for: Stop would
			// say it again, as a deadlock, in place of what the test said.
			// Cancel and release everything, and let the harness find
			// what stays blocked.
			for _, c := range callers {
				c.c.Cancel()
				c.f.releaseAll()
			}
			return
		}
		calls := make([]*katatest.Call[testSeen], len(callers))
		for k, c := range callers {
			calls[k] = c.c
		}
		katatest.Unwind(h, calls...)
	}
	synctest.Wait()
	for _, c := range callers {
		if c.c.Returned() && c.c.Panicked() {
			stop()
			return
		}
	}
	if s.pre != 0 || s.n == 0 {
		s.checkAtOnce(h, callers)
		stop()
		return
	}
	for _, c := range callers {
		if s.rush && !s.check(h, 0, c) || !s.rush && !s.checkInFlight(h, c) {
			stop()
			return
		}
	}
	for k := 1; k <= len(s.steps); k++ {
		for _, c := range callers {
			c.f.setStep(k)
		}
		// Every event of a step at once, no settle in between.
		if s.cancelAt == k && s.deadline > 0 {
			h.Clk.Add(s.deadline) // every caller's deadline passes at once
		}
		for _, c := range callers {
			if s.cancelAt == k && s.deadline == 0 {
				c.c.Cancel()
			}
			for _, i := range s.steps[k-1] {
				c.f.gates[i].Release()
			}
		}
		synctest.Wait()
		for _, c := range callers {
			if !s.check(h, k, c) {
				stop()
				return
			}
		}
	}
	for _, c := range callers {
		if !c.c.Returned() {
			c.hung = true
			s.report(h, "*", "every call of fn had returned, but %s was still waiting: does it wait for something else?", s.what())
			stop()
			return
		}
	}
	for _, c := range callers {
		if _, _, ok := c.c.Finish(s.what()); !ok {
			return
		}
	}
}

func (s testFanScenario) what() string {
	if s.all {
		return "MapAll"
	}
	return "Map"
}

// ctxReq is the item that grades what the caller's ctx does to a call:
// R5 for Map; for MapAll, the bonus B1 (its doc comment says the same).
func (s testFanScenario) ctxReq() string {
	if s.all {
		return "B1"
	}
	return "R5"
}

// checkAtOnce: an already-done ctx or an empty input returns at once
// without calling fn.
func (s testFanScenario) checkAtOnce(h *katatest.H, callers []*testCaller) {
	for _, c := range callers {
		if v := c.f.view(); slices.ContainsFunc(v.calls, func(n int) bool { return n > 0 }) {
			s.report(h, s.ctxReq(), "ctx was already done, yet %s called fn: nobody waits for the answer, so check ctx.Err() before "+
				"starting any work", s.what())
			return
		}
		if !c.c.Returned() {
			if s.n == 0 {
				s.report(h, s.ctxReq(), "%s over an empty input was still waiting: with nothing to do it must return at once", s.what())
			} else {
				s.report(h, s.ctxReq(), "ctx was already done, but %s was still waiting: check ctx.Err() first and return it at once", s.what())
			}
			return
		}
		seen, _ := c.c.Result()
		seen = seen.read()
		if seen.panicked {
			s.report(h, s.ctxReq(), "%s panicked with %v, with nothing to call", s.what(), seen.value)
			return
		}
		if s.n == 0 {
			if seen.err != nil || seen.outNil || len(seen.out) != 0 {
				s.report(h, s.ctxReq(), "%s over an empty input returned (%#v, %v); want a non-nil empty slice ([]string{}, which "+
					"encodes as [] in JSON, not null) and a nil error", s.what(), seen.out, seen.err)
			}
			return
		}
		want := context.Canceled
		if s.pre == 2 {
			want = context.DeadlineExceeded
		}
		if !errors.Is(seen.err, want) || !seen.outNil {
			s.report(h, s.ctxReq(), "ctx was already done (ctx.Err() is %v), and %s returned (%#v, %v); want nil and an error "+
				"matching ctx.Err()", want, s.what(), seen.out, seen.err)
			return
		}
	}
}

// checkInFlight: before any call is released, every call is in flight
// and Map has not returned (R1).
func (s testFanScenario) checkInFlight(h *katatest.H, c *testCaller) bool {
	v := c.f.view()
	started := 0
	for _, st := range v.state {
		if st != 0 {
			started++
		}
	}
	if c.c.Returned() {
		s.report(h, "*", "%s returned before any call of fn had returned (%d of %d calls had even started): it must wait for "+
			"every call it starts; call wg.Add(1) before the go statement, not inside the goroutine", s.what(), started, s.n)
		return false
	}
	if started != s.n {
		who := ""
		if s.callers > 1 {
			who = fmt.Sprintf(" (with %d goroutines calling %s at once, each with its own input)", s.callers, s.what())
		}
		s.report(h, "*", "precondition (R1): only %d of the %d calls of fn were in flight at once%s; want all of them: start "+
			"a goroutine for every element before waiting for any, with no limit and no state shared between calls "+
			"of %s", started, s.n, who, s.what())
		return false
	}
	return true
}

// check compares what happened up to step k with what the README says.
func (s testFanScenario) check(h *katatest.H, k int, c *testCaller) bool {
	if c.done {
		return true
	}
	v := c.f.view()
	if s.focus == s.ctxReq() && !s.checkLineage(h, c, v) {
		return false
	}
	const never = 1 << 30
	firstErr, panicAt := never, never
	for i, st := range v.state {
		if st == 2 && v.retErr[i] != nil {
			firstErr = min(firstErr, v.retStep[i])
		}
		if st == 3 {
			panicAt = min(panicAt, v.retStep[i])
		}
	}
	cancelled := never // the step at which every call's ctx must be done
	cause, causeReq, runReq := "", "R3", "R4"
	if panicAt < never {
		runReq = "B2"
	}
	if s.cancelAt > 0 {
		cancelled, cause = s.cancelAt, fmt.Sprintf("the caller cancelled ctx at step %d", s.cancelAt)
		if s.deadline > 0 {
			cause = fmt.Sprintf("the caller's deadline passed at step %d", s.cancelAt)
		}
	}
	if s.cancelOn >= 0 && v.calls[s.cancelOn] > 0 {
		cancelled, cause = 0, fmt.Sprintf("the caller cancelled ctx as the call for in[%d] started", s.cancelOn)
	}
	if !s.all && min(firstErr, panicAt) < cancelled {
		cancelled = min(firstErr, panicAt)
		cause = fmt.Sprintf("a call failed at step %d", cancelled)
		if panicAt < firstErr {
			cause, causeReq = fmt.Sprintf("a call panicked at step %d", cancelled), "B2"
		}
	}
	released := map[int]int{}
	for step, group := range s.steps[:k] {
		for _, i := range group {
			released[i] = step + 1
		}
	}
	var running []int
	for i, st := range v.state {
		e := s.elems[i]
		_, rel := released[i]
		if st == 1 {
			running = append(running, i)
		}
		if !rel && st != 1 && testHonours(e.react) && cancelled > k && !(s.all && panicAt <= k) {
			if s.all && !slices.ContainsFunc(v.state, func(st int) bool { return st == 3 }) {
				s.report(h, "B1", "MapAll cancelled the ctx of in[%d] although the caller did not cancel: MapAll lets every call "+
					"run to its end, so a failure cancels nothing (step %d)", i, k)
			} else {
				s.report(h, "R3", "the ctx of in[%d] was cancelled at step %d, but no call had failed and the caller had not "+
					"cancelled", i, k)
			}
			return false
		}
		if !rel && st == 1 && testHonours(e.react) && cancelled <= k {
			if s.all { // in MapAll only the caller's cancel or deadline cancels
				s.report(h, "B1", "MapAll: %s, but in[%d] was still waiting on its ctx after that: a failure cancels nothing "+
					"in MapAll, but the caller's cancel must still reach every call; give every call a ctx derived from the "+
					"caller's (context.WithCancel(ctx)), not context.WithoutCancel(ctx) or context.Background()", cause, i)
			} else if s.cancelAt > 0 && s.cancelAt <= k && s.cancelAt <= min(firstErr, panicAt) {
				s.report(h, "R5", "%s, but in[%d] was still waiting on its ctx after that: the cancel must reach every call; "+
					"give every call a ctx derived from the caller's (context.WithCancel(ctx)), not context.Background()",
					cause, i)
			} else {
				s.report(h, causeReq, "%s, but the ctx of in[%d] was not cancelled: the first failure must cancel the ctx of every "+
					"other call (give fn a ctx made with context.WithCancel(ctx) and cancel it on the first error)", cause, i)
			}
			return false
		}
	}
	returned := c.c.Returned()
	if returned && len(running) > 0 {
		s.report(h, runReq, "%s returned at step %d while the calls for %s were still running (they ignore their ctx, as a slow "+
			"query may): it must wait for every call it started, after an error or a cancel too; otherwise they run "+
			"on after it, unseen", s.what(), k, testElements(running))
		return false
	}
	if !returned {
		if len(running) == 0 {
			if s.rush {
				when := fmt.Sprintf("by step %d", k)
				if k == 0 {
					when = "before the test released any call"
				}
				c.hung = true
				if s.all {
					s.report(h, "*", "every call of fn that MapAll started had returned %s, but MapAll was still waiting, for "+
						"ever: %s while MapAll was still starting calls. MapAll calls fn for every element, whatever the "+
						"caller's ctx does once it has begun (the cancel reaches each call through its ctx), and returns once "+
						"every call has returned: count each call in the WaitGroup as it starts it (wg.Add(1) before each go "+
						"statement), and do not stop starting them", when, s.rushCause(v))
					return false
				}
				s.report(h, "*", "every call of fn that %s started had returned %s, but %s was still waiting, for "+
					"ever: %s while %s was still starting calls. %s must return once every call it started has "+
					"returned; if it stops starting calls once ctx is done, its WaitGroup must count only the calls "+
					"it started (wg.Add(1) before each go statement, not wg.Add(len(in)) up front)", s.what(), when,
					s.what(), s.rushCause(v), s.what(), s.what())
				return false
			}
			c.hung = true
			if s.big {
				return s.reportBigHang(h, k, v)
			}
			s.report(h, "*", "every call of fn had returned by step %d, but %s was still waiting: does it wait for something else?",
				k, s.what())
			return false
		}
		return true
	}
	c.done = true
	seen, _ := c.c.Result()
	seen = seen.read()
	if !s.checkInput(h, c, seen) {
		return false
	}
	if s.all && s.rush && !s.checkEveryCall(h, v) {
		return false
	}
	if !s.checkResult(h, c, v, seen, firstErr, panicAt) {
		return false
	}
	if !s.all && !seen.panicked && len(seen.live) > 0 {
		s.report(h, "R4", "Map returned, but the ctx it gave the calls for %s was not cancelled yet: Map must cancel it "+
			"before it returns, after a success too (defer cancel() right after context.WithCancel, as errgroup's Wait "+
			"does); otherwise whatever a call left watching that ctx (a goroutine, a context.AfterFunc) lives "+
			"on until the caller's ctx ends, which may be never", testElements(seen.live))
		return false
	}
	return true
}

// checkEveryCall (B1): MapAll, once it has begun with a live ctx, calls fn
// for every element, even when the caller cancels while it is still
// starting calls: the cancel reaches each call through its ctx, and fn
// decides what to do with it. (Map may stop starting calls once its ctx
// is done: it returns the first error anyway.)
func (s testFanScenario) checkEveryCall(h *katatest.H, v testFxView) bool {
	var never []int
	for i, n := range v.calls {
		if n == 0 {
			never = append(never, i)
		}
	}
	if len(never) == 0 {
		return true
	}
	return s.report(h, "B1", "MapAll never called fn for %s: %s while MapAll was still starting calls, and MapAll returned "+
		"without making those calls. A cancel ends no call of MapAll early, not even one that has not begun: every call "+
		"runs to its end, and the cancel reaches each one through its ctx (fn decides what to do with it). Call fn for "+
		"every element; look at ctx.Err() only once, before starting any work", testElements(never), s.rushCause(v))
}

// checkInput (R2): Map never modifies in, whatever happened.
func (s testFanScenario) checkInput(h *katatest.H, c *testCaller, seen testSeen) bool {
	for i := range s.n {
		want := strconv.Itoa(1000*c.f.caller + i)
		if i < len(seen.in) && seen.in[i] == want {
			continue
		}
		got := "gone"
		if i < len(seen.in) {
			got = strconv.Quote(seen.in[i])
		}
		ended := "returned"
		if seen.panicked {
			ended = "panicked"
		}
		types := ""
		if s.same {
			types = " (In and Out are one type, string)"
		}
		return s.report(h, "R2", "%s wrote into the caller's input: when it %s, in[%d] was %s instead of %q%s: Map never "+
			"modifies in, after a success, a failure or a panic alike; put the results in a new slice, "+
			"make([]Out, len(in)), even when In and Out are the same type, and never write to in or reuse its "+
			"backing array", s.what(), ended, i, got, want, types)
	}
	return true
}

// checkLineage (R5, and B1 for MapAll): every call gets a ctx derived from
// the caller's, so it carries the caller's values and deadline.
func (s testFanScenario) checkLineage(h *katatest.H, c *testCaller, v testFxView) bool {
	for i, ctx := range v.ctxs {
		if ctx == nil {
			continue // not called yet
		}
		if got := ctx.Value(testCallerKey{}); got != c.f.caller {
			return s.report(h, s.ctxReq(), "the ctx fn got for in[%d] does not carry the caller's values (ctx.Value(key) is %v, "+
				"want %v, which the caller's ctx holds): each call gets a ctx derived from the caller's "+
				"(context.WithCancel(ctx)), which keeps its values (a request id, a trace), not one built on "+
				"context.Background()", i, got, c.f.caller)
		}
		if c.f.deadline.IsZero() {
			continue
		}
		if dl, ok := ctx.Deadline(); !ok || !dl.Equal(c.f.deadline) {
			has := "no deadline"
			if ok {
				has = fmt.Sprintf("the deadline %v after the start", dl.Sub(c.f.deadline.Add(-s.deadline)))
			}
			return s.report(h, s.ctxReq(), "the caller's ctx has a deadline, %v after the start, but the ctx fn got for in[%d] "+
				"has %s: each call gets a ctx derived from the caller's (context.WithCancel(ctx)), which keeps its "+
				"deadline, so that fn sees how long it has, and when the deadline passes its ctx.Err() and %s's error are "+
				"context.DeadlineExceeded; a ctx of %s's own (context.WithoutCancel(ctx), context.Background()) that only "+
				"forwards the caller's cancel loses the deadline and ends with context.Canceled", s.deadline, i, has,
				s.what(), s.what())
		}
	}
	return true
}

// callerErr is what ctx.Err() of the caller's ctx is once it is done.
func (s testFanScenario) callerErr() error {
	if s.deadline > 0 || s.pre == 2 {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// rushCause says what stopped a rush scenario's batch early.
func (s testFanScenario) rushCause(v testFxView) string {
	var parts []string
	for i, e := range s.elems {
		if e.react == testAtOnce && e.fails && v.calls[i] > 0 && !s.all { // a failure stops nothing in MapAll
			parts = append(parts, fmt.Sprintf("in[%d] failed at once", i))
		}
	}
	if s.cancelOn >= 0 && v.calls[s.cancelOn] > 0 {
		parts = append(parts, fmt.Sprintf("the caller cancelled ctx as the call for in[%d] started", s.cancelOn))
	}
	return strings.Join(parts, ", and ")
}

// checkResult checks what Map returned against the calls' outcomes.
func (s testFanScenario) checkResult(h *katatest.H, c *testCaller, v testFxView, seen testSeen, firstErr, panicAt int) bool {
	if seen.panicked && panicAt == 1<<30 {
		for i, e := range s.elems {
			if e.fails && testWrapsPanicError(e.kind) && v.state[i] == 2 && v.retErr[i] == c.f.errs[i] {
				return s.report(h, "R3 B1", "%s raised a panic (%v) instead of returning the error of in[%d]: no call of fn "+
					"panicked, and in[%d] returned %q, a *PanicError of a Map nested in fn that fn recovered and returned as an "+
					"error; an error fn returns is an error whatever it wraps, so return it wrapped with its index. Tell the "+
					"panics %s recovered itself apart where it recovers them (a type assertion on the error it made, or a slot "+
					"of their own), not with errors.As, which also finds a *PanicError inside an error fn returned",
					s.what(), seen.value, i, i, v.retErr[i], s.what())
			}
		}
	}
	if panicAt < 1<<30 || seen.panicked {
		return s.checkPanic(h, c, v, seen)
	}
	var failed []int
	for i, err := range v.retErr {
		if err != nil {
			failed = append(failed, i)
		}
	}
	cancelFirst := s.cancelAt > 0 && s.cancelAt <= firstErr || s.cancelOn >= 0 && v.calls[s.cancelOn] > 0
	if s.deadline > 0 && cancelFirst && errors.Is(seen.err, context.Canceled) && !errors.Is(seen.err, context.DeadlineExceeded) {
		return s.report(h, s.ctxReq(), "the caller's deadline passed at step %d, before any call failed, so the caller's "+
			"ctx.Err() is context.DeadlineExceeded, but %s returned %q, which matches context.Canceled: nobody cancelled. "+
			"Give every call a ctx derived from the caller's (context.WithCancel(ctx)): a call that honours it then ends "+
			"with the caller's context.DeadlineExceeded, and %s's error matches ctx.Err(); a ctx of %s's own that only "+
			"forwards the caller's cancel (context.WithoutCancel with context.AfterFunc) turns the deadline into "+
			"context.Canceled", s.cancelAt, s.what(), seen.msg, s.what(), s.what())
	}
	if len(failed) == 0 {
		if cancelFirst && errors.Is(seen.err, s.callerErr()) && seen.outNil {
			return true // no call reported the cancel: ctx.Err() is an answer too
		}
		if seen.err != nil {
			s.report(h, "R3", "every call of fn succeeded, but %s returned the error %q", s.what(), seen.msg)
			return false
		}
		want := make([]string, s.n)
		for i := range want {
			want[i] = c.f.result(i)
			if v.viaCtx[i] {
				want[i] = "partial" // it returned early, on the cancel
			}
		}
		if got, all := slices.Sorted(slices.Values(seen.out)), slices.Sorted(slices.Values(want)); !slices.Equal(got, all) {
			return s.report(h, "R6", "%d calls returned their results, several at the same instant, and %s returned %q: "+
				"every result must arrive in the output, none lost, doubled or torn (want %q)", s.n, s.what(), seen.out, want)
		}
		if !slices.Equal(seen.out, want) {
			s.report(h, "R2", "%s returned %q; want %q: out[i] must be the result for in[i], whatever order the calls finish in, "+
				"and len(out) == len(in): make out with len(in) up front and let the goroutine for element i write "+
				"out[i], instead of appending results as they arrive", s.what(), seen.out, want)
			return false
		}
		return true
	}
	if seen.err == nil {
		return s.reportLost(h, v, seen, failed, cancelFirst)
	}
	if !seen.outNil {
		s.report(h, "R3", "%s returned the error %q together with results %q: on an error the results are nil", s.what(), seen.msg, seen.out)
		return false
	}
	if s.all {
		return s.checkJoined(h, v, seen, failed)
	}
	// The first error in time: those returned at the first step with an
	// error; the cancelled calls' errors count only when the caller's
	// cancel came first.
	var cands, others []int
	for _, i := range failed {
		if v.retStep[i] == firstErr && (!v.viaCtx[i] || cancelFirst) {
			cands = append(cands, i)
		} else {
			others = append(others, i)
		}
	}
	if cancelFirst && errors.Is(seen.err, s.callerErr()) {
		// The caller's cancel came first: ctx.Err(), or a call's error
		// that matches it. No failure that came later may ride along.
		for _, i := range others {
			if s.elems[i].fails && !v.viaCtx[i] && errors.Is(seen.err, v.retErr[i]) {
				s.report(h, "R5", "the caller's ctx ended first (%v), and Map returned %q, which also carries the error of in[%d] (%q), "+
					"a call that failed after the cancel: Map returns the first error only", s.callerErr(), seen.msg, i, v.retErr[i])
				return false
			}
		}
		return true
	}
	matched := -1
	for _, i := range cands {
		if errors.Is(seen.err, v.retErr[i]) {
			matched = i
			break
		}
	}
	if matched < 0 {
		firstReq := "R3"
		if cancelFirst {
			firstReq = "R5"
		}
		why := "record the first error when it happens (sync.Once, or a check-and-set under one lock), not by " +
			"scanning the errors afterwards, and drop the errors of the calls it cancelled, whatever they say"
		if cancelFirst {
			why = fmt.Sprintf("the caller's ctx ended first, so Map's error must match ctx.Err() (%v)", s.callerErr())
		}
		// When several errors match (context.Canceled itself, returned by
		// more than one call), name the element the message names.
		named := func(i int) bool { return strings.Contains(seen.msg, fmt.Sprintf("in[%d]", i)) }
		slices.SortStableFunc(others, func(a, b int) int {
			switch {
			case named(a) == named(b):
				return 0
			case named(a):
				return -1
			}
			return 1
		})
		for _, i := range others {
			if errors.Is(seen.err, v.retErr[i]) && v.viaCtx[i] && !cancelFirst {
				return s.report(h, "R3", "Map returned %q, the error of in[%d], a call that failed only because the "+
					"first error cancelled its ctx; the first error in time is %s (%q, from %s), and it must win: "+
					"record the first error before cancelling the others (once.Do(record), then cancel()), since "+
					"cancel() wakes them at once and their errors can be recorded before the one that caused it",
					seen.msg, i, testErrorsOf(cands), v.retErr[cands[0]], testElements(cands))
			}
			if errors.Is(seen.err, v.retErr[i]) {
				return s.report(h, firstReq, "Map returned %q, the error of in[%d], which is not the first error: the "+
					"first in time is %s (%q, from %s); %s", seen.msg, i, testErrorsOf(cands), v.retErr[cands[0]],
					testElements(cands), why)
			}
		}
		if msg := katatest.LostWrap(seen.err, v.retErr[cands[0]], `fmt.Errorf("fanout: in[%d]: %w", i, err)`); msg != "" {
			return s.report(h, testWrapReqs, "Map returned %q: %s", seen.msg, msg)
		}
		return s.report(h, firstReq, "Map returned %q (chain %s), which is not the first error: the first in time is %s "+
			"(%q, from %s); %s", seen.msg, katatest.Chain(seen.err), testErrorsOf(cands), v.retErr[cands[0]],
			testElements(cands), why)
	}
	for _, i := range others {
		if matched >= 0 && v.retErr[i] == v.retErr[matched] {
			continue // context.Canceled itself, returned by more than one call
		}
		if errors.Is(seen.err, v.retErr[i]) {
			s.report(h, "R3", "Map returned %q, which also carries the error of in[%d] (%q), a call that failed after the "+
				"first error or because of the cancel: Map returns the first error only and drops the others",
				seen.msg, i, v.retErr[i])
			return false
		}
	}
	if !strings.Contains(seen.msg, fmt.Sprintf("in[%d]", matched)) {
		if testFromNested(s.elems[matched].kind) {
			return s.report(h, "R3", "in[%d] failed first with %q, the error of a Map nested in fn, which names "+
				"in[%d] of the inner input, and Map returned %q, which does not name in[%d]: wrap every error with "+
				"its own index, fmt.Errorf(\"fanout: in[%%d]: %%w\", i, err), whatever its text already says "+
				"(\"fanout: in[%d]: fanout: in[%d]: …\" is right: it tells which element failed at each level)",
				matched, v.retErr[matched], testInnerIndex, seen.msg, matched, matched, testInnerIndex)
		}
		s.report(h, "R3", "in[%d] failed first with %q, and Map returned %q: the error must name the element, as in "+
			"fmt.Errorf(\"fanout: in[%%d]: %%w\", i, err)", matched, v.retErr[matched], seen.msg)
		return false
	}
	var want *testStatusError
	if errors.As(v.retErr[matched], &want) {
		var got *testStatusError
		if !errors.As(seen.err, &got) || got != want {
			s.report(h, "R3", "in[%d] failed first with %q, which holds a *statusError, and errors.As on Map's error %q did "+
				"not find that one: wrap with %%w", matched, v.retErr[matched], seen.msg)
			return false
		}
	}
	return true
}

// reportLost: calls failed, and Map (or MapAll) returned no error. That
// is R3's to report, or R5's when the caller's cancel came first, or
// B1's for MapAll. When a failure was among the last calls to return, the
// likely mistake is a failure recorded after the call counted itself done.
func (s testFanScenario) reportLost(h *katatest.H, v testFxView, seen testSeen, failed []int, cancelFirst bool) bool {
	req := "R3"
	switch {
	case s.all:
		req = "B1"
	case cancelFirst:
		req = "R5"
	}
	lastStep, returned := 0, 0
	for i, st := range v.state {
		if st >= 2 {
			lastStep, returned = max(lastStep, v.retStep[i]), returned+1
		}
	}
	var last []int // the failures among the last calls to return
	for _, i := range failed {
		if v.retStep[i] == lastStep {
			last = append(last, i)
		}
	}
	if len(last) == 0 {
		return s.report(h, req, "%s returned no error (results %q), but fn failed for %s: on any failure %s returns an error "+
			"and nil results", s.what(), seen.out, testElements(failed), s.what())
	}
	lastCalls := "the last call to return"
	if len(last) > 1 {
		lastCalls = "the last calls to return"
	}
	var how string
	switch {
	case cancelFirst && s.deadline > 0:
		how = "at the instant the caller's deadline passed, " + lastCalls
	case cancelFirst:
		how = "at the instant the caller cancelled ctx, " + lastCalls
	case returned == 1:
		how = "the only call"
	case len(last) == 1:
		how = "the last call to return, after every other call had returned"
	default:
		how = "at the same instant, the last calls to return"
	}
	what := fmt.Sprintf("fn failed for %s", testElements(last))
	if len(last) < len(failed) {
		what = fmt.Sprintf("fn failed for %s (and before them for %s)", testElements(last),
			testElements(slices.DeleteFunc(slices.Clone(failed), func(i int) bool { return slices.Contains(last, i) })))
	}
	return s.report(h, req, "%s returned no error (results %q), but %s, %s: a failure among the last calls to return "+
		"was lost. Record each failure before the call counts itself done (before wg.Done(), or before the send %s "+
		"counts), not in a goroutine of its own that %s does not wait for, nor in a deferred function that runs after "+
		"wg.Done() (deferred calls run last-in first-out)", s.what(), seen.out, what, how, s.what(), s.what())
}

// stepOf is the step at which in[i] is released.
func (s testFanScenario) stepOf(i int) int {
	for k, group := range s.steps {
		if slices.Contains(group, i) {
			return k + 1
		}
	}
	return 0
}

func testErrorsOf(idx []int) string {
	if len(idx) == 1 {
		return "the error of " + testElements(idx)
	}
	return "one of the errors of " + testElements(idx) + ", which returned at the same instant"
}

// checkJoined: MapAll's error joins every failure, with its index, in
// input order.
func (s testFanScenario) checkJoined(h *katatest.H, v testFxView, seen testSeen, failed []int) bool {
	prev := 0
	anyMatched := slices.ContainsFunc(failed, func(i int) bool { return errors.Is(seen.err, v.retErr[i]) })
	for _, i := range failed {
		if !errors.Is(seen.err, v.retErr[i]) {
			if msg := katatest.LostWrap(seen.err, v.retErr[i], `fmt.Errorf("fanout: in[%d]: %w", i, err)`); msg != "" && !anyMatched {
				s.report(h, testWrapReqs, "MapAll returned %q: %s", seen.msg, msg)
			} else if when := s.sinceCancel(v, i); when != "" {
				s.report(h, "B1", "in[%d] failed with %q %s, but MapAll's error %q does not match it: a cancel cuts no wait "+
					"short in MapAll; it waits for every call and joins every failure (errors.Join), those that come with "+
					"the cancel or after it too (a call that ignores its ctx may fail later), each wrapped with %%w: do not "+
					"stop collecting at ctx.Done()", i, v.retErr[i], when, seen.msg)
			} else {
				s.report(h, "B1", "in[%d] failed with %q, but MapAll's error %q does not match it: the error joins every failure "+
					"(errors.Join), each wrapped with %%w", i, v.retErr[i], seen.msg)
			}
			return false
		}
		tag := fmt.Sprintf("in[%d]", i)
		at := strings.Index(seen.msg[prev:], tag)
		if at < 0 && testFromNested(s.elems[i].kind) {
			s.report(h, "B1", "MapAll returned %q, which does not name in[%d]: in[%d] failed with %q, the error of a Map "+
				"nested in fn, which names in[%d] of the inner input; wrap every failure with its own index, "+
				"fmt.Errorf(\"fanout: in[%%d]: %%w\", i, err), whatever its text already says", seen.msg, i, i,
				v.retErr[i], testInnerIndex)
			return false
		}
		if when := s.sinceCancel(v, i); at < 0 && when != "" {
			s.report(h, "B1", "MapAll returned %q, which does not name %s: in[%d] failed with %q %s, and MapAll's error "+
				"joins every failure, those that come with the cancel or after it too, each wrapped with its index: do not "+
				"answer a cancel with ctx.Err() alone, nor stop collecting at ctx.Done()", seen.msg, tag, i, v.retErr[i], when)
			return false
		}
		if at < 0 {
			s.report(h, "B1", "MapAll returned %q, which does not name %s in input order: each joined error must name its "+
				"element, and the failures come in input order (%s), not in the order they happened nor sorted by "+
				"their text (as text, in[10] comes before in[2]): keep each error in errs[i] and join them once "+
				"every call has returned", seen.msg, tag, testElements(failed))
			return false
		}
		prev += at + len(tag)
	}
	joined, ok := seen.err.(interface{ Unwrap() []error })
	if !ok {
		s.report(h, "B1", "MapAll returned %q, one error (%T) wrapped around the failures, not errors.Join of them: "+
			"the error's Unwrap() []error must list every failure, each wrapped with its index, in input order; a "+
			"summary around them (fmt.Errorf(\"…: %%w\", errors.Join(errs...))) hides that list from code that walks "+
			"it", seen.msg, seen.err)
		return false
	}
	members := joined.Unwrap()
	for k, i := range failed {
		if len(members) != len(failed) || !errors.Is(members[k], v.retErr[i]) ||
			!strings.Contains(members[k].Error(), fmt.Sprintf("in[%d]", i)) {
			s.report(h, "B1", "MapAll's error joins %d errors, %q; want errors.Join of exactly the failures of %s, in input "+
				"order, each wrapped with its index, and nothing else", len(members), members, testElements(failed))
			return false
		}
	}
	return true
}

// sinceCancel says when in[i] returned relative to the caller's cancel (or
// deadline) at a step of its own: "" if before it, or if there was none.
func (s testFanScenario) sinceCancel(v testFxView, i int) string {
	what := "cancel"
	if s.deadline > 0 {
		what = "deadline"
	}
	switch {
	case s.cancelAt == 0 || v.retStep[i] < s.cancelAt:
		return ""
	case v.retStep[i] == s.cancelAt:
		return fmt.Sprintf("at the same instant as the caller's %s (step %d)", what, s.cancelAt)
	}
	return fmt.Sprintf("after the caller's %s (at step %d, the %s at step %d)", what, v.retStep[i], what, s.cancelAt)
}

// checkPanic (B2): Map panics on the caller's goroutine with a
// *PanicError naming a call that panicked, with its value and stack.
func (s testFanScenario) checkPanic(h *katatest.H, c *testCaller, v testFxView, seen testSeen) bool {
	var idx []int
	for i, st := range v.state {
		if st == 3 {
			idx = append(idx, i)
		}
	}
	if !seen.panicked {
		s.report(h, "B2", "fn panicked for %s, but %s returned (error: %v) instead of panicking on the caller's goroutine: "+
			"a panic is a bug, not an error to handle; raise it again as a *PanicError", testElements(idx), s.what(), seen.err)
		return false
	}
	pe, ok := seen.value.(*PanicError)
	if !ok {
		s.report(h, "B2", "fn panicked for %s: %s must panic with a *PanicError, not with %T (%v)", testElements(idx), s.what(), seen.value, seen.value)
		return false
	}
	for _, i := range idx {
		var inner *PanicError
		if nested, isErr := c.f.panics[i].(error); testNestedPanicValue(s.elems[i].panic) && isErr &&
			errors.As(nested, &inner) && (pe == inner || pe.Index == inner.Index && !slices.Contains(idx, pe.Index)) {
			return s.report(h, "B2", "fn for in[%d] panicked with %T (%v), the *PanicError of a Map nested in fn (it names in[%d] "+
				"of the inner input), and %s raised that inner *PanicError (Index %d) instead of a *PanicError of its own: "+
				"wrap whatever recover() gives, a *PanicError too, as &PanicError{Index: %d, Value: r, Stack: debug.Stack()}, "+
				"so that Index names this level's element and Value is the nested panic as it is",
				i, c.f.panics[i], c.f.panics[i], testInnerIndex, s.what(), pe.Index, i)
		}
	}
	if !slices.Contains(idx, pe.Index) {
		s.report(h, "B2", "fn panicked for %s, but PanicError.Index is %d: it must name an element whose call panicked",
			testElements(idx), pe.Index)
		return false
	}
	if lowest := idx[0]; pe.Index != lowest {
		when, how := "", "Keep each recovered panic in the slot of its element (or the lowest so far, under the lock), "+
			"not the first to arrive (a sync.Once), and raise the lowest once every call has returned"
		switch {
		case v.retStep[pe.Index] < v.retStep[lowest]:
			when = fmt.Sprintf(" (in[%d] panicked first, at step %d; in[%d] at step %d)", pe.Index, v.retStep[pe.Index],
				lowest, v.retStep[lowest])
		case v.retStep[pe.Index] == v.retStep[lowest]:
			when = fmt.Sprintf(" (at the same instant, step %d)", v.retStep[lowest])
			how = "Keep each recovered panic in the slot of its element, or compare it with the lowest so far and store it " +
				"in one critical section: a check under one lock and the store under the next let two panics of the same " +
				"instant both pass the check, and the higher index overwrite the lower. Raise the lowest once every call " +
				"has returned"
		}
		return s.report(h, "B2", "fn panicked for %s%s, and %s raised the panic of in[%d]: when several calls panic, it raises "+
			"the one with the lowest index, in[%d], whatever order they panicked in, so the crash report does not depend "+
			"on scheduling. %s", testElements(idx), when, s.what(), pe.Index, lowest, how)
	}
	e := s.elems[pe.Index]
	switch e.panic {
	case testPanicRuntime:
		re, isRuntime := pe.Value.(runtime.Error)
		if !isRuntime || !strings.Contains(re.Error(), "nil map") {
			s.report(h, "B2", "fn for in[%d] panicked with a runtime error (assignment to entry in nil map), but "+
				"PanicError.Value is %T (%v): keep the value recover() gave, as it is", pe.Index, pe.Value, pe.Value)
			return false
		}
	default:
		if pe.Value != c.f.panics[pe.Index] {
			s.report(h, "B2", "fn for in[%d] panicked with %T (%v), but PanicError.Value is %T (%v): keep the value recover() "+
				"gave, as it is, not its text", pe.Index, c.f.panics[pe.Index], c.f.panics[pe.Index], pe.Value, pe.Value)
			return false
		}
	}
	if !strings.Contains(string(pe.Stack), "(*testFx).fn") {
		s.report(h, "B2", "PanicError.Stack must be the stack of the goroutine that panicked (debug.Stack() inside the "+
			"recover), which shows the line of fn that failed; it does not show fn")
		return false
	}
	c.f.mu.Lock()
	g := c.f.panicG[pe.Index]
	c.f.mu.Unlock()
	if head := fmt.Sprintf("goroutine %d [", g); g > 0 && !strings.HasPrefix(string(pe.Stack), head) {
		first, _, _ := strings.Cut(string(pe.Stack), "\n")
		s.report(h, "B2", "fn for in[%d] panicked on goroutine %d, but its PanicError.Stack begins %q: the stack of "+
			"another goroutine. Each recover must keep a stack of its own (debug.Stack() returns a new slice); a "+
			"buffer shared by the calls is overwritten by the next panic", pe.Index, g, first)
		return false
	}
	return true
}

func TestR1_ExploreEveryCallIsInFlightAtOnce(t *testing.T) {
	d := testFanDraw{focus: "R1", minN: 1, maxN: 24, maxCall: 3, reacts: []int{testWrapsCtx, testIgnores}, together: true}
	katatest.Explore(t, 4, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR2_ExploreOutputFollowsInputOrder(t *testing.T) {
	d := testFanDraw{focus: "R2", minN: 1, maxN: 7, maxCall: 2, reacts: []int{testWrapsCtx, testIgnores}}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR2_ExploreMapNeverModifiesItsInput(t *testing.T) {
	// Every run: In and Out are one type, where the input's backing array
	// could hold the results. The calls return in reverse order; for
	// MapAll the first to return fails, and the input must not hold a mix.
	for _, all := range []bool{false, true} {
		s := testFanScenario{all: all, same: true, focus: "R2", n: 3, callers: 1, cancelOn: -1,
			elems: []testFanElem{{text: "9.99", panic: -1}, {text: "12.50", panic: -1}, {text: "0.00", panic: -1}},
			steps: [][]int{{2}, {1}, {0}}}
		if all {
			s.elems[2].fails, s.elems[2].text = true, "503"
		}
		if t.Failed() {
			return
		}
		katatest.Run(t, func(h *katatest.H) {
			s.play(h)
			if h.Failed() {
				h.Logf("the scenario: %s", s)
			}
		})
	}
	// Map or MapAll, with a cancel or without, callers at once: the
	// caller's input is as it was. The calls return one at a time, when
	// released, even after a cancel (calls returning together are R6's
	// business, failures R3's, panics B2's).
	d := testFanDraw{focus: "R2", either: true, same: true, minN: 1, maxN: 5, maxCall: 2, cancel: true,
		reacts: []int{testIgnores}}
	katatest.Explore(t, 4, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR3_ExploreTheFirstErrorInTimeCancelsTheRest(t *testing.T) {
	d := testFanDraw{focus: "R3", minN: 1, maxN: 5, maxCall: 2, fail: true, mustCause: true, words: true,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial, testIgnores, testChecksLate}}
	katatest.Explore(t, 10, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR3_ExploreACancelledCallNeverBeatsTheFirstError(t *testing.T) {
	// One call fails while every other waits on its ctx: the cancel wakes
	// them all at once, and their errors race the first one to be recorded.
	d := testFanDraw{focus: "R3", minN: 2, maxN: 8, maxCall: 2, alone: true,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError}}
	katatest.Explore(t, 12, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR3_ExploreAnErrorThatAlreadyNamesAnElementIsWrappedAgain(t *testing.T) {
	// fn runs a Map of its own, whose error already reads "fanout: in[12]:
	// …": the outer Map still names the outer element that failed.
	d := testFanDraw{focus: "R3", minN: 1, maxN: 5, maxCall: 2, alone: true, nested: true,
		reacts: []int{testWrapsCtx, testReturnsCtx, testIgnores}}
	katatest.Explore(t, 4, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// fn recovered the nested Map's panic and returned it as an error, a
	// *PanicError (as it is or wrapped): an error like any other.
	d.recovered = true
	katatest.Explore(t, 3, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR4_ExploreWaitsForEveryCall(t *testing.T) {
	d := testFanDraw{focus: "R4", minN: 1, maxN: 5, maxCall: 2, fail: true, cancel: true,
		reacts: []int{testIgnores, testChecksLate}}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR4_ExploreAFailureOrCancelWhileMapIsStillStartingCalls(t *testing.T) {
	// A call fails at once, or the caller cancels as a call starts, near
	// the start of the input: Map may still be starting the others.
	d := testFanDraw{focus: "R4", rush: true, minN: 3, maxN: 12, maxCall: 2,
		reacts: []int{testWrapsCtx, testReturnsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 8, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR3_ExploreAFailureWhileMapIsStillStartingCalls(t *testing.T) {
	// A long input whose first calls may fail at once: the first failure
	// comes while Map is still starting the rest, and must cancel the
	// calls started after it too (their ctx is done as they start).
	// The window is the rest of the start loop; one scenario opens it
	// about three times in four.
	d := testFanDraw{focus: "R3", rush: true, minN: 12, maxN: 40, maxCall: 1,
		reacts: []int{testWrapsCtx, testReturnsCtx}}
	katatest.Explore(t, 16, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR5_ExploreCancelReachesEveryCall(t *testing.T) {
	// A ctx already done (cancelled, or past its deadline), or an empty input.
	d := testFanDraw{focus: "R5", minN: 1, maxN: 6, maxCall: 2, pre: true, onlyPre: true, reacts: []int{testWrapsCtx}}
	katatest.Explore(t, 10, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// A cancel while the calls run, before a failure, after it or with it.
	d = testFanDraw{focus: "R5", minN: 1, maxN: 5, maxCall: 2, fail: true, cancel: true,
		reacts: []int{testWrapsCtx, testReturnsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 8, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// The caller cancels first, and a call that ignores ctx fails later:
	// Map's error still matches ctx.Err().
	d = testFanDraw{focus: "R5", minN: 1, maxN: 4, maxCall: 2, fail: true, lateFail: true,
		reacts: []int{testWrapsCtx, testReturnsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 4, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR5_ExploreTheCallersDeadlineReachesEveryCall(t *testing.T) {
	// The caller's ctx has a deadline (and a value): every call sees both,
	// and when the deadline passes (before a failure, after it, or at the
	// same instant as some calls return), Map's error matches ctx.Err(),
	// context.DeadlineExceeded, not context.Canceled.
	d := testFanDraw{focus: "R5", minN: 1, maxN: 5, maxCall: 2, fail: true, together: true, cancel: true, mustCancel: true,
		deadline: true, reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testIgnores, testChecksLate}}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestR6_ExploreCallsThatReturnTogether(t *testing.T) {
	// Every call succeeds: Map returns the results, which its caller reads
	// the moment Map returns.
	d := testFanDraw{focus: "R6", early: true, minN: 2, maxN: 6, maxCall: 3, together: true,
		reacts: []int{testWrapsCtx, testIgnores}}
	katatest.Explore(t, 5, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// Failures, cancels and every reaction to them, at the same instant.
	d = testFanDraw{focus: "R6", early: true, minN: 2, maxN: 6, maxCall: 2, fail: true, together: true, cancel: true,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial, testIgnores, testChecksLate}}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestB1_ExploreMapAllJoinsEveryFailure(t *testing.T) {
	d := testFanDraw{focus: "B1", all: true, minN: 2, maxN: 5, maxCall: 2, fail: true, failOdds: 2, twins: true,
		nested: true, reacts: []int{testWrapsCtx, testIgnores}}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// Ten elements or more: in[10] is listed after in[2], whatever the order
	// of their text.
	big := d
	big.minN, big.maxN = 10, 13
	katatest.Explore(t, 2, big.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// One failure is a nested Map's panic that fn recovered and returned,
	// a *PanicError (as it is or wrapped): joined like any other failure.
	d.minN, d.recovered = 3, true
	katatest.Explore(t, 3, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestB2_ExplorePanicsAreRaisedOnTheCaller(t *testing.T) {
	d := testFanDraw{focus: "B2", minN: 1, maxN: 5, maxCall: 2, fail: true, panics: true, mustCause: true,
		reacts: []int{testWrapsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestB2_ExploreMapAllRaisesPanicsToo(t *testing.T) {
	// MapAll joins failures, but a panic is not a failure: it is raised
	// again once every call has returned, whatever the value.
	d := testFanDraw{focus: "B2", all: true, minN: 1, maxN: 5, maxCall: 2, fail: true, panics: true, mustPanic: true,
		reacts: []int{testWrapsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 5, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestB1_ExploreTheCallersCtxStillRulesMapAll(t *testing.T) {
	// A failure cancels nothing in MapAll, but the caller's ctx still does:
	// a ctx already done (or an empty input) calls nothing, every run for a
	// ctx cancelled and one past its deadline,
	done := func(pre int) testFanScenario {
		return testFanScenario{all: true, focus: "B1", n: 3, pre: pre, callers: 2, cancelOn: -1,
			elems: []testFanElem{{text: "9.99", panic: -1}, {text: "", panic: -1}, {text: "12.50", panic: -1}}}
	}
	katatest.Replay(t, []testFanScenario{done(1), done(2)}, func(h *katatest.H, s testFanScenario) { s.play(h) })
	d := testFanDraw{focus: "B1", all: true, minN: 1, maxN: 5, maxCall: 2, pre: true, onlyPre: true, reacts: []int{testWrapsCtx}}
	katatest.Explore(t, 4, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// and a cancel while the calls run reaches every one of them, before a
	// failure, after it or with it.
	d = testFanDraw{focus: "B1", all: true, minN: 1, maxN: 5, maxCall: 2, fail: true, together: true, cancel: true,
		mustCancel: true, reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial, testIgnores, testChecksLate}}
	katatest.Explore(t, 5, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// and so does its deadline: every call sees it, and once it passes,
	// the calls that honour their ctx fail with context.DeadlineExceeded.
	d.deadline, d.reacts = true, []int{testWrapsCtx, testReturnsCtx, testPartial, testIgnores, testChecksLate}
	katatest.Explore(t, 4, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestB2_ExploreSeveralPanicsRaiseTheLowestIndex(t *testing.T) {
	// Two or three calls panic, out of index order, among calls that fail
	// or succeed: Map (or MapAll) raises the lowest index's panic.
	d := testFanDraw{focus: "B2", either: true, minN: 2, maxN: 5, maxCall: 2, fail: true, manyPanics: true,
		reacts: []int{testWrapsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 5, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

func TestB2_ExploreANestedMapsPanicIsWrappedAgain(t *testing.T) {
	// fn runs a Map of its own and does not recover its panic: fn panics
	// with a *PanicError naming the inner element (as it is, or inside an
	// error), a value like any other, wrapped with the outer index.
	d := testFanDraw{focus: "B2", either: true, minN: 1, maxN: 4, maxCall: 2, fail: true, nestedPanic: true,
		reacts: []int{testWrapsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 6, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
	// And always the inner *PanicError as it is, from the only call that
	// panics, for Map and MapAll.
	nested := func(all bool) testFanScenario {
		return testFanScenario{all: all, focus: "B2", n: 2, callers: 1, cancelOn: -1, steps: [][]int{{0}, {1}},
			elems: []testFanElem{{text: "9.99", panic: -1}, {panic: testPanicNested, react: testIgnores}}}
	}
	katatest.Replay(t, []testFanScenario{nested(false), nested(true)}, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

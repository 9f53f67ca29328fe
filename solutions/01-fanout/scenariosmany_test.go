package fanout

// Many at once: a batch of hundreds of elements whose first failure comes
// while nearly every call is still in flight, and several calls that
// panic at the same instant, each scenario with the schedule shaken.

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// drawBig draws a batch of hundreds of elements: one call fails first, at
// step 1, alone or with a few others released at the same instant, while
// all the others are still in flight; they honour the cancel or ignore it
// (and return later, one group at a time, some of them failing after the
// cancel, with errors Map must drop).
func (d testFanDraw) drawBig(r *rapid.T, s testFanScenario) testFanScenario {
	s.big = true
	s.callers = rapid.IntRange(max(d.minCall, 1), d.maxCall).Draw(r, "callers")
	s.n = rapid.IntRange(d.minN, d.maxN).Draw(r, "n")
	odds := max(d.failOdds, 2)
	for i := range s.n {
		e := testFanElem{panic: -1, react: rapid.SampledFrom(d.reacts).Draw(r, fmt.Sprintf("in[%d] reaction", i))}
		if d.fail && e.react == testIgnores && rapid.IntRange(0, odds-1).Draw(r, fmt.Sprintf("in[%d] fails", i)) == 0 {
			e.fails = true
			e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, fmt.Sprintf("in[%d] error kind", i))
			e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, fmt.Sprintf("in[%d] status", i))
		} else {
			e.text = rapid.SampledFrom(testValues).Draw(r, fmt.Sprintf("in[%d] value", i))
		}
		s.elems = append(s.elems, e)
	}
	first := rapid.IntRange(0, s.n-1).Draw(r, "the call that fails first")
	e := &s.elems[first]
	e.fails = true
	e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, "its error kind")
	e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, "its status")
	if e.kind == testPlainError || e.kind == testJoinedError {
		e.text = rapid.SampledFrom(testFailTexts).Draw(r, "its error text")
	}
	e.react = rapid.SampledFrom([]int{testWrapsCtx, testIgnores}).Draw(r, "its reaction")
	rest := rapid.Permutation(slices.DeleteFunc(seq(s.n), func(i int) bool { return i == first })).Draw(r, "release order")
	with := rapid.IntRange(0, s.n/4).Draw(r, "calls released with it, at the same instant")
	s.steps = append(s.steps, append([]int{first}, rest[:with]...))
	rest = rest[with:]
	for groups := rapid.IntRange(1, 4).Draw(r, "steps after the first"); groups > 1 && len(rest) > 1; groups-- {
		g := rapid.IntRange(1, len(rest)-1).Draw(r, "released together")
		s.steps, rest = append(s.steps, rest[:g]), rest[g:]
	}
	if len(rest) > 0 {
		s.steps = append(s.steps, rest)
	}
	return s
}

// drawPanicsTogether draws two to four calls that panic at one instant,
// each ignoring its ctx, released in any order within that instant, alone
// or with other calls; the other calls succeed or fail, one group at a
// time, before the panics or after them.
func (d testFanDraw) drawPanicsTogether(r *rapid.T, s testFanScenario) testFanScenario {
	s.callers = rapid.IntRange(max(d.minCall, 1), d.maxCall).Draw(r, "callers")
	s.n = rapid.IntRange(max(d.minN, 2), d.maxN).Draw(r, "n")
	for i := range s.n {
		e := testFanElem{panic: -1, react: rapid.SampledFrom(d.reacts).Draw(r, fmt.Sprintf("in[%d] reaction", i))}
		if d.fail && rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("in[%d] fails", i)) == 0 {
			e.fails = true
			e.kind = rapid.IntRange(0, testFailKinds-1).Draw(r, fmt.Sprintf("in[%d] error kind", i))
			e.text = rapid.SampledFrom([]string{"500", "503", "429"}).Draw(r, fmt.Sprintf("in[%d] status", i))
		} else {
			e.text = rapid.SampledFrom(testValues).Draw(r, fmt.Sprintf("in[%d] value", i))
		}
		s.elems = append(s.elems, e)
	}
	idx := rapid.Permutation(seq(s.n)).Draw(r, "the elements that panic, in the order they are released")
	k := rapid.IntRange(2, min(4, s.n)).Draw(r, "how many panic at the same instant")
	panics, rest := idx[:k], idx[k:]
	for _, i := range panics {
		e := &s.elems[i]
		e.panic = rapid.IntRange(0, testPanicKinds-1).Draw(r, fmt.Sprintf("in[%d] panic kind", i))
		e.react, e.fails, e.text = testIgnores, false, "9.99"
	}
	for len(rest) > 0 {
		g := rapid.IntRange(1, len(rest)).Draw(r, "released together")
		s.steps, rest = append(s.steps, rest[:g]), rest[g:]
	}
	at := rapid.IntRange(0, len(s.steps)).Draw(r, "the step at which they panic")
	if at < len(s.steps) && rapid.Bool().Draw(r, "with that step's releases") {
		s.steps[at] = rapid.Permutation(append(slices.Clone(panics), s.steps[at]...)).Draw(r, "that step's release order")
	} else {
		s.steps = slices.Insert(s.steps, at, panics)
	}
	return s
}

// describeBig writes a big scenario by its steps first (the details of a
// verdict show only its first lines), then the calls that fail one by one,
// and the others counted by their reaction.
func (s testFanScenario) describeBig(b *strings.Builder) {
	for k, group := range s.steps {
		switch {
		case k == 0 && len(group) == 1:
			fmt.Fprintf(b, "\n  step 1: in[%d] is released alone, and fails", group[0])
		case k == 0:
			fmt.Fprintf(b, "\n  step 1: released at the same instant: in[%d], which fails, and %s (%s)", group[0],
				testCount(len(group)-1, "other call"), testFew(group[1:]))
		default:
			fmt.Fprintf(b, "\n  step %d: %s released at the same instant: %s", k+1, testCount(len(group), "call"), testFew(group))
		}
	}
	byReact := map[int][]int{}
	for i, e := range s.elems {
		if e.fails || e.panic >= 0 {
			fmt.Fprintf(b, "\n  in[%d]: %s, %s", i, e.describe(), strings.Replace(testReactionNames[e.react], "Map ", s.what()+" ", 1))
			continue
		}
		byReact[e.react] = append(byReact[e.react], i)
	}
	for react := range testReactions {
		if idx := byReact[react]; len(idx) > 0 {
			fmt.Fprintf(b, "\n  %s (%s) return a result, and each %s", testCount(len(idx), "other element"), testFew(idx),
				testReactionNames[react])
		}
	}
}

// testFew names the first few elements of idx and counts the rest.
func testFew(idx []int) string {
	const few = 6
	if len(idx) <= few {
		return testElements(idx)
	}
	return fmt.Sprintf("%s and %d more", testElements(idx[:few]), len(idx)-few)
}

// testCount counts things: "1 call", "12 calls".
func testCount(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// reportBigHang: in a batch of hundreds, every call of fn has returned
// by step k, and Map still waits.
func (s testFanScenario) reportBigHang(h *katatest.H, k int, v testFxView) bool {
	first, at := -1, 1<<30
	for i, err := range v.retErr {
		if err != nil && v.state[i] == 2 && v.retStep[i] < at {
			first, at = i, v.retStep[i]
		}
	}
	cause := "every call of fn had returned"
	if first >= 0 {
		cause = fmt.Sprintf("in[%d] failed first, at step %d, and by step %d every call of fn had returned", first, at, k)
	}
	return s.report(h, "*", "%s over %d elements: %s, but %s was still waiting, for ever: it must return once every call "+
		"has returned, however many elements there are. Is a goroutine stuck handing over its outcome? A channel with "+
		"fewer slots than elements, which %s stops reading after the first error, blocks every send past its buffer, "+
		"and a wait for those goroutines never ends: give each element a slot of its own (out[i] and errs[i], or "+
		"make(chan T, len(in))), or keep receiving until every call has reported", s.what(), s.n, cause, s.what(), s.what())
}

func TestR3_TheFirstErrorInABatchOfHundreds(t *testing.T) {
	// Hundreds of elements, one or two callers: the first failure comes
	// while nearly every call is still in flight, and cancels them all at
	// once. Map returns that failure, once every call has returned, however
	// many elements there are. Scenarios drawn like an exploration's, the
	// same every run, each shaken: a Map that never returns leaves hundreds
	// of goroutines blocked at every try, so the test stops at the first
	// that fails instead of shrinking it.
	d := testFanDraw{focus: "R3", big: true, minN: 100, maxN: 200, maxCall: 2, fail: true, failOdds: 4,
		reacts: []int{testWrapsCtx, testReturnsCtx, testOwnError, testPartial, testIgnores, testChecksLate}}
	scenarios, next := testExamples(d.draw, 301, 3), 0
	katatest.Repeat(t, len(scenarios), func(h *katatest.H) {
		s := scenarios[next]
		next++
		s.play(h)
		if h.Failed() {
			h.Logf("the scenario: %s", s)
		}
	})
}

func TestB2_ExplorePanicsAtTheSameInstantRaiseTheLowestIndex(t *testing.T) {
	// Two to four calls panic at one instant, released in any order within
	// it: Map (or MapAll) raises the lowest index's panic, every time.
	d := testFanDraw{focus: "B2", panicsTogether: true, either: true, minN: 2, maxN: 6, maxCall: 3, fail: true,
		reacts: []int{testWrapsCtx, testIgnores, testChecksLate}}
	katatest.Explore(t, 12, d.draw, func(h *katatest.H, s testFanScenario) { s.play(h) })
}

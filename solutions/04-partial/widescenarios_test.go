package partial

// Explored requirements over many inputs: the scenarios of scenarios_test.go
// (one or two Gather or GatherWith calls at once, every call released in
// any order, failing with errors of every kind), each caller with 11 to 40
// inputs, as a page of twenty prices has: more than a small limit, buffer or
// count (10, say) holds. Fixed scenarios that a draw could miss, every call
// held until the test releases it and honouring its ctx, run first.

import (
	"fmt"
	"testing"

	"gokata/internal/katatest"
)

// testYWideCaller is a caller of Gather (or GatherWith(opt)) on sku-1 …
// sku-n, no call of which ignores its ctx or returns at once; the calls of
// the inputs fails picks fail, with errors of every kind, the others
// succeed.
func testYWideCaller(n int, opt *Options, fails func(i int) bool) testYCaller {
	cl := testYCaller{opt: opt}
	for i := range n {
		cl.inputs = append(cl.inputs, fmt.Sprintf("sku-%d", i+1))
		call := testYCall{onCancel: i % 2} // on cancel, ctx.Err() bare or wrapped
		if fails(i) {
			call.does, call.kind = testYFail, i%len(testYErrs)
		}
		cl.calls = append(cl.calls, call)
	}
	return cl
}

// testYWideRelease releases count of caller c's calls in flight, from the
// oldest, or from the newest.
func testYWideRelease(c, count int, newest bool) [][2]int {
	var r [][2]int
	for k := range count {
		if newest {
			r = append(r, [2]int{c, -1 - k})
		} else {
			r = append(r, [2]int{c, k})
		}
	}
	return r
}

// testYWideFixed are the fixed scenarios of req: one caller with a few
// more inputs than a limit of 10 lets through, and another with a few
// inputs at the same time. No more than that: a Gather that never returns
// leaves the goroutines it blocked for good, and each of them slows every
// leak check of every test after it.
func testYWideFixed(req string) []testYScenario {
	third := func(i int) bool { return i%3 == 1 }
	all := func(int) bool { return true }
	switch req {
	case "R1":
		// 11 calls at once, every third failing, released newest first,
		// then oldest first; 4 more of another caller.
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(11, nil, third), testYWideCaller(4, nil, third)},
			steps: []testYStep{
				{release: append(testYWideRelease(0, 5, true), testYWideRelease(1, 2, false)...)},
				{release: testYWideRelease(0, 3, false)},
			},
		}}
	case "R2":
		// 12 of 13 calls fail, and 12 of the 13 return in step 1: at
		// least 11 failures while one call still runs.
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(13, nil, func(i int) bool { return i != 6 }),
				testYWideCaller(4, nil, third)},
			steps: []testYStep{{release: append(testYWideRelease(0, 12, false), testYWideRelease(1, 2, true)...)}},
		}}
	case "R3":
		// Every call fails: 11 failures, and 4 more of another caller.
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(11, nil, all), testYWideCaller(4, nil, all)},
			steps:   []testYStep{{release: append(testYWideRelease(0, 6, false), testYWideRelease(1, 2, true)...)}},
		}}
	case "B2":
		// MaxFailures 11 on 13 inputs, all failing: step 1 returns 11
		// calls, 11 failures, which stop nothing; the 12th, in step 2,
		// stops the gather while one call still runs. Another caller,
		// MaxFailures 1 on 4 inputs, stops at its second failure.
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(13, &Options{MaxFailures: 11}, all),
				testYWideCaller(4, &Options{MaxFailures: 1}, all)},
			steps: []testYStep{
				{release: append(testYWideRelease(0, 11, false), testYWideRelease(1, 1, false)...)},
				{release: append(testYWideRelease(0, 1, true), testYWideRelease(1, 1, true)...)},
			},
		}}
	}
	panic("no fixed wide scenario for " + req)
}

// testYWideExplore plays the fixed scenarios of req, then, if they all
// passed, explores n drawn ones. (A Gather that never returns leaves its
// goroutines blocked for good: a fixed scenario finds it once, where an
// exploration would find it again in every scenario it shrinks.)
func testYWideExplore(t *testing.T, req string, cancels bool, n int) {
	t.Helper()
	katatest.Replay(t, testYWideFixed(req), func(h *katatest.H, s testYScenario) { testYPlay(h, s, req) })
	if t.Failed() {
		return
	}
	katatest.Explore(t, n, testDrawYSized(req, cancels, 0, testYWide), func(h *katatest.H, s testYScenario) {
		testYPlay(h, s, req)
	})
}

func TestR1_ExploreManyInputsAllAtOnce(t *testing.T) { testYWideExplore(t, "R1", false, 12) }

func TestR2_ExploreManyFailuresCancelNothing(t *testing.T) { testYWideExplore(t, "R2", false, 12) }

func TestR3_ExploreManyFailuresKeepTheirErrors(t *testing.T) { testYWideExplore(t, "R3", true, 12) }

func TestB2_ExploreAMaxFailuresAboveTen(t *testing.T) { testYWideExplore(t, "B2", true, 12) }

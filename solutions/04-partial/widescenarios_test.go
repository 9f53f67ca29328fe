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

// testYWideFixed are the fixed scenarios of req.
func testYWideFixed(req string) []testYScenario {
	third := func(i int) bool { return i%3 == 1 }
	switch req {
	case "R1":
		// 12 and 40 calls at once, every third failing, released newest
		// first and oldest first.
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(12, nil, third), testYWideCaller(40, nil, third)},
			steps: []testYStep{
				{release: append(testYWideRelease(0, 6, true), testYWideRelease(1, 10, false)...)},
				{release: testYWideRelease(1, 10, true)},
			},
		}}
	case "R2":
		// 25 of 30 calls fail, and 20 of the 30 return in step 1: at
		// least 15 failures while 10 calls still run. 12 of 16 fail, 15
		// return in step 1: at least 11 failures while one still runs.
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(30, nil, func(i int) bool { return i%6 != 5 }),
				testYWideCaller(16, nil, func(i int) bool { return i%4 != 3 })},
			steps: []testYStep{{release: append(testYWideRelease(0, 20, false), testYWideRelease(1, 15, true)...)}},
		}}
	case "R3":
		// Every call fails: 30 and 11 failures.
		all := func(int) bool { return true }
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(30, nil, all), testYWideCaller(11, nil, all)},
			steps:   []testYStep{{release: append(testYWideRelease(0, 15, false), testYWideRelease(1, 5, true)...)}},
		}}
	case "B2":
		// MaxFailures 15 on 40 inputs, 36 of them failing: step 1 returns
		// 15 calls, so 11 to 15 failures, which stop nothing; step 2
		// returns 10 more, at least 6 of them failures: the gather stops
		// while 15 calls still run. MaxFailures 12 on 20 inputs, 19
		// failing: 11 or 12 failures in step 1, a stop in step 2.
		return []testYScenario{{
			callers: []testYCaller{testYWideCaller(40, &Options{MaxFailures: 15}, func(i int) bool { return i%10 != 9 }),
				testYWideCaller(20, &Options{MaxFailures: 12}, func(i int) bool { return i != 19 })},
			steps: []testYStep{
				{release: append(testYWideRelease(0, 15, false), testYWideRelease(1, 12, false)...)},
				{release: append(testYWideRelease(0, 10, true), testYWideRelease(1, 2, true)...)},
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

package bounded

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them. One scenario is one to
// three ForEach calls made at once, each with its own items and limit (huge
// limits have tests of their own, limitranges_test.go); the
// test then releases the calls in flight in any order (several at once),
// makes some fail with errors of every kind, and cancels callers before or
// after a failure. After every step it compares what ForEach did with a
// small model of the README.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testXStatus is an error of a type of its own, as a storage client's.
type testXStatus struct{ code int }

func (e *testXStatus) Error() string { return fmt.Sprintf("store: status %d", e.code) }

// testXErrs are the ways a call fails. Each call makes a fresh error, so
// "as it is" is checked by identity. Some texts use words a context error
// uses: an error is a call's error whatever its text says.
var testXErrs = []struct {
	how  string
	make func(i int) error
}{
	{"an error wrapping context.Canceled", func(i int) error { return fmt.Errorf("thumb-%d: %w", i, context.Canceled) }},
	{"errors.New(\"access denied\")", func(int) error { return errors.New("access denied") }},
	{"an error wrapped with %w", func(i int) error {
		return fmt.Errorf("put thumb-%d.webp: %w", i, errors.New("503 slow down"))
	}},
	{"&statusError{403}", func(int) error { return &testXStatus{403} }},
	{"errors.New(\"upload canceled by the store\")", func(int) error { return errors.New("upload canceled by the store") }},
	{"errors.New(\"context deadline exceeded at the proxy\")", func(int) error {
		return errors.New("context deadline exceeded at the proxy")
	}},
}

// What a call returns when its ctx ends before the test releases it.
const (
	testXCancelWrapped = iota // fmt.Errorf("thumb-%d: %w", i, ctx.Err())
	testXCancelBare           // ctx.Err() as it is
	testXCancelNil            // it finishes its work anyway and returns nil
)

type testXItem struct {
	fail     int  // index into testXErrs, or -1: the call succeeds
	deaf     bool // ignores its ctx: returns only when released
	onCancel int  // testXCancel…
}

type testXCaller struct {
	limit  int
	items  []testXItem
	before bool // ctx cancelled before ForEach is called
}

// testXStep happens at once: caller cancels are made first, then every
// release, with nothing settled in between.
type testXStep struct {
	cancel  []int    // callers whose ctx is cancelled
	release [][2]int // (caller, k): release the call in flight number k (counted round), oldest first, or newest first for -1-k
}

type testXScenario struct {
	callers []testXCaller
	steps   []testXStep
}

func (s testXScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d ForEach call(s) at once:", len(s.callers))
	for c, cl := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d: limit %d, %d items", c+1, cl.limit, len(cl.items))
		if cl.before {
			b.WriteString(", ctx cancelled before the call")
		}
		for i, it := range cl.items {
			var what []string
			if it.fail >= 0 {
				what = append(what, "fails with "+testXErrs[it.fail].how)
			}
			if it.deaf {
				what = append(what, "ignores its ctx")
			} else {
				what = append(what, [...]string{"on cancel returns fmt.Errorf(\"thumb-%d: %w\", ctx.Err())",
					"on cancel returns ctx.Err()", "on cancel returns nil"}[it.onCancel])
			}
			if it.fail < 0 {
				what = append([]string{"succeeds"}, what...)
			}
			fmt.Fprintf(&b, "\n    item %d %s", i, strings.Join(what, ", "))
		}
	}
	for n, st := range s.steps {
		var parts []string
		for _, c := range st.cancel {
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
	b.WriteString("\n  then every call still in flight is released (counted round: number k of n running is number (k-1) mod n + 1)")
	return b.String()
}

// testDrawX draws a scenario. One call in stops fails, and a caller
// cancels in one step in stops (0: none does); the calls fail with the
// errors testXErrs[kinds:].
func testDrawX(stops, kinds int) func(*rapid.T) testXScenario {
	return func(r *rapid.T) testXScenario {
		var s testXScenario
		callers := rapid.IntRange(1, 3).Draw(r, "callers")
		for c := range callers {
			var cl testXCaller
			n := rapid.IntRange(0, 7).Draw(r, fmt.Sprintf("items %d", c))
			cl.limit = rapid.IntRange(1, n+2).Draw(r, fmt.Sprintf("limit %d", c))
			for i := range n {
				it := testXItem{fail: -1}
				if stops > 0 && rapid.IntRange(0, stops-1).Draw(r, fmt.Sprintf("fails %d.%d", c, i)) == 0 {
					it.fail = rapid.IntRange(kinds, len(testXErrs)-1).Draw(r, fmt.Sprintf("error %d.%d", c, i))
				}
				it.deaf = rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("deaf %d.%d", c, i)) == 0
				it.onCancel = rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("on cancel %d.%d", c, i))
				cl.items = append(cl.items, it)
			}
			cl.before = stops > 0 && rapid.IntRange(0, 2*stops-1).Draw(r, fmt.Sprintf("cancelled before %d", c)) == 0
			s.callers = append(s.callers, cl)
		}
		steps := rapid.IntRange(1, 10).Draw(r, "steps")
		for n := range steps {
			var st testXStep
			if stops > 0 && rapid.IntRange(0, stops+1).Draw(r, fmt.Sprintf("cancel? %d", n)) == 0 {
				st.cancel = append(st.cancel, rapid.IntRange(0, callers-1).Draw(r, fmt.Sprintf("cancel %d", n)))
			}
			for k := range rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("releases %d", n)) {
				which := rapid.IntRange(0, 6).Draw(r, fmt.Sprintf("release which %d.%d", n, k))
				if rapid.Bool().Draw(r, fmt.Sprintf("newest first %d.%d", n, k)) {
					which = -1 - which
				}
				st.release = append(st.release, [2]int{
					rapid.IntRange(0, callers-1).Draw(r, fmt.Sprintf("release caller %d.%d", n, k)), which})
			}
			s.steps = append(s.steps, st)
		}
		return s
	}
}

// testXRun is one ForEach call of a scenario and what its calls did.
type testXRun struct {
	c  katatest.ErrCall
	cl testXCaller
	testGates
	errs []error // the error each item's call fails with, made once
	peak katatest.Peak

	mu       sync.Mutex
	calls    []int        // calls made per item
	order    []int        // items in the order their calls started
	returned []bool       // per item: its call has returned
	viaCtx   []bool       // per item: it returned because its ctx ended
	got      []error      // per item: what its call returned
	step     []int        // per item: the step in which it returned
	now      int          // the step being played (0: the start)
	cancelAt map[int]bool // steps in which the caller cancelled

	// Read by the goroutine that called ForEach right after it returned.
	madeAtReturn, insideAtReturn int
}

func (x *testXRun) fn(ctx context.Context, i int) error {
	x.mu.Lock()
	x.calls[i]++
	x.order = append(x.order, i)
	x.mu.Unlock()
	leave := x.peak.Enter()
	it := x.cl.items[i]
	var err error
	viaCtx := false
	done := ctx.Done()
	if it.deaf {
		done = nil
	}
	select {
	case <-x.gates[i]:
		err = x.errs[i]
	case <-done:
		viaCtx = true
		switch it.onCancel {
		case testXCancelWrapped:
			err = fmt.Errorf("thumb-%d: %w", i, ctx.Err())
		case testXCancelBare:
			err = ctx.Err()
		}
	}
	x.mu.Lock()
	x.returned[i], x.viaCtx[i], x.got[i], x.step[i] = true, viaCtx, err, x.now
	x.mu.Unlock()
	leave()
	return err
}

// inFlight lists the items whose call has started and not returned, in
// the order they started.
func (x *testXRun) inFlight() []int {
	x.mu.Lock()
	defer x.mu.Unlock()
	var r []int
	for _, i := range x.order {
		if !x.returned[i] {
			r = append(r, i)
		}
	}
	return r
}

// testXState is what the model keeps per caller between steps.
type testXState struct {
	stopStep  int  // the step of the first cancel or call error; -1 none yet
	cancelled bool // the caller cancelled
	started   int  // calls started by the end of the stop step
	seen      int  // calls started by the end of the step before
}

// testXPlay plays s and checks requirement req after every step; it
// reports the first break of req only.
func testXPlay(h *katatest.H, s testXScenario, req string) {
	runs := make([]*testXRun, len(s.callers))
	for c, cl := range s.callers {
		n := len(cl.items)
		x := &testXRun{cl: cl, testGates: testNewGates(n), errs: make([]error, n), calls: make([]int, n),
			returned: make([]bool, n), viaCtx: make([]bool, n), got: make([]error, n), step: make([]int, n),
			cancelAt: map[int]bool{}}
		for i, it := range cl.items {
			if it.fail >= 0 {
				x.errs[i] = testXErrs[it.fail].make(i)
			}
		}
		h.Own(x.releaseAll) // Stop opens every gate
		runs[c] = x
	}
	for _, x := range runs {
		var opts []katatest.CtxOption
		if x.cl.before {
			opts = append(opts, katatest.Cancelled())
		}
		x.c = katatest.StartErr(h, func(ctx context.Context) error {
			err := ForEach(ctx, testItems(len(x.cl.items)), x.cl.limit, x.fn)
			// Read at once: no settle orders this after the calls.
			x.mu.Lock()
			x.madeAtReturn = len(x.order)
			x.mu.Unlock()
			x.insideAtReturn = x.peak.Now()
			return err
		}, opts...)
	}
	states := make([]testXState, len(runs))
	for c := range states {
		states[c].stopStep = -1
		if runs[c].cl.before {
			states[c].stopStep, states[c].cancelled = 0, true
		}
	}
	stopAll := func() { // the first Stop opens every caller's gates
		for _, x := range runs {
			x.c.Stop()
		}
	}
	synctest.Wait()
	for c, x := range runs {
		if !testXCheck(h, s, c, x, &states[c], 0, req) {
			stopAll()
			return
		}
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
			if states[c].stopStep < 0 {
				states[c].stopStep = now
			}
			states[c].cancelled = true
			runs[c].cancelAt[now] = true
			runs[c].c.Cancel()
		}
		for _, r := range st.release {
			if fl := picks[r[0]]; len(fl) > 0 {
				k := r[1]
				if k < 0 {
					k = len(fl) - (-1-k)%len(fl) - 1
				}
				runs[r[0]].release(fl[k%len(fl)])
			}
		}
		synctest.Wait()
		for c, x := range runs {
			if !testXCheck(h, s, c, x, &states[c], now, req) {
				stopAll()
				return
			}
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
	// Releasing everything lets the remaining items run to the end; keep
	// releasing what starts until ForEach returns.
	for range 16 {
		synctest.Wait()
		for c, x := range runs {
			if !testXCheck(h, s, c, x, &states[c], last, req) {
				stopAll()
				return
			}
		}
		all := true
		for _, x := range runs {
			all = all && x.c.Returned()
		}
		if all {
			break
		}
	}
	for c, x := range runs {
		if !x.c.Returned() {
			what := "R2"
			if states[c].stopStep >= 0 {
				what = "R3"
			}
			if req == what || req == "R6" {
				h.Errorf("caller %d: every call of fn returned and every gate was open, but ForEach did not return", c+1)
			}
			stopAll()
			return
		}
	}
	for c, x := range runs {
		if !testXResult(h, c, x, &states[c], req) {
			return
		}
	}
}

// testXCheck compares caller c's state after a settled step with the model.
func testXCheck(h *katatest.H, s testXScenario, c int, x *testXRun, st *testXState, now int, req string) bool {
	x.mu.Lock()
	n := len(x.cl.items)
	order := slices.Clone(x.order)
	calls := slices.Clone(x.calls)
	returned := 0
	errorNow, successNow := -1, false
	var running []int
	for _, i := range order {
		if x.returned[i] {
			returned++
			if x.step[i] == now && x.got[i] != nil && errorNow < 0 {
				errorNow = i
			}
			if x.step[i] == now && x.got[i] == nil {
				successNow = true
			}
		} else {
			running = append(running, i)
		}
	}
	x.mu.Unlock()
	who := fmt.Sprintf("caller %d (limit %d, %d items)", c+1, x.cl.limit, n)
	seen := st.seen
	st.seen = len(order)
	failedFirst := st.stopStep < 0 && errorNow >= 0 // the first stop is this step's failure
	if st.stopStep < 0 && errorNow >= 0 {
		st.stopStep = now
	}
	if st.stopStep == now {
		st.started = len(order)
	}
	stopped := st.stopStep >= 0
	switch req {
	case "R1":
		if m := x.peak.Max(); m > x.cl.limit {
			h.Errorf("R1: at most limit calls run at once, but %s had %d calls of fn running at once after step %d: "+
				"take a slot before a call starts and give it back only when the call has returned", who, m, now)
			return false
		}
		if want := min(x.cl.limit, n-returned); !stopped && len(running) != want && !x.c.Returned() {
			h.Errorf("R1: while items remain, min(limit, items left) calls run, but %s had %d call(s) running "+
				"after step %d, with %d call(s) returned and nothing failed or cancelled; want %d: a call that "+
				"returns frees its slot, so start the next item at once (no batches, and calls may return in any order)",
				who, len(running), now, returned, want)
			return false
		}
	case "R2":
		for i, k := range calls {
			if k > 1 {
				h.Errorf("R2: every item is processed exactly once, but %s called fn %d times for item %d", who, k, i)
				return false
			}
		}
	case "R3":
		if x.cl.before && len(order) > 0 {
			h.Errorf("R3: a ctx already done starts nothing, but %s, whose ctx was cancelled before the call, "+
				"started %d call(s) of fn: check ctx before each call; %s", who, len(order), testRandomHint)
			return false
		}
		if failedFirst && !successNow && len(order) > seen {
			// Only failures returned in this step: each freed its slot, and
			// a correct ForEach records the error and cancels before that.
			h.Errorf("R3: after a call fails, no new call starts, but in %s item %d failed, no other call "+
				"returned, and item(s) %v started right after it: the failed call gave its slot back before it "+
				"recorded the error and cancelled, and the loop took that slot first — record the error and "+
				"cancel, then release the slot (defer release() at the top of the goroutine runs last)",
				who, errorNow, order[seen:])
			return false
		}
		if stopped && now > st.stopStep && len(order) > st.started {
			why := "a call failed"
			if st.cancelled {
				why = "ctx was cancelled"
			}
			h.Errorf("R3: after ctx is cancelled or a call fails, no new call starts, but %s started item(s) %v "+
				"after step %d, where %s: stop the loop at the first error or cancel; %s",
				who, order[st.started:], st.stopStep, why, testRandomHint)
			return false
		}
		if stopped {
			for _, i := range running {
				if !x.cl.items[i].deaf {
					h.Errorf("R3: the calls in flight see their ctx cancelled after a cancel or the first error, "+
						"but in %s item %d was still running after step %d (the stop came at step %d), and it "+
						"returns as soon as its ctx ends: give the calls a ctx derived from the caller's, and "+
						"cancel it on the first error", who, i, now, st.stopStep)
					return false
				}
			}
		}
	case "R6":
		if x.c.Returned() && len(running) > 0 {
			h.Errorf("R6: ForEach returns only after every call it started has returned, but %s returned after "+
				"step %d while item(s) %v still ran: wait for every call (a sync.WaitGroup, wg.Add(1) before the "+
				"go statement), even after an error or a cancel", who, now, running)
			return false
		}
	}
	return true
}

// testXResult checks what caller c's ForEach returned against the model.
func testXResult(h *katatest.H, c int, x *testXRun, st *testXState, req string) bool {
	err := x.c.Err()
	x.mu.Lock()
	defer x.mu.Unlock()
	n := len(x.cl.items)
	who := fmt.Sprintf("caller %d (limit %d, %d items)", c+1, x.cl.limit, n)
	switch req {
	case "R6":
		if x.insideAtReturn > 0 || x.madeAtReturn < len(x.order) {
			h.Errorf("R6: nothing outlives ForEach, but when %s's ForEach returned, %d call(s) of fn were still "+
				"running and %d call(s) were still to be made: call wg.Add(1) before the go statement, not "+
				"inside the goroutine it counts, and wait for all of them", who, x.insideAtReturn,
				len(x.order)-x.madeAtReturn)
			return false
		}
	case "R2":
		if st.stopStep < 0 && err != nil {
			h.Errorf("R2: ForEach returns nil when every call succeeds, but %s returned %v", who, testXDescribe(err))
			return false
		}
		if st.stopStep < 0 && len(x.order) != n {
			h.Errorf("R2: every item is processed exactly once, but %s made %d call(s) for %d items and returned %v",
				who, len(x.order), n, testXDescribe(err))
			return false
		}
	case "R4":
		// The first error: the errors returned in the first step in which
		// any call returned one. Errors a call returned because ForEach
		// cancelled it (no caller cancel in that step) came later.
		first := -1
		for _, i := range x.order {
			if x.got[i] != nil && (first < 0 || x.step[i] < first) {
				first = x.step[i]
			}
		}
		if first >= 0 {
			var want []error
			var hows []string
			for _, i := range x.order {
				if x.got[i] == nil || x.step[i] != first {
					continue
				}
				if x.viaCtx[i] && !x.released[i] && !testXCancelledIn(x, i) {
					continue
				}
				want = append(want, x.got[i])
				hows = append(hows, fmt.Sprintf("item %d: %s", i, testXDescribe(x.got[i])))
			}
			if len(want) == 0 { // only consequences of the first error: every error of that step counts
				for _, i := range x.order {
					if x.got[i] != nil && x.step[i] == first {
						want = append(want, x.got[i])
						hows = append(hows, fmt.Sprintf("item %d: %s", i, testXDescribe(x.got[i])))
					}
				}
			}
			if !slices.ContainsFunc(want, func(e error) bool { return e == err }) {
				h.Errorf("R4: ForEach returns the first error a call returned, as it is (the same error value, "+
					"not wrapped, not rebuilt), but %s returned %s; the first error was %s: keep the first error "+
					"with a sync.Once, return it unchanged, and drop the later ones (whatever their text says)",
					who, testXDescribe(err), strings.Join(hows, " or "))
				return false
			}
			return true
		}
		if len(x.order) < n || n == 0 && x.cl.before && err != nil { // no items: nothing had started either
			if err == nil && len(x.order) < n {
				var skipped []int
				for i, k := range x.calls {
					if k == 0 {
						skipped = append(skipped, i)
					}
				}
				h.Errorf("R4: ForEach returned nil after a cancel that skipped item(s) %v of %s (fn was never "+
					"called for them, and no call failed): it must return ctx.Err(); an item counts as started "+
					"only once fn is called for it (after the last look at ctx), not when a worker claims it "+
					"from the list or it gets a slot", skipped, who)
				return false
			}
			if !errors.Is(err, context.Canceled) {
				h.Errorf("R4: when ctx ended before every item had started and no call failed, ForEach returns "+
					"ctx.Err(), but %s started %d of %d items, no call returned an error, and it returned %s",
					who, len(x.order), n, testXDescribe(err))
				return false
			}
			return true
		}
		if err != nil {
			h.Errorf("R4: no call returned an error and every item started, so ForEach returns nil, but %s "+
				"returned %s: return ctx.Err() only when ctx ended before every item had started",
				who, testXDescribe(err))
			return false
		}
	}
	return true
}

// testXCancelledIn reports whether the caller cancelled in the step in
// which item i returned (its context error then races the others).
func testXCancelledIn(x *testXRun, i int) bool { return x.cl.before || x.cancelAt[x.step[i]] }

func testXDescribe(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q (%T, chain %s)", err.Error(), err, katatest.Chain(err))
}

func TestR1_ExploreSlotsAsCallsReturnInAnyOrder(t *testing.T) {
	katatest.Explore(t, 40, testDrawX(0, 0), func(h *katatest.H, s testXScenario) { testXPlay(h, s, "R1") })
}

func TestR2_ExploreEveryItemExactlyOnce(t *testing.T) {
	katatest.Explore(t, 20, testDrawX(0, 0), func(h *katatest.H, s testXScenario) { testXPlay(h, s, "R2") })
}

// TestR3 draws no call error that wraps context.Canceled: whether such an
// error stops the run is R4's to say (it is the first error, as it is).
func TestR3_ExploreNothingStartsAfterAStop(t *testing.T) {
	katatest.Explore(t, 25, testDrawX(4, 1), func(h *katatest.H, s testXScenario) { testXPlay(h, s, "R3") })
}

func TestR4_ExploreTheFirstErrorAsItIs(t *testing.T) {
	katatest.Explore(t, 45, testDrawX(3, 0), func(h *katatest.H, s testXScenario) { testXPlay(h, s, "R4") })
}

func TestR6_ExploreNothingOutlivesForEach(t *testing.T) {
	katatest.Explore(t, 20, testDrawX(4, 0), func(h *katatest.H, s testXScenario) { testXPlay(h, s, "R6") })
}

// testDrawSkipped draws a cancel that leaves few items unstarted, often
// one, sometimes none: the calls in flight see the cancel and return nil
// (they finish their work anyway, or ignore ctx and succeed later), so
// only the count of the items fn was really called for tells ctx.Err()
// from nil.
func testDrawSkipped(r *rapid.T) testXScenario {
	var cl testXCaller
	cl.limit = rapid.IntRange(1, 4).Draw(r, "limit")
	before := rapid.IntRange(0, 2).Draw(r, "calls that succeed before the cancel")
	left := rapid.SampledFrom([]int{0, 1, 1, 1, 2, cl.limit, cl.limit + 1}).Draw(r, "items left unstarted")
	for i := range cl.limit + before + left {
		cl.items = append(cl.items, testXItem{fail: -1, onCancel: testXCancelNil,
			deaf: rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("deaf %d", i)) == 0})
	}
	s := testXScenario{callers: []testXCaller{cl}}
	for n := range before {
		which := rapid.IntRange(0, cl.limit-1).Draw(r, fmt.Sprintf("release which %d", n))
		s.steps = append(s.steps, testXStep{release: [][2]int{{0, which}}})
	}
	st := testXStep{cancel: []int{0}}
	for k := range rapid.IntRange(0, cl.limit).Draw(r, "released with the cancel") {
		st.release = append(st.release, [2]int{0, k})
	}
	s.steps = append(s.steps, st)
	return s
}

func TestR4_ExploreOnlyCalledItemsCountAsStarted(t *testing.T) {
	katatest.Explore(t, 20, testDrawSkipped, func(h *katatest.H, s testXScenario) { testXPlay(h, s, "R4") })
}

package bounded

// Bonus B2, over many scenarios: requests that overlap on one shared
// Bulkhead. Each scenario is a Bulkhead of one to five slots and a few
// steps; in each step either new requests start (one, or two or three at
// once, each TryForEach from a goroutine of its own) or some of the calls
// in flight return, picked from every request, oldest or newest first,
// several at once, some with an error. Some calls ignore their ctx, so a
// request that was shed or failed waits for them. The requests of a step
// ask together for about as many items as slots are free: all of them
// when two or three start at once, and sometimes one or two more when one
// starts alone, so that its last items are shed.
//
// The README: a call holds its slot until it returns, and every call gives
// its slot back when it returns, failed ones included, whether or not the
// rest of its request is still running. So, once everything has settled,
// the slots in use are exactly the calls still running, across every
// request; a request that asks for the free slots gets them all, and one
// that asks for more starts exactly the free slots' worth and is shed,
// with ErrBusy, at the next item. A small model of the README plays each
// scenario beside the code and compares after every step.

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

// testSItem is how one item's call behaves.
type testSItem struct {
	fail int  // index into testXErrs of the error it returns when released, or -1: it succeeds
	deaf bool // ignores its ctx: returns only when the test lets it
}

func (it testSItem) String() string {
	s := "succeeds"
	if it.fail >= 0 {
		s = "fails with " + testXErrs[it.fail].how
	}
	if it.deaf {
		s += " and ignores its ctx"
	}
	return s
}

// testSCall is the call for item of request req (both from 0).
type testSCall struct{ req, item int }

func (c testSCall) String() string { return fmt.Sprintf("request %d's item %d", c.req+1, c.item) }

// testSStep is one step of a scenario: requests that start at once, or
// calls in flight that return at once.
type testSStep struct {
	start   [][]testSItem // the items of each request that starts, all at once
	free    int           // the slots free when the step begins
	release []testSCall   // calls in flight that return at once
}

type testSScenario struct {
	limit int
	steps []testSStep
}

func (s testSScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "a Bulkhead of %d slot(s), shared by every request below; each call holds its slot until the "+
		"test lets it return (or, unless it ignores its ctx, until its ctx is cancelled):", s.limit)
	req := 0
	for n, st := range s.steps {
		fmt.Fprintf(&b, "\n  step %d: ", n+1)
		if st.start == nil {
			var calls []string
			for _, c := range st.release {
				calls = append(calls, c.String())
			}
			fmt.Fprintf(&b, "these calls return at once: %s", strings.Join(calls, ", "))
			continue
		}
		asked := 0
		for _, items := range st.start {
			asked += len(items)
		}
		if len(st.start) == 1 {
			fmt.Fprintf(&b, "request %d starts, with %d free slot(s) and %d item(s)", req+1, st.free, asked)
		} else {
			fmt.Fprintf(&b, "requests %d to %d start at once, each from a goroutine of its own, with %d free "+
				"slot(s) and %d item(s) between them", req+1, req+len(st.start), st.free, asked)
		}
		for _, items := range st.start {
			fmt.Fprintf(&b, "\n    request %d: ", req+1)
			if len(items) == 0 {
				b.WriteString("no item")
			}
			var what []string
			for i, it := range items {
				what = append(what, fmt.Sprintf("item %d %v", i, it))
			}
			b.WriteString(strings.Join(what, "; "))
			req++
		}
	}
	b.WriteString("\n  then every call still in flight returns, all at once")
	return b.String()
}

// testSReq is what the model knows of one request.
type testSReq struct {
	items    []testSItem
	started  int    // items 0 to started-1 had their call started
	running  []bool // per item: its call is running
	shed     bool   // an item found no free slot
	stopped  bool   // shed, or a call failed: the rest of its calls are cancelled
	first    []int  // the items whose errors, returned in one step, were its first
	free     int    // the slots free when it started (with the others of its step)
	returned bool   // TryForEach has returned
}

// testSModel plays the README for a scenario: the slots in use are the
// calls running.
type testSModel struct {
	limit    int
	reqs     []*testSReq
	inflight []testSCall // the calls running, in the order they started
}

func (m *testSModel) free() int { return m.limit - len(m.inflight) }

// end ends the call c.
func (m *testSModel) end(c testSCall) {
	m.reqs[c.req].running[c.item] = false
	m.inflight = slices.DeleteFunc(m.inflight, func(x testSCall) bool { return x == c })
}

// stop cancels the calls of request r that honour their ctx.
func (m *testSModel) stop(r int) {
	q := m.reqs[r]
	q.stopped = true
	for i, run := range q.running {
		if run && !q.items[i].deaf {
			m.end(testSCall{r, i})
		}
	}
}

func (m *testSModel) settle() {
	for _, q := range m.reqs {
		q.returned = !slices.Contains(q.running, true)
	}
}

// start starts requests at once; together they fit in the free slots,
// unless there is only one.
func (m *testSModel) start(reqs [][]testSItem) {
	free := m.free()
	for _, items := range reqs {
		r := len(m.reqs)
		q := &testSReq{items: items, running: make([]bool, len(items)), free: free}
		m.reqs = append(m.reqs, q)
		for i := range items {
			if m.free() == 0 {
				q.shed = true
				m.stop(r)
				break
			}
			q.started++
			q.running[i] = true
			m.inflight = append(m.inflight, testSCall{r, i})
		}
	}
	m.settle()
}

// release lets calls in flight return at once.
func (m *testSModel) release(calls []testSCall) {
	var failed []int
	for _, c := range calls {
		q := m.reqs[c.req]
		m.end(c)
		if q.items[c.item].fail >= 0 && !q.stopped {
			if len(q.first) == 0 {
				failed = append(failed, c.req)
			}
			q.first = append(q.first, c.item)
		}
	}
	for _, r := range failed {
		m.stop(r)
	}
	m.settle()
}

// returnedEarly lists the calls that have returned while other calls of
// their request still run.
func (m *testSModel) returnedEarly() []string {
	var calls []string
	for r, q := range m.reqs {
		if q.returned {
			continue
		}
		for i := range q.started {
			if !q.running[i] {
				calls = append(calls, testSCall{r, i}.String())
			}
		}
	}
	return calls
}

func testDrawS(r *rapid.T) testSScenario {
	s := testSScenario{limit: rapid.SampledFrom([]int{3, 4, 2, 5, 1}).Draw(r, "limit")}
	m := &testSModel{limit: s.limit}
	drawItems := func(n int, name string) []testSItem {
		items := make([]testSItem, n)
		for i := range items {
			items[i].fail = -1
			if rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("fails? %s.%d", name, i)) == 0 {
				// Not testXErrs[0], which wraps context.Canceled: whether a
				// call's own cancel stops the run is R4's to say.
				items[i].fail = rapid.IntRange(1, len(testXErrs)-1).Draw(r, fmt.Sprintf("error %s.%d", name, i))
			}
			items[i].deaf = rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("deaf %s.%d", name, i)) == 0
		}
		return items
	}
	// Starts and returns take turns, so that every return is followed by
	// requests that need the slots it gave back.
	for n := range rapid.IntRange(3, 8).Draw(r, "steps") {
		st := testSStep{free: m.free()}
		if n%2 == 0 || len(m.inflight) == 0 {
			reqs := rapid.SampledFrom([]int{1, 2, 1, 3}).Draw(r, fmt.Sprintf("requests %d", n))
			if reqs == 1 {
				// Mostly exactly the free slots; sometimes more, so the last
				// items are shed.
				asked := max(0, st.free+rapid.SampledFrom([]int{0, 1, 0, 2, 0, -1}).Draw(r, fmt.Sprintf("more %d", n)))
				st.start = [][]testSItem{drawItems(asked, fmt.Sprint(n))}
			} else {
				// Together the free slots, or one less: each gets all it asks for.
				asked := max(0, st.free-rapid.IntRange(0, 1).Draw(r, fmt.Sprintf("less %d", n)))
				for k := range reqs {
					part := asked
					if k < reqs-1 {
						part = rapid.IntRange(0, asked).Draw(r, fmt.Sprintf("part %d.%d", n, k))
					}
					asked -= part
					st.start = append(st.start, drawItems(part, fmt.Sprintf("%d.%d", n, k)))
				}
			}
			m.start(st.start)
		} else {
			for k := range rapid.IntRange(1, 2).Draw(r, fmt.Sprintf("returns %d", n)) {
				which := rapid.IntRange(0, 2*s.limit).Draw(r, fmt.Sprintf("which %d.%d", n, k)) % len(m.inflight)
				if rapid.Bool().Draw(r, fmt.Sprintf("newest first %d.%d", n, k)) {
					which = len(m.inflight) - 1 - which
				}
				if c := m.inflight[which]; !slices.Contains(st.release, c) {
					st.release = append(st.release, c)
				}
			}
			m.release(st.release)
		}
		s.steps = append(s.steps, st)
	}
	return s
}

// testSRun is one request of a scenario and what its calls did.
type testSRun struct {
	c     katatest.ErrCall
	items []testSItem
	testGates
	peak *katatest.Peak // shared by every request: the calls in flight on the Bulkhead

	mu      sync.Mutex
	calls   []int  // per item: how many times fn was called for it
	running []bool // per item: its call is running
	errs    []error
}

func (x *testSRun) fn(ctx context.Context, i int) error {
	x.mu.Lock()
	x.calls[i]++
	x.running[i] = true
	x.mu.Unlock()
	leave := x.peak.Enter()
	done := ctx.Done()
	if x.items[i].deaf {
		done = nil
	}
	var err error
	select {
	case <-x.gates[i]:
		err = x.errs[i]
	case <-done:
		err = fmt.Errorf("item %d: %w", i, ctx.Err())
	}
	x.mu.Lock()
	x.running[i] = false
	x.mu.Unlock()
	leave()
	return err
}

// testSCompare compares what request r did with the model after a settled
// step; step is its number from 1, or 0 for the end. It reports the first
// difference only.
func testSCompare(h *katatest.H, s testSScenario, m *testSModel, before []string, r int, x *testSRun, step int) bool {
	q := m.reqs[r]
	x.mu.Lock()
	calls := slices.Clone(x.calls)
	running := slices.Clone(x.running)
	x.mu.Unlock()
	when := fmt.Sprintf("after step %d", step)
	if step == 0 {
		when = "once every call was let go"
	}
	started := 0
	for i, n := range calls {
		if n > 1 {
			h.Errorf("request %d called fn %d times for its item %d: every item is processed once", r+1, n, i)
			return false
		}
		started += n
	}
	if started < q.started {
		what := "then started no more (it had not returned yet)"
		if x.c.Returned() && !x.c.Panicked() {
			what = "returned " + testXDescribe(x.c.Err())
		}
		early := ""
		if len(before) > 0 {
			early = strings.Join(before, ", ") + " had returned while other calls of the same request still ran, and "
		}
		h.Errorf("TryForEach kept a slot after its call had returned: %swhen request %d, with %d item(s), came, the "+
			"calls still running held %d of the Bulkhead's %d slots, so it starts %d call(s), but it started %d and "+
			"%s: every call gives its slot back when it returns, not when the rest of its request is over — give "+
			"each call's slot back in that call's goroutine as soon as fn returns (defer the release there), never "+
			"in a loop at the end of TryForEach", early, r+1, len(q.items), m.limit-q.free, m.limit, q.started,
			started, what)
		return false
	}
	if started > q.started {
		h.Errorf("request %d started %d call(s) %s, but only %d of the Bulkhead's %d slots were free when it came: "+
			"an item that finds every slot busy is shed at once with ErrBusy, and nothing starts after it",
			r+1, started, when, q.started, m.limit)
		return false
	}
	for i, run := range running {
		if run && !q.running[i] {
			h.Errorf("request %d's item %d was still running %s, although %s and the call returns as soon as its "+
				"ctx ends: a shed item, like a failed call, is the first error, so TryForEach cancels the ctx of "+
				"the calls in flight", r+1, i, when, testSWhyStopped(q))
			return false
		}
	}
	if x.c.Returned() != q.returned {
		if q.returned {
			h.Errorf("request %d's TryForEach had not returned %s, although every call it started had returned "+
				"and nothing was left to start", r+1, when)
		} else {
			h.Errorf("request %d's TryForEach returned %s while a call it started still ran: it returns only "+
				"after every call it started has returned, even after it shed an item or a call failed", r+1, when)
		}
		return false
	}
	return true
}

func testSWhyStopped(q *testSReq) string {
	if q.shed {
		return fmt.Sprintf("item %d had been shed", q.started)
	}
	return fmt.Sprintf("item %d had failed", q.first[0])
}

func testSPlay(h *katatest.H, s testSScenario) {
	b, err := NewBulkhead(s.limit)
	if err != nil || b == nil {
		h.Errorf("NewBulkhead(%d) returned %v, %v: a limit of 1 or more is valid", s.limit, b, err)
		return
	}
	m := &testSModel{limit: s.limit}
	var (
		runs []*testSRun
		peak katatest.Peak
	)
	stopAll := func() {
		var calls []katatest.ErrCall
		for _, x := range runs {
			calls = append(calls, x.c)
		}
		katatest.Unwind(h, calls...)
	}
	check := func(step int, before []string) bool {
		if p := peak.Max(); p > s.limit {
			h.Errorf("%d calls ran at once on a Bulkhead of %d slots, counting every request: its slots are shared "+
				"by every TryForEach that uses it, so take a slot in one step before each call", p, s.limit)
			return false
		}
		for r, x := range runs {
			if x.c.Returned() && x.c.Panicked() { // reported already
				return false
			}
			if !testSCompare(h, s, m, before, r, x, step) {
				return false
			}
		}
		return true
	}
	for n, st := range s.steps {
		before := m.returnedEarly()
		if st.start != nil {
			for _, items := range st.start {
				k := len(items)
				x := &testSRun{items: items, testGates: testNewGates(k), peak: &peak,
					calls: make([]int, k), running: make([]bool, k), errs: make([]error, k)}
				for i, it := range items {
					if it.fail >= 0 {
						x.errs[i] = testXErrs[it.fail].make(i)
					}
				}
				h.Own(x.releaseAll)
				runs = append(runs, x)
			}
			for _, x := range runs[len(m.reqs):] {
				x.c = katatest.StartErr(h, func(ctx context.Context) error {
					return TryForEach(ctx, b, testItems(len(x.items)), x.fn)
				})
			}
			m.start(st.start)
		} else {
			for _, c := range st.release {
				runs[c.req].release(c.item)
			}
			m.release(st.release)
		}
		synctest.Wait()
		if !check(n+1, before) {
			stopAll()
			return
		}
	}
	before := m.returnedEarly()
	last := slices.Clone(m.inflight)
	for _, c := range last {
		runs[c.req].release(c.item)
	}
	m.release(last)
	synctest.Wait()
	if !check(0, before) {
		stopAll()
		return
	}
	for r, x := range runs {
		err := x.c.Err()
		q := m.reqs[r]
		var want []error
		var hows []string
		switch {
		case q.shed:
			if !errors.Is(err, ErrBusy) {
				h.Errorf("request %d's item %d found every slot busy and was shed, before any of its calls had "+
					"failed, so its TryForEach returns an error matching ErrBusy, but it returned %s", r+1, q.started,
					testXDescribe(err))
				return
			}
			continue
		case len(q.first) > 0:
			for _, i := range q.first {
				want = append(want, x.errs[i])
				hows = append(hows, fmt.Sprintf("item %d: %s", i, testXDescribe(x.errs[i])))
			}
		}
		if len(want) == 0 && err != nil {
			h.Errorf("request %d: every item found a free slot and every call succeeded, so its TryForEach returns "+
				"nil, but it returned %s", r+1, testXDescribe(err))
			return
		}
		if len(want) > 0 && !slices.ContainsFunc(want, func(e error) bool { return errors.Is(err, e) }) &&
			errors.Is(err, context.Canceled) && !slices.ContainsFunc(want, func(e error) bool { return errors.Is(e, context.Canceled) }) {
			h.Errorf("request %d: its first error was %s, which cancelled the calls in flight, and TryForEach "+
				"returned %s, %s", r+1, strings.Join(hows, " or "), testXDescribe(err), testRecordBeforeCancel)
			return
		}
		if len(want) > 0 && !slices.ContainsFunc(want, func(e error) bool { return errors.Is(err, e) }) {
			h.Errorf("request %d: its first error was %s, and TryForEach returns the first error, as ForEach does, "+
				"but it returned %s", r+1, strings.Join(hows, " or "), testXDescribe(err))
			return
		}
	}
}

func TestB2_ExploreEveryCallsSlotIsFreeWhenItReturns(t *testing.T) {
	katatest.Explore(t, 30, testDrawS, testSPlay)
}

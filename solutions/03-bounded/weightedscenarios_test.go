package bounded

// Bonus B1, over many scenarios: one to three ForEachWeighted calls made at
// once, each with its own capacity and weights (below 1, up to capacity,
// above it, math.MinInt and math.MaxInt; huge capacities have tests of
// their own, limitranges_test.go), some of whose calls return as soon as
// they start; the test then releases calls in flight in any order,
// several at once (sometimes every call in flight of a caller, the last
// one included), sometimes cancels a caller, and at the end releases
// everything. After every settled step it compares what ran with the
// README: the calls in flight weigh no more than capacity, items start in
// input order, and the first item waiting starts as soon as the calls that
// made room for it have returned; nothing starts after a cancel.
//
// Calls returning while the loop looks at the room race it: a wake-up sent
// while the loop is between its look at the room and its wait is lost in a
// design that drops it, and the shaken schedule of each scenario opens that
// window now and then, so each scenario gives it many chances.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

type testWCaller struct {
	capacity int
	weights  []int  // as weight(item) returns them
	instant  []bool // per item: its call returns as soon as it starts
	cancelAt int    // the step in which the caller cancels its ctx; 0: never; -1: before the call
}

// counted is the weight item i takes while its call runs.
func (cl testWCaller) counted(i int) int { return min(max(cl.weights[i], 1), cl.capacity) }

// testWStep happens at once: the cancels first, then every release, with
// nothing settled in between.
type testWStep struct {
	release [][2]int // (caller, k): the call in flight number k (counted round), oldest first
	all     []int    // callers whose every call in flight returns
}

type testWScenario struct {
	callers []testWCaller
	steps   []testWStep
}

func (s testWScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d ForEachWeighted call(s) at once, every call succeeding (and returning nil on a cancel):",
		len(s.callers))
	for c, cl := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d: capacity %d, weights %v", c+1, cl.capacity, cl.weights)
		if cl.cancelAt < 0 {
			b.WriteString(", ctx cancelled before the call")
		}
		var instant []int
		for i, yes := range cl.instant {
			if yes {
				instant = append(instant, i)
			}
		}
		if len(instant) > 0 {
			fmt.Fprintf(&b, "; the calls for items %v return as soon as they start", instant)
		}
	}
	for n, st := range s.steps {
		var parts []string
		for c, cl := range s.callers {
			if cl.cancelAt == n+1 {
				parts = append(parts, fmt.Sprintf("caller %d cancels its ctx", c+1))
			}
		}
		for _, r := range st.release {
			parts = append(parts, fmt.Sprintf("caller %d's call in flight number %d, counted from the oldest, returns",
				r[0]+1, r[1]+1))
		}
		for _, c := range st.all {
			parts = append(parts, fmt.Sprintf("every call in flight of caller %d returns", c+1))
		}
		fmt.Fprintf(&b, "\n  step %d, all at once: %s", n+1, strings.Join(parts, "; "))
	}
	b.WriteString("\n  then every call still in flight, and every call still to start, returns at once " +
		"(counted round: number k of n running is number (k-1) mod n + 1)")
	return b.String()
}

func testDrawW(r *rapid.T) testWScenario {
	var s testWScenario
	callers := rapid.IntRange(1, 3).Draw(r, "callers")
	steps := rapid.IntRange(1, 8).Draw(r, "steps")
	for c := range callers {
		cl := testWCaller{capacity: rapid.IntRange(1, 6).Draw(r, fmt.Sprintf("capacity %d", c))}
		// Mostly light items, with heavy ones among them: a heavy item
		// waits for several light calls, which return at once. Calls that
		// return as soon as they start give their room back while the loop
		// is still busy starting the next items: each item that does not
		// fit next to them is a chance for a wake-up to come too early.
		// The first caller has many items, so every scenario has many
		// such chances; the others may have none.
		weights := []int{-1, 0, 1, 1, 1, 1, 2, 3, cl.capacity - 1, cl.capacity, cl.capacity, cl.capacity + 2,
			math.MaxInt, math.MinInt}
		least := 0
		if c == 0 {
			least = 12
		}
		for i := range rapid.IntRange(least, 30).Draw(r, fmt.Sprintf("items %d", c)) {
			cl.weights = append(cl.weights, rapid.SampledFrom(weights).Draw(r, fmt.Sprintf("weight %d.%d", c, i)))
			cl.instant = append(cl.instant, rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("instant %d.%d", c, i)) == 0)
		}
		if rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("cancels %d", c)) == 0 {
			cl.cancelAt = rapid.IntRange(1, steps).Draw(r, fmt.Sprintf("cancel step %d", c))
		} else if c > 0 && rapid.IntRange(0, 4).Draw(r, fmt.Sprintf("cancelled before %d", c)) == 0 {
			cl.cancelAt = -1
		}
		s.callers = append(s.callers, cl)
	}
	for n := range steps {
		var st testWStep
		if rapid.Bool().Draw(r, fmt.Sprintf("all? %d", n)) {
			st.all = append(st.all, rapid.IntRange(0, callers-1).Draw(r, fmt.Sprintf("all caller %d", n)))
		} else {
			for k := range rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("releases %d", n)) {
				st.release = append(st.release, [2]int{
					rapid.IntRange(0, callers-1).Draw(r, fmt.Sprintf("release caller %d.%d", n, k)),
					rapid.IntRange(0, 5).Draw(r, fmt.Sprintf("release which %d.%d", n, k))})
			}
		}
		s.steps = append(s.steps, st)
	}
	return s
}

// testWRun is one ForEachWeighted call of a scenario and what its calls did.
type testWRun struct {
	c        katatest.ErrCall
	cl       testWCaller
	gates    []chan struct{}
	released []bool

	mu       sync.Mutex
	order    []int  // items in the order their calls started
	returned []bool // per item: its call has returned
	load     int    // the counted weights of the calls in flight
	peak     int
}

func (x *testWRun) fn(ctx context.Context, i int) error {
	w := x.cl.counted(i)
	x.mu.Lock()
	x.order = append(x.order, i)
	x.load += w
	x.peak = max(x.peak, x.load)
	x.mu.Unlock()
	select {
	case <-x.gates[i]:
	case <-ctx.Done():
	}
	x.mu.Lock()
	x.returned[i] = true
	x.load -= w
	x.mu.Unlock()
	shake.Point() // on the way out: the calls returning at once interleave
	return nil
}

// inFlight lists the items whose call has started and not returned, in
// the order they started.
func (x *testWRun) inFlight() []int {
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

func (x *testWRun) release(i int) {
	if !x.released[i] {
		x.released[i] = true
		close(x.gates[i])
	}
}

func (x *testWRun) releaseAll() {
	for i := range x.gates {
		x.release(i)
	}
}

// check compares caller c after a settled step (when says which) with the
// README; started is how many calls had started before its cancel (-1: not
// cancelled).
func (x *testWRun) check(h *katatest.H, c int, when string, started int) bool {
	x.mu.Lock()
	order := slices.Clone(x.order)
	slices.Sort(order) // calls started together may enter fn in any order
	peak := x.peak
	var running []int
	load := 0
	for _, i := range order {
		if !x.returned[i] {
			running = append(running, i)
			load += x.cl.counted(i)
		}
	}
	x.mu.Unlock()
	cl := x.cl
	who := fmt.Sprintf("caller %d (capacity %d, weights %v)", c+1, cl.capacity, cl.weights)
	for k, i := range order {
		if i < k {
			h.Errorf("B1: every item is processed exactly once, but %s called fn for item %d twice", who, i)
			return false
		}
		if i > k {
			h.Errorf("B1: items start in input order, but %s %s had started item %d and not item %d: an item that "+
				"does not fit waits, and the items behind it wait too, even light ones that would fit (so a heavy "+
				"item is never starved); start the next item only, and wait until it fits", who, when, i, k)
			return false
		}
	}
	if peak > cl.capacity {
		h.Errorf("B1: the weights of the calls in flight never exceed capacity, but %s had calls weighing %d units "+
			"in flight at once (a weight below 1 counts as 1, one above capacity as capacity): start an item only "+
			"when its weight fits in what is left of the capacity, and take its units before its goroutine starts",
			who, peak)
		return false
	}
	if started >= 0 {
		if len(order) > started {
			when := fmt.Sprintf("its cancel in step %d", cl.cancelAt)
			if cl.cancelAt < 0 {
				when = "a cancel before the call (a ctx already done starts nothing)"
			}
			h.Errorf("B1: after ctx is cancelled no new call starts, as for ForEach, but %s started item(s) %v after "+
				"%s: wait for room in a select that also sees ctx.Done(), and check ctx again "+
				"once you have the room; %s", who, order[started:], when, testRandomHint)
			return false
		}
		return true
	}
	next := len(order)
	if next == len(cl.weights) || x.c.Returned() {
		return true // a return with items left is R6's and the result's to judge
	}
	if w := cl.counted(next); w <= cl.capacity-load {
		what := fmt.Sprintf("with items %v running (%d of %d units in use)", running, load, cl.capacity)
		if len(running) == 0 {
			what = "with nothing running"
		}
		fix := "the loop missed a wake-up: it found no room, and a call that returned before the loop began to " +
			"wait signalled no one (a send with a default case on an unbuffered channel is dropped when nobody " +
			"receives yet) — keep the wake-up (a channel with a buffer of one, or a sync.Cond waited on under the " +
			"lock of the look at the room), or take units from a channel of capacity tokens"
		if cl.weights[next] > cl.capacity {
			fix = "count a weight above capacity as capacity, or that item waits forever for room that never comes; " +
				"or else " + fix
		}
		h.Errorf("B1: an item starts as soon as the calls that made room for it have returned, but %s left item %d "+
			"(weight %d, counted as %d) waiting %s, %s: %s", who, next, cl.weights[next], w, when, what, fix)
		return false
	}
	return true
}

func testWPlay(h *katatest.H, s testWScenario) {
	runs := make([]*testWRun, len(s.callers))
	for c, cl := range s.callers {
		n := len(cl.weights)
		x := &testWRun{cl: cl, gates: make([]chan struct{}, n), released: make([]bool, n), returned: make([]bool, n)}
		for i := range x.gates {
			x.gates[i] = make(chan struct{})
			if cl.instant[i] {
				x.release(i)
			}
		}
		h.Own(x.releaseAll) // Stop opens every gate
		runs[c] = x
	}
	for _, x := range runs {
		var opts []katatest.CtxOption
		if x.cl.cancelAt < 0 {
			opts = append(opts, katatest.Cancelled())
		}
		x.c = katatest.StartErr(h, func(ctx context.Context) error {
			return ForEachWeighted(ctx, testItems(len(x.cl.weights)), x.cl.capacity,
				func(i int) int { return x.cl.weights[i] }, x.fn)
		}, opts...)
	}
	startedAt := make([]int, len(runs)) // calls started before the cancel; -1 until then
	for c, x := range runs {
		startedAt[c] = -1
		if x.cl.cancelAt < 0 {
			startedAt[c] = 0
		}
	}
	stopAll := func() { // the first Stop opens every caller's gates
		for _, x := range runs {
			x.c.Stop()
		}
	}
	testSettle(h)
	for c, x := range runs {
		if !x.check(h, c, "once it got going", startedAt[c]) {
			stopAll()
			return
		}
	}
	for n, st := range s.steps {
		now := n + 1
		picks := make([][]int, len(runs))
		for c, x := range runs {
			picks[c] = x.inFlight()
		}
		for c, x := range runs {
			if x.cl.cancelAt == now {
				x.mu.Lock()
				startedAt[c] = len(x.order)
				x.mu.Unlock()
				x.c.Cancel()
			}
		}
		for _, r := range st.release {
			if fl := picks[r[0]]; len(fl) > 0 {
				runs[r[0]].release(fl[r[1]%len(fl)])
			}
		}
		for _, c := range st.all {
			for _, i := range picks[c] {
				runs[c].release(i)
			}
		}
		testSettle(h)
		for c, x := range runs {
			if !x.check(h, c, fmt.Sprintf("after step %d", now), startedAt[c]) {
				stopAll()
				return
			}
		}
	}
	for _, x := range runs {
		x.releaseAll()
	}
	testSettle(h)
	for c, x := range runs {
		if !x.check(h, c, "once every call had been released", startedAt[c]) {
			stopAll()
			return
		}
	}
	for c, x := range runs {
		if !testReturns(h, x.c, "B1: caller %d (capacity %d, weights %v): every call returned and every item had started, "+
			"but ForEachWeighted did not return: wait for the calls you started (a sync.WaitGroup), then return",
			c+1, x.cl.capacity, x.cl.weights) {
			stopAll()
			return
		}
	}
	for c, x := range runs {
		err, ok := testResult(x.c)
		if !ok {
			return
		}
		x.mu.Lock()
		made, n := len(x.order), len(x.cl.weights)
		x.mu.Unlock()
		who := fmt.Sprintf("caller %d (capacity %d, weights %v)", c+1, x.cl.capacity, x.cl.weights)
		switch {
		case startedAt[c] < 0 && made != n:
			h.Errorf("B1: every item is processed exactly once, but %s made %d call(s) for %d items and returned %v",
				who, made, n, testXDescribe(err))
			return
		case made < n && err == nil:
			h.Errorf("B1: ForEachWeighted returned nil after a cancel that skipped %d of the %d items of %s (fn was "+
				"never called for them, and no call failed): as for ForEach, it must return ctx.Err()",
				n-made, n, who)
			return
		case made < n && !errors.Is(err, context.Canceled):
			h.Errorf("B1: as for ForEach, when ctx ended before every item had started and no call failed, "+
				"ForEachWeighted returns ctx.Err(), but %s started %d of %d items and returned %s",
				who, made, n, testXDescribe(err))
			return
		case made == n && err != nil && !(n == 0 && x.cl.cancelAt < 0 && errors.Is(err, context.Canceled)):
			// (no items and a ctx done before the call: nil and ctx.Err() both say it)
			h.Errorf("B1: as for ForEach, ForEachWeighted returns nil when every item started and every call "+
				"succeeded, even if ctx was cancelled after the last one started; return ctx.Err() only when ctx "+
				"ended before every item had started, but %s returned %s", who, testXDescribe(err))
			return
		}
	}
}

func TestB1_ExploreRoomAsCallsReturnInAnyOrder(t *testing.T) {
	katatest.Explore(t, 16, testDrawW, testWPlay)
}

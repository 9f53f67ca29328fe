package bounded

// R3, B1 and B2 at the moment a stop meets the start of the next call: a
// call fails (or the caller cancels) just as the code is starting another
// item. Either that item does not start, or its call sees its ctx
// cancelled like every other call in flight: "after ctx is cancelled or a
// call fails, no new call starts, and the calls in flight see their ctx
// cancelled". A call left running with a live ctx after the stop is the
// mistake, however the code got there: it looked at a stop flag, then made
// the call a ctx of its own and registered it for the failure to cancel,
// and the failure swept the registered calls in between; or it looked at
// ctx, and the cancel came before the start.
//
// The window lies between two statements of the code, so the test holds
// the code where it hands control to something the caller owns: the
// caller's ctx is of a type of its own, and one look of the code at it
// (Err, or Done, as context.WithCancel looks at its parent) waits there
// while the stop happens and everything else settles. Only the looks of
// goroutines that never ran a call count (the loop's, in most designs: the
// goroutine of a call that has returned may be tidying up), and only while
// a call runs. They count either from the moment the first calls have
// settled, when the calls that return nil wake the loop for the next item,
// or from the start, while the loop is still starting the first items
// (always so for TryForEach, which never waits for a slot).
//
// A design that looks at the caller's ctx only at the start and the end
// never waits there. For it, and for a window with no look at the caller's
// ctx in it, the failing calls sometimes return at the same moment as the
// calls that free the slots, after yielding a few times, and the shaken
// schedule of each scenario puts the failure at varied points of the
// loop's next start.
//
// Each scenario makes one to three calls at once, of the same function,
// each with its own ctx, items and stop: their looks are held and their
// stops made in the same steps.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

const (
	testAtForEach = iota
	testAtWeighted
	testAtTry
)

// testAtCaller is one call of a scenario.
type testAtCaller struct {
	api       int   // testAtForEach, testAtWeighted or testAtTry
	limit     int   // the limit, the capacity, or the Bulkhead's slots
	weights   []int // ForEachWeighted: what weight returns for each item
	items     int
	running   int   // items 0 to running-1 start before anything returns
	afterFill bool  // the looks count from the moment the first calls have settled; else from the start
	succeed   []int // afterFill: the calls that return nil, to free room for the next item, in this order
	fails     []int // afterFill: the calls that fail, in this order
	failing   int   // otherwise: how many of the calls running at the hold fail, the lowest items first
	yields    []int // per failing call: how often it lets the others run before it returns its error
	cancel    int   // the caller cancels its ctx after this many of the failures; -1: it does not
	together  bool  // afterFill: the failures come at the same moment as the successes, not at the hold
	look      int   // the code's look at the caller's ctx that waits while the stop happens
}

func (s testAtCaller) name() string {
	return [...]string{"ForEach", "ForEachWeighted", "TryForEach"}[s.api]
}

func (s testAtCaller) req() string { return [...]string{"R3", "B1", "B2"}[s.api] }

func (s testAtCaller) nFails() int {
	if s.afterFill {
		return len(s.fails)
	}
	return s.failing
}

func (s testAtCaller) String() string {
	var b strings.Builder
	switch s.api {
	case testAtForEach:
		fmt.Fprintf(&b, "ForEach over items 0..%d with limit %d", s.items-1, s.limit)
	case testAtWeighted:
		fmt.Fprintf(&b, "ForEachWeighted over items 0..%d, capacity %d, weights %v", s.items-1, s.limit, s.weights)
	case testAtTry:
		fmt.Fprintf(&b, "TryForEach over items 0..%d on a Bulkhead of %d slots", s.items-1, s.limit)
	}
	var stop []string
	for k := range s.nFails() {
		if s.cancel == k {
			stop = append(stop, "the caller cancels its ctx")
		}
		what := "the lowest item running fails"
		if k > 0 {
			what = fmt.Sprintf("the %s lowest item running fails", testAtNth(k))
		}
		if s.afterFill {
			what = fmt.Sprintf("item %d fails", s.fails[k])
		}
		if s.yields[k] > 0 {
			what += fmt.Sprintf(" (after letting the others run %d time(s))", s.yields[k])
		}
		stop = append(stop, what)
	}
	if s.cancel == s.nFails() {
		stop = append(stop, "the caller cancels its ctx")
	}
	if !s.afterFill {
		fmt.Fprintf(&b, "; from the start, its look number %d at its ctx waits: the calls started settle, then %s, "+
			"and everything else settles", s.look, strings.Join(stop, ", then "))
		return b.String()
	}
	fmt.Fprintf(&b, "; items 0 to %d start and settle; then item(s) %v return nil, one after the other", s.running-1,
		s.succeed)
	if s.together {
		fmt.Fprintf(&b, ", and at the same moment %s; its look number %d at its ctx from then on waits until "+
			"everything else has settled", strings.Join(stop, ", then "), s.look)
	} else {
		fmt.Fprintf(&b, "; its look number %d at its ctx from then on waits while %s, until everything else has "+
			"settled", s.look, strings.Join(stop, ", then "))
	}
	return b.String()
}

func testAtNth(k int) string {
	if k < 3 {
		return [...]string{"first", "second", "third"}[k]
	}
	return fmt.Sprintf("%dth", k+1)
}

// testAtDrawCaller draws caller c of a scenario. The first caller is the
// plain case: calls fail (no cancel), alone, at one of the first looks;
// the others draw every variant (a cancel, limit 1, failures at the same
// moment as the successes, looks counted from the start, later looks).
func testAtDrawCaller(r *rapid.T, api, c int) testAtCaller {
	label := func(what string, args ...any) string {
		return fmt.Sprintf("caller %d: ", c) + fmt.Sprintf(what, args...)
	}
	plain := c == 1
	odd := func(what string) bool { return !plain && rapid.IntRange(0, 3).Draw(r, label("%s", what)) == 3 }
	s := testAtCaller{api: api, cancel: -1}
	switch api {
	case testAtForEach:
		s.limit = rapid.IntRange(2, 5).Draw(r, label("limit"))
		if odd("limit 1?") {
			s.limit = 1
		}
		s.items = s.limit + rapid.IntRange(1, 4).Draw(r, label("items after the first limit"))
		s.running = s.limit
	case testAtWeighted:
		s.limit = rapid.IntRange(2, 6).Draw(r, label("capacity"))
		if odd("capacity 1?") {
			s.limit = 1
		}
		load := 0
		for load < s.limit {
			most := s.limit - load
			if len(s.weights) == 0 && s.limit > 1 {
				most = s.limit - 1 // room for a second call
			}
			w := rapid.IntRange(1, most).Draw(r, label("weight %d", len(s.weights)))
			s.weights = append(s.weights, w)
			load += w
			if len(s.weights) > 1 && rapid.IntRange(0, 3).Draw(r, label("room left after %d", len(s.weights))) == 0 {
				break
			}
		}
		s.running = len(s.weights)
	case testAtTry:
		s.items = rapid.IntRange(2, 6).Draw(r, label("items"))
		s.limit = s.items + rapid.IntRange(0, 2).Draw(r, label("slots beyond the items"))
		s.running = s.items
	}
	s.afterFill = api != testAtTry && s.running > 1 && !odd("count from the start?")
	nFails := 0
	if s.afterFill {
		order := rapid.Permutation(testItems(s.running)).Draw(r, label("order of the calls that return"))
		n := rapid.IntRange(1, s.running-1).Draw(r, label("calls that return nil"))
		s.succeed, order = order[:n], order[n:]
		if !odd("only a cancel?") {
			s.fails = order[:min(len(order), rapid.IntRange(1, 3).Draw(r, label("calls that fail")))]
		}
		nFails = len(s.fails)
		s.together = odd("together?")
	} else {
		if !odd("only a cancel?") {
			s.failing = rapid.IntRange(1, 3).Draw(r, label("calls that fail"))
		}
		nFails = s.failing
	}
	if nFails == 0 || odd("the caller cancels too?") {
		s.cancel = rapid.IntRange(0, nFails).Draw(r, label("cancel after this many failures"))
	}
	for k := range nFails {
		s.yields = append(s.yields, rapid.IntRange(0, 4).Draw(r, label("yields %d", k)))
	}
	// The first few looks once the loop woke, or once the first call
	// runs (the next look then is often the loop's look before the next
	// item): where it decides to start.
	if s.afterFill {
		s.look = rapid.IntRange(1, 3).Draw(r, label("look"))
	} else {
		s.look = rapid.IntRange(2, 3).Draw(r, label("look"))
	}
	if odd("another look?") {
		s.look = rapid.IntRange(1, 6).Draw(r, label("other look"))
	}
	if api == testAtWeighted {
		// The next item does not fit while the first ones run, and fits
		// once the first call that returns nil has given its room back.
		load, freed := 0, 1
		for _, w := range s.weights {
			load += w
		}
		if len(s.succeed) > 0 {
			freed = s.weights[s.succeed[0]]
		}
		s.weights = append(s.weights, rapid.IntRange(s.limit-load+1, s.limit-load+freed).Draw(r, label("next weight")))
		for k := range rapid.IntRange(0, 3).Draw(r, label("items after it")) {
			s.weights = append(s.weights, rapid.IntRange(-1, s.limit+1).Draw(r, label("weight after %d", k)))
		}
		s.items = len(s.weights)
	}
	return s
}

// testAtScenario is the calls made at once.
type testAtScenario []testAtCaller

func (sc testAtScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d call(s) at once, each with a ctx of its own; every call of fn waits until the test lets it "+
		"return or its ctx ends (then it returns ctx.Err()); a look is the code's Err or Done on the caller's "+
		"ctx, from a goroutine that never ran a call of fn, while one runs (if it never looks that often, the "+
		"stop comes once everything has settled):", len(sc))
	for n, s := range sc {
		fmt.Fprintf(&b, "\n  caller %d: %v", n+1, s)
	}
	return b.String()
}

func testAtDraw(api int) func(*rapid.T) testAtScenario {
	return func(r *rapid.T) testAtScenario {
		var sc testAtScenario
		for c := range rapid.IntRange(1, 3).Draw(r, "callers") {
			sc = append(sc, testAtDrawCaller(r, api, c+1))
		}
		return sc
	}
}

// testAtHold counts the looks at a caller's ctx of goroutines that never
// ran a call, while a call runs, and holds look number left until the test
// lets it go.
type testAtHold struct {
	mu       sync.Mutex
	counting bool
	stopped  bool // no look waits any more
	left     int
	calls    map[int]bool  // the goroutines that ran a call of fn
	active   int           // calls of fn running now
	held     chan struct{} // a look waits: the test receives once per hold
	letGo    chan struct{} // the look goes on
	once     sync.Once
}

func (x *testAtHold) look() {
	x.mu.Lock()
	counts := x.counting && !x.stopped && x.active > 0
	x.mu.Unlock()
	if !counts {
		return
	}
	id := katatest.Goroutine()
	x.mu.Lock()
	if !x.counting || x.stopped || x.active == 0 || x.calls[id] {
		x.mu.Unlock()
		return
	}
	x.left--
	if x.left > 0 {
		x.mu.Unlock()
		return
	}
	x.mu.Unlock()
	x.held <- struct{}{}
	<-x.letGo
}

// release lets a waiting look go on, and every look after it.
func (x *testAtHold) release() {
	x.mu.Lock()
	x.stopped = true
	x.mu.Unlock()
	x.once.Do(func() { close(x.letGo) })
}

// testAtCtx is the caller's ctx, of a type of its own. Err reads the state
// before the look waits, as any look does: what happens while it waits
// comes after the look.
type testAtCtx struct {
	context.Context
	hold *testAtHold
}

func (c testAtCtx) Err() error {
	err := c.Context.Err()
	c.hold.look()
	return err
}

func (c testAtCtx) Done() <-chan struct{} {
	d := c.Context.Done()
	c.hold.look()
	return d
}

// testAtRun is one call of a scenario and what its calls of fn did.
type testAtRun struct {
	s     testAtCaller
	c     katatest.ErrCall
	gates testGates
	hold  *testAtHold
	done  bool // the stop happened

	mu       sync.Mutex
	entered  []bool
	returned []bool
	failing  map[int]int // item → its place among the failures
	seq      int
	startSeq []int // when each call of fn started
	stopSeq  int   // when the first failure was returned or the caller cancelled; 0: not yet
}

func (x *testAtRun) stopNow() {
	x.mu.Lock()
	if x.stopSeq == 0 {
		x.seq++
		x.stopSeq = x.seq
	}
	x.mu.Unlock()
}

func (x *testAtRun) fn(ctx context.Context, i int) error {
	id := katatest.Goroutine()
	x.hold.mu.Lock()
	x.hold.calls[id] = true
	x.hold.active++
	x.hold.mu.Unlock()
	defer func() {
		x.hold.mu.Lock()
		x.hold.active--
		x.hold.mu.Unlock()
	}()
	x.mu.Lock()
	x.entered[i] = true
	x.seq++
	x.startSeq[i] = x.seq
	x.mu.Unlock()
	var err error
	select {
	case <-x.gates.gates[i]:
		x.mu.Lock()
		k, fails := x.failing[i]
		x.mu.Unlock()
		if fails {
			for range x.s.yields[k] {
				shake.Point()
			}
			err = fmt.Errorf("thumb-%d: %w", i, &testXStatus{403})
			x.stopNow()
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	x.mu.Lock()
	x.returned[i] = true
	x.mu.Unlock()
	return err
}

func (x *testAtRun) start(h *katatest.H) {
	s := x.s
	x.c = katatest.StartErr(h, func(ctx context.Context) error {
		hctx := testAtCtx{ctx, x.hold}
		switch s.api {
		case testAtWeighted:
			return ForEachWeighted(hctx, testItems(s.items), s.limit, func(i int) int { return s.weights[i] }, x.fn)
		case testAtTry:
			b, err := NewBulkhead(s.limit)
			if err != nil {
				return err
			}
			return TryForEach(hctx, b, testItems(s.items), x.fn)
		}
		return ForEach(hctx, testItems(s.items), s.limit, x.fn)
	})
}

// running lists the items whose call of fn runs now.
func (x *testAtRun) running() []int {
	x.mu.Lock()
	defer x.mu.Unlock()
	var r []int
	for i := range x.s.items {
		if x.entered[i] && !x.returned[i] {
			r = append(r, i)
		}
	}
	return r
}

// stop makes the stop happen: the failures, and the cancel among them.
// Counted from the start, the calls that fail are the lowest items
// running; it reports false if one must fail and none runs.
func (x *testAtRun) stop() bool {
	if x.done {
		return true
	}
	s := x.s
	fails := s.fails
	if !s.afterFill {
		fails = x.running()
		if s.failing > 0 && len(fails) == 0 {
			return false
		}
		fails = fails[:min(len(fails), s.failing)]
		x.mu.Lock()
		for k, i := range fails {
			x.failing[i] = k
		}
		x.mu.Unlock()
	}
	x.done = true
	for k, i := range fails {
		if s.cancel == k {
			x.stopNow()
			x.c.Cancel()
		}
		x.gates.release(i)
	}
	if s.cancel >= len(fails) {
		x.stopNow()
		x.c.Cancel()
	}
	return true
}

func testAtPlay(h *katatest.H, sc testAtScenario) {
	runs := make([]*testAtRun, len(sc))
	for n, s := range sc {
		x := &testAtRun{s: s, gates: testNewGates(s.items), entered: make([]bool, s.items),
			returned: make([]bool, s.items), startSeq: make([]int, s.items), failing: map[int]int{},
			hold: &testAtHold{left: s.look, counting: !s.afterFill, calls: map[int]bool{},
				held: make(chan struct{}, 1), letGo: make(chan struct{})}}
		for k, i := range s.fails {
			x.failing[i] = k
		}
		h.Own(x.gates.releaseAll)
		h.Own(x.hold.release)
		runs[n] = x
	}
	for _, x := range runs {
		x.start(h)
	}
	// settle lets everything settle; while the code waits at a look, the
	// stop of that call happens, everything else settles, and the code goes
	// on.
	settle := func() {
		for {
			testSettle(h)
			var stopped []*testAtRun
			handled := false
			for _, x := range runs {
				select {
				case <-x.hold.held:
				default:
					continue
				}
				handled = true
				if x.stop() {
					stopped = append(stopped, x)
					continue
				}
				// No call to fail runs yet: wait at the next look.
				x.hold.mu.Lock()
				x.hold.left = 1
				x.hold.mu.Unlock()
				x.hold.letGo <- struct{}{}
			}
			if !handled {
				return
			}
			if len(stopped) > 0 {
				testSettle(h)
			}
			for _, x := range stopped {
				x.hold.release()
			}
		}
	}
	settle()
	for n, x := range runs {
		if x.c.Returned() && x.c.Panicked() {
			return // reported
		}
		if !x.done && x.c.Returned() {
			h.Errorf("%s: caller %d's %s returned (with %v) while the calls it started were still running, "+
				"before anything had returned or failed: return only after every call you started has returned",
				x.s.req(), n+1, x.s.name(), x.c.Err())
			katatest.Unwind(h, testAtCalls(runs)...)
			return
		}
	}
	more := false
	for _, x := range runs {
		if x.done || !x.s.afterFill {
			continue
		}
		more = true
		x.hold.mu.Lock()
		x.hold.counting = true
		x.hold.mu.Unlock()
		for _, i := range x.s.succeed {
			x.gates.release(i)
		}
		if x.s.together {
			x.stop()
		}
	}
	if more {
		settle()
	}
	more = false
	for _, x := range runs {
		x.hold.release()
		if !x.done {
			more = x.stop() || more
		}
	}
	if more {
		testSettle(h)
	}
	for n, x := range runs {
		if testAtLive(h, n, x) {
			break
		}
	}
	for _, x := range runs {
		x.gates.releaseAll()
	}
	for n, x := range runs {
		msg := "%s: every call of fn was let go, but caller %d's %s did not return"
		if x.s.api == testAtWeighted && !testReturns(h, x.c, msg, x.s.req(), n+1, x.s.name()) ||
			!x.c.Returns(msg, x.s.req(), n+1, x.s.name()) {
			katatest.Unwind(h, testAtCalls(runs)...)
			return
		}
	}
	for _, x := range runs {
		if _, ok := testResult(x.c); !ok {
			return
		}
	}
}

func testAtCalls(runs []*testAtRun) []katatest.ErrCall {
	var calls []katatest.ErrCall
	for _, x := range runs {
		calls = append(calls, x.c)
	}
	return calls
}

// testAtLive reports a call of fn still running with a live ctx once
// everything has settled after the stop of caller n, if there is one.
func testAtLive(h *katatest.H, n int, x *testAtRun) bool {
	live := x.running()
	if len(live) == 0 {
		return false
	}
	x.mu.Lock()
	last := slices.Max(live)
	when := "just before"
	if x.startSeq[last] > x.stopSeq {
		when = "after"
	}
	x.mu.Unlock()
	how := "ForEach"
	switch x.s.api {
	case testAtWeighted:
		how = "ForEachWeighted (errors and cancel as for ForEach)"
	case testAtTry:
		how = "TryForEach (ForEach on the slots of a Bulkhead)"
	}
	what := "a call failed"
	if x.s.nFails() == 0 {
		what = "the caller cancelled ctx"
	}
	h.Errorf("%s: after ctx is cancelled or a call fails, no new call starts, and the calls in flight see their ctx "+
		"cancelled; but caller %d's %s left item(s) %v running with a live ctx once everything had settled after the "+
		"stop (%s): item %d's call started %s the stop, as the code was starting it, and nothing ever cancelled its "+
		"ctx. The call that starts at the moment of the stop must either not start or get a ctx the stop cancels. "+
		"A ctx of its own per call, registered for the failure to cancel after a look at a stop flag, misses a "+
		"failure that sweeps the registered calls between that look and the registration: look and register under "+
		"the lock the sweep holds, or better, give every call one ctx derived from the caller's and cancel it on "+
		"the first error", x.s.req(), n+1, how, live, what, last, when)
	return true
}

func TestR3_ExploreAStopAsTheNextCallStarts(t *testing.T) {
	katatest.Explore(t, 3, testAtDraw(testAtForEach), testAtPlay)
}

func TestB1_ExploreAStopAsTheNextCallStarts(t *testing.T) {
	katatest.Explore(t, 3, testAtDraw(testAtWeighted), testAtPlay)
}

func TestB2_ExploreAStopAsTheNextCallStarts(t *testing.T) {
	katatest.Explore(t, 3, testAtDraw(testAtTry), testAtPlay)
}

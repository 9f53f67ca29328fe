package blockingloop

// R3, explored where the loop cannot take a request: before Run starts
// (New allows it: Get and Stats wait for Run meanwhile) and while the loop
// is busy inside OnTick. Callers of Get and Stats arrive then, several at
// once; some never give up, some come with a ctx that has already ended
// (cancelled or past its deadline), some are cancelled while they wait and
// some reach a deadline on the mock clock. A caller who gives up returns
// ctx.Err() at once, though no loop has taken its request: waiting to hand
// the request over is waiting too. Once the loop is free, the callers who
// stayed get their answers and the loop keeps answering.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How a caller of a testGiveUp scenario gives up, if it does.
const (
	testStays     = iota // never gives up
	testLeftEarly        // its ctx was cancelled before it called
	testLateEarly        // its ctx's deadline had passed before it called
	testCancels          // its caller cancels its ctx while it waits
	testDeadline         // its ctx's deadline passes on the mock clock while it waits
)

// testWaiter is one caller of a testGiveUp scenario.
type testWaiter struct {
	stats   bool   // Stats; otherwise Get(key)
	key     string // the key of a Get
	leave   int    // how it gives up (testStays, …)
	timeout time.Duration
}

func (w testWaiter) name() string {
	if w.stats {
		return "Stats"
	}
	return fmt.Sprintf("Get(%q)", w.key)
}

// wantErr is the error ctx.Err() gives once the caller has given up.
func (w testWaiter) wantErr() error {
	if w.leave == testLateEarly || w.leave == testDeadline {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// how says how the caller gave up, for a verdict.
func (w testWaiter) how() string {
	switch w.leave {
	case testLeftEarly:
		return "its ctx had been cancelled before it called"
	case testLateEarly:
		return "its ctx's deadline had passed before it called"
	case testCancels:
		return "its ctx was cancelled while it waited"
	}
	return fmt.Sprintf("its %v deadline passed on the clock while it waited", w.timeout)
}

// testGiveUp is one scenario: callers arrive while the loop cannot take
// their requests, and some of them give up.
type testGiveUp struct {
	maxInFlight int
	onTick      bool     // the loop is busy inside OnTick; otherwise Run has not started
	warm        []string // onTick: keys Get and cache before the loop gets busy
	callers     []testWaiter
	order       []int // the callers who cancel or have a deadline, in the order they give up
}

func (s testGiveUp) where() string {
	if s.onTick {
		return "the loop was busy inside OnTick"
	}
	return "Run had not started yet"
}

func (s testGiveUp) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d, Tick 1s; the backend answers every lookup at once", s.maxInFlight)
	if s.onTick {
		b.WriteString("\n  Run starts")
		if len(s.warm) > 0 {
			fmt.Fprintf(&b, "; Get %s, which are then cached", testKeyNames(s.warm))
		}
		b.WriteString("\n  the clock moves to the next Tick: the loop calls OnTick, which takes a while")
	} else {
		b.WriteString("\n  Run has not started")
	}
	b.WriteString("\n  at once, each on its own goroutine:")
	for i, w := range s.callers {
		fmt.Fprintf(&b, "\n    caller %d: %s", i+1, w.name())
		switch w.leave {
		case testStays:
			b.WriteString(", never gives up")
		case testLeftEarly:
			b.WriteString(", with a ctx cancelled before the call")
		case testLateEarly:
			b.WriteString(", with a ctx whose deadline has already passed")
		case testCancels:
			b.WriteString(", cancelled later")
		case testDeadline:
			fmt.Fprintf(&b, ", with a deadline %v later on the clock", w.timeout)
		}
	}
	for _, i := range s.order {
		if s.callers[i].leave == testCancels {
			fmt.Fprintf(&b, "\n  caller %d gives up: its ctx is cancelled", i+1)
		} else {
			fmt.Fprintf(&b, "\n  the clock moves on to caller %d's deadline (if it has not passed yet)", i+1)
		}
	}
	if s.onTick {
		b.WriteString("\n  OnTick returns")
	} else {
		b.WriteString("\n  Run starts")
	}
	return b.String()
}

func testDrawGiveUp(r *rapid.T) testGiveUp {
	s := testGiveUp{
		maxInFlight: rapid.IntRange(-1, 3).Draw(r, "MaxInFlight"),
		onTick:      rapid.Bool().Draw(r, "inside OnTick"),
	}
	key := rapid.SampledFrom(testScnKeys)
	if s.onTick {
		s.warm = rapid.SliceOfNDistinct(key, 0, 2, rapid.ID[string]).Draw(r, "cached keys")
	}
	n := rapid.IntRange(1, 6).Draw(r, "callers")
	var leaving []int
	for i := range n {
		w := testWaiter{
			stats: rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("caller %d calls Stats", i+1)) == 0,
			leave: rapid.SampledFrom([]int{testStays, testLeftEarly, testLateEarly, testCancels, testCancels,
				testDeadline}).Draw(r, fmt.Sprintf("caller %d gives up", i+1)),
		}
		if !w.stats {
			w.key = key.Draw(r, fmt.Sprintf("caller %d key", i+1))
		}
		if w.leave == testDeadline {
			w.timeout = time.Duration(rapid.IntRange(1, 3000).Draw(r, fmt.Sprintf("caller %d deadline ms", i+1))) *
				time.Millisecond
		}
		if w.leave == testCancels || w.leave == testDeadline {
			leaving = append(leaving, i)
		}
		s.callers = append(s.callers, w)
	}
	s.order = rapid.Permutation(leaving).Draw(r, "order of giving up")
	return s
}

// testGiveUpFixed are played every run: each way of giving up, for Get
// and for Stats, before Run starts and while the loop is inside OnTick.
var testGiveUpFixed = []testGiveUp{{
	maxInFlight: 1,
	callers: []testWaiter{
		{key: "EUR", leave: testStays},
		{key: "GBP", leave: testLeftEarly},
		{stats: true, leave: testLateEarly},
		{key: "JPY", leave: testCancels},
		{stats: true, leave: testCancels},
		{key: "EUR", leave: testDeadline, timeout: 300 * time.Millisecond},
		{stats: true, leave: testDeadline, timeout: time.Second},
		{stats: true, leave: testStays},
	},
	order: []int{3, 5, 4, 6},
}, {
	maxInFlight: 2,
	onTick:      true,
	warm:        []string{"EUR"},
	callers: []testWaiter{
		{key: "EUR", leave: testStays},
		{key: "GBP", leave: testLateEarly},
		{stats: true, leave: testLeftEarly},
		{key: "", leave: testCancels},
		{stats: true, leave: testDeadline, timeout: 200 * time.Millisecond},
		{key: "EUR", leave: testDeadline, timeout: 700 * time.Millisecond},
		{stats: true, leave: testCancels},
		{key: "CHF", leave: testStays},
	},
	order: []int{6, 5, 3, 4},
}}

// testGiveUpCall is a caller being played.
type testGiveUpCall struct {
	w        testWaiter
	get      *katatest.Call[string]
	stats    *katatest.Call[Stats]
	ended    bool // its ctx has ended
	answered bool // it returned before its ctx ended
	checked  bool
}

func (c *testGiveUpCall) returned() bool {
	if c.w.stats {
		return c.stats.Returned()
	}
	return c.get.Returned()
}

// result is what the call returned, as a verdict shows it, and its error.
func (c *testGiveUpCall) result() (string, error) {
	if c.w.stats {
		s, err := c.stats.Result()
		return fmt.Sprintf("(%+v, %v)", s, err), err
	}
	v, err := c.get.Result()
	return fmt.Sprintf("(%q, %v)", v, err), err
}

// answer checks the answer of a call that returned while its ctx still
// ran: the backend's value, or Stats without an error.
func (c *testGiveUpCall) answer(h *katatest.H, when string) bool {
	shown, err := c.result()
	if c.w.stats && err == nil {
		return true
	}
	if !c.w.stats {
		if v, _ := c.get.Result(); err == nil && v == "v:"+c.w.key {
			return true
		}
	}
	want := "Stats and a nil error"
	if !c.w.stats {
		want = fmt.Sprintf("the backend's value %q", "v:"+c.w.key)
	}
	h.Errorf("%s, whose caller had not given up, returned %s %s; want %s: callers who give up around a call "+
		"change nothing for it", c.w.name(), shown, when, want)
	return false
}

func (s testGiveUp) play(h *katatest.H) {
	be := testNewBackend()
	hold := h.Gate()
	var holdMu sync.Mutex
	holding := false
	onTick := func(Stats) {
		holdMu.Lock()
		on := holding
		holdMu.Unlock()
		if on {
			_ = hold.Hold(context.Background()) // an OnTick that takes a while
		}
	}
	cache := New(h.Clk, be.lookup, Config{MaxInFlight: s.maxInFlight, Tick: time.Second, OnTick: onTick})
	var run katatest.ErrCall
	started := false
	startRun := func() {
		if !started {
			started = true
			run = katatest.StartErr(h, func(ctx context.Context) error { return cache.Run(ctx) })
		}
	}
	var calls []*testGiveUpCall
	defer func() { // whatever happened: let the loop go, then stop everything
		startRun()
		hold.Release()
		for _, c := range calls {
			if c.w.stats {
				c.stats.Cancel()
			} else {
				c.get.Cancel()
			}
		}
		synctest.Wait()
		run.Cancel()
		synctest.Wait()
	}()

	if s.onTick {
		startRun()
		for _, k := range s.warm {
			g := katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, k) })
			synctest.Wait()
			if !g.Returned() {
				return // a cache that cannot answer a Get: R1 says more
			}
		}
		holdMu.Lock()
		holding = true
		holdMu.Unlock()
		h.Advance(time.Second - h.Elapsed()%time.Second)
		if hold.Waiting() == 0 {
			return // no heartbeat, or not on the loop: R2 says more
		}
	}

	begin := h.Elapsed()
	for _, w := range s.callers {
		c := &testGiveUpCall{w: w}
		var opts []katatest.CtxOption
		switch w.leave {
		case testLeftEarly:
			opts = append(opts, katatest.Cancelled())
			c.ended = true
		case testLateEarly:
			opts = append(opts, katatest.Expired())
			c.ended = true
		case testDeadline:
			opts = append(opts, katatest.Timeout(w.timeout))
		}
		if w.stats {
			c.stats = katatest.Start(h, func(ctx context.Context) (Stats, error) { return cache.Stats(ctx) }, opts...)
		} else {
			c.get = katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, w.key) }, opts...)
		}
		calls = append(calls, c)
	}
	synctest.Wait()

	// check: every caller whose ctx has ended has returned, at once, with
	// ctx.Err() itself, unless it had its answer before it gave up.
	check := func() bool {
		for _, c := range calls {
			if c.checked {
				continue
			}
			if !c.ended {
				if c.returned() {
					c.answered = true
				}
				continue
			}
			if !c.returned() {
				hint := "select on ctx.Done() together with the send of the request, not only while waiting for " +
					"the reply"
				if c.w.stats {
					hint = "Stats returns ctx.Err() if ctx ends before the loop answers: " + hint
				}
				h.Errorf("%s kept waiting after its caller gave up (%s), before the loop took its request (%s): a "+
					"caller who gives up returns ctx.Err() at once, also while it waits to hand its request to the "+
					"loop, which is not always receiving (before Run starts, while it is busy); %s", c.w.name(),
					c.w.how(), s.where(), hint)
				return false
			}
			c.checked = true
			shown, err := c.result()
			if c.answered || s.onTick && err == nil {
				// It had its answer before it gave up, or the loop (or a
				// design without one) answered it before it saw ctx end.
				if !c.answer(h, "before it gave up") {
					return false
				}
				continue
			}
			if err != c.w.wantErr() {
				h.Errorf("%s, whose caller gave up (%s) before the loop took its request (%s), returned %s; want "+
					"ctx.Err() itself (%v), at once", c.w.name(), c.w.how(), s.where(), shown, c.w.wantErr())
				return false
			}
		}
		return true
	}
	if !check() {
		return
	}
	for _, i := range s.order {
		c := calls[i]
		if c.w.leave == testCancels {
			c.answered = c.returned()
			if c.w.stats {
				c.stats.Cancel()
			} else {
				c.get.Cancel()
			}
			c.ended = true
			synctest.Wait()
		} else if due := begin + c.w.timeout; h.Elapsed() < due {
			h.Advance(due - h.Elapsed())
		}
		for _, d := range calls {
			if d.w.leave == testDeadline && h.Elapsed() >= begin+d.w.timeout && !d.ended {
				d.ended = true
			}
		}
		if !check() {
			return
		}
	}

	// The loop gets free: the callers who stayed get their answers.
	freed := "Run started"
	if s.onTick {
		freed = "OnTick returned"
		hold.Release()
	} else {
		startRun()
	}
	synctest.Wait()
	for _, c := range calls {
		if c.ended {
			continue
		}
		var ok bool
		msg := "%s, whose caller never gave up, did not return once %s: the loop answers it as soon as it is free%s"
		slots := ""
		if s.maxInFlight < 1 && !c.w.stats {
			slots = fmt.Sprintf("; MaxInFlight is %d here, and values below 1 mean 1: a miss still gets its lookup, "+
				"one at a time", s.maxInFlight)
		}
		if c.w.stats {
			ok = c.stats.Returns(msg, c.w.name(), freed, slots)
		} else {
			ok = c.get.Returns(msg, c.w.name(), freed, slots)
		}
		if !ok || !c.answer(h, "once "+freed) {
			return
		}
	}
	// And the loop keeps answering.
	fresh := katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, "NZD") })
	if !fresh.Returns("once the callers who gave up had left, a new Get(%q) did not return (%s): the loop keeps "+
		"answering whoever gave up before", "NZD", freed) {
		return
	}
	if v, err := fresh.Result(); err != nil || v != "v:NZD" {
		h.Errorf("once the callers who gave up had left, a new Get(%q) returned (%q, %v); want the backend's "+
			"value %q: the loop keeps answering whoever gave up before", "NZD", v, err, "v:NZD")
	}
}

func TestR3_ExploreCallersWhoGiveUpBeforeTheLoopTakesTheirRequest(t *testing.T) {
	katatest.Replay(t, testGiveUpFixed, func(h *katatest.H, s testGiveUp) { s.play(h) })
	katatest.Explore(t, 20, testDrawGiveUp, func(h *katatest.H, s testGiveUp) { s.play(h) })
}

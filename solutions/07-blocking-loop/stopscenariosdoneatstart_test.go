package blockingloop

// R5, explored where the stop comes before the loop does: Run is called
// with a ctx that has already ended (a shutdown racing the startup), or
// that is cancelled as Run is called. The README's stop holds all the same:
// the loop stops answering, so the Gets and Stats that were waiting for Run
// (New allows them) and those that come after return ErrStopped at once,
// and Run returns nil once the lookups it started, if any, have returned.
// A request already waiting when Run starts is ready together with the
// end of its ctx, so the loop may take it first: a Get's lookup then
// answers nobody (its caller still gets ErrStopped), and a Stats may be
// answered with a snapshot. A ctx cancelled as Run starts may end after the
// loop has answered a waiting Get with its value: that too is allowed.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How Run's ctx has ended before Run is called, and (for the ways a test
// can time) how it ends right as Run is called.
var testDoneWays = []struct{ before, asRunStarts string }{
	{"had been cancelled (context.WithCancel)", "was cancelled (context.WithCancel)"},
	{"had been cancelled with a cause (context.WithCancelCause)", "was cancelled with a cause (context.WithCancelCause)"},
	{"had passed its deadline on the injected clock (clk.WithDeadline)", ""},
	{"had a timeout of 0 on package time (context.WithTimeout)", ""},
	{"was derived (context.WithValue, then WithCancel) from a parent ctx that had been cancelled",
		"was derived (context.WithValue, then WithCancel) from a parent ctx that was cancelled"},
}

// testDoneCanRace: the ways a test can make happen as Run is called.
func testDoneCanRace(way int) bool { return testDoneWays[way].asRunStarts != "" }

// testDoneCall is a Get (of key) or a Stats.
type testDoneCall struct {
	stats bool
	key   string
}

func (c testDoneCall) String() string {
	if c.stats {
		return "Stats"
	}
	return fmt.Sprintf("Get(%q)", c.key)
}

// testDoneAtStart is one scenario: Run's ctx is over before the loop runs.
type testDoneAtStart struct {
	maxInFlight int
	tick        bool
	grace       time.Duration
	way         int            // testDoneWays
	asRunStarts bool           // the ctx ends right as Run is called, not before
	before      []testDoneCall // called before Run, each on its own goroutine
	after       []testDoneCall // called once Run has returned, one after the other
}

// how says how Run's ctx ended, for a verdict.
func (s testDoneAtStart) how() string {
	if s.asRunStarts {
		return testDoneWays[s.way].asRunStarts + " right as Run was called"
	}
	return testDoneWays[s.way].before + " before Run was called"
}

func (s testDoneAtStart) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d", s.maxInFlight)
	if s.tick {
		fmt.Fprintf(&b, ", Tick %v", testTick)
	}
	if s.grace > 0 {
		fmt.Fprintf(&b, ", Grace %v", s.grace)
	}
	b.WriteString("; the backend answers every lookup at once")
	for _, c := range s.before {
		fmt.Fprintf(&b, "\n  %s is called before Run, and waits for it", c)
	}
	fmt.Fprintf(&b, "\n  Run is called; its ctx %s", s.how())
	for _, c := range s.after {
		fmt.Fprintf(&b, "\n  once Run has returned, %s is called", c)
	}
	return b.String()
}

func testDrawDoneAtStart(r *rapid.T) testDoneAtStart {
	s := testDoneAtStart{
		maxInFlight: rapid.IntRange(0, 3).Draw(r, "MaxInFlight"),
		tick:        rapid.Bool().Draw(r, "heartbeat"),
		grace:       rapid.SampledFrom([]time.Duration{0, 2 * time.Minute}).Draw(r, "Grace"),
		way:         rapid.IntRange(0, len(testDoneWays)-1).Draw(r, "way"),
	}
	if testDoneCanRace(s.way) {
		s.asRunStarts = rapid.Bool().Draw(r, "as Run starts")
	}
	call := func(label string) testDoneCall {
		if rapid.IntRange(0, 2).Draw(r, label+" is Stats") == 0 {
			return testDoneCall{stats: true}
		}
		return testDoneCall{key: rapid.SampledFrom(testScnKeys).Draw(r, label+" key")}
	}
	for i := range rapid.IntRange(0, 4).Draw(r, "callers before Run") {
		s.before = append(s.before, call(fmt.Sprintf("before %d", i+1)))
	}
	for i := range rapid.IntRange(1, 3).Draw(r, "callers after Run") {
		s.after = append(s.after, call(fmt.Sprintf("after %d", i+1)))
	}
	return s
}

// testDoneAtStartFixed: a plain cancel and a past deadline, with callers
// waiting before Run and coming after it, Gets of one key and of two.
var testDoneAtStartFixed = []testDoneAtStart{
	{maxInFlight: 1, tick: true, way: 0,
		before: []testDoneCall{{key: "EUR"}, {stats: true}, {key: "GBP"}, {key: "EUR"}},
		after:  []testDoneCall{{key: "EUR"}, {stats: true}}},
	{maxInFlight: 2, grace: 2 * time.Minute, way: 2,
		after: []testDoneCall{{stats: true}, {key: "JPY"}}},
}

// runCtx makes Run's ctx and returns it with the cancel that ends it as
// Run is called (nil when it has ended already) and one that frees it.
func (s testDoneAtStart) runCtx(h *katatest.H) (ctx context.Context, end func(), free context.CancelFunc) {
	parent := context.Background()
	switch s.way {
	case 0:
		ctx, free = context.WithCancel(parent)
		end = free
	case 1:
		var cause context.CancelCauseFunc
		ctx, cause = context.WithCancelCause(parent)
		end, free = func() { cause(testErrShutdown) }, func() { cause(nil) }
	case 2:
		ctx, free = h.Clk.WithDeadline(parent, h.Clk.Now().Add(-time.Second))
	case 3:
		ctx, free = context.WithTimeout(parent, 0)
	default:
		var outer context.CancelFunc
		parent, outer = context.WithCancel(parent)
		var child context.CancelFunc
		ctx, child = context.WithCancel(context.WithValue(parent, testCtxKey{}, "request-scoped"))
		end, free = outer, func() { child(); outer() }
	}
	if end != nil && !s.asRunStarts {
		end()
		end = nil
	}
	return ctx, end, free
}

// testDoneCallRun is a testDoneCall being played.
type testDoneCallRun struct {
	c     testDoneCall
	get   *katatest.Call[string]
	stats *katatest.Call[Stats]
}

func (s testDoneAtStart) start(h *katatest.H, cache *Cache, c testDoneCall) testDoneCallRun {
	if c.stats {
		return testDoneCallRun{c: c, stats: katatest.Start(h, cache.Stats)}
	}
	return testDoneCallRun{c: c, get: katatest.Start(h, func(ctx context.Context) (string, error) {
		return cache.Get(ctx, c.key)
	})}
}

func (r testDoneCallRun) returns(format string, args ...any) bool {
	if r.stats != nil {
		return r.stats.Returns(format, args...)
	}
	return r.get.Returns(format, args...)
}

func (r testDoneCallRun) returned() bool {
	if r.stats != nil {
		return r.stats.Returned()
	}
	return r.get.Returned()
}

// result says what the call returned, whether it is an answer the loop
// may give when it ran before its ctx ended (any snapshot, or the
// backend's value), and its error.
func (r testDoneCallRun) result() (got string, answer bool, err error) {
	if r.stats != nil {
		var st Stats
		st, err = r.stats.Result()
		got, answer = fmt.Sprintf("(%+v, nil)", st), err == nil
	} else {
		var v string
		v, err = r.get.Result()
		got, answer = fmt.Sprintf("(%q, nil)", v), err == nil && v == "v:"+r.c.key
	}
	if err != nil {
		got = fmt.Sprintf("the error %q", err)
	}
	return got, answer, err
}

const testDoneAtStartLikely = "Likely mistake: Run returns early when its ctx has already ended (nothing started, nothing " +
	"to wait for) and skips what tells Get and Stats that the cache has stopped (closing the channel they select " +
	"on, say); do that on every way out of Run, or let the loop find ctx.Done() in its select like any other stop"

func (s testDoneAtStart) play(h *katatest.H) {
	be := testNewBackend()
	h.Own(be.releaseAll)
	cfg := Config{MaxInFlight: s.maxInFlight, Grace: s.grace}
	ticks := &katatest.Recorder[Stats]{}
	if s.tick {
		cfg.Tick, cfg.OnTick = testTick, ticks.Add
	}
	cache := New(h.Clk, be.lookup, cfg)
	var before []testDoneCallRun
	for _, c := range s.before {
		before = append(before, s.start(h, cache, c))
	}
	synctest.Wait()
	for _, r := range before {
		if r.returned() {
			got, _, _ := r.result()
			h.Errorf("%s, called before Run, returned %s without waiting for it: New's doc says Get and Stats "+
				"wait for Run meanwhile", r.c, got)
			return
		}
	}
	ctx, end, free := s.runCtx(h)
	defer free()
	run := katatest.StartErr(h, func(context.Context) error { return cache.Run(ctx) })
	if end != nil {
		end() // no settle: the ctx ends as Run starts
	}
	synctest.Wait()
	runSays := func() string {
		if !run.Returned() {
			return "Run had not returned"
		}
		if err := run.Err(); err != nil {
			return fmt.Sprintf("Run had returned %q", err)
		}
		return "Run had returned nil"
	}
	for _, r := range before {
		if !r.returned() {
			r.returns("%s, waiting for Run since before it was called, kept waiting once Run's ctx had ended "+
				"(its ctx %s; %s). The README: when Run's ctx ends, the loop stops answering: waiting and later "+
				"Get and Stats calls return ErrStopped at once, also when it ended before the loop ever ran (a "+
				"shutdown racing the startup). %s", r.c, s.how(), runSays(), testDoneAtStartLikely)
			return
		}
		// A Stats ready together with the stop may be answered instead; a
		// Get too, when the loop ran before the ctx ended.
		got, answer, err := r.result()
		if !errors.Is(err, ErrStopped) && !(answer && (r.stats != nil || s.asRunStarts)) {
			h.Errorf("%s, waiting for Run since before it was called, returned %s once Run's ctx had ended (its "+
				"ctx %s); want ErrStopped. A lookup that returns once Run's ctx has ended answers nobody, and "+
				"the callers who waited get ErrStopped", r.c, got, s.how())
			return
		}
	}
	if !run.Returns("Run did not return, though its ctx %s and every lookup it may have started had returned "+
		"(the backend answers at once): Run returns nil once every running lookup has returned, at once when "+
		"none is running", s.how()) {
		return
	}
	if err, ok := run.Finish("Run"); !ok {
		return
	} else if err != nil {
		h.Errorf("Run returned %q; its ctx %s, and no lookup was left running. Want nil: the end of Run's ctx is "+
			"how the cache is told to stop, also before it started, so don't return ctx.Err()", err, s.how())
		return
	}
	if n := h.Ticking(); n > 0 {
		h.Errorf("Run had returned (its ctx %s), but its heartbeat still ticked on the clock: stop the "+
			"clk.Ticker on every way out of Run (defer t.Stop() right after making it)", s.how())
		return
	}
	for _, c := range s.after {
		r := s.start(h, cache, c)
		synctest.Wait()
		if !r.returned() {
			r.returns("%s, called after Run had returned, kept waiting (Run's ctx %s; Run had returned nil). "+
				"The README: when Run's ctx ends, the loop stops answering: waiting and later Get and Stats "+
				"calls return ErrStopped at once, also when it ended before the loop ever ran. %s",
				c, s.how(), testDoneAtStartLikely)
			return
		}
		if got, _, err := r.result(); !errors.Is(err, ErrStopped) {
			h.Errorf("%s, called after Run had returned (Run's ctx %s), returned %s; want ErrStopped: once "+
				"Run's ctx has ended, Get and Stats return ErrStopped", c, s.how(), got)
			return
		}
	}
}

func TestR5_ExploreARunWhoseCtxHasAlreadyEndedStopsAtOnce(t *testing.T) {
	play := func(h *katatest.H, s testDoneAtStart) { s.play(h) }
	katatest.Replay(t, testDoneAtStartFixed, play)
	katatest.Explore(t, 10, testDrawDoneAtStart, play)
}

package blockingloop

// R5, explored over the ways Run's ctx can end. A cancel is one; a cancel
// with a cause, a timeout or a deadline (on the injected clock or on
// package time), or the end of a parent ctx Run's ctx was derived from are
// others, and the README's stop is the same for each: waiting callers get
// ErrStopped, running lookups see their ctx end, queued ones never start,
// and Run returns nil once every running lookup has returned.

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

// testErrShutdown is the cause a service gives when it cancels Run's ctx.
var testErrShutdown = errors.New("service: shutting down")

// testCtxKey keys the value of a ctx derived from the one that ends.
type testCtxKey struct{}

// testRunEnd is how Run's ctx ends; the deadlines are testEndAfter after
// Run starts, and nothing else moves the clock before then.
const testEndAfter = 3 * time.Second

var testRunEnds = []string{
	"it is cancelled (context.WithCancel)",
	"it is cancelled with a cause (context.WithCancelCause)",
	"its timeout on the injected clock passes (clk.WithTimeout)",
	"its deadline on the injected clock passes (clk.WithDeadline)",
	"its timeout on package time passes (context.WithTimeout)",
}

// testCtxEnd is a stop by one of the ways a ctx ends.
type testCtxEnd struct {
	maxInFlight int
	misses      int // Gets of distinct keys before the stop: the first MaxInFlight run, the others queue
	slow        int // how many of the running lookups take a while to stop, let go one by one
	tick        bool
	grace       time.Duration
	way         int  // testRunEnds
	derived     bool // Run's ctx is derived (context.WithValue, then WithCancel) from the ctx that ends
}

func (s testCtxEnd) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d", s.maxInFlight)
	if s.tick {
		fmt.Fprintf(&b, ", Tick %v", testTick)
	}
	if s.grace > 0 {
		fmt.Fprintf(&b, ", Grace %v", s.grace)
	}
	b.WriteString("; every lookup waits until its ctx ends")
	if s.derived {
		b.WriteString("\n  Run's ctx is derived from a parent ctx (context.WithValue, then context.WithCancel)")
	}
	fmt.Fprintf(&b, "\n  Run starts; Get %d distinct keys, one after the other", s.misses)
	if s.slow > 0 {
		fmt.Fprintf(&b, "\n  %d of the running lookups take a while to return once their ctx ends", s.slow)
	}
	parent := "Run's ctx"
	if s.derived {
		parent = "the parent ctx"
	}
	fmt.Fprintf(&b, "\n  %s ends: %s, %v after Run started", parent, testRunEnds[s.way], testEndAfter)
	return b.String()
}

func testDrawCtxEnd(r *rapid.T) testCtxEnd {
	s := testCtxEnd{maxInFlight: rapid.IntRange(0, 3).Draw(r, "MaxInFlight")}
	limit := max(s.maxInFlight, 1)
	s.misses = rapid.IntRange(0, limit+2).Draw(r, "misses")
	s.slow = rapid.IntRange(0, min(s.misses, limit)).Draw(r, "slow to stop")
	s.tick = rapid.Bool().Draw(r, "heartbeat")
	s.grace = rapid.SampledFrom([]time.Duration{0, 2 * time.Minute}).Draw(r, "Grace")
	s.way = rapid.IntRange(0, len(testRunEnds)-1).Draw(r, "way")
	s.derived = rapid.Bool().Draw(r, "derived")
	return s
}

// testCtxEndFixed: every way a deadline ends Run's ctx, with lookups
// running, one slow to stop, and one queued.
var testCtxEndFixed = []testCtxEnd{
	{maxInFlight: 2, misses: 3, slow: 1, tick: true, way: 2},
	{maxInFlight: 1, misses: 2, slow: 1, way: 3, grace: 2 * time.Minute},
	{maxInFlight: 2, misses: 1, way: 4, derived: true},
	{maxInFlight: 3, misses: 0, tick: true, way: 2, derived: true},
}

// runCtx makes Run's ctx, a child of parent, and returns it with the way
// the test ends it (nil: the clock ends it) and a cancel for the end of Run.
func (s testCtxEnd) runCtx(h *katatest.H, parent context.Context) (context.Context, func(), context.CancelFunc) {
	var ctx context.Context
	var end func()
	var cancel context.CancelFunc
	switch s.way {
	case 0:
		ctx, cancel = context.WithCancel(parent)
		end = cancel
	case 1:
		var cause context.CancelCauseFunc
		ctx, cause = context.WithCancelCause(parent)
		end, cancel = func() { cause(testErrShutdown) }, func() { cause(nil) }
	case 2:
		ctx, cancel = h.Clk.WithTimeout(parent, testEndAfter)
	case 3:
		ctx, cancel = h.Clk.WithDeadline(parent, h.Clk.Now().Add(testEndAfter))
	default:
		ctx, cancel = context.WithTimeout(parent, testEndAfter)
	}
	if s.derived {
		var child context.CancelFunc
		ctx, child = context.WithCancel(context.WithValue(ctx, testCtxKey{}, "request-scoped"))
		outer := cancel
		cancel = func() { child(); outer() }
	}
	return ctx, end, cancel
}

func (s testCtxEnd) play(h *katatest.H) {
	be := testNewBackend()
	h.Own(be.releaseAll)
	limit := max(s.maxInFlight, 1)
	key := func(i int) string { return fmt.Sprintf("K%d", i+1) }
	cfg := Config{MaxInFlight: s.maxInFlight, Grace: s.grace}
	if s.tick {
		cfg.Tick, cfg.OnTick = testTick, func(Stats) {}
	}
	holds := make([]*testGate, s.misses)
	var slow []*testGate
	for i := range holds {
		holds[i] = be.hold(key(i))
		if i < s.slow {
			slow = append(slow, be.slowToStop(key(i)))
		}
	}
	cache := New(h.Clk, be.lookup, cfg)
	type made struct {
		ctx context.Context
		end func()
	}
	ready := make(chan made, 1)
	run := katatest.StartErr(h, func(ctx context.Context) error {
		runCtx, end, cancel := s.runCtx(h, ctx)
		defer cancel()
		ready <- made{runCtx, end}
		return cache.Run(runCtx)
	})
	m := <-ready
	defer func() { // whatever happened, every lookup and Run can end
		run.Cancel()
		be.releaseAll()
	}()
	var gets []*katatest.Call[string]
	for i := range s.misses {
		gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, key(i)) }))
		synctest.Wait() // in order: the queue is FIFO
	}
	running := min(s.misses, limit)
	for i := range s.misses {
		if n := be.Calls(key(i)); i < running && n != 1 || i >= running && n != 0 {
			return // the limit or the queue is not as R4 says: R4 says more
		}
	}
	how := testRunEnds[s.way]
	if s.derived {
		how = "a parent of Run's ctx ends: " + how
	}
	switch {
	case m.end != nil:
		m.end()
	case s.way == 4:
		synctest.Wait()
		<-m.ctx.Done() // every goroutine waits: package time moves to the deadline
	default:
		h.Advance(testEndAfter - 1)
		if run.Returned() {
			h.Errorf("Run returned before its ctx ended (%s), with the clock 1ns short of it: Run returns only "+
				"when its ctx ends", how)
			return
		}
		h.Advance(1)
	}
	synctest.Wait()
	for i, g := range gets {
		if !g.Returned() {
			h.Errorf("Get(%q) kept waiting after Run's ctx ended (%s): once the cache stops, waiting callers "+
				"return ErrStopped at once, whatever way its ctx ended", key(i), how)
			return
		}
		if v, err := g.Result(); !errors.Is(err, ErrStopped) {
			h.Errorf("Get(%q), waiting when Run's ctx ended (%s), returned (%q, %v); want ErrStopped, whatever "+
				"way Run's ctx ended", key(i), how, v, err)
			return
		}
		if _, err := g.Result(); testStoppedAlsoCtx(h, fmt.Sprintf("Get(%q), waiting when Run's ctx ended (%s),", key(i), how), err) {
			return
		}
	}
	for i := range running {
		if holds[i].Cancelled() != 1 {
			h.Errorf("when Run's ctx ended (%s), the running lookup of %q did not see its ctx end: every lookup "+
				"runs with Run's ctx", how, key(i))
			return
		}
	}
	for i, g := range slow {
		if run.Returned() {
			h.Errorf("Run returned while %d lookup(s) it started were still running after its ctx ended (%s): "+
				"Run returns only once every running lookup has returned", len(slow)-i, how)
			return
		}
		g.Release()
		synctest.Wait()
	}
	if !run.Returned() {
		h.Errorf("Run did not return once its ctx had ended (%s) and every lookup had returned: keep receiving "+
			"results until every running lookup has reported back", how)
		return
	}
	err, ok := run.Finish("Run")
	if !ok {
		return
	}
	if err != nil {
		h.Errorf("Run returned %q once its ctx had ended (%s) and every lookup had returned; want nil. The end of "+
			"Run's ctx is how the cache is told to stop, whichever way it ends (a cancel, a cancel with a cause, "+
			"a deadline, a timeout, a parent's end): a stop that went as planned is no error, so don't return "+
			"ctx.Err() or treat only context.Canceled as a normal stop", err, how)
		return
	}
	for i := running; i < s.misses; i++ {
		if n := be.Calls(key(i)); n != 0 {
			h.Errorf("the queued miss for %q started a lookup after Run's ctx ended (%s): queued lookups never "+
				"start once the cache stops", key(i), how)
			return
		}
	}
}

func TestR5_ExploreRunReturnsNilWhicheverWayItsCtxEnds(t *testing.T) {
	play := func(h *katatest.H, s testCtxEnd) { s.play(h) }
	katatest.Replay(t, testCtxEndFixed, play)
	katatest.Explore(t, 12, testDrawCtxEnd, play)
}

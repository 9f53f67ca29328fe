package ratelimit

// R3, B1 and B2 for a token due now: "a token due now returns at once,
// without a timer". A Wait whose token is there when it is called (within
// the burst, or the clock standing exactly at the token's due time) makes
// no timer on the clock at all, not even clk.Timer(0), which fires at once
// on the mock clock as on the real one and so hides from every test that
// only watches Wait return. The clock counts the timers the code makes.
//
// And B1 for the smallest Multi: Combine() with no limiter limits nothing.
// Its Allow answers true and its Wait returns nil at once, whatever the
// clock does and however many call at once.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testCountedClock is the test's mock clock, counting every timer, ticker
// and sleep the code asks it for.
type testCountedClock struct {
	*katatest.Clock
	made atomic.Int64
}

func (c *testCountedClock) Timer(d time.Duration) *clock.Timer {
	c.made.Add(1)
	return c.Clock.Timer(d)
}

func (c *testCountedClock) After(d time.Duration) <-chan time.Time {
	c.made.Add(1)
	return c.Clock.After(d)
}

func (c *testCountedClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	c.made.Add(1)
	return c.Clock.AfterFunc(d, f)
}

func (c *testCountedClock) Ticker(d time.Duration) *clock.Ticker {
	c.made.Add(1)
	return c.Clock.Ticker(d)
}

func (c *testCountedClock) Tick(d time.Duration) <-chan time.Time {
	c.made.Add(1)
	return c.Clock.Tick(d)
}

func (c *testCountedClock) Sleep(d time.Duration) {
	c.made.Add(1)
	c.Clock.Sleep(d)
}

// testNowOp is one step: the clock moves (not at all, 1ns, or fill
// intervals of the slowest limiter), then on to the due time of the next
// token free for the call if that is later, then the call: Allow or Wait.
type testNowOp struct {
	move  time.Duration // 0: the clock does not move first
	fill  int           // > 0: move fill intervals of the slowest limiter first
	allow bool
	key   int // Keyed: index in testKeys
}

// testNowScenario: calls on a Limiter, a Multi or a Keyed, one after
// another, each made when its token is due now.
type testNowScenario struct {
	kind   string // "Limiter", "Combine" or "Keyed"
	rates  []float64
	bursts []int
	idle   time.Duration
	ops    []testNowOp
}

func (s testNowScenario) String() string {
	var b strings.Builder
	b.WriteString(testSoonScenario{kind: s.kind, rates: s.rates, bursts: s.bursts, idle: s.idle}.header())
	for _, op := range s.ops {
		switch {
		case op.fill > 0:
			fmt.Fprintf(&b, "; move the clock %d intervals of the slowest limiter", op.fill)
		case op.move > 0:
			fmt.Fprintf(&b, "; move the clock %v", op.move)
		}
		b.WriteString("; move the clock on to the next free token's due time, if that is later")
		arg := ""
		if s.kind == "Keyed" {
			arg = fmt.Sprintf("%q", testKeys[op.key])
		}
		if op.allow {
			fmt.Fprintf(&b, "; Allow(%s)", arg)
		} else {
			fmt.Fprintf(&b, "; Wait(ctx%s)", map[bool]string{true: ", " + arg}[arg != ""])
		}
	}
	return b.String()
}

// header names the limiter the way testSoonScenario's String does.
func (s testSoonScenario) header() string {
	full := s.String()
	if i := strings.Index(full, ";"); i >= 0 {
		return full[:i]
	}
	return full
}

func testDrawNow(kind string) func(r *rapid.T) testNowScenario {
	return func(r *rapid.T) testNowScenario {
		s := testNowScenario{kind: kind}
		limiters, keys := 1, 1
		switch kind {
		case "Combine":
			limiters = rapid.IntRange(1, 3).Draw(r, "limiters")
		case "Keyed":
			keys = rapid.IntRange(1, 2).Draw(r, "keys")
			s.idle = rapid.SampledFrom([]time.Duration{0, 1, time.Millisecond, time.Second, time.Hour}).Draw(r, "idle")
		}
		for i := range limiters {
			s.rates = append(s.rates, rapid.SampledFrom(testSoonRates).Draw(r, fmt.Sprintf("rate %d", i+1)))
			s.bursts = append(s.bursts, rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("burst %d", i+1)))
		}
		for range rapid.IntRange(2, 7).Draw(r, "steps") {
			op := testNowOp{key: rapid.IntRange(0, keys-1).Draw(r, "key")}
			switch rapid.IntRange(0, 3).Draw(r, "the clock moves first") {
			case 1:
				op.move = 1
			case 2:
				op.fill = rapid.IntRange(1, 5).Draw(r, "intervals")
			}
			op.allow = rapid.IntRange(0, 3).Draw(r, "Allow (1 in 4)") == 0
			s.ops = append(s.ops, op)
		}
		return s
	}
}

func (s testNowScenario) play(h *katatest.H) {
	clk := &testCountedClock{Clock: h.Clk}
	var allow func(key int) bool
	var wait func(ctx context.Context, key int) error
	m := &testSoonModel{}
	slowest := time.Duration(0)
	for i := range s.rates {
		slowest = max(slowest, testDue(s.rates[i], 0, 1))
	}
	switch s.kind {
	case "Combine":
		ls := make([]*Limiter, len(s.rates))
		for i := range ls {
			ls[i] = New(clk, s.rates[i], s.bursts[i])
			m.bs = append(m.bs, testBucket{r: s.rates[i], burst: s.bursts[i]})
		}
		c := Combine(ls...)
		m.multi = true
		allow = func(int) bool { return c.Allow() }
		wait = func(ctx context.Context, _ int) error { return c.Wait(ctx) }
	case "Keyed":
		k := NewKeyed(clk, s.rates[0], s.bursts[0], s.idle)
		for range 2 {
			m.bs = append(m.bs, testBucket{r: s.rates[0], burst: s.bursts[0]})
		}
		allow = func(key int) bool { return k.Allow(testKeys[key]) }
		wait = func(ctx context.Context, key int) error { return k.Wait(ctx, testKeys[key]) }
	default:
		l := New(clk, s.rates[0], s.bursts[0])
		m.bs = append(m.bs, testBucket{r: s.rates[0], burst: s.bursts[0]})
		allow = func(int) bool { return l.Allow() }
		wait = func(ctx context.Context, _ int) error { return l.Wait(ctx) }
	}
	for i, op := range s.ops {
		switch {
		case op.fill > 0:
			h.Advance(time.Duration(op.fill) * slowest)
		case op.move > 0:
			h.Advance(op.move)
		}
		if due, _ := m.next(op.key, h.Elapsed()); due > h.Elapsed() {
			h.Advance(due - h.Elapsed())
		}
		now := h.Elapsed()
		_, why := m.next(op.key, now)
		m.take(op.key)
		before := clk.made.Load()
		if op.allow {
			got, ok := testTry(h, fmt.Sprintf("step %d, Allow at %v", i+1, now), func() bool { return allow(op.key) })
			if !ok {
				return
			}
			if !got {
				h.Errorf("Allow at %v answered false with a token due now (%s)", now, why)
				return
			}
			continue
		}
		w := katatest.StartErr(h, func(ctx context.Context) error { return wait(ctx, op.key) })
		if !testSettle(h, fmt.Sprintf("step %d, Wait at %v", i+1, now), w) || testBroken(h, w) {
			return
		}
		returned := w.Returned()
		if made := clk.made.Load() - before; made > 0 {
			h.Errorf("Wait made %d timer(s) on the clock for a token due now: at %v its token was there (%s), and "+
				"a token due now returns at once, without a timer. Make the timer only when the token is due after "+
				"clk.Now() (if wait > 0 { t := clk.Timer(wait) … }): clk.Timer(0) fires at once, but it is a timer "+
				"made, fired and stopped on every call that finds a token", made, now, why)
			katatest.Unwind(h, w)
			return
		}
		if !returned {
			h.Errorf("Wait at %v had not returned with a token due now (%s), the mock clock stopped: a token due "+
				"now returns at once, without a timer", now, why)
			katatest.Unwind(h, w)
			return
		}
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		if err != nil {
			h.Errorf("Wait at %v returned %q with a token due now (%s); want nil", now, err, why)
			return
		}
	}
}

// testFixedNow are played every run: the burst, then a token at its exact
// due time, at 3 per second (a due time that is not a whole interval), on
// a Limiter, on a Multi whose slow limiter decides, and on a key.
var testFixedNow = map[string][]testNowScenario{
	"R3": {{kind: "Limiter", rates: []float64{3}, bursts: []int{2}, ops: []testNowOp{{}, {}, {}, {}, {fill: 3}}}},
	"B1": {{kind: "Combine", rates: []float64{1000, 3}, bursts: []int{2, 1}, ops: []testNowOp{{}, {}, {move: 1}}}},
	"B2": {{kind: "Keyed", rates: []float64{3}, bursts: []int{1}, idle: time.Second, ops: []testNowOp{{}, {}, {key: 1}}}},
}

func TestR3_ExploreATokenDueNowNeedsNoTimer(t *testing.T) {
	katatest.Replay(t, testFixedNow["R3"], func(h *katatest.H, s testNowScenario) { s.play(h) })
	katatest.Explore(t, 4, testDrawNow("Limiter"), func(h *katatest.H, s testNowScenario) { s.play(h) })
}

func TestB1_ExploreACombinedTokenDueNowNeedsNoTimer(t *testing.T) {
	katatest.Replay(t, testFixedNow["B1"], func(h *katatest.H, s testNowScenario) { s.play(h) })
	katatest.Explore(t, 3, testDrawNow("Combine"), func(h *katatest.H, s testNowScenario) { s.play(h) })
}

func TestB2_ExploreAKeyedTokenDueNowNeedsNoTimer(t *testing.T) {
	katatest.Replay(t, testFixedNow["B2"], func(h *katatest.H, s testNowScenario) { s.play(h) })
	katatest.Explore(t, 3, testDrawNow("Keyed"), func(h *katatest.H, s testNowScenario) { s.play(h) })
}

// ---- B1: Combine() with no limiter limits nothing ----

// testNoneOp is one call on Combine() of no limiter: the clock moves
// first, then Allow, or waits Waits at once, with a deadline dl ahead
// (0: none).
type testNoneOp struct {
	move  time.Duration
	waits int // 0: Allow
	dl    time.Duration
}

type testNoneScenario struct {
	how string // how the empty list is passed
	ops []testNoneOp
}

var testNoneHows = []string{"Combine()", "Combine([]*Limiter{}...)", "Combine(nil...)"}

func (s testNoneScenario) String() string {
	var b strings.Builder
	b.WriteString("m := " + s.how)
	for _, op := range s.ops {
		if op.move > 0 {
			fmt.Fprintf(&b, "; move the clock %v", op.move)
		}
		ctx := "ctx"
		if op.dl > 0 {
			ctx = fmt.Sprintf("a ctx whose deadline is %v ahead", op.dl)
		}
		switch op.waits {
		case 0:
			b.WriteString("; m.Allow()")
		case 1:
			fmt.Fprintf(&b, "; m.Wait(%s)", ctx)
		default:
			fmt.Fprintf(&b, "; %d goroutines call m.Wait(%s) at once", op.waits, ctx)
		}
	}
	return b.String()
}

func testDrawNone(r *rapid.T) testNoneScenario {
	s := testNoneScenario{how: rapid.SampledFrom(testNoneHows).Draw(r, "how")}
	for range rapid.IntRange(1, 4).Draw(r, "calls") {
		op := testNoneOp{}
		if rapid.Bool().Draw(r, "the clock moves first") {
			op.move = rapid.SampledFrom([]time.Duration{1, time.Millisecond, time.Second, time.Hour}).Draw(r, "move")
		}
		op.waits = rapid.IntRange(0, 3).Draw(r, "Waits at once (0: Allow)")
		if op.waits > 0 && rapid.Bool().Draw(r, "with a deadline") {
			op.dl = rapid.SampledFrom([]time.Duration{1, time.Microsecond, time.Second}).Draw(r, "deadline ahead")
		}
		s.ops = append(s.ops, op)
	}
	return s
}

func (s testNoneScenario) play(h *katatest.H) {
	var m *Multi
	switch s.how {
	case testNoneHows[1]:
		m = Combine([]*Limiter{}...)
	case testNoneHows[2]:
		m = Combine(nil...)
	default:
		m = Combine()
	}
	const rule = "with no limiter, no limit stands in the way: its Allow is true and its Wait returns nil at once " +
		"(a Multi with no limiter has no clock to read either: check len first)"
	for i, op := range s.ops {
		if op.move > 0 {
			h.Advance(op.move)
		}
		if op.waits == 0 {
			var panicked any
			got, ok := testTry(h, fmt.Sprintf("call %d, Allow", i+1), func() (got bool) {
				defer func() { panicked = recover() }()
				return m.Allow()
			})
			switch {
			case !ok:
				return
			case panicked != nil:
				h.Errorf("%s limits nothing, yet its Allow (call %d) panicked: %v; %s", s.how, i+1, panicked, rule)
				return
			case !got:
				h.Errorf("%s limits nothing, yet its Allow (call %d) answered false; %s", s.how, i+1, rule)
				return
			}
			continue
		}
		var opts []katatest.CtxOption
		if op.dl > 0 {
			opts = append(opts, katatest.Timeout(op.dl))
		}
		panics := make([]atomic.Value, op.waits)
		ws := make([]katatest.ErrCall, op.waits)
		for k := range ws {
			ws[k] = katatest.StartErr(h, func(ctx context.Context) (err error) {
				defer func() {
					if p := recover(); p != nil {
						panics[k].Store(fmt.Sprint(p))
						err = fmt.Errorf("panicked: %v", p)
					}
				}()
				return m.Wait(ctx)
			}, opts...)
		}
		if !testSettle(h, fmt.Sprintf("call %d, %d Wait(s)", i+1, op.waits), ws...) || testBroken(h, ws...) {
			return
		}
		for k, w := range ws {
			if p := panics[k].Load(); p != nil {
				h.Errorf("%s limits nothing, yet its Wait (call %d) panicked: %v; %s", s.how, i+1, p, rule)
				katatest.Unwind(h, ws...)
				return
			}
			if !w.Returned() {
				h.Errorf("%s limits nothing, yet its Wait (call %d) was still waiting, the mock clock stopped; %s",
					s.how, i+1, rule)
				katatest.Unwind(h, ws...)
				return
			}
		}
		for _, w := range ws {
			err, ok := w.Finish("Wait")
			if !ok {
				return
			}
			if err != nil {
				h.Errorf("%s limits nothing, yet its Wait (call %d) returned %q; %s", s.how, i+1, err, rule)
				return
			}
		}
	}
}

func TestB1_ExploreCombineOfNoLimiterLimitsNothing(t *testing.T) {
	katatest.Replay(t, []testNoneScenario{{how: testNoneHows[0], ops: []testNoneOp{{}, {waits: 1}, {waits: 2, dl: 1}}}},
		func(h *katatest.H, s testNoneScenario) { s.play(h) })
	katatest.Explore(t, 3, testDrawNone, func(h *katatest.H, s testNoneScenario) { s.play(h) })
}

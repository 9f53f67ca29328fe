package retry

// Explored R6, continued: every pause draws a fresh r from Rand. One r
// drawn per call of Do (or per Policy) and reused makes the pauses of a
// client move in lockstep, and clients that drew alike stay alike: the
// jitter no longer spreads them out.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testFreshR is a Policy with jitter shared by several calls of Do at
// once, each failing a few times before it succeeds, and a Rand that
// returns another r at each call.
type testFreshR struct {
	base     time.Duration
	mult     float64
	maxDelay time.Duration
	jitter   float64   // as given: clamped to [0, 1]
	spare    int       // MaxAttempts is the most failures of a call, plus one, plus spare
	rs       []float64 // what Rand returns, call after call, all different
	fails    []int     // per call of Do: how many attempts fail before one succeeds
}

// testRGrid are the values Rand returns, in a drawn order: 0, k/64 and the
// largest value below 1, far enough apart that each pause tells which
// one it was computed from.
var testRGrid = func() []float64 {
	g := []float64{testRMax}
	for k := range 64 {
		g = append(g, float64(k)/64)
	}
	return g
}()

func (s testFreshR) attempts() int {
	most := 0
	for _, f := range s.fails {
		most = max(most, f)
	}
	return most + 1 + s.spare
}

func (s testFreshR) String() string {
	total := 0
	var calls []string
	for i, f := range s.fails {
		total += f
		calls = append(calls, fmt.Sprintf("call %d fails %d time(s), then succeeds", i+1, f))
	}
	var rs []string
	for _, r := range s.rs[:min(total+2, len(s.rs))] {
		rs = append(rs, fmt.Sprint(r))
	}
	who := "one call of Do"
	if len(s.fails) > 1 {
		who = fmt.Sprintf("%d calls of Do at once", len(s.fails))
	}
	return fmt.Sprintf("Policy{MaxAttempts: %d, BaseDelay: %v, Multiplier: %v, MaxDelay: %v, Jitter: %v}, shared by %s; "+
		"Rand returns %s, … (another value at each call, from whichever call of Do); %s",
		s.attempts(), s.base, s.mult, s.maxDelay, s.jitter, who, strings.Join(rs, ", "), strings.Join(calls, "; "))
}

// limit is L: MaxDelay, or the largest Duration.
func (s testFreshR) limit() time.Duration {
	if s.maxDelay > 0 {
		return s.maxDelay
	}
	return math.MaxInt64
}

// pause is the README's pause after the n-th failure with r.
func (s testFreshR) pause(n int, r float64) time.Duration {
	m := s.mult
	if m < 1 {
		m = 2
	}
	lim := float64(s.limit())
	d := min(float64(s.base)*math.Pow(m, float64(n-1)), lim)
	j := min(max(s.jitter, 0), 1)
	d *= 1 - j + 2*j*r
	if d >= lim {
		return s.limit()
	}
	return max(time.Duration(d), 1)
}

func testDrawFreshR(r *rapid.T) testFreshR {
	var s testFreshR
	s.base = rapid.SampledFrom([]time.Duration{time.Millisecond, 7 * time.Millisecond, 50 * time.Millisecond,
		100*time.Millisecond + 3}).Draw(r, "BaseDelay")
	// The default doubling, as 0 or 2: how d grows is R1's business.
	s.mult = rapid.SampledFrom([]float64{0, 2}).Draw(r, "Multiplier")
	if rapid.IntRange(0, 3).Draw(r, "MaxDelay set") == 0 {
		s.maxDelay = s.base * time.Duration(rapid.IntRange(2, 6).Draw(r, "MaxDelay/BaseDelay"))
	}
	s.jitter = rapid.SampledFrom([]float64{0.5, 0.1, 1, 2}).Draw(r, "Jitter")
	s.fails = rapid.SliceOfN(rapid.IntRange(2, 4), 1, 3).Draw(r, "failures per call")
	s.spare = rapid.IntRange(0, 2).Draw(r, "spare attempts")
	s.rs = rapid.Permutation(testRGrid).Draw(r, "what Rand returns")
	return s
}

// testRandSeq is Rand: it returns s.rs one after the other, whoever calls,
// and records them.
type testRandSeq struct {
	rs   []float64
	mu   sync.Mutex
	gave []float64
}

func (q *testRandSeq) next() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := len(q.gave)
	r := float64(i)/4096 + 1.0/8192 // past the drawn ones: still a new value each call
	if i < len(q.rs) {
		r = q.rs[i]
	}
	q.gave = append(q.gave, r)
	return r
}

// testTimedOp fails its first fails attempts at once, then succeeds; it
// records when each attempt was made.
type testTimedOp struct {
	clk   interface{ Now() time.Time }
	fails int
	mu    sync.Mutex
	at    []time.Time
}

func (o *testTimedOp) call(ctx context.Context) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.at = append(o.at, o.clk.Now())
	if n := len(o.at); n <= o.fails {
		return "", fmt.Errorf("stock lookup %d: 503", n)
	}
	return "ok", nil
}

// times is when each attempt so far was made.
func (o *testTimedOp) times() []time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.at)
}

// testUse is a pause that used a value of Rand.
type testUse struct {
	call, attempt int
	pause         time.Duration
}

func (s testFreshR) play(h *katatest.H) {
	rnd := &testRandSeq{rs: s.rs}
	p := Policy{MaxAttempts: s.attempts(), BaseDelay: s.base, Multiplier: s.mult, MaxDelay: s.maxDelay,
		Jitter: s.jitter, Rand: rnd.next}
	ops := make([]*testTimedOp, len(s.fails))
	calls := make([]*katatest.Call[string], len(s.fails))
	for i, f := range s.fails {
		op := &testTimedOp{clk: h.Clk, fails: f}
		ops[i] = op
		calls[i] = katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
	}
	for _, c := range calls {
		if c.Broken() {
			katatest.Unwind(h, calls...)
			return
		}
	}
	h.Advance(time.Hour) // far past every pause
	for i, c := range calls {
		if !c.Returned() {
			h.Errorf("call %d of Do was still running an hour after it started, with pauses of a few seconds at most "+
				"(its op was called %d time(s)): wait on a timer from clk for each pause", i+1, len(ops[i].times()))
			katatest.Unwind(h, calls...)
			return
		}
	}
	for i, c := range calls {
		v, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		if made := len(ops[i].times()); v != "ok" || err != nil || made != s.fails[i]+1 {
			h.Errorf("call %d of Do: attempt %d succeeds, after %d failures, and MaxAttempts is %d; Do returned (%q, %v) "+
				"after %d attempt(s)", i+1, s.fails[i]+1, s.fails[i], s.attempts(), v, err, made)
			return
		}
	}
	rnd.mu.Lock()
	gave := rnd.gave
	rnd.mu.Unlock()
	used := map[int]testUse{} // the index of Rand's call whose r a pause used
	for i, op := range ops {
		at := op.times()
		for n := 1; n <= s.fails[i]; n++ {
			got := at[n].Sub(at[n-1])
			var from []int
			for k, r := range gave {
				if testNear(got, s.pause(n, r), 1) {
					from = append(from, k)
				}
			}
			if len(from) == 0 {
				// Not the formula with any r Rand returned: the formula is
				// the business of R1 and of the other R6 tests.
				continue
			}
			if len(from) > 1 || got == s.limit() {
				continue // capped: which r it used does not show
			}
			k := from[0]
			if u, again := used[k]; again {
				both := fmt.Sprintf("the pauses after attempts %d and %d of call %d (%v and %v)", u.attempt, n, i+1, u.pause, got)
				fix := "not once per call of Do"
				if u.call != i+1 {
					both = fmt.Sprintf("the pause after attempt %d of call %d (%v) and the one after attempt %d of call %d (%v)",
						u.attempt, u.call, u.pause, n, i+1, got)
					fix = "and share no r between calls of Do"
				}
				h.Errorf("every pause draws a fresh r from Rand: %s both used r = %v, what Rand returned at its call %d, "+
					"though Rand was called %d time(s) and returned a new value each time; call Rand each time you "+
					"compute a pause, %s", both, gave[k], k+1, len(gave), fix)
				return
			}
			used[k] = testUse{call: i + 1, attempt: n, pause: got}
		}
	}
}

func TestR6_ExploreEveryPauseDrawsAFreshR(t *testing.T) {
	katatest.Explore(t, 20, testDrawFreshR, func(h *katatest.H, s testFreshR) { s.play(h) })
	// Every run: Rand's extremes and values between, one call of Do and
	// two at once, with no pause capped.
	rs := []float64{0, testRMax, 0.25, 0.75, 0.5, 0.125, 0.875, 0.375, 0.625, 1.0 / 64}
	katatest.Replay(t, []testFreshR{
		{base: 10 * time.Millisecond, jitter: 0.5, rs: rs, fails: []int{3}},
		{base: 7 * time.Millisecond, mult: 2, jitter: 1, spare: 1, rs: rs, fails: []int{2, 3}},
	}, func(h *katatest.H, s testFreshR) { s.play(h) })
}

// Explored R6, continued: with Rand nil, r comes from math/rand/v2's
// Float64, so calls of Do that start at the same instant still spread
// out. A generator made per call and seeded from the clock (or from a
// fixed seed) draws the same r sequence in every call that starts at the
// same reading: their pauses match to the nanosecond, the lockstep jitter
// is there to break.
type testNilRand struct {
	base     time.Duration
	mult     float64
	maxDelay time.Duration // 0, or far enough above BaseDelay that the first two pauses are never capped
	jitter   float64       // as given: clamped to [0, 1], at least 0.1
	at       time.Duration // every call starts this far past the epoch on its clock
	fails    []int         // per call of Do: how many attempts fail (at least 2) before one succeeds
}

func (s testNilRand) attempts() int { return slices.Max(s.fails) + 1 }

func (s testNilRand) String() string {
	var calls []string
	for i, f := range s.fails {
		calls = append(calls, fmt.Sprintf("call %d fails %d time(s), then succeeds", i+1, f))
	}
	return fmt.Sprintf("Policy{MaxAttempts: %d, BaseDelay: %v, Multiplier: %v, MaxDelay: %v, Jitter: %v, Rand: nil}, "+
		"shared by %d calls of Do at once, each on a mock clock of its own, all started at %v past the epoch; %s",
		s.attempts(), s.base, s.mult, s.maxDelay, s.jitter, len(s.fails), s.at, strings.Join(calls, "; "))
}

func testDrawNilRand(r *rapid.T) testNilRand {
	var s testNilRand
	s.base = rapid.SampledFrom([]time.Duration{10 * time.Millisecond, 50 * time.Millisecond,
		100*time.Millisecond + 3, time.Second}).Draw(r, "BaseDelay")
	s.mult = rapid.SampledFrom([]float64{0, 1.5, 2}).Draw(r, "Multiplier")
	if rapid.Bool().Draw(r, "MaxDelay set") {
		// The second pause is at most BaseDelay·2·(1 + 1): never capped.
		s.maxDelay = s.base * time.Duration(rapid.IntRange(8, 16).Draw(r, "MaxDelay/BaseDelay"))
	}
	s.jitter = rapid.SampledFrom([]float64{0.1, 0.2, 0.5, 1, 2}).Draw(r, "Jitter")
	s.at = rapid.SampledFrom([]time.Duration{0, time.Millisecond, 90 * time.Minute}).Draw(r, "start")
	s.fails = rapid.SliceOfN(rapid.IntRange(2, 3), 2, 5).Draw(r, "failures per call")
	return s
}

func (s testNilRand) play(h *katatest.H) {
	p := Policy{MaxAttempts: s.attempts(), BaseDelay: s.base, Multiplier: s.mult, MaxDelay: s.maxDelay, Jitter: s.jitter}
	clks := make([]*katatest.Clock, len(s.fails))
	ops := make([]*testOp, len(s.fails))
	calls := make([]*katatest.Call[string], len(s.fails))
	for i, f := range s.fails {
		clk := katatest.NewClock()
		clk.Add(s.at)
		op := &testOp{errs: testErrors(f), clk: clk}
		clks[i], ops[i] = clk, op
		calls[i] = katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, clk, p, op.call) })
	}
	for _, c := range calls {
		if c.Broken() {
			katatest.Unwind(h, calls...)
			return
		}
	}
	// Each clock has one call of Do on it: moving it to its last timer
	// ends that call's pause exactly when it is due.
	for range slices.Max(s.fails) {
		synctest.Wait()
		for _, clk := range clks {
			clk.WaitForAllTimers()
		}
	}
	synctest.Wait()
	for i, c := range calls {
		if !c.Returned() {
			h.Errorf("call %d of Do was still running after its clock had reached each of its %d pauses "+
				"(its op was called %d time(s)): wait on a timer from clk for each pause", i+1, s.fails[i], ops[i].Calls())
			katatest.Unwind(h, calls...)
			return
		}
	}
	for i, c := range calls {
		v, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		if made := ops[i].Calls(); v != "ok" || err != nil || made != s.fails[i]+1 {
			h.Errorf("call %d of Do: attempt %d succeeds, after %d failures, and MaxAttempts is %d; Do returned (%q, %v) "+
				"after %d attempt(s)", i+1, s.fails[i]+1, s.fails[i], s.attempts(), v, err, made)
			return
		}
	}
	// The first two pauses are never capped, and r spreads each over at
	// least 2·0.1·10ms = 2,000,000 whole nanoseconds: two calls drawing
	// from math/rand/v2 match in both about once in 10¹² runs.
	for i := range calls {
		for j := range i {
			a1, a2 := ops[j].waited(1), ops[j].waited(2)
			if b1, b2 := ops[i].waited(1), ops[i].waited(2); a1 == b1 && a2 == b2 {
				h.Errorf("calls of Do without a Rand back off in lockstep: calls %d and %d started at the same "+
					"instant on their clocks and both paused exactly %v, then %v, to the nanosecond; with Rand nil, "+
					"r comes from math/rand/v2's Float64, so clients that fail together still spread out. Call "+
					"rand.Float64 for each pause, not a generator made per call and seeded from the clock or a "+
					"fixed seed", j+1, i+1, a1, a2)
				return
			}
		}
	}
}

func TestR6_ExploreCallsWithoutRandSpreadOut(t *testing.T) {
	katatest.Explore(t, 20, testDrawNilRand, func(h *katatest.H, s testNilRand) { s.play(h) })
}

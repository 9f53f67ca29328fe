package ratelimit

// R3, R4, B1 and B2 for tokens due soon: Waits started when their token is
// due 1ns, a few ns, a few µs, just under or just over a millisecond, or a
// second ahead, at rates from a few per minute to 1e9 per second, where a
// token comes every nanosecond. However short the wait, a Wait waits on a
// timer: it returns nil exactly at its token's due time, not a nanosecond
// before, and at a rate above 1000 per second, where every interval is
// shorter than a millisecond, concurrent waiters still wake 1/r apart.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testSoonOp is one step: the clock moves idle, then on to lead before the
// next token free for the call is due (if that is later), then the call:
// Allow, or waits Waits started at once.
type testSoonOp struct {
	idle  time.Duration
	lead  time.Duration // 0: the clock does not move on
	waits int           // 0: Allow
	key   int           // Keyed: index in testKeys
}

// testSoonScenario: calls on a Limiter, on a Multi of limiters (Combine) or
// on a Keyed, one step after another, while the Waits started earlier are
// still waiting; the clock passes 1ns before each Wait's due time, then
// the due time itself.
type testSoonScenario struct {
	kind   string    // "Limiter", "Combine" or "Keyed"
	rates  []float64 // the limiters' (Combine: one each; otherwise one)
	bursts []int
	idle   time.Duration // Keyed's idle
	ops    []testSoonOp
}

func (s testSoonScenario) String() string {
	var b strings.Builder
	switch s.kind {
	case "Combine":
		names := make([]string, len(s.rates))
		for i := range s.rates {
			names[i] = fmt.Sprintf("New(clk, %v per second, burst %d)", s.rates[i], s.bursts[i])
		}
		fmt.Fprintf(&b, "Combine(%s)", strings.Join(names, ", "))
	case "Keyed":
		fmt.Fprintf(&b, "NewKeyed(clk, %v per second, burst %d, idle %v)", s.rates[0], s.bursts[0], s.idle)
	default:
		fmt.Fprintf(&b, "New(clk, %v per second, burst %d)", s.rates[0], s.bursts[0])
	}
	for _, op := range s.ops {
		if op.idle > 0 {
			fmt.Fprintf(&b, "; move the clock %v", op.idle)
		}
		if op.lead > 0 {
			fmt.Fprintf(&b, "; move the clock on to %v before the next free token is due (if that is later)", op.lead)
		}
		arg := ""
		if s.kind == "Keyed" {
			arg = fmt.Sprintf("%q", testKeys[op.key])
		}
		switch {
		case op.waits == 0:
			fmt.Fprintf(&b, "; Allow(%s)", arg)
		case op.waits == 1:
			fmt.Fprintf(&b, "; start Wait(ctx%s)", map[bool]string{true: ", " + arg}[arg != ""])
		default:
			fmt.Fprintf(&b, "; %d goroutines call Wait(ctx%s) at once", op.waits, map[bool]string{true: ", " + arg}[arg != ""])
		}
	}
	return b.String() + "; the clock passes 1ns before each Wait's due time, then the due time"
}

// testSoonRates are rates whose interval is about a millisecond or far
// below (1e9 per second: one token every nanosecond), and the README's.
var testSoonRates = []float64{0.5, 3, 1.0 / 3, 0.7, 7, 999, 1000, 1001, 1024, 3000, 4096, 65537, 1e5, 333333, 1e6,
	2.5e6, 1e7, 3e8, 999999999, 1e9}

// testDrawSoonRate draws a rate from the list or as people write one: up
// to four digits times a power of ten, from 0.01 to 1e9 per second.
func testDrawSoonRate(r *rapid.T, label string) float64 {
	if rapid.Bool().Draw(r, label+" from the list") {
		return rapid.SampledFrom(testSoonRates).Draw(r, label)
	}
	digits := rapid.IntRange(1, 9999).Draw(r, label+"'s digits")
	exp := rapid.IntRange(-2, 5).Draw(r, label+"'s power of ten")
	return min(float64(digits)*math.Pow(10, float64(exp)), 1e9)
}

// testDrawSoonLead draws how long before its token a call comes: 1ns, a
// few ns, a few µs, just under, at or just over a millisecond, a second.
func testDrawSoonLead(r *rapid.T) time.Duration {
	const ms = time.Millisecond
	switch rapid.IntRange(0, 9).Draw(r, "lead") {
	case 0:
		return 1
	case 1:
		return time.Duration(rapid.Int64Range(2, 9).Draw(r, "lead ns"))
	case 2:
		return time.Duration(rapid.Int64Range(10, int64(ms)-1001).Draw(r, "lead ns"))
	case 3:
		return ms - 1
	case 4:
		return ms - time.Duration(rapid.Int64Range(2, 1000).Draw(r, "lead: ns under 1ms"))
	case 5:
		return ms
	case 6:
		return ms + 1
	case 7:
		return ms + time.Duration(rapid.Int64Range(2, int64(ms)).Draw(r, "lead: ns over 1ms"))
	case 8:
		return time.Second
	default:
		return 0 // wherever the clock stands
	}
}

// testDrawSoon draws scenarios of one kind; groups allows Waits at once.
func testDrawSoon(kind string, groups bool) func(r *rapid.T) testSoonScenario {
	return func(r *rapid.T) testSoonScenario {
		s := testSoonScenario{kind: kind}
		limiters, keys := 1, 1
		switch kind {
		case "Combine":
			limiters = rapid.IntRange(1, 3).Draw(r, "limiters")
		case "Keyed":
			keys = rapid.IntRange(1, 2).Draw(r, "keys")
			s.idle = rapid.SampledFrom([]time.Duration{0, 1, time.Microsecond, time.Millisecond, time.Second, time.Hour}).
				Draw(r, "idle")
		}
		for i := range limiters {
			s.rates = append(s.rates, testDrawSoonRate(r, fmt.Sprintf("rate %d", i+1)))
			s.bursts = append(s.bursts, rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("burst %d", i+1)))
		}
		interval := testDue(s.rates[0], 0, 1)
		n := rapid.IntRange(2, 6).Draw(r, "steps")
		for range n {
			op := testSoonOp{key: rapid.IntRange(0, keys-1).Draw(r, "key")}
			switch rapid.IntRange(0, 9).Draw(r, "the clock moves first") {
			case 0:
				op.idle = 1
			case 1:
				op.idle = time.Duration(rapid.Int64Range(1, int64(interval)).Draw(r, "idle ns"))
			case 2: // the bucket fills up again
				op.idle = time.Duration(rapid.IntRange(1, 6).Draw(r, "idle intervals")) * interval
			}
			op.lead = testDrawSoonLead(r)
			if rapid.IntRange(0, 3).Draw(r, "Allow (1 in 4)") > 0 {
				op.waits = 1
				if groups {
					op.waits = rapid.IntRange(2, 4).Draw(r, "Waits at once")
				}
			}
			s.ops = append(s.ops, op)
		}
		return s
	}
}

// testSoonModel is the README's limiter, one call at a time: one bucket
// (Limiter), one per limiter of a Multi, or one per key (a forgotten key's
// bucket was full, the same as a new one).
type testSoonModel struct {
	multi bool
	bs    []testBucket
}

// next is when the next token free for a call on key is due, and why.
func (m *testSoonModel) next(key int, now time.Duration) (time.Duration, string) {
	rule := func(b *testBucket) (time.Duration, string) {
		due := b.next(now)
		j := b.taken + 1
		if j <= b.burst {
			return due, fmt.Sprintf("token j = %d since the anchor at %v is within the burst of %d: due at once", j, b.anchor,
				b.burst)
		}
		return due, fmt.Sprintf("at %v per second with burst %d, token j = %d since the anchor at %v is due at "+
			"anchor + ⌈(j − burst)·1e9/r⌉ = %v + ⌈%d·1e9/%v⌉ ns = %v", b.r, b.burst, j, b.anchor, b.anchor, j-b.burst, b.r, due)
	}
	if !m.multi {
		return rule(&m.bs[key])
	}
	due, why := now, "every limiter has a token now"
	for i := range m.bs {
		if d, w := rule(&m.bs[i]); d > due {
			due, why = d, fmt.Sprintf("the latest of the limiters' next tokens: limiter %d's; %s", i+1, w)
		}
	}
	return due, why
}

func (m *testSoonModel) take(key int) {
	if !m.multi {
		m.bs[key].taken++
		return
	}
	for i := range m.bs {
		m.bs[i].taken++
	}
}

// testSoonGroup is the Waits one step started at once, and their tokens'
// due times, in order; which Wait got which token is theirs to decide.
type testSoonGroup struct {
	calls []katatest.ErrCall
	dues  []time.Duration
	whys  []string
	start time.Duration
}

func (s testSoonScenario) play(h *katatest.H) {
	var allow func(key int) bool
	var wait func(ctx context.Context, key int) error
	m := &testSoonModel{}
	switch s.kind {
	case "Combine":
		ls := make([]*Limiter, len(s.rates))
		for i := range ls {
			ls[i] = New(h.Clk, s.rates[i], s.bursts[i])
			m.bs = append(m.bs, testBucket{r: s.rates[i], burst: s.bursts[i]})
		}
		c := Combine(ls...)
		m.multi = true
		allow = func(int) bool { return c.Allow() }
		wait = func(ctx context.Context, _ int) error { return c.Wait(ctx) }
	case "Keyed":
		k := NewKeyed(h.Clk, s.rates[0], s.bursts[0], s.idle)
		for range 2 {
			m.bs = append(m.bs, testBucket{r: s.rates[0], burst: s.bursts[0]})
		}
		allow = func(key int) bool { return k.Allow(testKeys[key]) }
		wait = func(ctx context.Context, key int) error { return k.Wait(ctx, testKeys[key]) }
	default:
		l := New(h.Clk, s.rates[0], s.bursts[0])
		m.bs = append(m.bs, testBucket{r: s.rates[0], burst: s.bursts[0]})
		allow = func(int) bool { return l.Allow() }
		wait = func(ctx context.Context, _ int) error { return l.Wait(ctx) }
	}
	var groups []*testSoonGroup
	var all []katatest.ErrCall
	const fix = "Whenever the token is due after clk.Now(), however soon (a nanosecond, a microsecond), wait on " +
		"clk.Timer(due.Sub(now)) for exactly that long, with due computed from the anchor as " +
		"time.Duration(math.Ceil(float64(j-burst) * 1e9 / r)): a short wait is no reason to skip the timer " +
		"(\"not worth a timer\"), and a wait rounded to micro- or milliseconds, or float tokens turned back into " +
		"time (1e9·tokens/r, truncated), drift early"
	// check that, in every group, exactly the Waits whose token is due by
	// now have returned.
	check := func(when string, atStart bool) bool {
		now := h.Elapsed()
		for _, g := range groups {
			want := 0
			for _, d := range g.dues {
				if d <= now {
					want++
				}
			}
			got := testReturned(g.calls)
			if got == want {
				continue
			}
			single := len(g.calls) == 1
			of := fmt.Sprintf("%d of the %d Waits started at once at %v had returned, want %d", got, len(g.calls), g.start,
				want)
			switch {
			case single && got > want:
				of = fmt.Sprintf("the Wait started at %v had already returned", g.start)
			case single:
				of = fmt.Sprintf("the Wait started at %v had not returned", g.start)
			}
			switch {
			case got > want:
				for _, c := range g.calls {
					if c.Returned() {
						if err := c.Err(); err != nil {
							of += fmt.Sprintf(" (one with %q)", err)
							break
						}
					}
				}
				rule := "Wait returns nil exactly when its token is due, not a nanosecond before"
				if !single {
					rule += "; concurrent waiters wake 1/r apart, one per token, never together, at any rate, " +
						"above 1000 per second too, where every interval is shorter than a millisecond"
				}
				how := "its timer fired early, set for less than the time until its token"
				if atStart {
					how = "a token due soon must still wait on a timer"
				}
				h.Errorf("a Wait returned before its token was due: %s (%s). At %v (%s), %s: the next of these "+
					"tokens is due at %v, %v after the Wait started (%s). %s",
					how, rule, now, when, of, g.dues[want], g.dues[want]-g.start, g.whys[want], fix)
			case atStart:
				h.Errorf("a Wait did not return at once with a token there: at %v, %s (%s); a token due now returns "+
					"at once, without a timer", now, of, g.whys[want-1])
			default:
				h.Errorf("a Wait was still waiting at %v (%s), when its token was due: %s (%s). %s",
					now, when, of, g.whys[want-1], fix)
			}
			katatest.Unwind(h, all...)
			return false
		}
		return true
	}
	// moveTo moves the clock to target, through 1ns before each due time of
	// a waiting Wait, and the due time.
	moveTo := func(target time.Duration) bool {
		for {
			now := h.Elapsed()
			next := time.Duration(math.MaxInt64)
			for _, g := range groups {
				for _, d := range g.dues {
					if d > now && d <= target && d < next {
						next = d
					}
				}
			}
			if next == math.MaxInt64 {
				break
			}
			if next-1 > now {
				h.Advance(next - 1 - now)
				if !check(fmt.Sprintf("1ns before a token due at %v", next), false) {
					return false
				}
			}
			h.Advance(1)
			if !check(fmt.Sprintf("the due time of a token, %v", next), false) {
				return false
			}
		}
		if now := h.Elapsed(); target > now {
			h.Advance(target - now)
			return check("the clock moved on", false)
		}
		return true
	}
	for i, op := range s.ops {
		if !moveTo(h.Elapsed() + op.idle) {
			return
		}
		if op.lead > 0 {
			if due, _ := m.next(op.key, h.Elapsed()); due-op.lead > h.Elapsed() && !moveTo(due-op.lead) {
				return
			}
		}
		now := h.Elapsed()
		if op.waits == 0 {
			due, why := m.next(op.key, now)
			want := due <= now
			if want {
				m.take(op.key)
			}
			what := fmt.Sprintf("step %d, Allow at %v", i+1, now)
			got, ok := testTry(h, what, func() bool { return allow(op.key) }, all...)
			if !ok {
				return
			}
			if got != want {
				h.Errorf("Allow at %v answered %v; want %v: the next token free for it is due at %v (%s); tokens "+
					"reserved by waiting Waits are not there for Allow, and a token is not there a nanosecond before "+
					"it is due", now, got, want, due, why)
				katatest.Unwind(h, all...)
				return
			}
			continue
		}
		g := &testSoonGroup{start: now}
		for range op.waits {
			due, why := m.next(op.key, now)
			m.take(op.key)
			g.dues = append(g.dues, due)
			g.whys = append(g.whys, why)
			c := katatest.StartErr(h, func(ctx context.Context) error { return wait(ctx, op.key) })
			g.calls = append(g.calls, c)
			all = append(all, c)
		}
		groups = append(groups, g)
		if !testSettle(h, fmt.Sprintf("step %d, %d Waits starting at %v", i+1, op.waits, now), all...) ||
			testBroken(h, all...) {
			return
		}
		if !check("right after the step's Waits started", true) {
			return
		}
	}
	last := h.Elapsed()
	for _, g := range groups {
		last = max(last, slices.Max(g.dues))
	}
	if !moveTo(last) {
		return
	}
	for _, c := range all {
		err, ok := c.Finish("Wait")
		if !ok {
			return
		}
		if err != nil {
			h.Errorf("Wait returned %q when its token was due; want nil: no ctx was cancelled and none has a deadline", err)
			return
		}
	}
}

// testFixedSoon are played every run besides the explored ones: a token
// due 1ns, 999.999µs and 1.000001ms ahead; 1e9 per second, where every
// interval is 1ns; waiters at once ⌈1e9/3⌉ ns, 200µs and 100ns apart; a
// Multi whose fast limiter's token is due 1µs ahead; a key's token 7ns
// ahead.
var testFixedSoon = map[string][]testSoonScenario{
	"R3": {
		{kind: "Limiter", rates: []float64{3}, bursts: []int{1}, ops: []testSoonOp{
			{waits: 1}, {lead: 1, waits: 1}, {lead: time.Millisecond - 1, waits: 1}, {lead: time.Millisecond + 1, waits: 1}}},
		{kind: "Limiter", rates: []float64{1e9}, bursts: []int{2}, ops: []testSoonOp{{waits: 0}, {waits: 1}, {waits: 1}, {waits: 1}}},
	},
	"R4": {
		{kind: "Limiter", rates: []float64{3}, bursts: []int{1}, ops: []testSoonOp{{waits: 0}, {waits: 3}}},
		{kind: "Limiter", rates: []float64{5000}, bursts: []int{1}, ops: []testSoonOp{{waits: 0}, {waits: 4}, {waits: 0}}},
		{kind: "Limiter", rates: []float64{1e7}, bursts: []int{2}, ops: []testSoonOp{{waits: 3}, {waits: 0}, {waits: 2}}},
	},
	"B1": {
		{kind: "Combine", rates: []float64{1e6, 2}, bursts: []int{1, 2}, ops: []testSoonOp{
			{waits: 1}, {waits: 1}, {lead: time.Millisecond - 1, waits: 1}, {lead: 1, waits: 1}}},
	},
	"B2": {
		{kind: "Keyed", rates: []float64{4096}, bursts: []int{1}, idle: time.Second, ops: []testSoonOp{
			{waits: 1}, {waits: 2}, {key: 1, waits: 1}, {key: 1, lead: 7, waits: 1}}},
	},
}

func TestR3_ExploreATokenDueSoonStillWaitsForItsTimer(t *testing.T) {
	katatest.Replay(t, testFixedSoon["R3"], func(h *katatest.H, s testSoonScenario) { s.play(h) })
	katatest.Explore(t, 5, testDrawSoon("Limiter", false), func(h *katatest.H, s testSoonScenario) { s.play(h) })
}

func TestR4_ExploreWaitersAtOnceWakeOneIntervalApartAtAnyRate(t *testing.T) {
	katatest.Replay(t, testFixedSoon["R4"], func(h *katatest.H, s testSoonScenario) { s.play(h) })
	katatest.Explore(t, 4, testDrawSoon("Limiter", true), func(h *katatest.H, s testSoonScenario) { s.play(h) })
}

func TestB1_ExploreACombinedTokenDueSoonStillWaitsForItsTimer(t *testing.T) {
	katatest.Replay(t, testFixedSoon["B1"], func(h *katatest.H, s testSoonScenario) { s.play(h) })
	katatest.Explore(t, 4, testDrawSoon("Combine", false), func(h *katatest.H, s testSoonScenario) { s.play(h) })
}

func TestB2_ExploreAKeyedTokenDueSoonStillWaitsForItsTimer(t *testing.T) {
	katatest.Replay(t, testFixedSoon["B2"], func(h *katatest.H, s testSoonScenario) { s.play(h) })
	katatest.Explore(t, 4, testDrawSoon("Keyed", true), func(h *katatest.H, s testSoonScenario) { s.play(h) })
}

package ratelimit

// R3 with the clock moving while a Wait is in flight. The scheduler may
// hold a goroutine at any instant, also right after it read the clock and
// before it took its token; meanwhile the clock moves on and other calls
// take their turn. Each call must still act at one instant of the clock,
// and a call that takes its turn after another one cannot act at an
// earlier instant than it did.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testHeldScenario: Allow calls at chosen instants, one at a time; then a
// Wait that is held right after its first clock reading while the clock
// moves and other calls start, each on a goroutine of its own; then the
// Wait goes on; once every Wait returned, Allow is called burst+1 times.
type testHeldScenario struct {
	r      float64
	burst  int
	before []testHeldStep
	at     int    // half intervals the clock moves before the held Wait starts
	jump   int    // half intervals the clock moves while that Wait is held
	others []bool // the calls that start meanwhile: true for Wait, false for Allow
	probe  int    // half intervals the clock moves before the last Allow calls
}

// testHeldStep: the clock moves halves half intervals, then Allow is
// called calls times.
type testHeldStep struct{ halves, calls int }

func (s testHeldScenario) String() string {
	half := testDue(s.r, 0, 1) / 2
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %v per second, burst %d)", s.r, s.burst)
	for _, st := range s.before {
		if st.halves > 0 {
			fmt.Fprintf(&b, "; move the clock %v", time.Duration(st.halves)*half)
		}
		fmt.Fprintf(&b, "; Allow ×%d", st.calls)
	}
	if s.at > 0 {
		fmt.Fprintf(&b, "; move the clock %v", time.Duration(s.at)*half)
	}
	names := make([]string, len(s.others))
	for i, wait := range s.others {
		names[i] = map[bool]string{true: "Wait", false: "Allow"}[wait]
	}
	fmt.Fprintf(&b, "\n  Wait #1 starts and reads the clock; right after that reading it is held (as the scheduler may "+
		"hold it) while the clock moves %v and %d goroutine(s) call %s at once; then Wait #1 goes on",
		time.Duration(s.jump)*half, len(s.others), strings.Join(names, ", "))
	fmt.Fprintf(&b, "\n  once every Wait returned, move the clock %v; Allow ×%d", time.Duration(s.probe)*half, s.burst+1)
	return b.String()
}

func testDrawHeld(r *rapid.T) testHeldScenario {
	s := testHeldScenario{
		r:     rapid.SampledFrom([]float64{10, 4, 3, 2, 1, 0.5}).Draw(r, "rate"),
		burst: rapid.IntRange(1, 3).Draw(r, "burst"),
	}
	for range rapid.IntRange(0, 3).Draw(r, "steps before") {
		s.before = append(s.before, testHeldStep{
			halves: rapid.IntRange(0, 2*s.burst+2).Draw(r, "halves"),
			calls:  rapid.IntRange(0, s.burst+1).Draw(r, "calls"),
		})
	}
	s.at = rapid.IntRange(0, 2*s.burst+2).Draw(r, "halves before the held Wait")
	s.jump = rapid.IntRange(1, 2*s.burst+2).Draw(r, "halves while it is held")
	s.others = rapid.SliceOfN(rapid.Bool(), 1, 3).Draw(r, "calls meanwhile (Wait?)")
	s.probe = rapid.IntRange(0, 2*s.burst+2).Draw(r, "halves before the last Allows")
	return s
}

// testHeldIn is a call as the model sees it: it acted at one instant of
// the clock between early and late.
type testHeldIn struct {
	wait        bool
	id          int // a Wait's number
	early, late time.Duration
}

// testHeldOut is how a call ended. A Wait's return is seen by the test
// goroutine: at once (at hi, before the clock moved again), or while the
// clock moved from lo to hi.
type testHeldOut struct {
	allowed bool
	err     error
	atOnce  bool
	lo, hi  time.Duration
}

type testHeldState struct {
	b  testBucket
	at time.Duration // the instant the last call acted at (strict model only)
}

// testHeldModel is the README's limiter, one call at a time, each call
// acting at an instant it may have read: early or late. strict: a call
// taking its turn after another one acts at the same or a later instant.
//
// A Wait that reserved a token due at its instant returns at once. A Wait
// whose token was due later returns when it is due; if the Wait read the
// clock before it moved, the timer it sets only after the move may fire
// that much later (the README's API measures a wait from now).
func testHeldModel(r float64, burst int, strict bool) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any { return []any{testHeldState{b: testBucket{r: r, burst: burst}}} },
		Step: func(state, input, output any) []any {
			st, in, out := state.(testHeldState), input.(*testHeldIn), output.(*testHeldOut)
			var next []any
			for i, tau := range []time.Duration{in.early, in.late} {
				if (i == 1 && tau == in.early) || (strict && tau < st.at) {
					continue
				}
				b := st.b
				due := b.next(tau)
				if !in.wait {
					ok := due <= tau
					if ok {
						b.taken++
					}
					if ok != out.allowed {
						continue
					}
				} else {
					b.taken++
					slack := in.late - tau
					switch {
					case out.err != nil:
						continue
					case due <= tau:
						if !out.atOnce {
							continue
						}
					case out.atOnce:
						if out.hi < due || out.hi > due+slack {
							continue
						}
					case out.hi < due || out.lo >= due+slack:
						continue
					}
				}
				at := time.Duration(0)
				if strict {
					at = max(st.at, tau)
				}
				next = append(next, testHeldState{b, at})
			}
			return next
		},
		Equal: func(a, b any) bool { return a.(testHeldState) == b.(testHeldState) },
		DescribeOperation: func(input, output any) string {
			in, out := input.(*testHeldIn), output.(*testHeldOut)
			if !in.wait {
				return fmt.Sprintf("at %v Allow() → %v", in.early, out.allowed)
			}
			what := fmt.Sprintf("at %v Wait #%d", in.early, in.id)
			if in.late != in.early {
				what = fmt.Sprintf("at %v Wait #%d read the clock and was held there while the clock moved to %v",
					in.early, in.id, in.late)
			}
			if out.atOnce {
				return fmt.Sprintf("%s → returned %v at once, at %v", what, out.err, out.hi)
			}
			return fmt.Sprintf("%s → returned %v while the clock moved from %v to %v", what, out.err, out.lo, out.hi)
		},
	}
	return nm.ToModel()
}

func (s testHeldScenario) play(h *katatest.H) {
	half := testDue(s.r, 0, 1) / 2
	clk := h.HeldClock()
	l := New(clk, s.r, s.burst)
	hi := &katatest.History{}
	allow := func() {
		now := h.Elapsed()
		ret := hi.Call(0, &testHeldIn{early: now, late: now})
		ret(&testHeldOut{allowed: l.Allow()})
	}
	type call struct {
		c   *katatest.Call[struct{}]
		out *testHeldOut
	}
	var calls, pending []call
	start := func(client int, in *testHeldIn) {
		out := &testHeldOut{}
		c := katatest.Start(h, func(ctx context.Context) (struct{}, error) {
			ret := hi.Call(client, in)
			if in.wait {
				out.err = l.Wait(ctx)
			} else {
				out.allowed = l.Allow()
			}
			ret(out)
			return struct{}{}, nil
		})
		calls = append(calls, call{c, out})
		pending = append(pending, call{c, out})
	}
	// observe marks the calls that returned while the clock moved from lo
	// (at once if it has not moved).
	observe := func(lo time.Duration) {
		var still []call
		for _, p := range pending {
			if !p.c.Returned() {
				still = append(still, p)
				continue
			}
			p.out.atOnce, p.out.lo, p.out.hi = lo == h.Elapsed(), lo, h.Elapsed()
		}
		pending = still
	}
	stop := func() { // the gate is the test's (h.Gate): Unwind releases it
		var cs []*katatest.Call[struct{}]
		for _, p := range calls {
			cs = append(cs, p.c)
		}
		katatest.Unwind(h, cs...)
	}

	for _, st := range s.before {
		h.Advance(time.Duration(st.halves) * half)
		for range st.calls {
			allow()
		}
	}
	h.Advance(time.Duration(s.at) * half)
	a := h.Elapsed()
	b := a + time.Duration(s.jump)*half
	held := &testHeldIn{wait: true, id: 1, early: a, late: b}
	clk.HoldReadings(true)
	start(1, held)
	synctest.Wait() // only Wait #1 runs: nothing can be stuck on a mutex yet
	clk.HoldReadings(false)
	if clk.Gate.Entered() == 0 {
		held.late = a // it did not read the clock: it was not held
		observe(a)
	}
	lo := h.Elapsed()
	h.Advance(b - a) // Wait #1 is held at the gate, or done, or waits for its timer
	observe(lo)
	id := 1
	for i, wait := range s.others {
		in := &testHeldIn{wait: wait, early: b, late: b}
		if wait {
			id++
			in.id = id
		}
		start(2+i, in)
	}
	h.Settle() // calls may be stuck on the mutex Wait #1 holds while it is held: fine
	clk.Gate.Release()
	if stuck := h.Settle(); stuck != nil {
		h.Errorf("calls were stuck on the limiter's mutex while a Wait waited for its token: your Wait holds the "+
			"mutex while it waits, so every other Wait and even Allow queue behind it. Stuck:\n\t%s",
			strings.Join(stuck, "\n\t"))
		stop()
		return
	}
	for _, p := range calls {
		if p.c.Returned() && p.c.Panicked() {
			stop()
			return
		}
	}
	observe(b)
	for i := 0; len(pending) > 0; i++ {
		if i > 4*(len(s.others)+s.burst)+8 {
			h.Errorf("%d call(s) were still waiting at %v, long after every token they could have reserved was due: "+
				"each Wait reserves the next token as it starts and returns when that token is due", len(pending), h.Elapsed())
			stop()
			return
		}
		lo := h.Elapsed()
		h.Advance(half)
		observe(lo)
	}
	h.Advance(time.Duration(s.probe) * half)
	for range s.burst + 1 {
		allow()
	}

	ops := hi.Operations()
	if porcupine.CheckOperations(testHeldModel(s.r, s.burst, true), ops) {
		return
	}
	describe := testHeldModel(s.r, s.burst, false).DescribeOperation
	lines := make([]string, len(ops))
	for i, op := range ops {
		who := "the test goroutine"
		if op.ClientId > 0 {
			who = fmt.Sprintf("goroutine %d", op.ClientId)
		}
		lines[i] = fmt.Sprintf("%s: %s (started at step %d, returned at step %d)", who,
			describe(op.Input, op.Output), op.Call, op.Return)
	}
	if held.late != held.early && porcupine.CheckOperations(testHeldModel(s.r, s.burst, false), ops) {
		h.Errorf("Wait #1 worked from a stale clock reading: it read clk.Now() at %v, then other calls took their turn "+
			"at %v and only then did Wait #1 reserve its token, as of %v, behind theirs: so it waited for a token that "+
			"was already there, or woke later than its token was due. Read clk.Now() after taking the lock, in the same "+
			"critical section as the arithmetic: a call that takes its turn after another must not act at an earlier "+
			"instant than that one did.\nThe calls:\n%s", a, b, a, strings.Join(lines, "\n"))
		return
	}
	h.Errorf("Allow and Wait, with the clock moving while a Wait was in flight, gave answers that no order of the "+
		"calls explains, each call acting at an instant it could have read (Wait #1 at %v or at %v), in order. The "+
		"rules: each Wait reserves its own token as it starts and returns nil exactly when that token is due, at once "+
		"when a token is there; %s.\nThe calls:\n%s", a, b, testArithmetic, strings.Join(lines, "\n"))
}

// testFixedHeld are scenarios every run of the test plays besides the
// explored ones: the held Wait would find a token whenever it took its
// turn, and the call that goes first starts a new anchor.
var testFixedHeld = []testHeldScenario{
	{r: 1, burst: 2, jump: 2, others: []bool{false}, probe: 1},
	{r: 1, burst: 1, before: []testHeldStep{{calls: 1}}, at: 1, jump: 2, others: []bool{false}},
	{r: 2, burst: 2, jump: 4, others: []bool{true, false}, probe: 2},
}

func TestR3_ExploreTheClockMovesWhileAWaitIsInFlight(t *testing.T) {
	for _, s := range testFixedHeld {
		katatest.Run(t, func(h *katatest.H) { s.play(h) })
	}
	katatest.Explore(t, 4, testDrawHeld, func(h *katatest.H, s testHeldScenario) { s.play(h) })
}

// R6 with the clock moving while a Wait is in flight. The deadline and the
// token's due time are instants: a Wait that read the clock at 0, when its
// token was due at 100ms and its deadline was 110ms, and was then held
// while the clock moved 50ms, still has its token before its deadline,
// whichever instant it acts at. It may wait for the token (or, having set
// its timer only after the move, see the deadline first); it must not fail
// with ErrWouldExceedDeadline. Repeated: the hold comes right after the
// Wait's first reading of the clock, and only if it reads the clock.
func TestR6_ADeadlineStaysAnInstantWhileTheClockMoves(t *testing.T) {
	katatest.Repeat(t, 3, func(h *katatest.H) {
		clk := h.HeldClock()
		l := New(clk, 10, 1)
		if !l.Allow() {
			h.Errorf("a new limiter with burst 1 refused its first Allow: it starts full")
			return
		}
		clk.HoldReadings(true)
		w := katatest.StartErr(h, l.Wait, katatest.Timeout(110*testMs))
		synctest.Wait()
		clk.HoldReadings(false)
		held := clk.Gate.Entered() > 0
		h.Advance(50 * testMs)
		clk.Gate.Release()
		h.Advance(200 * testMs) // past the deadline: every Wait has returned
		err, ok := w.Finish("Wait")
		if !ok || !errors.Is(err, ErrWouldExceedDeadline) {
			return
		}
		how := "while the clock moved from 0s to 50ms"
		if held {
			how = "after it read the clock at 0s and was held right there while the clock moved to 50ms"
		}
		h.Errorf("a Wait whose token was due at 100ms and whose ctx's deadline was at 110ms failed with "+
			"ErrWouldExceedDeadline (%v), %s: the token comes before the deadline whatever instant the Wait acts at. "+
			"The deadline and the due time are instants: compare them with each other, or both with the one "+
			"clk.Now() you read; the time left, from a second reading of the clock, against the wait, from the "+
			"first, makes the deadline look nearer than it is", err, how)
	})
}

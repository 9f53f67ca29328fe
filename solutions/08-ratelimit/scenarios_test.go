package ratelimit

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDue is the README's arithmetic: how long after the anchor the j-th
// token taken since the anchor is due.
func testDue(r float64, burst, j int) time.Duration {
	if j <= burst {
		return 0
	}
	ns := math.Ceil(float64(j-burst) * 1e9 / r)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// testBucket is the README's limiter, one call at a time: the model the
// explored tests compare the learner's limiter with. Times are mock time
// since the test began.
type testBucket struct {
	r      float64
	burst  int
	anchor time.Duration
	taken  int
}

// full reports whether every token taken since the anchor has come back.
func (b testBucket) full(now time.Duration) bool {
	back := testDue(b.r, 0, b.taken)
	return back != math.MaxInt64 && b.anchor+back <= now
}

// next is when the next token is due, after starting a new anchor if the
// bucket is full.
func (b *testBucket) next(now time.Duration) time.Duration {
	if b.full(now) {
		b.anchor, b.taken = now, 0
	}
	d := testDue(b.r, b.burst, b.taken+1)
	if d == math.MaxInt64 {
		return math.MaxInt64
	}
	return b.anchor + d
}

// ---- R1, R2: every token comes when the README's arithmetic says ----

// testSchedule is a series of Allow calls at chosen instants.
type testSchedule struct {
	r     float64
	burst int
	steps []testStep
}

// testStep is one instant: the mock clock moves by gap (or to the next
// token's due time and 1ns before it), then Allow is called calls times.
type testStep struct {
	gap   time.Duration
	toDue bool // move to 1ns before the next token is due, then to it
	calls int
}

var testRates = []float64{1, 2, 3, 7, 9, 10, 13, 0.5, 0.3, 1.0 / 3, 100, 1000, 33.3, 1e6}

func (s testSchedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %v per second, burst %d)", s.r, s.burst)
	for _, st := range s.steps {
		if st.toDue {
			b.WriteString("; move the clock to 1ns before the next token is due, call Allow, move 1ns")
		} else if st.gap > 0 {
			fmt.Fprintf(&b, "; move the clock %v", st.gap)
		}
		fmt.Fprintf(&b, "; Allow ×%d", st.calls)
	}
	return b.String()
}

func testDrawSchedule(r *rapid.T) testSchedule {
	s := testSchedule{
		r:     rapid.SampledFrom(testRates).Draw(r, "rate"),
		burst: rapid.SampledFrom([]int{1, 1, 2, 3, 5, 10}).Draw(r, "burst"),
	}
	interval := testDue(s.r, 0, 1)
	n := rapid.IntRange(1, 12).Draw(r, "steps")
	for range n {
		st := testStep{calls: rapid.IntRange(0, s.burst+1).Draw(r, "calls")}
		switch rapid.IntRange(0, 3).Draw(r, "how the clock moves") {
		case 0, 1:
			st.toDue = true
		case 2: // a part of an interval
			st.gap = time.Duration(rapid.Int64Range(1, int64(interval)).Draw(r, "gap ns"))
		case 3: // several intervals: the bucket fills up again
			k := rapid.IntRange(1, s.burst+3).Draw(r, "intervals")
			st.gap = time.Duration(k)*interval + time.Duration(rapid.Int64Range(-1, 1).Draw(r, "and ns"))
		}
		s.steps = append(s.steps, st)
	}
	return s
}

func (s testSchedule) play(h *katatest.H) {
	s.playOn(h, New(h.Clk, s.r, s.burst).Allow)
}

// playOn plays the schedule on allow, the Allow of a new bucket.
func (s testSchedule) playOn(h *katatest.H, allowed func() bool) {
	m := testBucket{r: s.r, burst: s.burst}
	allow := func(what string) bool {
		now := h.Elapsed()
		mm := m
		due := mm.next(now)
		want := due <= now
		if want {
			mm.taken++
		}
		got := allowed()
		if got != want {
			anchor := mm.anchor
			if got {
				h.Errorf("Allow returned true at %v (%s), but the next token was due only at %v: counted from the "+
					"anchor %v (the instant a token was last taken from a full bucket), token j is due at anchor + "+
					"⌈(j − burst)·1e9/r⌉ ns; %d tokens had been taken since the anchor, and at most burst are saved up "+
					"(the bucket is full again only once anchor + ⌈n·1e9/r⌉ ≤ now). Compute every due time from the "+
					"anchor: summed intervals and float token counts drift by a nanosecond",
					now, what, due, anchor, m.taken)
			} else {
				h.Errorf("Allow returned false at %v (%s), but a token was due at %v: counted from the anchor %v, "+
					"token j is due at anchor + ⌈(j − burst)·1e9/r⌉ ns, to the nanosecond; %d tokens had been taken "+
					"since the anchor (no part of a token may be lost between calls: a count of whole tokens throws the "+
					"half away, float tokens drift; and a bucket full again at %v starts a new anchor)", now, what, due, anchor, m.taken, now)
			}
			return false
		}
		m = mm
		return true
	}
	for i, st := range s.steps {
		if st.toDue {
			mm := m
			due := mm.next(h.Elapsed())
			if due == math.MaxInt64 || due-h.Elapsed() > 1000*time.Hour {
				continue
			}
			if due > h.Elapsed() {
				h.Advance(due - h.Elapsed() - 1)
				if !allow(fmt.Sprintf("step %d, 1ns before the next token", i+1)) {
					return
				}
				h.Advance(1)
			}
		} else {
			h.Advance(st.gap)
		}
		for c := range st.calls {
			if !allow(fmt.Sprintf("step %d, call %d", i+1, c+1)) {
				return
			}
		}
	}
}

// testFixedSchedules are schedules every run of R1 plays besides the
// explored ones: at 3 per second, token after token at its due time,
// where rounding and a full bucket's exact instant show.
var testFixedSchedules = []testSchedule{
	{r: 3, burst: 1, steps: []testStep{{toDue: true, calls: 1}, {toDue: true, calls: 1}, {toDue: true, calls: 1},
		{toDue: true, calls: 1}, {toDue: true, calls: 1}, {toDue: true, calls: 1}}},
	{r: 3, burst: 2, steps: []testStep{{calls: 2}, {toDue: true, calls: 1}, {toDue: true, calls: 1},
		{toDue: true, calls: 1}, {gap: 666666667}, {toDue: true, calls: 1}, {toDue: true, calls: 1}, {toDue: true, calls: 1}}},
}

func TestR1_ExploreEveryTokenIsDueWhenTheArithmeticSays(t *testing.T) {
	for _, s := range testFixedSchedules {
		katatest.Run(t, func(h *katatest.H) { s.play(h) })
	}
	katatest.Explore(t, 20, testDrawSchedule, func(h *katatest.H, s testSchedule) { s.play(h) })
}

// ---- R4 (with R3, R5, R6): calls from several goroutines at once ----

// The linearizability check: batches of calls from several goroutines at
// once; between batches the test goroutine cancels some waiting calls and
// moves the clock in steps of half a token interval.

const (
	testAllow = iota
	testWait
	testWaitDeadline // Wait with a deadline deadline halves after the call starts
	testWaitDone     // Wait with a ctx that is already done
	testGiveBack     // the test cancelled a waiting Wait
	testReserveOnly  // only in a verdict: the first half of a Wait that took its token, then tried to give it back
)

type testLinOp struct {
	kind     int
	deadline int  // in half intervals (testWaitDeadline)
	expired  bool // testWaitDone: a deadline that passed, not a cancel
}

type testLinBatch struct {
	cancels []int         // pick waiting Waits to cancel before the batch
	callers [][]testLinOp // one sequence of calls per goroutine
	advance int           // half intervals the clock moves after the batch
}

type testLinScenario struct {
	r       float64
	burst   int
	batches []testLinBatch
}

func (s testLinScenario) String() string {
	var b strings.Builder
	half := testDue(s.r, 0, 1) / 2
	fmt.Fprintf(&b, "New(clk, %v per second, burst %d)", s.r, s.burst)
	for i, bt := range s.batches {
		fmt.Fprintf(&b, "\n  batch %d:", i+1)
		if len(bt.cancels) > 0 {
			fmt.Fprintf(&b, " cancel up to %d waiting Wait(s) (picks %v, oldest first);", len(bt.cancels), bt.cancels)
		}
		fmt.Fprintf(&b, " %d goroutines at once:", len(bt.callers))
		for g, ops := range bt.callers {
			names := make([]string, len(ops))
			for k, op := range ops {
				names[k] = op.name(half)
			}
			fmt.Fprintf(&b, " [%d: %s]", g+1, strings.Join(names, ", "))
		}
		if bt.advance > 0 {
			fmt.Fprintf(&b, "; then the clock moves %v", time.Duration(bt.advance)*half)
		}
	}
	return b.String()
}

func (op testLinOp) name(half time.Duration) string {
	switch op.kind {
	case testAllow:
		return "Allow"
	case testWait:
		return "Wait"
	case testWaitDeadline:
		return fmt.Sprintf("Wait(deadline in %v)", time.Duration(op.deadline)*half)
	case testWaitDone:
		if op.expired {
			return "Wait(ctx past its deadline)"
		}
		return "Wait(cancelled ctx)"
	}
	return "?"
}

// testDrawLin draws batches of Allow and Wait calls; with cancels, some
// waiting Waits are cancelled and some Waits get a ctx already done; with
// deadlines, some Waits get a deadline.
func testDrawLin(cancels, deadlines bool) func(r *rapid.T) testLinScenario {
	return func(r *rapid.T) testLinScenario { return testDrawLinWith(r, cancels, deadlines) }
}

func testDrawLinWith(r *rapid.T, cancels, deadlines bool) testLinScenario {
	s := testLinScenario{
		// Token intervals of a whole number of milliseconds, so that the
		// clock can move half an interval at a time.
		r:     rapid.SampledFrom([]float64{10, 4, 2, 1, 0.5}).Draw(r, "rate"),
		burst: rapid.IntRange(1, 3).Draw(r, "burst"),
	}
	n := rapid.IntRange(1, 4).Draw(r, "batches")
	for range n {
		var bt testLinBatch
		if cancels {
			bt.cancels = rapid.SliceOfN(rapid.IntRange(0, 7), 0, 2).Draw(r, "cancels")
		}
		g := rapid.IntRange(1, 4).Draw(r, "goroutines")
		for range g {
			var ops []testLinOp
			for range rapid.IntRange(0, 2).Draw(r, "allows") {
				ops = append(ops, testLinOp{kind: testAllow})
			}
			then := rapid.IntRange(0, 4).Draw(r, "then")
			if (then == 3 && !deadlines) || (then == 4 && !cancels) {
				then = 1
			}
			switch then {
			case 1, 2:
				ops = append(ops, testLinOp{kind: testWait})
			case 3:
				ops = append(ops, testLinOp{kind: testWaitDeadline, deadline: rapid.IntRange(1, 8).Draw(r, "deadline halves")})
			case 4:
				ops = append(ops, testLinOp{kind: testWaitDone, expired: rapid.Bool().Draw(r, "expired")})
			}
			if len(ops) == 0 {
				ops = append(ops, testLinOp{kind: testAllow})
			}
			bt.callers = append(bt.callers, ops)
		}
		bt.advance = rapid.IntRange(0, 5).Draw(r, "advance halves")
		s.batches = append(s.batches, bt)
	}
	return s
}

// testLinIn is a call as the model sees it.
type testLinIn struct {
	op  testLinOp
	now time.Duration // mock time when the call started
	id  int           // the Wait's number, to match a cancel with it
}

// testLinOut is how a call ended. A Wait's window is filled in by the test
// goroutine once it saw the Wait returned.
type testLinOut struct {
	allowed bool
	err     error
	ctxErr  error // the Wait's ctx.Err() once cancelled

	atOnce    bool          // returned before the clock moved
	lo, hi    time.Duration // else: returned while the clock moved from lo to hi
	cancelled bool          // the test cancelled it while it waited
	cancelAt  time.Duration
}

type testReservation struct {
	id     int
	anchor time.Duration
	taken  int
}

type testLinState struct {
	b     testBucket
	holds []testReservation // sorted by id
}

func testLinModel(r float64, burst int) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return testLinState{b: testBucket{r: r, burst: burst}} },
		Step: func(state, input, output any) (bool, any) {
			st := state.(testLinState)
			in := input.(testLinIn)
			out, _ := output.(*testLinOut)
			b := st.b
			switch in.op.kind {
			case testAllow:
				due := b.next(in.now)
				ok := due <= in.now
				if ok {
					b.taken++
				}
				return ok == out.allowed, testLinState{b, st.holds}
			case testWaitDone:
				return out.atOnce && out.err == out.ctxErr && out.err != nil, st
			case testWait, testWaitDeadline:
				due := b.next(in.now)
				if in.op.kind == testWaitDeadline && due >= in.now+time.Duration(in.op.deadline)*testDue(r, 0, 1)/2 {
					return out.atOnce && errors.Is(out.err, ErrWouldExceedDeadline), testLinState{b, st.holds}
				}
				b.taken++
				holds := append(slices.Clone(st.holds), testReservation{in.id, b.anchor, b.taken})
				switch {
				case out.cancelled:
					// Still waiting when cancelled: the token was not due yet.
					if due <= out.cancelAt || !errors.Is(out.err, context.Canceled) {
						return false, st
					}
				case out.err != nil:
					return false, st
				case out.atOnce:
					if due > in.now {
						return false, st
					}
				default:
					if due <= out.lo || due > out.hi {
						return false, st
					}
				}
				return true, testLinState{b, holds}
			case testReserveOnly:
				b.next(in.now)
				b.taken++
				return true, testLinState{b, append(slices.Clone(st.holds), testReservation{in.id, b.anchor, b.taken})}
			case testGiveBack:
				i := slices.IndexFunc(st.holds, func(h testReservation) bool { return h.id == in.id })
				if i < 0 {
					return false, st // the Wait has not reserved yet
				}
				res := st.holds[i]
				if b.taken == res.taken && b.anchor == res.anchor {
					b.taken--
				}
				return true, testLinState{b, slices.Delete(slices.Clone(st.holds), i, i+1)}
			}
			return false, st
		},
		Equal: func(a, b any) bool {
			x, y := a.(testLinState), b.(testLinState)
			return x.b == y.b && slices.Equal(x.holds, y.holds)
		},
		DescribeOperation: func(input, output any) string {
			in := input.(testLinIn)
			out, _ := output.(*testLinOut)
			half := testDue(r, 0, 1) / 2
			switch in.op.kind {
			case testAllow:
				return fmt.Sprintf("at %v Allow() → %v", in.now, out.allowed)
			case testReserveOnly:
				return fmt.Sprintf("at %v Wait #%d reserved a token", in.now, in.id)
			case testGiveBack:
				if out == nil {
					return fmt.Sprintf("at %v Wait #%d gave its token back if no call reserved a token after it", in.now, in.id)
				}
				return fmt.Sprintf("at %v the test cancelled Wait #%d while it waited (its token goes back if no "+
					"call reserved a token after it)", in.now, in.id)
			}
			what := fmt.Sprintf("at %v Wait #%d %s", in.now, in.id, in.op.name(half))
			var how string
			switch {
			case out.cancelled:
				how = fmt.Sprintf("was still waiting at %v when cancelled, returned %v", out.cancelAt, out.err)
			case out.atOnce:
				how = fmt.Sprintf("returned %v at once", out.err)
			default:
				how = fmt.Sprintf("returned %v while the clock moved from %v to %v", out.err, out.lo, out.hi)
			}
			return what + " → " + how
		},
	}
}

// testLinWaiter is a Wait the test watches.
type testLinWaiter struct {
	id       int
	op       testLinOp
	call     *katatest.Call[struct{}]
	out      *testLinOut
	cancel   context.CancelFunc
	giveBack func(any) // set when the test cancels it: the give-back ends when Wait returns
}

// What a play checks once every call returned, besides the rules each
// Wait keeps alone (testEachWaitAlone).
type testLinCheck int

const (
	testLinEach      testLinCheck = iota // nothing more (R5)
	testLinWhole                         // some order of the calls explains every answer (R4)
	testLinDeadlines                     // no Wait that failed on its deadline took a token (R6)
)

func (s testLinScenario) play(h *katatest.H, check testLinCheck) {
	l := New(h.Clk, s.r, s.burst)
	half := testDue(s.r, 0, 1) / 2
	hi := &katatest.History{}
	var pending, waiters []*testLinWaiter
	var all []*katatest.Call[struct{}]
	var cancels []context.CancelFunc
	release := func() {
		for _, cancel := range cancels {
			cancel()
		}
		for i := 0; i < 100 && h.Settle() != nil; i++ {
			h.Clk.Add(time.Hour)
		}
		for _, c := range all {
			if !c.Stop() {
				return
			}
		}
	}
	// settled lets the calls run; a call stuck on the limiter's mutex is
	// reported.
	settled := func(what string) bool {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s: calls were stuck on the limiter's mutex: a Wait holds the mutex while it waits, so "+
				"every other Wait and even Allow queue behind it. Reserve the token under the lock, unlock, then "+
				"wait on the timer. Stuck:\n\t%s", what, strings.Join(stuck, "\n\t"))
			release()
			return false
		}
		return true
	}
	// observe marks the waiters that returned while the clock moved from lo.
	observe := func(lo time.Duration, atOnce bool) {
		var still []*testLinWaiter
		for _, w := range pending {
			if !w.call.Returned() {
				still = append(still, w)
				continue
			}
			if atOnce {
				w.out.atOnce = true
			} else {
				w.out.lo, w.out.hi = lo, h.Elapsed()
			}
		}
		pending = still
	}
	advance := func(halves int) bool {
		for range halves {
			lo := h.Elapsed()
			h.Advance(half) // settles before and after: nobody holds the mutex now
			observe(lo, false)
		}
		return true
	}
	nextID := 0
	for bi, bt := range s.batches {
		// Cancel some of the Waits that are waiting.
		var cancelled []*testLinWaiter
		for _, pick := range bt.cancels {
			var open []*testLinWaiter
			for _, w := range pending {
				if !w.out.cancelled {
					open = append(open, w)
				}
			}
			if len(open) == 0 {
				break
			}
			w := open[pick%len(open)]
			w.out.cancelled, w.out.cancelAt = true, h.Elapsed()
			w.giveBack = hi.Call(100, testLinIn{op: testLinOp{kind: testGiveBack}, now: h.Elapsed(), id: w.id})
			cancelled = append(cancelled, w)
		}
		for _, w := range cancelled {
			w.cancel()
		}
		if !settled("after cancelling waiting Waits") {
			return
		}
		for _, w := range cancelled {
			if !w.call.Returned() {
				h.Errorf("a Wait cancelled at %v while it waited did not return at once (the mock clock stood "+
					"still): select on ctx.Done() together with the timer", h.Elapsed())
				release()
				return
			}
		}
		observe(h.Elapsed(), true)
		// The batch: every goroutine starts at once.
		now := h.Elapsed()
		for g, ops := range bt.callers {
			client := bi*10 + g
			var w *testLinWaiter
			last := ops[len(ops)-1]
			ctx, cancel := context.WithCancel(context.Background())
			if last.kind != testAllow {
				nextID++
				w = &testLinWaiter{id: nextID, op: last, out: &testLinOut{}}
				waiters = append(waiters, w)
				switch {
				case last.kind == testWaitDeadline:
					ctx, cancel = h.Clk.WithTimeout(context.Background(), time.Duration(last.deadline)*half)
				case last.kind == testWaitDone && last.expired:
					ctx, cancel = h.Clk.WithDeadline(context.Background(), h.Clk.Now())
				case last.kind == testWaitDone:
					cancel()
				}
				w.cancel = cancel
			}
			cancels = append(cancels, cancel)
			c := katatest.Go(h, func() (struct{}, error) {
				for _, op := range ops {
					if op.kind == testAllow {
						ret := hi.Call(client, testLinIn{op: op, now: now})
						ret(&testLinOut{allowed: l.Allow()})
						continue
					}
					ret := hi.Call(client, testLinIn{op: op, now: now, id: w.id})
					err := l.Wait(ctx)
					w.out.err = err
					if err != nil {
						w.out.ctxErr = ctx.Err()
					}
					if w.giveBack != nil {
						w.giveBack(nil)
					}
					ret(w.out)
				}
				return struct{}{}, nil
			})
			all = append(all, c)
			if w != nil {
				w.call = c
				pending = append(pending, w)
			}
		}
		if !settled(fmt.Sprintf("batch %d: calls from %d goroutines at once", bi+1, len(bt.callers))) {
			return
		}
		for _, c := range all {
			if c.Returned() && c.Panicked() {
				release()
				return
			}
		}
		observe(now, true)
		if !advance(bt.advance) {
			return
		}
	}
	// Let every Wait still waiting get its token.
	for i := 0; len(pending) > 0; i++ {
		if i > 2*len(waiters)+4 { // each Wait adds at most one interval of debt
			h.Errorf("%d Wait(s) were still waiting at %v, long after every token they could have reserved was "+
				"due: each Wait reserves the next token as it starts and returns when that token is due",
				len(pending), h.Elapsed())
			release()
			return
		}
		if !advance(1) {
			return
		}
	}
	if !testEachWaitAlone(h, waiters) {
		return
	}
	model := testLinModel(s.r, s.burst)
	ops := hi.Operations()
	switch check {
	case testLinEach:
		return // R5 checks the rules each Wait keeps whatever the others do; R4 checks the whole
	case testLinDeadlines:
		testDeadlineTookNothing(h, model, ops, s.r)
		return // the rest is R4's
	}
	if porcupine.CheckOperations(model, ops) {
		h.Linearizable(model, hi, "Allow and Wait")
		return
	}
	lines := make([]string, len(ops))
	for i, op := range ops {
		who := "the test"
		if op.ClientId < 100 {
			who = fmt.Sprintf("batch %d, goroutine %d", op.ClientId/10+1, op.ClientId%10+1)
		}
		lines[i] = fmt.Sprintf("%s: %s (started at step %d, returned at step %d)",
			who, model.DescribeOperation(op.Input, op.Output), op.Call, op.Return)
	}
	h.Errorf("%s.\nAllow and Wait, called from several goroutines at once, gave answers that no order of the "+
		"calls explains, each placed between its start and its return; the calls:\n%s",
		testFirstUnexplained(model, ops), strings.Join(lines, "\n"))
}

// testEachWaitAlone checks what each Wait must do whatever the other calls
// did: the rules for a done ctx, a cancel and a deadline.
func testEachWaitAlone(h *katatest.H, ws []*testLinWaiter) bool {
	for _, w := range ws {
		out, op := w.out, w.op
		switch {
		case op.kind == testWaitDone && (out.err == nil || out.err != out.ctxErr || !out.atOnce):
			h.Errorf("Wait #%d, called with a ctx that was already done (ctx.Err() = %v), returned %v%s; want "+
				"ctx.Err() itself, at once, taking nothing: check ctx.Done() before anything else", w.id,
				out.ctxErr, out.err, map[bool]string{true: "", false: " only after the clock moved"}[out.atOnce])
			return false
		case out.cancelled && (out.err == nil || out.err != out.ctxErr):
			h.Errorf("Wait #%d, cancelled at %v while it waited, returned %v; want ctx.Err() (%v) itself, at once",
				w.id, out.cancelAt, out.err, out.ctxErr)
			return false
		case op.kind == testWaitDeadline && !out.cancelled && errors.Is(out.err, context.DeadlineExceeded):
			h.Errorf("Wait #%d waited until its deadline passed and returned %v: its token was due at or after "+
				"the deadline (count the tokens the waiting calls reserved before it: each Wait reserves its own token "+
				"as it starts), so Wait must fail at once "+
				"with ErrWouldExceedDeadline, taking nothing, instead of waiting. Compare the due time of the token "+
				"it takes with the deadline in the same critical section as the reservation: a check made before "+
				"it, under another lock, was about a token another Wait may have taken since", w.id, out.err)
			return false
		case op.kind == testWaitDeadline && out.err != nil && !out.cancelled && !errors.Is(out.err, ErrWouldExceedDeadline):
			h.Errorf("Wait #%d with a deadline returned %v: a deadline too soon for the token is an error that "+
				"matches ErrWouldExceedDeadline (errors.Is); its chain is %s: wrap with %%w", w.id, out.err,
				katatest.Chain(out.err))
			return false
		case op.kind == testWaitDeadline && out.err != nil && !out.cancelled && !out.atOnce:
			h.Errorf("Wait #%d with a deadline returned %v only after the clock moved (between %v and %v): "+
				"a token due at or after the deadline makes Wait fail at once, without a timer", w.id, out.err,
				out.lo, out.hi)
			return false
		case op.kind == testWait && out.err != nil && !out.cancelled:
			h.Errorf("Wait #%d, with a ctx nobody cancelled and no deadline, returned %v; want nil once its "+
				"token is due", w.id, out.err)
			return false
		}
	}
	return true
}

// testArithmetic is the README's arithmetic, for a verdict.
const testArithmetic = "token j since the anchor is due at anchor + ⌈(j − burst)·1e9/r⌉ ns, to the nanosecond " +
	"(a count of whole tokens throws the half away; float tokens and summed intervals drift), and at most burst " +
	"tokens are saved up: the time the bucket sat full is lost"

// testFirstUnexplained replays the calls one at a time in the order they
// started and names the first one the README's rules cannot explain there:
// usually the mistake itself.
func testFirstUnexplained(model porcupine.Model, ops []porcupine.Operation) string {
	st := model.Init()
	for _, op := range ops {
		ok, next := model.Step(st, op.Input, op.Output)
		if !ok {
			in := op.Input.(testLinIn)
			rule := map[int]string{
				testAllow: "Allow takes a token only if one is due at clk.Now(), and changes nothing when it " +
					"answers false; " + testArithmetic,
				testWait: "each Wait reserves its own token as it starts (even one due later: the bucket may go " +
					"into debt) and returns nil exactly when that token is due; concurrent waiters get " +
					"consecutive tokens, 1/r apart; " + testArithmetic,
				testWaitDeadline: "a Wait whose token is due at or after its deadline fails at once and takes " +
					"nothing; otherwise it waits for its token like any Wait",
				testWaitDone: "a Wait whose ctx is already done takes nothing",
				testGiveBack: "a cancelled Wait gives its token back only if no call reserved a token after it: " +
					"giving it back then lets two calls through on one token, keeping it when nobody reserved " +
					"after it wastes the token (it must be free again for the next call)",
			}[in.op.kind]
			return fmt.Sprintf("taking the calls one at a time in the order they started, the first that the "+
				"README cannot explain is: %s. The rule: %s", model.DescribeOperation(op.Input, op.Output), rule)
		}
		st = next
	}
	return "taken one at a time in the order they started, every call is explained; the calls that overlapped " +
		"must still give answers that some order explains"
}

// testFixedLin are scenarios every run of R4 plays besides the explored
// ones: a quiet spell must not save more than burst tokens.
var testFixedLin = []testLinScenario{
	{r: 10, burst: 1, batches: []testLinBatch{
		{callers: [][]testLinOp{{{kind: testAllow}}}, advance: 8},
		{callers: [][]testLinOp{{{kind: testAllow}, {kind: testAllow}, {kind: testAllow}}, {{kind: testWait}}}},
	}},
}

// testRaceProbe calls Allow and Wait from goroutines started in one step,
// with nothing to order them, at a call depth no earlier probe used, so
// that the race detector reports a limiter whose state is read or written
// outside the mutex in every test that probes.
func testRaceProbe(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 2)
		var calls []*katatest.Call[bool]
		for i := range 4 {
			calls = append(calls, katatest.Go(h, func() (bool, error) {
				var ok bool
				katatest.AtFreshDepth(func() {
					if i%2 == 0 {
						ok = l.Allow()
					} else {
						ctx, cancel := context.WithCancel(context.Background())
						cancel()
						ok = l.Wait(ctx) == nil
					}
				})
				return ok, nil
			}))
		}
		synctest.Wait()
		for _, c := range calls {
			if c.Returned() {
				c.Result()
			} else {
				c.Stop()
			}
		}
	})
}

func TestR4_ExploreConcurrentAllowAndWaitMatchOneAtATime(t *testing.T) {
	testRaceProbe(t)
	for _, s := range testFixedLin {
		katatest.Run(t, func(h *katatest.H) { s.play(h, testLinWhole) })
	}
	katatest.Explore(t, 12, testDrawLin(false, false), func(h *katatest.H, s testLinScenario) { s.play(h, testLinWhole) })
}

func TestR5_ExploreCancelsAmongConcurrentCalls(t *testing.T) {
	testRaceProbe(t)
	katatest.Explore(t, 16, testDrawLin(true, false), func(h *katatest.H, s testLinScenario) { s.play(h, testLinEach) })
}

// testFixedDeadlines are scenarios every run of R6 plays besides the
// explored ones: a deadline after the next token to come back, but before
// the token this Wait gets behind a waiting call.
var testFixedDeadlines = []testLinScenario{
	{r: 2, burst: 1, batches: []testLinBatch{
		{callers: [][]testLinOp{{{kind: testAllow}, {kind: testWait}}}}, // the Wait's token is due at 500ms
		{callers: [][]testLinOp{{{kind: testWaitDeadline, deadline: 3}}}, advance: 4},
	}},
}

// testDeadlinesAtOnce: at 2 per second with burst 1, once the bucket is
// empty, two Waits whose deadline is 250ms away (their token is 500ms
// away or more: they fail) start at once with two Waits without one.
var testDeadlinesAtOnce = testLinScenario{r: 2, burst: 1, batches: []testLinBatch{
	{callers: [][]testLinOp{{{kind: testAllow}}}},
	{callers: [][]testLinOp{{{kind: testWaitDeadline, deadline: 1}}, {{kind: testWait}},
		{{kind: testWaitDeadline, deadline: 1}}, {{kind: testWait}}}, advance: 4},
}}

// testDeadlinesFitOne: at 2 per second with burst 1, once the bucket is
// empty, three Waits whose deadline is 750ms away start at once: the first
// to reserve gets the token due at 500ms, and the others, whose tokens are
// due at 1s and 1.5s, fail at once. A Wait that compares the next due time
// with its deadline in one critical section and reserves in another can
// pass the check and then reserve a later token than the one it checked.
var testDeadlinesFitOne = testLinScenario{r: 2, burst: 1, batches: []testLinBatch{
	{callers: [][]testLinOp{{{kind: testAllow}}}},
	{callers: [][]testLinOp{{{kind: testWaitDeadline, deadline: 3}}, {{kind: testWaitDeadline, deadline: 3}},
		{{kind: testWaitDeadline, deadline: 3}}}, advance: 4},
}}

// testDeadlineTookNothing fails the scenario when a Wait that failed with
// ErrWouldExceedDeadline took a token: when the calls are explained only if
// such a Wait reserved its token and then gave it back under the rule for a
// cancel, which fails once another call reserved after it. Calls that no
// order explains in other ways are R4's to report, and so are scenarios with
// a call between two token instants: there, arithmetic that loses part of a
// token now and then could pass for a token taken whole.
func testDeadlineTookNothing(h *katatest.H, model porcupine.Model, ops []porcupine.Operation, r float64) {
	if porcupine.CheckOperations(model, ops) {
		return
	}
	for _, op := range ops {
		if op.Input.(testLinIn).now%testDue(r, 0, 1) != 0 {
			return
		}
	}
	var failed []int // the Waits that failed on their deadline
	for _, op := range ops {
		in := op.Input.(testLinIn)
		if out, _ := op.Output.(*testLinOut); in.op.kind == testWaitDeadline && errors.Is(out.err, ErrWouldExceedDeadline) {
			failed = append(failed, in.id)
		}
	}
	// split replaces the Waits ids with a reservation and a give-back,
	// each at any instant while the Wait ran.
	split := func(ids ...int) []porcupine.Operation {
		var out []porcupine.Operation
		for _, op := range ops {
			in := op.Input.(testLinIn)
			if in.op.kind != testWaitDeadline || !slices.Contains(ids, in.id) {
				out = append(out, op)
				continue
			}
			reserve, giveBack := op, op
			reserve.Input = testLinIn{op: testLinOp{kind: testReserveOnly}, now: in.now, id: in.id}
			giveBack.Input = testLinIn{op: testLinOp{kind: testGiveBack}, now: in.now, id: in.id}
			giveBack.Output = nil
			out = append(out, reserve, giveBack)
		}
		return out
	}
	// The fewest Waits whose tokens explain the answers, smallest sets first.
	var who []int
	tries := 0
	var pick func(from int, set []int, size int) bool
	pick = func(from int, set []int, size int) bool {
		if len(set) == size {
			tries++
			if porcupine.CheckOperations(model, split(set...)) {
				who = slices.Clone(set)
				return true
			}
			return false
		}
		for i := from; i < len(failed) && tries < 64; i++ {
			if pick(i+1, append(set, failed[i]), size) {
				return true
			}
		}
		return false
	}
	for size := 1; size <= len(failed) && who == nil && tries < 64; size++ {
		pick(0, nil, size)
	}
	if who == nil {
		if len(failed) == 0 || !porcupine.CheckOperations(model, split(failed...)) {
			return
		}
		who = failed
	}
	slices.Sort(who)
	subject := fmt.Sprintf("Wait #%d failed with ErrWouldExceedDeadline, yet it took a token", who[0])
	if len(who) > 1 {
		names := make([]string, len(who))
		for i, id := range who {
			names[i] = fmt.Sprintf("#%d", id)
		}
		subject = fmt.Sprintf("Waits %s and %s failed with ErrWouldExceedDeadline, yet each took a token",
			strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
	}
	lines := make([]string, len(ops))
	for i, op := range ops {
		who := "the test"
		if op.ClientId < 100 {
			who = fmt.Sprintf("batch %d, goroutine %d", op.ClientId/10+1, op.ClientId%10+1)
		}
		lines[i] = fmt.Sprintf("%s: %s (started at step %d, returned at step %d)",
			who, model.DescribeOperation(op.Input, op.Output), op.Call, op.Return)
	}
	h.Errorf("%s: the answers are explained only if a Wait that failed reserved its token, found it too late and "+
		"gave it back like a cancelled Wait, which fails once another call has reserved after it, so the token was "+
		"lost and the calls after it waited an interval more. A Wait whose token is due at or after its deadline "+
		"takes nothing: compare the due time with ctx.Deadline() under the lock, in the same critical section as the "+
		"reservation, and take the token only when it is in time.\nThe calls:\n%s", subject, strings.Join(lines, "\n"))
}

func TestR6_ExploreDeadlinesAmongConcurrentCalls(t *testing.T) {
	testRaceProbe(t)
	for _, s := range testFixedDeadlines {
		katatest.Run(t, func(h *katatest.H) { s.play(h, testLinDeadlines) })
	}
	// Waits with a deadline too soon at once with Waits that get their
	// token: the first may not take one, not even for a moment.
	katatest.Repeat(t, 8, func(h *katatest.H) { testDeadlinesAtOnce.play(h, testLinDeadlines) })
	katatest.Repeat(t, 8, func(h *katatest.H) { testDeadlinesFitOne.play(h, testLinDeadlines) })
	katatest.Explore(t, 12, testDrawLin(false, true), func(h *katatest.H, s testLinScenario) { s.play(h, testLinDeadlines) })
}

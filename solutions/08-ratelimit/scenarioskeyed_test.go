package ratelimit

// B2 with several goroutines at once: callers of one key race each other
// and the forgetting of idle keys that every call does first. Forgetting a
// full bucket changes no answer, so the Keyed must answer as if every key
// had one bucket of its own, forever, and the calls came one at a time.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testKeys are the keys, clients' addresses; the explored scenarios use
// the first two.
var testKeys = func() []string {
	keys := make([]string, len(testKeyedState{}.b))
	for i := range keys {
		keys[i] = fmt.Sprintf("10.0.0.%d", i+1)
	}
	return keys
}()

type testKeyedOp struct {
	wait     bool
	deadline bool // a Wait whose ctx has a deadline half a token interval away
	key      int  // index in testKeys
}

// The clock moves by whole token intervals, at rates whose interval is a
// whole number of milliseconds: every due time is then exact however the
// arithmetic is written, and only the forgetting is under test.
type testKeyedBatch struct {
	cancels []int           // waiting Waits the test cancels as the batch starts, by position (mod their number)
	after   bool            // cancel them only once the batch's calls ran, instead
	callers [][]testKeyedOp // one sequence of calls per goroutine, all starting at once
	advance int             // token intervals the clock moves after the batch
}

type testKeyedScenario struct {
	r       float64
	burst   int
	idle    int // in token intervals
	batches []testKeyedBatch
}

func (s testKeyedScenario) String() string {
	interval := testDue(s.r, 0, 1)
	var b strings.Builder
	fmt.Fprintf(&b, "NewKeyed(clk, %v per second, burst %d, idle %v)", s.r, s.burst, time.Duration(s.idle)*interval)
	for i, bt := range s.batches {
		fmt.Fprintf(&b, "\n  batch %d:", i+1)
		if !bt.after {
			for _, c := range bt.cancels {
				fmt.Fprintf(&b, " cancel waiting Wait #%d (by position among those still waiting, oldest first),", c)
			}
		}
		fmt.Fprintf(&b, " %d goroutines at once:", len(bt.callers))
		for g, ops := range bt.callers {
			names := make([]string, len(ops))
			for k, op := range ops {
				names[k] = fmt.Sprintf("%s(%q)", map[bool]string{true: "Wait", false: "Allow"}[op.wait], testKeys[op.key])
				if op.deadline {
					names[k] = fmt.Sprintf("Wait(ctx with a deadline %v away, %q)", interval/2, testKeys[op.key])
				}
			}
			fmt.Fprintf(&b, " [%d: %s]", g+1, strings.Join(names, ", "))
		}
		if bt.after {
			for _, c := range bt.cancels {
				fmt.Fprintf(&b, "; then cancel waiting Wait #%d (by position among those waiting before the batch)", c)
			}
		}
		if bt.advance > 0 {
			fmt.Fprintf(&b, "; then the clock moves %v", time.Duration(bt.advance)*interval)
		}
	}
	return b.String()
}

func testDrawKeyed(r *rapid.T) testKeyedScenario {
	s := testKeyedScenario{
		r:     rapid.SampledFrom([]float64{10, 4, 2, 1}).Draw(r, "rate"),
		burst: rapid.IntRange(1, 2).Draw(r, "burst"),
		idle:  rapid.SampledFrom([]int{0, 0, 1, 2}).Draw(r, "idle intervals"),
	}
	keys := rapid.IntRange(1, 2).Draw(r, "keys")
	for range rapid.IntRange(1, 4).Draw(r, "batches") {
		var bt testKeyedBatch
		for range rapid.IntRange(2, 4).Draw(r, "goroutines") {
			// Allow calls, then a last call that may be a Wait: the only one
			// that can still be running when the batch settles.
			ops := make([]testKeyedOp, rapid.IntRange(1, 2).Draw(r, "calls"))
			for k := range ops {
				ops[k].key = rapid.IntRange(0, keys-1).Draw(r, "key")
			}
			ops[len(ops)-1].wait = rapid.IntRange(0, 2).Draw(r, "Wait 1 in 3") == 0
			// A deadline half an interval away: the token is there now, or
			// it is too late (every token is due on a whole interval).
			ops[len(ops)-1].deadline = ops[len(ops)-1].wait && rapid.IntRange(0, 2).Draw(r, "deadline 1 in 3") == 0
			bt.callers = append(bt.callers, ops)
		}
		bt.advance = rapid.IntRange(0, s.burst+1).Draw(r, "advance intervals")
		if len(s.batches) > 0 {
			bt.cancels = rapid.SliceOfN(rapid.IntRange(0, 7), 0, 2).Draw(r, "cancels")
			bt.after = len(bt.cancels) > 0 && rapid.Bool().Draw(r, "cancel after the batch's calls")
		}
		s.batches = append(s.batches, bt)
	}
	return s
}

// testKeyedIn is a call as the model sees it.
type testKeyedIn struct {
	op       testKeyedOp
	now      time.Duration
	id       int  // a Wait's number
	giveBack bool // the test cancelled Wait id while it waited
}

// testKeyedOut is how a call ended; a Wait's return is seen by the test
// goroutine, at once or while the clock moved from lo to hi.
type testKeyedOut struct {
	allowed bool
	err     error
	atOnce  bool
	lo, hi  time.Duration

	cancelled bool          // the test cancelled this Wait while it waited
	cancelAt  time.Duration // when
	giveBack  func(any)     // ends the give-back in the history, once the Wait returned
}

// testKeyedState is every key's bucket, and the token each cancelled Wait
// reserved: "id/anchor/taken;" for each.
type testKeyedState struct {
	b     [4]testBucket
	holds string
}

// testKeyedModel: one bucket per key, never forgotten (a forgotten bucket
// was full, and a full bucket is the same as a new one), one call at a time.
// With orphans, a call may also take its token from a full bucket that was
// forgotten under it, which leaves the key's bucket as it was: the model of
// the mistake, used only to name it.
func testKeyedModel(r float64, burst int, orphans bool) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
			byKey := make([][]porcupine.Operation, len(testKeys))
			for _, op := range ops {
				k := op.Input.(testKeyedIn).op.key
				byKey[k] = append(byKey[k], op)
			}
			return slices.DeleteFunc(byKey, func(ops []porcupine.Operation) bool { return len(ops) == 0 })
		},
		Init: func() []any {
			var st testKeyedState
			for i := range st.b {
				st.b[i] = testBucket{r: r, burst: burst}
			}
			return []any{st}
		},
		Step: func(state, input, output any) []any {
			st, in := state.(testKeyedState), input.(testKeyedIn)
			out, _ := output.(*testKeyedOut) // nil for a give-back
			b := &st.b[in.op.key]
			if in.giveBack {
				var keep strings.Builder
				found := false
				for _, e := range strings.Split(st.holds, ";") {
					var id, taken int
					var anchor time.Duration
					if n, _ := fmt.Sscanf(e, "%d/%d/%d", &id, &anchor, &taken); n != 3 {
						continue
					}
					if id != in.id {
						keep.WriteString(e + ";")
						continue
					}
					found = true
					if b.taken == taken && b.anchor == anchor {
						b.taken--
					}
				}
				if !found {
					return nil // the Wait has not reserved yet
				}
				st.holds = keep.String()
				return []any{st}
			}
			var next []any
			if orphans && b.full(in.now) && out.err == nil && (out.allowed || out.atOnce) {
				next = append(next, st)
			}
			due := b.next(in.now)
			if !in.op.wait {
				ok := due <= in.now
				if ok {
					b.taken++
				}
				if ok == out.allowed {
					next = append(next, st)
				}
				return next
			}
			if in.op.deadline {
				// Returns at once: with the token there now, nil; else a
				// deadline too soon, taking nothing.
				ok := due <= in.now
				if ok {
					b.taken++
				}
				if out.atOnce && ((ok && out.err == nil) || (!ok && errors.Is(out.err, ErrWouldExceedDeadline))) {
					next = append(next, st)
				}
				return next
			}
			b.taken++
			switch {
			case out.cancelled:
				// Still waiting when cancelled: the token was not due yet.
				if due > out.cancelAt && errors.Is(out.err, context.Canceled) {
					st.holds += fmt.Sprintf("%d/%d/%d;", in.id, b.anchor, b.taken)
					next = append(next, st)
				}
			case out.err != nil:
			case out.atOnce:
				if due <= in.now {
					next = append(next, st)
				}
			case out.lo < due && due <= out.hi:
				next = append(next, st)
			}
			return next
		},
		Equal: func(a, b any) bool { return a.(testKeyedState) == b.(testKeyedState) },
		DescribeOperation: func(input, output any) string {
			in := input.(testKeyedIn)
			out, _ := output.(*testKeyedOut)
			key := testKeys[in.op.key]
			if in.giveBack {
				return fmt.Sprintf("at %v the test cancelled Wait #%d (%q) while it waited (its token goes back "+
					"unless a call reserved a token of that key after it)", in.now, in.id, key)
			}
			if !in.op.wait {
				return fmt.Sprintf("at %v Allow(%q) → %v", in.now, key, out.allowed)
			}
			if out.cancelled {
				return fmt.Sprintf("at %v Wait #%d (%q) → was still waiting at %v when cancelled, returned %v", in.now,
					in.id, key, out.cancelAt, out.err)
			}
			wait := fmt.Sprintf("Wait #%d (%q)", in.id, key)
			if in.op.deadline {
				wait = fmt.Sprintf("Wait #%d (%q, its ctx's deadline half a token interval away)", in.id, key)
			}
			if out.atOnce {
				return fmt.Sprintf("at %v %s → returned %v at once", in.now, wait, out.err)
			}
			return fmt.Sprintf("at %v %s → returned %v while the clock moved from %v to %v", in.now, wait, out.err,
				out.lo, out.hi)
		},
	}
	return nm.ToModel()
}

func (s testKeyedScenario) play(h *katatest.H) {
	half := testDue(s.r, 0, 1) / 2
	k := NewKeyed(h.Clk, s.r, s.burst, time.Duration(s.idle)*2*half)
	hi := &katatest.History{}
	type waiter struct {
		c      *katatest.Call[struct{}]
		out    *testKeyedOut
		in     testKeyedIn
		cancel context.CancelFunc
	}
	var all []*katatest.Call[struct{}]
	var pending []waiter
	release := func() { katatest.Unwind(h, all...) }
	settled := func(what string) bool {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s: calls were stuck on a mutex of the Keyed: a lock held while a Wait waits for its token, "+
				"or never unlocked on some way out (an early return for an error). Hold a lock only to find the "+
				"key's bucket and do its arithmetic, and unlock it on every path. Stuck:\n\t%s", what,
				strings.Join(stuck, "\n\t"))
			release()
			return false
		}
		return true
	}
	observe := func(lo time.Duration) {
		var still []waiter
		for _, w := range pending {
			if !w.c.Returned() {
				still = append(still, w)
				continue
			}
			w.out.atOnce, w.out.lo, w.out.hi = lo == h.Elapsed(), lo, h.Elapsed()
		}
		pending = still
	}
	waits := 0
	for bi, bt := range s.batches {
		now := h.Elapsed()
		// Cancel some of the Waits still waiting, just as the batch starts
		// (once its goroutines are ready to go): each gives its token back
		// while the batch's calls forget idle keys.
		var cancelled []waiter
		for _, pick := range bt.cancels {
			var open []waiter
			for _, w := range pending {
				if !w.out.cancelled {
					open = append(open, w)
				}
			}
			if len(open) == 0 {
				break
			}
			w := open[pick%len(open)]
			w.out.cancelled, w.out.cancelAt = true, now
			w.out.giveBack = hi.Call(200+w.in.id, testKeyedIn{op: w.in.op, now: now, id: w.in.id, giveBack: true})
			cancelled = append(cancelled, w)
		}
		start := make(chan struct{}) // the goroutines start their calls together
		for g, ops := range bt.callers {
			out := make([]*testKeyedOut, len(ops))
			ins := make([]testKeyedIn, len(ops))
			for i, op := range ops {
				out[i] = &testKeyedOut{}
				ins[i] = testKeyedIn{op: op, now: now}
				if op.wait {
					waits++
					ins[i].id = waits
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			c := katatest.Go(h, func() (struct{}, error) {
				defer cancel()
				<-start
				for i, op := range ops {
					ret := hi.Call(bi*10+g, ins[i])
					katatest.AtFreshDepth(func() {
						switch {
						case op.deadline:
							dctx, stop := h.Clk.WithTimeout(ctx, half)
							out[i].err = k.Wait(dctx, testKeys[op.key])
							stop()
						case op.wait:
							out[i].err = k.Wait(ctx, testKeys[op.key])
						default:
							out[i].allowed = k.Allow(testKeys[op.key])
						}
					})
					if out[i].giveBack != nil {
						out[i].giveBack(nil)
					}
					ret(out[i])
				}
				return struct{}{}, nil
			})
			all = append(all, c)
			if ops[len(ops)-1].wait {
				pending = append(pending, waiter{c, out[len(ops)-1], ins[len(ops)-1], cancel})
			}
		}
		if !bt.after {
			for _, w := range cancelled {
				w.cancel()
			}
		}
		close(start)
		if bt.after {
			// The batch's calls ran, forgetting idle keys; nothing orders
			// what they read before the give-backs, so the race detector
			// sees a bucket read outside its limiter's lock.
			h.WaitUnordered()
			for _, w := range cancelled {
				w.cancel()
			}
		}
		if !settled(fmt.Sprintf("batch %d: calls from %d goroutines at once", bi+1, len(bt.callers))) {
			return
		}
		for _, w := range cancelled {
			if !w.c.Returned() {
				h.Errorf("Wait #%d (%q), cancelled at %v while it waited, did not return at once (the mock clock "+
					"stood still): select on ctx.Done() together with the timer", w.in.id, testKeys[w.in.op.key], now)
				release()
				return
			}
		}
		for _, c := range all {
			if c.Returned() && c.Panicked() {
				release()
				return
			}
		}
		observe(now)
		for range 2 * bt.advance {
			lo := h.Elapsed()
			h.Advance(half)
			observe(lo)
		}
	}
	for i := 0; len(pending) > 0; i++ {
		if i > 8*len(s.batches)*(s.burst+1) {
			h.Errorf("%d Wait(s) were still waiting at %v, long after every token they could have reserved was "+
				"due: Wait on a key reserves the next token of that key's bucket and returns when it is due",
				len(pending), h.Elapsed())
			release()
			return
		}
		lo := h.Elapsed()
		h.Advance(half)
		observe(lo)
	}
	model := testKeyedModel(s.r, s.burst, false)
	ops := hi.Operations()
	if porcupine.CheckOperations(model, ops) {
		s.checkForgotten(h, k, len(ops))
		return
	}
	lines := make([]string, len(ops))
	for i, op := range ops {
		lines[i] = fmt.Sprintf("batch %d, goroutine %d: %s (started at step %d, returned at step %d)",
			op.ClientId/10+1, op.ClientId%10+1, model.DescribeOperation(op.Input, op.Output), op.Call, op.Return)
	}
	if porcupine.CheckOperations(testKeyedModel(s.r, s.burst, true), ops) {
		h.Errorf("calls on one key took their tokens from two different buckets: finding (or creating) the key's "+
			"bucket, forgetting the idle keys and taking the token were not one critical section, so a call took its "+
			"token from a bucket that another call had just forgotten (or replaced) while the next call got a new, full "+
			"one; or the call's own sweep forgot the bucket it had just found, full, as it ran (with idle 0, or when "+
			"idle had just passed), and it took its token from that forgotten bucket. Take the token under the lock "+
			"that finds, creates and forgets the buckets, and forget the idle keys before you find the key's bucket, "+
			"not after. Several goroutines at once "+
			"got more tokens than one bucket per key gives:\n%s", strings.Join(lines, "\n"))
		return
	}
	h.Errorf("Allow and Wait on a Keyed, called from several goroutines at once, gave answers that no order of the "+
		"calls explains with one bucket per key (a forgotten bucket was full, so forgetting changes no answer). The "+
		"rules: each Wait reserves its own token as it starts and returns nil exactly when that token is due; %s.\n%s",
		testArithmetic, strings.Join(lines, "\n"))
}

// checkForgotten moves the clock until every bucket is full again (each of
// the n calls reserved at most one token) and unused for idle, and checks
// that Len forgot every key: idle 0 included, where a full bucket is
// forgotten at once.
func (s testKeyedScenario) checkForgotten(h *katatest.H, k *Keyed, n int) {
	idle := time.Duration(s.idle) * testDue(s.r, 0, 1)
	h.Advance(testDue(s.r, 0, s.burst+n+1) + idle)
	if got := k.Len(); got != 0 {
		h.Errorf("Len() is %d at %v, long after every bucket was full again and unused for idle (%v): every key "+
			"must be forgotten by then. A key goes once its bucket is full and nobody used it for at least idle; "+
			"with idle 0 that is as soon as its bucket is full (0 does not mean \"never forget\")", got,
			h.Elapsed(), idle)
	}
}

// testFixedKeyed are scenarios every run plays besides the explored ones:
// callers of a new key, forgotten as soon as it is full, all at once.
var testFixedKeyed = []testKeyedScenario{
	{r: 1, burst: 1, batches: []testKeyedBatch{{callers: testEveryKey(4)}}},
	{r: 10, burst: 1, batches: []testKeyedBatch{{callers: [][]testKeyedOp{{{}, {wait: true}}, {{wait: true}}, {{wait: true}}}}}},
	// A Wait on a key is cancelled, and its token goes back, right after
	// calls on the other key forgot idle keys.
	{r: 10, burst: 1, batches: []testKeyedBatch{
		{callers: [][]testKeyedOp{{{}, {wait: true}}}},
		{cancels: []int{0}, after: true, callers: [][]testKeyedOp{{{key: 1}}, {{key: 1}, {key: 1}}}, advance: 1},
		{callers: [][]testKeyedOp{{{}}, {{key: 1}}}},
	}},
	// A Wait whose deadline is too soon fails at once, taking nothing; the
	// calls after it, on its key and on another, go on as before.
	{r: 10, burst: 1, batches: []testKeyedBatch{
		{callers: [][]testKeyedOp{{{}, {wait: true, deadline: true}}}},
		{callers: [][]testKeyedOp{{{}}, {{key: 1}}}, advance: 1},
		{callers: [][]testKeyedOp{{{}}}},
	}},
}

// testEveryKey: n goroutines each call Allow once on every key, each
// starting from another key.
func testEveryKey(n int) [][]testKeyedOp {
	callers := make([][]testKeyedOp, n)
	for g := range callers {
		for k := range testKeys {
			callers[g] = append(callers[g], testKeyedOp{key: (k + g*len(testKeys)/n) % len(testKeys)})
		}
	}
	return callers
}

func TestB2_ExploreConcurrentCallsWhileKeysAreForgotten(t *testing.T) {
	// While a key is remembered, its bucket is a Limiter, to the nanosecond.
	for _, s := range testFixedSchedules {
		katatest.Run(t, func(h *katatest.H) {
			k := NewKeyed(h.Clk, s.r, s.burst, time.Hour)
			s.playOn(h, func() bool { return k.Allow("carol") })
		})
	}
	// Callers of new keys all at once: a repetition catches a take from a
	// forgotten bucket in about one run of four, so 32 of them miss it
	// about once in 6,000 checks.
	katatest.Repeat(t, 32, func(h *katatest.H) { testFixedKeyed[0].play(h) })
	katatest.Run(t, func(h *katatest.H) { testFixedKeyed[1].play(h) })
	katatest.Repeat(t, 3, func(h *katatest.H) { testFixedKeyed[2].play(h) })
	katatest.Run(t, func(h *katatest.H) { testFixedKeyed[3].play(h) })
	katatest.Explore(t, 4, testDrawKeyed, func(h *katatest.H, s testKeyedScenario) { s.play(h) })
}

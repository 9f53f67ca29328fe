package ratelimit

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

const testMs = time.Millisecond

func TestR1_StartsFullThenOneTokenPerInterval(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 3)
		for i := 1; i <= 3; i++ {
			if !l.Allow() {
				t.Errorf("Allow %d of a new limiter with burst 3 returned false: a new limiter starts full, "+
					"so the first burst calls go through at once", i)
				return
			}
		}
		if l.Allow() {
			t.Errorf("Allow 4 of a new limiter with burst 3 returned true with the mock clock stopped: " +
				"the bucket holds at most burst tokens")
			return
		}
		if !h.StandsStill(time.Second, "Allow succeeded", l.Allow) {
			return
		}
		h.Advance(100*testMs - 1)
		if l.Allow() {
			t.Errorf("Allow returned true at %v, 1ns before the next token was due at 100ms (10 per second)", h.Elapsed())
			return
		}
		h.Advance(1)
		assert.True(t, l.Allow(), "at 100ms, 1/r after the bucket emptied at 10 per second, the next token is due: "+
			"Allow must return true (tokens come from clk.Now(), to the nanosecond)")
		assert.False(t, l.Allow(), "at 100ms exactly one token had come back; a second Allow must return false")
	})
}

func TestR1_NoTokenIsLostBetweenCalls(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 3)
		for range 3 {
			require.True(t, l.Allow(), "precondition: a new limiter with burst 3 lets 3 calls through")
		}
		h.Advance(50 * testMs)
		if l.Allow() {
			t.Errorf("Allow returned true at 50ms: at 10 per second the next token is due at 100ms")
			return
		}
		h.Advance(50 * testMs)
		if !l.Allow() {
			t.Errorf("Allow returned false at 100ms, when the next token was due, after an Allow at 50ms had " +
				"found half a token: a call must not throw away the part of a token it finds; count the tokens " +
				"from when the bucket emptied, not from the last call")
			return
		}
		h.Advance(150 * testMs) // 250ms: the tokens due at 200ms and 300ms are 100ms apart
		assert.True(t, l.Allow(), "at 250ms the token due at 200ms is there")
		assert.False(t, l.Allow(), "at 250ms the next token is due at 300ms, not yet")
		h.Advance(50*testMs - 1)
		assert.False(t, l.Allow(), "1ns before 300ms the next token is not due yet")
		h.Advance(1)
		assert.True(t, l.Allow(), "at 300ms the next token is due: tokens keep their schedule, 100ms apart from "+
			"when the bucket emptied, whenever Allow happens to be called; restarting the count at the call "+
			"that found 1.5 tokens at 250ms throws the half away")
	})
}

func TestR2_IdleTimeSavesAtMostBurst(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 3)
		for range 3 {
			require.True(t, l.Allow(), "precondition: a new limiter with burst 3 lets 3 calls through")
		}
		if !h.StandsStill(time.Second, "Allow succeeded", l.Allow) {
			return
		}
		h.Advance(time.Hour)
		for i := 1; i <= 3; i++ {
			if !l.Allow() {
				t.Errorf("after an hour of idle time, Allow %d returned false: the bucket refills up to burst 3", i)
				return
			}
		}
		if l.Allow() {
			n := 4
			for n < 100 && l.Allow() {
				n++
			}
			t.Errorf("after an hour of idle time, Allow %d returned true (and %d calls went through in a row): "+
				"idle time saves at most burst 3 tokens, so a quiet hour cannot turn into a flood; cap the "+
				"bucket at burst", 4, n-1)
			return
		}
		h.Advance(100*testMs - 1)
		assert.False(t, l.Allow(), "1ns before 100ms after the 3 saved tokens were taken, no token is due yet")
		h.Advance(1)
		assert.True(t, l.Allow(), "100ms after the 3 saved tokens were taken at 10 per second, the next one is due")
	})
}

func TestR2_TimeSpentFullIsLost(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 3)
		for range 3 {
			require.True(t, l.Allow(), "precondition: a new limiter with burst 3 lets 3 calls through")
		}
		h.Advance(350 * testMs) // full since 300ms
		for i := 1; i <= 3; i++ {
			require.True(t, l.Allow(), "at 350ms the bucket is full again: Allow %d of 3 must succeed", i)
		}
		require.False(t, l.Allow(), "at 350ms the bucket held 3 tokens, no more")
		h.Advance(50 * testMs)
		if l.Allow() {
			t.Errorf("Allow returned true at 400ms, 50ms after the 3 tokens of a full bucket were taken: the time " +
				"the bucket sat full (300ms to 350ms) is lost, so the next token is due 100ms after the bucket " +
				"emptied at 350ms, at 450ms; restart the count when a token is taken from a full bucket")
			return
		}
		h.Advance(50*testMs - 1)
		assert.False(t, l.Allow(), "1ns before 450ms no token is due yet")
		h.Advance(1)
		assert.True(t, l.Allow(), "at 450ms, 100ms after the full bucket emptied at 350ms, the next token is due")
	})
}

func TestR3_WaitWakesExactlyWhenTheTokenIsDue(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct {
			rate float64
			due  []time.Duration // ⌈k·1e9/r⌉ ns after the bucket emptied
			why  string
		}{
			{10, []time.Duration{100 * testMs, 200 * testMs, 300 * testMs}, "10 per second: every 100ms"},
			{3, []time.Duration{333333334, 666666667, time.Second},
				"3 per second: token k is due ⌈k·1e9/3⌉ ns after the bucket emptied, computed from that instant " +
					"(adding up rounded intervals of 333333333ns or 333333334ns drifts)"},
			{0.5, []time.Duration{2 * time.Second, 4 * time.Second}, "0.5 per second: one token every 2s"},
		}
		for i, tc := range cases {
			start := h.Elapsed()
			l := New(h.Clk, tc.rate, 1)
			require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
			for k, due := range tc.due {
				w := katatest.StartErr(h, l.Wait)
				if testBroken(h, w) {
					return
				}
				if i == 0 && k == 0 && !h.StandsStill(time.Second, "Wait returned", w.Returned) {
					w.Stop()
					return
				}
				if !testWakesAt(h, w, start+due, tc.why) {
					return
				}
			}
		}
	})
}

func TestR3_WaitReturnsAtOnceWhenATokenIsThere(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 2)
		for i := 1; i <= 2; i++ {
			w := katatest.StartErr(h, l.Wait)
			if !w.Returns("Wait %d on a new limiter with burst 2 did not return with the mock clock stopped: "+
				"a token was there, so Wait returns at once without a timer", i) {
				return
			}
			err, ok := w.Finish("Wait")
			if !ok {
				return
			}
			if err != nil {
				t.Errorf("Wait %d returned %q with a token there; want nil", i, err)
				return
			}
		}
		assert.False(t, l.Allow(), "the two Waits took both tokens of burst 2")
	})
}

func TestR4_ConcurrentWaitersAreSpacedOneIntervalApart(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 1)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
		ws := []katatest.ErrCall{katatest.StartErr(h, l.Wait), katatest.StartErr(h, l.Wait), katatest.StartErr(h, l.Wait)}
		if !testSettle(h, "three Waits on an empty bucket", ws...) || testBroken(h, ws...) {
			return
		}
		if !h.StandsStill(time.Second, "a Wait returned", func() bool { return testReturned(ws) > 0 }) {
			katatest.Unwind(h, ws...)
			return
		}
		got, ok := testTry(h, "Allow while three Waits wait", l.Allow, ws...)
		if !ok {
			return
		}
		if got {
			t.Errorf("Allow returned true while three Waits were waiting for the next three tokens: a waiting " +
				"Wait has reserved its token, so it is not there for Allow (the bucket is 3 tokens in debt)")
			katatest.Unwind(h, ws...)
			return
		}
		for k := 1; k <= 3; k++ {
			due := time.Duration(k) * 100 * testMs
			h.Advance(due - h.Elapsed() - 1)
			if n := testReturned(ws); n != k-1 {
				t.Errorf("1ns before the token due at %v, %d of the 3 waiters had returned; want %d: "+
					"one waiter per token, 100ms apart", due, n, k-1)
				katatest.Unwind(h, ws...)
				return
			}
			h.Advance(1)
			if n := testReturned(ws); n != k {
				t.Errorf("at %v, when token %d was due, %d of the 3 waiters had returned; want %d: each Wait "+
					"reserves its own token as it starts (the tokens may go below zero), so concurrent waiters "+
					"wake 100ms apart, one per token, not together", due, k, n, k)
				katatest.Unwind(h, ws...)
				return
			}
		}
		for _, w := range ws {
			err, ok := w.Finish("Wait")
			if !ok {
				return
			}
			assert.NoError(t, err, "a Wait that got its token returns nil")
		}
	})
}

func TestR5_CancelReturnsAtOnceAndGivesTheTokenBack(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 1)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
		w := katatest.StartErr(h, l.Wait)
		if testBroken(h, w) {
			return
		}
		if !h.StandsStill(time.Second, "Wait returned", w.Returned) {
			w.Stop()
			return
		}
		h.Advance(50 * testMs)
		if !w.Waits("precondition: Wait returned at 50ms, but its token is due at 100ms (R3)") {
			return
		}
		w.Cancel()
		if instant, _ := w.ReturnsAtOnce(100 * testMs); !instant {
			t.Errorf("cancel during Wait must return at once; Wait was still waiting with the mock clock stopped: " +
				"select on ctx.Done() and the timer together")
			w.Stop()
			return
		}
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		if n := h.Clk.StopRunning(); n > 0 {
			t.Errorf("a Wait cancelled at 50ms returned, but left its timer on clk, still running: every wait is a "+
				"fresh clk.Timer stopped when done, also when ctx ends first (t := clk.Timer(d); defer t.Stop()); "+
				"a limiter whose callers often give up would pile up timers (%d left)", n)
			return
		}
		if err != context.Canceled {
			t.Errorf("a Wait cancelled at 50ms while it waited returned %s; want ctx.Err() (context.Canceled) "+
				"itself, not wrapped: a caller compares err == ctx.Err()", katatest.Chain(err))
		}
		assert.False(t, l.Allow(), "at 50ms no token is due yet: the cancelled Wait gives back one token, "+
			"the one due at 100ms")
		h.Advance(50 * testMs)
		assert.True(t, l.Allow(), "at 100ms the token the cancelled Wait had reserved must be free again: give "+
			"the reservation back when ctx is done (your limiter kept it, so the next token comes only at 200ms)")
	})
}

func TestR5_AWaitThatMissedItsDeadlineReservedNothing(t *testing.T) {
	// A waits for the token due at 100ms; B, whose deadline is 50ms away,
	// fails at once and takes nothing; then A is cancelled. Nobody
	// reserved after A, so A gives its token back.
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 1)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
		a := katatest.StartErr(h, l.Wait)
		if testBroken(h, a) || !a.Waits("precondition: Wait A returned at once, but its token is due at 100ms (R3)") {
			return
		}
		b := katatest.StartErr(h, l.Wait, katatest.Timeout(50*testMs))
		if testBroken(h, b) {
			return
		}
		synctest.Wait()
		if !b.Returned() || !errors.Is(b.Err(), ErrWouldExceedDeadline) {
			// B, whose token would be due at 200ms, past its deadline, did
			// not fail at once: R6 says more.
			a.Cancel()
			b.Cancel()
			synctest.Wait()
			return
		}
		h.Advance(20 * testMs)
		a.Cancel()
		if _, ok := a.Finish("Wait A"); !ok {
			return
		}
		h.Advance(79 * testMs)
		if l.Allow() {
			t.Errorf("at 99ms Allow got a token; the one A gave back is due at 100ms")
			return
		}
		h.Advance(testMs)
		assert.True(t, l.Allow(), "at 100ms the token that cancelled Wait A had reserved must be free again: Wait B "+
			"failed with ErrWouldExceedDeadline and so took nothing, and nobody else reserved after A (a Wait that "+
			"misses its deadline must leave no trace of a reservation, not even a counter or a version the cancel "+
			"looks at)")
	})
}

func TestR5_CancelGivesBackOnlyWhatNobodyReservedAfter(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct {
			cancel     int // which of the waiters a (0) and b (1) is cancelled
			gone, kept string
			c          time.Duration // when a Wait c started after the cancel wakes
			why        string
		}{
			{1, "b", "a", 200 * testMs, "b was the last to reserve, so its token goes back and c gets it, at 200ms: " +
				"give a cancelled Wait's reservation back"},
			{0, "a", "b", 300 * testMs, "b reserved after a, so a's token cannot go back: b keeps its turn at 200ms " +
				"and c's token is due at 300ms; handing a's token to c as well would let two calls through at 200ms"},
		}
		for _, tc := range cases {
			start := h.Elapsed()
			l := New(h.Clk, 10, 1)
			require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
			a := katatest.StartErr(h, l.Wait)
			if testBroken(h, a) {
				return
			}
			b := katatest.StartErr(h, l.Wait)
			ab := []katatest.ErrCall{a, b}
			if !testSettle(h, "a second Wait while one waits", ab...) || testBroken(h, ab...) {
				return
			}
			gone, kept := ab[tc.cancel], ab[1-tc.cancel]
			gone.Cancel()
			if instant, _ := gone.ReturnsAtOnce(100 * testMs); !instant {
				t.Errorf("cancel during Wait must return at once; Wait was still waiting with the mock clock "+
					"stopped: select on ctx.Done() and the timer together (%s)", tc.why)
				katatest.Unwind(h, ab...)
				return
			}
			if gone.Panicked() {
				katatest.Unwind(h, kept)
				return
			}
			err := gone.Err() // not Finish: kept is still waiting
			if !assert.ErrorIs(t, err, context.Canceled, "a cancelled Wait returns ctx.Err()") {
				katatest.Unwind(h, kept)
				return
			}
			c := katatest.StartErr(h, l.Wait)
			rest := []katatest.ErrCall{kept, c}
			if !testSettle(h, "a third Wait after a cancel", rest...) || testBroken(h, rest...) {
				return
			}
			keptDue := start + 100*testMs*time.Duration(2-tc.cancel) // a's token is due at 100ms, b's at 200ms
			for _, step := range []time.Duration{keptDue - 1, keptDue, start + tc.c - 1, start + tc.c} {
				if step > h.Elapsed() {
					h.Advance(step - h.Elapsed())
				}
				wantKept, wantC := step >= keptDue, step >= start+tc.c
				if c.Returned() && !wantC && kept.Returned() && tc.cancel == 1 {
					t.Errorf("at %v, c had returned together with %s, on the same token, although c's own token is "+
						"due at %v: every Wait must reserve its own token as it starts, so two waiters never "+
						"share one", step-start, tc.kept, tc.c)
					katatest.Unwind(h, rest...)
					return
				}
				if kept.Returned() != wantKept || c.Returned() != wantC {
					t.Errorf("at %v, %s had returned: %v (want %v), and c: %v (want %v). Waits a and b "+
						"reserved the tokens due at 100ms and 200ms, %s was cancelled, then c started: %s",
						step-start, tc.kept, kept.Returned(), wantKept, c.Returned(), wantC, tc.gone, tc.why)
					katatest.Unwind(h, rest...)
					return
				}
			}
			for _, w := range rest {
				err, ok := w.Finish("Wait")
				if !ok {
					return
				}
				assert.NoError(t, err, "a Wait that got its token returns nil")
			}
		}
	})
}

func TestR5_DoneContextTakesNothing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 1)
		w := katatest.StartErr(h, l.Wait, katatest.Cancelled())
		if !w.Returns("Wait with a context that was already cancelled must return at once") {
			return
		}
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, context.Canceled, "Wait with a cancelled context returns ctx.Err()")
		assert.True(t, l.Allow(), "Wait with a cancelled context must take nothing: the full bucket's token is "+
			"still there for Allow")
	})
}

func TestR6_DeadlineBeforeTheTokenFailsAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 1)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
		// The deadline is on the mock clock: ctx.Deadline() is 1ns before the token.
		w := katatest.StartErr(h, l.Wait, katatest.Timeout(100*testMs-1))
		if testBroken(h, w) {
			return
		}
		instant, took := w.ReturnsAtOnce(200 * testMs)
		if !instant {
			if took < 200*testMs {
				t.Errorf("the token is due in 100ms but the ctx deadline is in 99.999999ms: Wait must fail at "+
					"once; it returned after %v of real time, with the mock clock stopped: it waits on package "+
					"time, not on clk", took)
			} else {
				t.Errorf("the token is due in 100ms but the ctx deadline is in 99.999999ms: Wait must fail at " +
					"once with ErrWouldExceedDeadline, not sleep until the deadline to fail anyway; it was still " +
					"waiting with the mock clock stopped. Compare ctx.Deadline() with the token's due time before " +
					"waiting")
			}
			w.Stop()
			return
		}
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		testIsDeadline(h, err, "a deadline before the token")
		h.Advance(100 * testMs)
		assert.True(t, l.Allow(), "the Wait that failed on its deadline must not take the token: at 100ms it "+
			"must be there for Allow")
	})
}

func TestR6_DeadlineAfterTheTokenWaitsForIt(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 1)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
		w := katatest.StartErr(h, l.Wait, katatest.Timeout(100*testMs+1))
		if testBroken(h, w) {
			return
		}
		if w.Returned() {
			err := w.Err()
			t.Errorf("the token is due in 100ms and the ctx deadline is in 100.000001ms, but Wait returned at once "+
				"(error: %v): a deadline after the token leaves time to wait for it; the deadline is an "+
				"instant on the injected clock, compare it with clk.Now()", err)
			return
		}
		testWakesAt(h, w, 100*testMs, "10 per second, with a deadline 1ns after the token")
	})
}

func TestR1_NewRejectsABadRateOrBurst(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		New(h.Clk, 10, 1) // a valid limiter must not panic
		cases := []struct {
			rate  float64
			burst int
		}{
			{0, 1}, {-1, 1}, {math.NaN(), 1}, {math.Inf(1), 1}, {10, 0}, {10, -1},
		}
		for _, tc := range cases {
			panicked := func() (p bool) {
				defer func() { p = recover() != nil }()
				New(h.Clk, tc.rate, tc.burst)
				return false
			}()
			assert.True(t, panicked, "New(clk, %v, %d) must panic: the rate must be positive and finite and the "+
				"burst at least 1 (a rate of 0 would divide by zero in every due time)", tc.rate, tc.burst)
		}
	})
}

func TestR1_AVerySlowRateDoesNotOverflow(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// ⌈1e9/r⌉ ns is 2⁶³ at the first rate and 1e19 at the second: both
		// beyond the largest time.Duration (2⁶³−1 ns, about 292 years).
		for _, rate := range []float64{1e9 / (1 << 63), 1e-10} {
			l := New(h.Clk, rate, 1)
			require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
			if l.Allow() {
				t.Errorf("at %v per second the next token is due in more than 292 years, but a second Allow "+
					"returned true at once: ⌈1e9/r⌉ ns does not fit in a time.Duration, and converting it "+
					"overflowed to a negative wait. Clamp a due time beyond the largest Duration to math.MaxInt64", rate)
				return
			}
			h.Advance(time.Hour)
			assert.False(t, l.Allow(), "at %v per second no token comes back within an hour", rate)
		}
	})
}

func TestR2_FullAgainAtTheExactInstant(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// At 3 per second the token taken at 0 is back at ⌈1e9/3⌉ = 333333334ns.
		// From that instant the bucket is full and the next token taken starts
		// a new anchor, so the one after it is due 333333334ns later, at
		// 666666668ns, not at the old anchor's ⌈2e9/3⌉ = 666666667ns.
		l := New(h.Clk, 3, 1)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
		h.Advance(333333334 - 1)
		if l.Allow() {
			t.Errorf("Allow returned true at %v, 1ns before the token was due at 333.333334ms (3 per second: "+
				"⌈1e9/3⌉ ns, rounded up; truncating 1e9/r to whole nanoseconds lets the token through early)", h.Elapsed())
			return
		}
		h.Advance(1)
		require.True(t, l.Allow(), "at 333.333334ms the token is back (3 per second): Allow must return true")
		h.Advance(666666667 - h.Elapsed())
		if l.Allow() {
			t.Errorf("Allow returned true at 666.666667ms: the bucket was full again at exactly 333.333334ms, " +
				"when the token taken at 0 came back, so the token taken then starts a new anchor and the next " +
				"one is due ⌈1e9/3⌉ ns later, at 666.666668ms. The bucket is full once anchor + ⌈n·1e9/r⌉ ≤ now: " +
				"at that instant too, not only after it")
			return
		}
		h.Advance(1)
		assert.True(t, l.Allow(), "at 666.666668ms, ⌈1e9/3⌉ ns after the new anchor, the next token is due")
	})
}

func TestR6_DeadlineExactlyAtTheTokenIsTooLate(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 1)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 1 has a token")
		w := katatest.StartErr(h, l.Wait, katatest.Timeout(100*testMs)) // the token's due time
		if !w.Returns("the token is due in 100ms and the ctx deadline is in exactly 100ms, but Wait did not fail " +
			"at once: a ctx is done at its deadline, so a token due exactly then is too late. Fail when the " +
			"token is due at or after the deadline (!due.Before(deadline)), not only after it") {
			return
		}
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		testIsDeadline(h, err, "a deadline exactly at the token's due time")
		h.Advance(100 * testMs)
		assert.True(t, l.Allow(), "the Wait that failed on its deadline must not take the token: at 100ms it "+
			"must be there for Allow")
	})
}

func TestR1_ConcurrentAllowsTakeExactlyBurst(t *testing.T) {
	// Repeated and shaken: a check and a take in two critical sections
	// let two callers take one token only on some interleavings.
	katatest.Repeat(t, 12, func(h *katatest.H) {
		// Eight callers arrive together on a bucket of five: nothing orders
		// them, so the race detector sees any state they share without the
		// lock, whatever the schedule.
		l := New(h.Clk, 10, 5)
		var calls []*katatest.Call[bool]
		for range 8 {
			calls = append(calls, katatest.Go(h, func() (bool, error) { return l.Allow(), nil }))
		}
		granted := 0
		for _, c := range calls {
			ok, _, done := c.Finish("Allow")
			if !done {
				return
			}
			if ok {
				granted++
			}
		}
		assert.Equal(t, 5, granted, "8 concurrent Allows on a new limiter with burst 5: exactly 5 must get a "+
			"token; check that a token is due and take it in one critical section, under one lock")
	})
}

func TestR6_AShortDeadlineIsFineWhenATokenIsThere(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		l := New(h.Clk, 10, 2)
		require.True(t, l.Allow(), "precondition: a new limiter with burst 2 has a token")
		// One token is left, due now; the deadline is 1ms away, far less than 1/r.
		w := katatest.StartErr(h, l.Wait, katatest.Timeout(testMs))
		if !w.Returns("Wait with a token there and a deadline 1ms away did not return at once: a token due now " +
			"is taken at once, without a timer") {
			return
		}
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		if err != nil {
			t.Errorf("Wait returned %q with a token there now and a deadline 1ms away; want nil: compare the "+
				"deadline with the due time of the token this Wait would take (now, here), not with now + 1/r", err)
			return
		}
		assert.False(t, l.Allow(), "Wait took the last token of burst 2: Allow must find none")
	})
}

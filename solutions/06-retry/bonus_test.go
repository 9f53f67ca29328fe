package retry

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestB1_GivesUpWhenThePauseWouldPassMaxElapsed(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		year := 365 * 24 * time.Hour
		cases := []struct {
			name   string
			policy Policy
			took   time.Duration   // how long each attempt runs before it fails
			pauses []time.Duration // the pauses that fit in the budget
			why    string
		}{
			{
				// Attempts at 0, 100, 300, 700 and 1500ms: 700ms + 800ms is exactly the budget;
				// 1.5s + the next pause of 1.6s is not.
				name:   "MaxElapsed 1.5s",
				policy: Policy{BaseDelay: 100 * ms, MaxElapsed: 1500 * ms},
				pauses: []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms},
				why:    "1.5s elapsed + the next pause of 1.6s passes MaxElapsed 1.5s",
			},
			{
				// elapsed + pause = 300 years does not fit in a time.Duration.
				name:   "MaxElapsed 150 years",
				policy: Policy{BaseDelay: 100 * year, MaxElapsed: 150 * year},
				pauses: []time.Duration{100 * year},
				why: "100 years elapsed + the next pause of 200 years passes MaxElapsed 150 years " +
					"(and elapsed + pause overflows a time.Duration: compare pause > MaxElapsed − elapsed)",
			},
			{
				// Attempts run 0–50, 150–200 and 400–450ms: at 450ms the next pause of
				// 400ms would end at 850ms. The pauses alone (700ms) would fit.
				name:   "MaxElapsed 700ms, attempts that take 50ms each",
				policy: Policy{BaseDelay: 100 * ms, MaxElapsed: 700 * ms},
				took:   50 * ms,
				pauses: []time.Duration{100 * ms, 200 * ms},
				why: "450ms have passed since Do started (150ms of them inside op) and the next pause of 400ms " +
					"would end at 850ms: the budget counts the time since Do started, not just the pauses",
			},
			{
				// Attempt 1 runs 0–4s: 4s elapsed + the first pause of 2s would end at 6s.
				name:   "MaxElapsed 5s, attempts that take 4s each",
				policy: Policy{BaseDelay: 2 * time.Second, MaxElapsed: 5 * time.Second},
				took:   4 * time.Second,
				why: "attempt 1 took 4s and the pause of 2s after it would end at 6s, past MaxElapsed 5s: " +
					"the budget counts from the moment Do was called, the first attempt included, not from the first failure",
			},
			{
				// Jitter 0.5 at r = 0.75 makes the first pause 125ms: past the budget,
				// although the backoff before jitter, 100ms, is not.
				name: "MaxElapsed 110ms, BaseDelay 100ms with Jitter 0.5 at r = 0.75 (a pause of 125ms)",
				policy: Policy{BaseDelay: 100 * ms, MaxElapsed: 110 * ms, Jitter: 0.5,
					Rand: func() float64 { return 0.75 }},
				why: "the next pause is 125ms, jitter included, and 0s + 125ms passes MaxElapsed 110ms: judge the " +
					"budget on the pause Do would sleep, after jitter, not on the backoff before it",
			},
			{
				// At r = 0.25 the first pause is 75ms: within the budget, although the
				// backoff before jitter, 100ms, is not; the next, 150ms, is past it.
				name: "MaxElapsed 90ms, BaseDelay 100ms with Jitter 0.5 at r = 0.25 (pauses of 75ms, then 150ms; " +
					"the budget is judged on the pause after jitter)",
				policy: Policy{BaseDelay: 100 * ms, MaxElapsed: 90 * ms, Jitter: 0.5,
					Rand: func() float64 { return 0.25 }},
				pauses: []time.Duration{75 * ms},
				why:    "75ms elapsed + the next pause of 150ms, jitter included, passes MaxElapsed 90ms",
			},
		}
		for _, tc := range cases {
			attempts := len(tc.pauses) + 1
			errs := testErrors(attempts + 5)
			op := &testOp{errs: errs, clk: h.Clk, took: tc.took}
			hooks := &testHooks{}
			p := tc.policy
			p.MaxAttempts, p.BeforeSleep = attempts+5, hooks.record
			start := h.Elapsed()
			c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
			if c.Broken() {
				return
			}
			for i, pause := range tc.pauses {
				if tc.took > 0 {
					h.Advance(tc.took) // attempt i+1 fails
				}
				if c.Returned() {
					t.Errorf("%s: Do gave up after attempt %d, %v after it started, but the next pause of %v "+
						"still fits: give up only when elapsed + pause > MaxElapsed", tc.name, i+1, h.Elapsed()-start, pause)
					break
				}
				h.Advance(pause)
			}
			if tc.took > 0 {
				h.Advance(tc.took) // the last attempt that fits fails
			}
			if !c.Returns("%s: after attempt %d, Do must give up at once, without pausing: %s", tc.name, attempts, tc.why) {
				return
			}
			_, err, ok := c.Finish("Do")
			if !ok {
				return
			}
			assert.Equal(t, attempts, op.Calls(), "%s: the attempts that fit in MaxElapsed must run, and no more", tc.name)
			testIs(t, err, ErrExhausted, tc.name+": when MaxElapsed runs out the error must match ErrExhausted",
				"wrap with %w both ErrExhausted and the last op error")
			testIs(t, err, errs[attempts-1], tc.name+": when MaxElapsed runs out the error must also match the last op error",
				"wrap with %w both ErrExhausted and the last op error")
			assert.Len(t, hooks.All(), attempts-1, "%s: MaxElapsed: BeforeSleep is called only before a pause that happens", tc.name)
		}
	})
}

func TestB2_RetryAfterSetsTheNextPauseAndRestartsTheBackoff(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		// Jitter J = 0.5 at r = 0.75 scales every backoff pause by 1.25.
		p := Policy{MaxAttempts: 10, BaseDelay: 100 * ms, Multiplier: 2, MaxDelay: time.Second,
			Jitter: 0.5, Rand: func() float64 { return 0.75 },
			Retryable: func(err error) bool { return !strings.Contains(err.Error(), "429") }}
		errs := []error{
			errors.New("503 busy"),
			RetryAfter(5*time.Second, errors.New("429 too many requests")),
			errors.New("503 busy again"),
			errors.New("503 still busy"),
		}
		want := []time.Duration{125 * ms, 5 * time.Second, 125 * ms, 250 * ms}
		why := []string{
			"BaseDelay 100ms with jitter 1.25",
			"RetryAfter(5s, err) sets the next pause to exactly 5s: no jitter, and MaxDelay 1s does not cap it; " +
				"a RetryAfter error is retried whatever Retryable says (this Retryable rejects 429)",
			"after a Retry-After pause the backoff restarts: BaseDelay 100ms again, with jitter 1.25",
			"the restarted backoff grows again: 100ms·2 with jitter 1.25",
		}
		// BeforeSleep is R1's business: here only the pauses on the clock count.
		if !(testPlan{policy: p, errs: errs, want: want, tol: 1, nohook: true, why: func(n int) string { return why[n-1] }}).run(h) {
			return
		}
		inner := errors.New("429")
		assert.ErrorIs(t, RetryAfter(time.Second, inner), inner, "errors.Is must see through RetryAfter")
		assert.NoError(t, RetryAfter(time.Second, nil), "RetryAfter(d, nil) must be nil")
	})
}

func TestB2_RetryAfterStillCountsAgainstMaxAttempts(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errBusy := RetryAfter(time.Second, errors.New("429 too many requests"))
		op := &testOp{errs: []error{errBusy, errBusy, errBusy, errBusy, errBusy, errBusy}}
		p := Policy{MaxAttempts: 2, BaseDelay: 100 * time.Millisecond}
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		h.Advance(5 * time.Second) // the Retry-After pause after attempt 1, and more
		if !c.Returned() || op.Calls() > 2 {
			t.Errorf("every attempt failed with RetryAfter(1s, err) and MaxAttempts is 2, but after 5s on the mock clock "+
				"op had run %d times (Do returned: %v): a Retry-After error still counts against MaxAttempts; "+
				"ask \"was that the last attempt?\" before handling Retry-After", op.Calls(), c.Returned())
			c.Stop()
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 2, op.Calls(), "MaxAttempts 2 counts the attempts that failed with a Retry-After error too")
		testIs(t, err, ErrExhausted, "the final attempt failed with a Retry-After error: the error must match ErrExhausted",
			"wrap with %w both ErrExhausted and the last op error")
	})
}

func TestB2_RetryAfterStillCountsAgainstMaxElapsed(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// Attempt 1 asks for 1s, which fits in MaxElapsed 2s; attempt 2, at
		// 1s, asks for 30s: 1s + 30s passes the budget, so Do gives up.
		busy := errors.New("429 too many requests")
		slow := RetryAfter(30*time.Second, errors.New("429 come back in 30s"))
		op := &testOp{errs: []error{RetryAfter(time.Second, busy), slow}}
		p := Policy{MaxAttempts: 10, BaseDelay: 100 * time.Millisecond, MaxElapsed: 2 * time.Second}
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		h.Advance(time.Second) // the Retry-After pause of 1s, within the budget
		if op.Calls() < 2 {
			t.Errorf("attempt 1 failed with RetryAfter(1s, err) and MaxElapsed is 2s, but 1s later op had run %d time(s): "+
				"a Retry-After pause that fits in the budget is taken", op.Calls())
			c.Stop()
			return
		}
		if !c.Returns("attempt 2 failed at 1s with RetryAfter(30s, err) and MaxElapsed is 2s: 1s + 30s passes the budget, " +
			"so Do must give up at once, but it was still waiting with the mock clock stopped; " +
			"a Retry-After pause is still subject to MaxElapsed: check the budget before every pause, the server's too") {
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 2, op.Calls(), "Do gives up before the 30s pause: no third attempt")
		testIs(t, err, ErrExhausted, "the Retry-After pause would pass MaxElapsed: the error must match ErrExhausted",
			"wrap with %w both ErrExhausted and the last op error")
		testIs(t, err, slow, "the error must match the last op error, the one that asked for 30s",
			"wrap with %w both ErrExhausted and the last op error")
	})
}

func TestB1_MaxElapsedZeroOrBelowMeansNoBudget(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		// The budget applies only with MaxElapsed > 0: 0 and every negative
		// value, down to the most negative Duration, mean no budget at all.
		for _, budget := range []time.Duration{0, -1, -time.Hour, math.MinInt64} {
			op := &testOp{errs: testErrors(4), clk: h.Clk}
			p := Policy{MaxAttempts: 4, BaseDelay: 100 * ms, MaxElapsed: budget}
			if _, _, ok := testRun(h, p, op.call); !ok {
				return
			}
			if calls := op.Calls(); calls != 4 {
				t.Errorf("MaxElapsed %v: Do made %d attempt(s) of MaxAttempts 4, with pauses of 100ms, 200ms and 400ms "+
					"between them: a MaxElapsed of 0 or below means no budget, so only MaxAttempts ends the retries; "+
					"apply the budget only when MaxElapsed > 0 (not when it is != 0), and compare as pause > "+
					"MaxElapsed − elapsed, which cannot overflow for a budget that is not negative", budget, calls)
				return
			}
		}
	})
}

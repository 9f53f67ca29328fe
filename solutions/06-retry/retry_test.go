package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

func TestR1_PausesGrowExponentially(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		p := Policy{MaxAttempts: 10, BaseDelay: 100 * ms, Multiplier: 3}
		want := []time.Duration{100 * ms, 300 * ms, 900 * ms}
		testPlan{policy: p, errs: testErrors(3), want: want, probe: true, why: func(n int) string {
			return fmt.Sprintf("BaseDelay·Multiplierⁿ⁻¹ = 100ms·3^%d with jitter off", n-1)
		}}.run(h)
	})
}

func TestR1_MultiplierZeroMeansTwo(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		p := Policy{MaxAttempts: 10, BaseDelay: 50 * ms}
		want := []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms}
		testPlan{policy: p, errs: testErrors(4), want: want, why: func(n int) string {
			return fmt.Sprintf("Multiplier 0 means 2: BaseDelay·2ⁿ⁻¹ = 50ms·2^%d", n-1)
		}}.run(h)
	})
}

func TestR2_StopsAfterMaxAttemptsWithoutAFinalPause(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errs := testErrors(5)
		op := &testOp{errs: errs}
		hooks := &testHooks{}
		p := Policy{MaxAttempts: 3, BaseDelay: 10 * ms, BeforeSleep: hooks.record}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := katatest.Go(h, func() (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		h.Advance(10 * ms)
		h.Advance(20 * ms) // attempt 3, the final one, has failed
		if !c.Returned() && op.Calls() < 3 {
			t.Errorf("with pauses of 10ms and 20ms (R1), all 3 attempts should have run after 30ms on the mock clock; "+
				"only %d had run and Do was still waiting: does it wait on clk?", op.Calls())
			c.Stop(cancel)
			return
		}
		if !c.Returned() {
			t.Errorf("after the final attempt (3 of MaxAttempts 3) Do must return at once; it was still waiting " +
				"with the mock clock stopped: no pause follows the final attempt")
			c.Stop(cancel)
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 3, op.Calls(), "after the final attempt: MaxAttempts 3 counts every attempt, the first included")
		assert.ErrorIs(t, err, ErrExhausted, "after the final attempt the error must match ErrExhausted (wrap it with %w)")
		assert.ErrorIs(t, err, errs[2], "after the final attempt the error must also match the last op error, %q "+
			"(wrap both: fmt.Errorf(\"%%w …: %%w\", ErrExhausted, err))", errs[2])
		assert.Len(t, hooks.All(), 2, "after the final attempt: BeforeSleep must be called MaxAttempts−1 = 2 times, "+
			"once before each pause; no pause follows the final attempt")
	})
}

func TestR2_MaxAttemptsBelowOneMeansOne(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		for _, attempts := range []int{0, -1} {
			errs := testErrors(3)
			op := &testOp{errs: errs}
			hooks := &testHooks{}
			p := Policy{MaxAttempts: attempts, BaseDelay: 10 * ms, BeforeSleep: hooks.record}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := katatest.Go(h, func() (string, error) { return Do(ctx, h.Clk, p, op.call) })
			if c.Broken() {
				return
			}
			if !c.Returned() {
				t.Errorf("MaxAttempts %d means one attempt, so the first is the final attempt: Do must return "+
					"right after it; it was still waiting with the mock clock stopped", attempts)
				c.Stop(cancel)
				return
			}
			_, err, ok := c.Finish("Do")
			if !ok {
				return
			}
			assert.Equal(t, 1, op.Calls(), "MaxAttempts %d means one attempt, the final attempt: op must run once", attempts)
			assert.ErrorIs(t, err, ErrExhausted, "MaxAttempts %d: after the final attempt the error must match ErrExhausted", attempts)
			assert.ErrorIs(t, err, errs[0], "MaxAttempts %d: after the final attempt the error must match the op's error", attempts)
			assert.Empty(t, hooks.All(), "MaxAttempts %d: no pause follows the final attempt, so no BeforeSleep", attempts)
		}
	})
}

// testStatusError is an error type the caller may look for with errors.As.
type testStatusError struct{ code int }

func (e *testStatusError) Error() string { return fmt.Sprintf("status %d", e.code) }

func TestR3_PermanentErrorRunsOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		assert.NoError(t, Permanent(nil), "Permanent(nil) must be nil, so `return v, Permanent(err)` stays a success when err is nil")
		denied := &testStatusError{403}
		cases := []struct {
			name string
			err  error
		}{
			{"Permanent(err)", Permanent(denied)},
			{"a Permanent error wrapped again with %w", fmt.Errorf("charge card: %w", Permanent(denied))},
		}
		for _, tc := range cases {
			err, calls, sleeps, ok := testNotRetried(h, Policy{}, tc.err, fmt.Sprintf(
				"op returned %s and Do is pausing to try again; a permanent error ends Do at once "+
					"(look for the mark with errors.As, which also finds it when it is wrapped)", tc.name))
			if !ok {
				return
			}
			assert.Equal(t, 1, calls, "op returned %s: a permanent error must not be retried", tc.name)
			assert.Empty(t, sleeps, "op returned %s: a permanent error must not be retried, so no pause and no BeforeSleep", tc.name)
			var status *testStatusError
			if assert.ErrorAs(t, err, &status, "op returned %s: Do must return the permanent error, and errors.As must still find the cause", tc.name) {
				assert.Equal(t, 403, status.code, "op returned %s: errors.As found another error", tc.name)
			}
			assert.NotErrorIs(t, err, ErrExhausted, "op returned %s: a permanent error is not an exhausted retry; return it as it is", tc.name)
		}
	})
}

func TestR3_NonRetryableErrorRunsOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errBusy := errors.New("503 busy")
		errBadRequest := errors.New("400 bad request")
		retryable := func(err error) bool { return !errors.Is(err, errBadRequest) }
		cases := []struct {
			name string
			errs []error
		}{
			{"a non-retryable error on the first attempt", []error{errBadRequest, errBadRequest}},
			{"a retryable error, then a non-retryable one", []error{errBusy, errBadRequest, errBadRequest}},
		}
		for _, tc := range cases {
			op := &testOp{errs: tc.errs}
			p := Policy{MaxAttempts: 5, BaseDelay: 10 * ms, Retryable: retryable}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := katatest.Go(h, func() (string, error) { return Do(ctx, h.Clk, p, op.call) })
			if c.Broken() {
				return
			}
			calls := len(tc.errs) - 1 // the attempt with the non-retryable error is the last one
			h.Advance(time.Hour)
			if !c.Returned() {
				t.Errorf("%s: Do must return after the attempt whose error Retryable rejects; after an hour of "+
					"mock time it was still waiting to try again (attempts so far: %d)", tc.name, op.Calls())
				c.Stop(cancel)
				return
			}
			_, err, ok := c.Finish("Do")
			if !ok {
				return
			}
			assert.Equal(t, calls, op.Calls(), "%s: an error that Retryable rejects is not retried; "+
				"one that it accepts is", tc.name)
			assert.ErrorIs(t, err, errBadRequest, "%s: Do must return the error that was not retried", tc.name)
			assert.NotErrorIs(t, err, ErrExhausted, "%s: a non-retryable error is not an exhausted retry; return it as it is", tc.name)
		}
	})
}

func TestR4_CancelDuringPauseReturnsAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errs := testErrors(10)
		op := &testOp{errs: errs}
		p := Policy{MaxAttempts: 5, BaseDelay: 200 * ms}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := katatest.Go(h, func() (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		h.Advance(100 * ms) // attempt 1 failed; halfway through the 200ms pause
		if op.Calls() != 1 {
			t.Errorf("cancel during a pause: precondition failed: the first pause should be BaseDelay 200ms (R1), "+
				"but after 100ms %d attempts had run", op.Calls())
			c.Stop(cancel)
			return
		}

		cancel()
		instant, took := h.ReturnsAtOnce(c.Done(), 200*ms)
		if !instant {
			if took < 200*ms {
				t.Errorf("cancel during the 200ms pause after attempt 1 must return at once; Do returned only "+
					"after %v of real time, with the mock clock stopped", took)
			} else {
				t.Errorf("cancel during the 200ms pause after attempt 1 must return at once; Do was still waiting " +
					"after 200ms of real time, with the mock clock stopped: select on ctx.Done() and the pause's " +
					"timer together (clk.Sleep cannot be interrupted)")
			}
			c.Stop(cancel)
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 1, op.Calls(), "cancel during the pause after attempt 1: no attempt may start after the cancel")
		assert.ErrorIs(t, err, context.Canceled, "cancel during a pause: the error must match ctx.Err() (context.Canceled)")
		assert.ErrorIs(t, err, errs[0], "cancel during a pause: the error must also match the last op error %q, "+
			"so the caller learns why Do was retrying (wrap both: fmt.Errorf(\"…%%w…%%w\", ctx.Err(), err))", errs[0])
	})
}

func TestR5_ContextErrorFromOpIsNotRetried(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		yes := func(error) bool { return true }
		cases := []struct {
			name      string
			err       error
			retryable func(error) bool
		}{
			{"context.Canceled", context.Canceled, nil},
			{"a wrapped context.DeadlineExceeded", fmt.Errorf("query replica: %w", context.DeadlineExceeded), nil},
			{"context.Canceled (with a Retryable that accepts every error)", context.Canceled, yes},
		}
		for _, tc := range cases {
			err, calls, sleeps, ok := testNotRetried(h, Policy{Retryable: tc.retryable}, tc.err, fmt.Sprintf(
				"op returned %s and Do is pausing to try again: a context error means someone gave up, "+
					"so it is never retried; check errors.Is(err, context.Canceled) and "+
					"errors.Is(err, context.DeadlineExceeded) before `if err != nil { retry }`", tc.name))
			if !ok {
				return
			}
			assert.Equal(t, 1, calls, "op returned %s: a context error must not be retried", tc.name)
			assert.Empty(t, sleeps, "op returned %s: a context error must not be retried, so no pause and no BeforeSleep", tc.name)
			assert.ErrorIs(t, err, tc.err, "op returned %s: Do must return the context error", tc.name)
			assert.NotErrorIs(t, err, ErrExhausted, "op returned %s: a context error is not an exhausted retry; return it as it is", tc.name)
		}
	})
}

func TestR5_CancelDuringAttemptIsNotRetried(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		gate := katatest.NewGate()
		hooks := &testHooks{}
		p := Policy{MaxAttempts: 3, BaseDelay: 10 * ms, BeforeSleep: hooks.record}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		op := func(ctx context.Context) (string, error) {
			if err := gate.Hold(ctx); err != nil {
				return "", fmt.Errorf("fetch: %w", err)
			}
			return "ok", nil
		}
		c := katatest.Go(h, func() (string, error) { return Do(ctx, h.Clk, p, op) })
		if c.Broken() {
			return
		}
		if gate.Waiting() != 1 {
			t.Errorf("precondition failed: the first attempt should be running; Do called op %d times", gate.Entered())
			c.Stop(cancel)
			return
		}

		cancel() // op returns "fetch: context canceled"
		if instant, _ := h.ReturnsAtOnce(c.Done(), time.Second); !instant {
			t.Errorf("the caller cancelled while op ran, and op returned the context error; Do must return at once " +
				"instead of pausing to try again: a context error is never retried")
			c.Stop(cancel)
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 1, gate.Entered(), "op returned a context error: it must not be retried")
		assert.Empty(t, hooks.All(), "op returned a context error: it must not be retried, so no pause and no BeforeSleep")
		assert.ErrorIs(t, err, context.Canceled, "op returned a context error: Do must return it")
	})
}

// testRMax is the largest value Rand may return, just below 1.
var testRMax = math.Nextafter(1, 0)

func TestR6_JitterFollowsTheFormulaUnderMaxDelay(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		cases := []struct {
			r    float64
			want []time.Duration // d = 100, 200, 400, 800, 1000, 1000ms (capped)
		}{
			{0, []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 500 * ms, 500 * ms}},
			{testRMax, []time.Duration{150 * ms, 300 * ms, 600 * ms, time.Second, time.Second, time.Second}},
		}
		for _, tc := range cases {
			p := Policy{MaxAttempts: 10, BaseDelay: 100 * ms, Multiplier: 2, MaxDelay: time.Second, Jitter: 0.5,
				Rand: func() float64 { return tc.r }}
			plan := testPlan{policy: p, errs: testErrors(len(tc.want)), want: tc.want, tol: 1, why: func(n int) string {
				return fmt.Sprintf("d·(1 − J + 2J·r) with d = BaseDelay·Multiplierⁿ⁻¹ = %v, at most MaxDelay 1s; "+
					"J = 0.5, r = %v; the result capped at MaxDelay again",
					min(100*ms<<(n-1), time.Second), tc.r)
			}}
			if !plan.run(h) {
				return
			}
		}
		// Jitter 1 with r = 0 makes the formula 0: the floor is 1ns.
		p := Policy{MaxAttempts: 10, BaseDelay: 100 * ms, Jitter: 1, Rand: func() float64 { return 0 }}
		testPlan{policy: p, errs: testErrors(2), want: []time.Duration{1, 1}, why: func(int) string {
			return "J = 1 and r = 0 make d·(1 − J + 2J·r) zero; a pause is never below 1ns when BaseDelay > 0, " +
				"or the retries become a hot loop"
		}}.run(h)
	})
}

func TestR6_HugeAttemptCountsNeverOverflow(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const attempts = 70 // 1s·2ⁿ passes the largest Duration at n = 34
		largest := time.Duration(math.MaxInt64)
		cases := []struct {
			name   string
			policy Policy
			factor float64 // the jitter factor 1 − J + 2J·r
		}{
			{"MaxDelay 1h", Policy{MaxDelay: time.Hour}, 1},
			{"MaxDelay 0 (no cap)", Policy{}, 1},
			{"MaxDelay 0 and jitter J = 0.5 at r ≈ 1", Policy{Jitter: 0.5, Rand: func() float64 { return testRMax }}, 1.5},
		}
		for _, tc := range cases {
			p := tc.policy
			p.MaxAttempts, p.BaseDelay, p.Multiplier = attempts, time.Second, 2
			limit := largest
			if p.MaxDelay > 0 {
				limit = p.MaxDelay
			}
			want := make([]time.Duration, attempts-1)
			for i := range want {
				d := min(float64(time.Second)*math.Pow(2, float64(i)), float64(limit)) * tc.factor
				want[i] = limit
				if d < float64(limit) {
					want[i] = time.Duration(d)
				}
			}
			plan := testPlan{policy: p, errs: testErrors(attempts - 1), want: want, tol: 1, coarse: true, why: func(n int) string {
				return fmt.Sprintf("%s: d = 1s·2^%d saturates at %v; huge attempt counts must saturate, "+
					"not overflow into zero, negative or shrinking pauses: stop growing d once it reaches the limit",
					tc.name, n-1, limit)
			}}
			if !plan.run(h) {
				return
			}
		}
	})
}

// testReply is a result type that is neither a pointer nor a basic type.
type testReply struct {
	Status int
	Body   string
}

func TestR7_ReturnsTheValueOfAnyType(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		p := Policy{MaxAttempts: 3, BaseDelay: 10 * ms}
		n := 0
		reply, err, ok := testRun(h, p, func(context.Context) (testReply, error) {
			if n++; n == 1 {
				return testReply{503, "busy"}, errors.New("503 busy")
			}
			return testReply{200, "hello"}, nil
		})
		if !ok {
			return
		}
		assert.NoError(t, err, "Do[testReply]: the second attempt succeeded")
		assert.Equal(t, testReply{200, "hello"}, reply, "Do[testReply] must return the value of the attempt that succeeded")

		answer := 42
		ptr, err, ok := testRun(h, p, func(context.Context) (*int, error) { return &answer, nil })
		if !ok {
			return
		}
		assert.NoError(t, err, "Do[*int]: the first attempt succeeded")
		assert.Same(t, &answer, ptr, "Do[*int] must return the pointer op returned")
	})
}

func TestR7_ZeroValueOnFailure(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errBusy := errors.New("503 busy")
		reply, err, ok := testRun(h, Policy{MaxAttempts: 2, BaseDelay: 10 * ms},
			func(context.Context) (testReply, error) { return testReply{503, "busy"}, errBusy })
		if !ok {
			return
		}
		require.ErrorIs(t, err, errBusy, "precondition: every attempt failed")
		assert.Zero(t, reply, "attempts exhausted: on failure Do must return the zero value of T, "+
			"not what op returned along with its error")

		errBadRequest := errors.New("400 bad request")
		body, err, ok := testRun(h, Policy{MaxAttempts: 2, Retryable: func(error) bool { return false }},
			func(context.Context) ([]byte, error) { return []byte("partial"), errBadRequest })
		if !ok {
			return
		}
		require.ErrorIs(t, err, errBadRequest, "precondition: the attempt failed")
		assert.Nil(t, body, "a non-retryable error: on failure Do must return the zero value of T (nil for a slice), "+
			"not what op returned along with its error")
	})
}

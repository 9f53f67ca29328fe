package retry

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
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

func TestR1_MultiplierBelowOneMeansTwo(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		for _, m := range []float64{0, 0.5, -2} {
			p := Policy{MaxAttempts: 10, BaseDelay: 50 * ms, Multiplier: m}
			want := []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms}
			if !(testPlan{policy: p, errs: testErrors(4), want: want, why: func(n int) string {
				return fmt.Sprintf("Multiplier %v is below 1, which means 2: BaseDelay·2ⁿ⁻¹ = 50ms·2^%d", m, n-1)
			}}).run(h) {
				return
			}
		}
	})
}

func TestR1_FractionalMultipliersAreExact(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		// Multiplier 1 is a valid growth: a constant pause.
		p := Policy{MaxAttempts: 10, BaseDelay: 100 * ms, Multiplier: 1}
		if !(testPlan{policy: p, errs: testErrors(3), want: []time.Duration{100 * ms, 100 * ms, 100 * ms}, why: func(int) string {
			return "Multiplier 1 is not below 1, so it stays 1: a constant pause of BaseDelay"
		}}).run(h) {
			return
		}
		// 101ns·1.5ⁿ⁻¹ = 101, 151.5, 227.25, 340.875, 511.3125, 766.96875ns:
		// truncated once, not after every step.
		p = Policy{MaxAttempts: 10, BaseDelay: 101, Multiplier: 1.5}
		want := []time.Duration{101, 151, 227, 340, 511, 766}
		testPlan{policy: p, errs: testErrors(6), want: want, tol: 1, why: func(n int) string {
			return fmt.Sprintf("BaseDelay·Multiplierⁿ⁻¹ = 101ns·1.5^%d = %vns, truncated once: compute it from BaseDelay "+
				"in float64 (math.Pow), not from the previous pause truncated to whole ns, whose error grows",
				n-1, 101*math.Pow(1.5, float64(n-1)))
		}}.run(h)
	})
}

func TestR1_PauseStartsWhenTheAttemptFails(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		p := Policy{MaxAttempts: 10, BaseDelay: 100 * ms}
		testPlan{policy: p, errs: testErrors(3), want: []time.Duration{100 * ms, 200 * ms, 400 * ms}, took: 30 * ms,
			why: func(n int) string {
				return fmt.Sprintf("BaseDelay·2^%d, counted from the moment attempt %d failed, which was 30ms after it "+
					"started: the pause follows the failure", n-1, n)
			}}.run(h)
	})
}

func TestR1_BaseDelayZeroRetriesWithoutPausing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		op := &testOp{errs: testErrors(3)}
		hooks := &testHooks{}
		p := Policy{MaxAttempts: 5, BeforeSleep: hooks.record}
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		// A timer of 0 fires at once, but the mock clock's Timer then yields
		// for 1ms of bubble time: let that pass, the mock clock stopped.
		if _, took := c.ReturnsAtOnce(time.Second); took >= time.Second {
			t.Errorf("BaseDelay 0 retries without pausing, but after %d attempt(s) Do was waiting with the mock clock "+
				"stopped (BeforeSleep was told %v): the 1ns floor applies only when BaseDelay > 0", op.Calls(), hooks.All())
			c.Stop()
			return
		}
		v, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.NoError(t, err, "BaseDelay 0: attempt 4 succeeded")
		assert.Equal(t, "ok", v, "BaseDelay 0: attempt 4 succeeded")
		assert.Equal(t, 4, op.Calls(), "BaseDelay 0: three failures, then a success")
		for _, s := range hooks.All() {
			assert.Zero(t, s.pause, "BaseDelay 0: BeforeSleep must be told a pause of 0 after attempt %d", s.attempt)
		}
	})
}

func TestR1_BeforeSleepRunsOnDosGoroutine(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		op := &testOp{errs: testErrors(3)}
		var mu sync.Mutex
		var caller int
		var on []int // the goroutine each call of the hook ran on
		p := Policy{MaxAttempts: 3, BaseDelay: 10 * time.Millisecond, BeforeSleep: func(int, error, time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			on = append(on, katatest.Goroutine())
		}}
		c := katatest.Start(h, func(ctx context.Context) (string, error) {
			mu.Lock()
			caller = katatest.Goroutine()
			mu.Unlock()
			return Do(ctx, h.Clk, p, op.call)
		})
		if c.Broken() {
			return
		}
		h.Advance(time.Hour)
		if !c.Returns("Do was still running after an hour of mock time (BaseDelay 10ms, MaxAttempts 3): " +
			"does it wait on something other than a timer from clk?") {
			return
		}
		if _, _, ok := c.Finish("Do"); !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		for i, g := range on {
			if g != caller {
				t.Errorf("BeforeSleep for attempt %d ran on goroutine %d, not on the goroutine that called Do "+
					"(%d): call it on Do's goroutine, right before the pause — on a goroutine of its own it may run "+
					"after the pause began or after Do returned, and the caller cannot know when it is done", i+1, g,
					caller)
				return
			}
		}
		assert.NotEmpty(t, on, "three attempts failed, with pauses between them: BeforeSleep runs before each pause")
	})
}

func TestR1_BeforeSleepSeesARetryAfterPauseToo(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errBusy := RetryAfter(20*time.Second, errors.New("429 too many requests"))
		op := &testOp{errs: []error{errBusy, errors.New("503 busy")}, clk: h.Clk}
		hooks := &testHooks{}
		p := Policy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond, BeforeSleep: hooks.record}
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		if c.Returned() || op.Calls() != 1 {
			c.Stop() // not pausing after attempt 1: the other tests say why
			return
		}
		if len(hooks.All()) == 0 {
			t.Errorf("BeforeSleep was not called before the pause after attempt 1, which failed with " +
				"RetryAfter(20s, err): call it before every pause, a Retry-After pause included, so logs and " +
				"metrics see why Do waits")
			c.Stop()
			return
		}
		h.Advance(time.Hour)
		if !c.Returned() {
			c.Stop()
			return
		}
		if _, _, ok := c.Finish("Do"); !ok || op.Calls() < 2 {
			return
		}
		if s, real := hooks.All()[0], op.waited(1); s.attempt != 1 || s.pause != real {
			t.Errorf("before the pause after attempt 1, which failed with RetryAfter(20s, err), BeforeSleep got "+
				"(attempt %d, pause %v), but Do waited %v on the mock clock: report (1, err, the pause you wait for), "+
				"a Retry-After pause too", s.attempt, s.pause, real)
		}
	})
}

func TestR2_StopsAfterMaxAttemptsWithoutAFinalPause(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errs := testErrors(5)
		op := &testOp{errs: errs}
		hooks := &testHooks{}
		p := Policy{MaxAttempts: 3, BaseDelay: 10 * ms, BeforeSleep: hooks.record}
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		h.Advance(10 * ms)
		h.Advance(20 * ms) // attempt 3, the final one, has failed
		if !c.Returned() && op.Calls() < 3 {
			t.Errorf("with pauses of 10ms and 20ms (R1), all 3 attempts should have run after 30ms on the mock clock; "+
				"only %d had run and Do was still waiting: does it wait on clk?", op.Calls())
			c.Stop()
			return
		}
		if !c.Returns("after the final attempt (3 of MaxAttempts 3) Do must return at once; it was still waiting " +
			"with the mock clock stopped: no pause follows the final attempt") {
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 3, op.Calls(), "after the final attempt: MaxAttempts 3 counts every attempt, the first included")
		testIs(t, err, ErrExhausted, "after the final attempt the error must match ErrExhausted",
			"wrap with %w both ErrExhausted and the last op error: fmt.Errorf(\"%w …: %w\", ErrExhausted, err)")
		testIs(t, err, errs[2], "after the final attempt the error must also match the last op error",
			"wrap with %w both ErrExhausted and the last op error: fmt.Errorf(\"%w …: %w\", ErrExhausted, err)")
		for n, e := range errs[:2] {
			if errors.Is(err, e) {
				t.Errorf("after the final attempt Do returned %q, which also matches the error of attempt %d (%q): the "+
					"error carries ErrExhausted and the last op error, not the earlier failures (errors.As on it "+
					"would find an earlier attempt's error first); wrap the last one only", err, n+1, e)
				break
			}
		}
		assert.Len(t, hooks.All(), 2, "after the final attempt: BeforeSleep must be called MaxAttempts−1 = 2 times, "+
			"once before each pause; no pause follows the final attempt")
	})
}

func TestR2_MaxAttemptsOneOrBelowMeansOne(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		for _, attempts := range []int{1, 0, -1} {
			errs := testErrors(3)
			op := &testOp{errs: errs}
			hooks := &testHooks{}
			p := Policy{MaxAttempts: attempts, BaseDelay: 10 * ms, BeforeSleep: hooks.record}
			c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
			if !c.Returns("MaxAttempts %d means one attempt, so the first is the final attempt: Do must return "+
				"right after it; it was still waiting with the mock clock stopped", attempts) {
				return
			}
			_, err, ok := c.Finish("Do")
			if !ok {
				return
			}
			assert.Equal(t, 1, op.Calls(), "MaxAttempts %d means one attempt, the final attempt: op must run once", attempts)
			what := fmt.Sprintf("MaxAttempts %d: after the final attempt the error must match", attempts)
			testIs(t, err, ErrExhausted, what+" ErrExhausted", "wrap with %w both ErrExhausted and the op error")
			testIs(t, err, errs[0], what+" the op error", "wrap with %w both ErrExhausted and the op error")
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
			name   string
			err    error
			policy Policy
		}{
			{"Permanent(err)", Permanent(denied), Policy{}},
			{"a Permanent error wrapped again with %w", fmt.Errorf("charge card: %w", Permanent(denied)), Policy{}},
			// The first attempt is also the last: still returned as it is.
			{"Permanent(err) with MaxAttempts 1", Permanent(denied), Policy{MaxAttempts: 1}},
		}
		for _, tc := range cases {
			err, calls, sleeps, ok := testNotRetried(h, tc.policy, tc.err, fmt.Sprintf(
				"op returned %s and Do is pausing to try again; a permanent error ends Do at once "+
					"(look for the mark with errors.As, which also finds it when it is wrapped)", tc.name))
			if !ok {
				return
			}
			assert.Equal(t, 1, calls, "op returned %s: a permanent error must not be retried", tc.name)
			assert.Empty(t, sleeps, "op returned %s: a permanent error must not be retried, so no pause and no BeforeSleep", tc.name)
			testIs(t, err, tc.err, "op returned "+tc.name+": Do must return that error as it is, mark included",
				"do not unwrap the Permanent mark: the caller may look for it too")
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
			// The final attempt's error is not retried anyway: it is returned
			// as it is, not as an exhausted retry.
			{"a non-retryable error on the final attempt", []error{errBusy, errBusy, errBusy, errBusy, errBadRequest, errBadRequest}},
		}
		for _, tc := range cases {
			op := &testOp{errs: tc.errs}
			p := Policy{MaxAttempts: 5, BaseDelay: 10 * ms, Retryable: retryable}
			c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
			if c.Broken() {
				return
			}
			calls := len(tc.errs) - 1 // the attempt with the non-retryable error is the last one
			h.Advance(time.Hour)
			if !c.Returns("%s: Do must return after the attempt whose error Retryable rejects; after an hour of "+
				"mock time it was still waiting to try again (attempts so far: %d)", tc.name, op.Calls()) {
				return
			}
			_, err, ok := c.Finish("Do")
			if !ok {
				return
			}
			assert.Equal(t, calls, op.Calls(), "%s: an error that Retryable rejects is not retried; "+
				"one that it accepts is", tc.name)
			testIs(t, err, errBadRequest, tc.name+": Do must return the error that was not retried",
				"return it as it is, or wrap it with %w")
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
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) })
		if c.Broken() {
			return
		}
		h.Advance(100 * ms) // attempt 1 failed; halfway through the 200ms pause
		if op.Calls() != 1 {
			t.Errorf("cancel during a pause: precondition failed: the first pause should be BaseDelay 200ms (R1), "+
				"but after 100ms %d attempts had run", op.Calls())
			c.Stop()
			return
		}

		c.Cancel()
		instant, took := c.ReturnsAtOnce(200 * ms)
		if !instant {
			if took < 200*ms {
				t.Errorf("cancel during the 200ms pause after attempt 1 must return at once; Do returned only "+
					"after %v of real time, with the mock clock stopped", took)
			} else {
				t.Errorf("cancel during the 200ms pause after attempt 1 must return at once; Do was still waiting " +
					"after 200ms of real time, with the mock clock stopped: select on ctx.Done() and the pause's " +
					"timer together (clk.Sleep cannot be interrupted)")
			}
			c.Stop()
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 1, op.Calls(), "cancel during the pause after attempt 1: no attempt may start after the cancel")
		testIs(t, err, context.Canceled, "cancel during a pause: the error must match ctx.Err() (context.Canceled)",
			"wrap with %w both ctx.Err() and the last op error: fmt.Errorf(\"…%w…%w\", ctx.Err(), err)")
		testIs(t, err, errs[0], "cancel during a pause: the error must also match the last op error, "+
			"so the caller learns why Do was retrying",
			"wrap with %w both ctx.Err() and the last op error: fmt.Errorf(\"…%w…%w\", ctx.Err(), err)")
		if moved := h.PendingTimer(); moved != 0 {
			t.Errorf("cancel 100ms into the 200ms pause after attempt 1: Do returned, but the pause's timer was still "+
				"pending on the mock clock (it would fire %v later): stop the timer on the way out of every pause "+
				"(defer t.Stop()), a cancelled one too, so a call that returned leaves nothing on the clock", moved)
		}
	})
}

func TestR4_CancelBeforeOrDuringAnAttempt(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		cases := []struct {
			name string
			took time.Duration // how long attempt 1 runs before the cancel ends it
		}{
			{"ctx was cancelled before Do was called", 0},
			{"ctx was cancelled while attempt 1 ran, and op then returned its own error, not ctx's", 50 * ms},
		}
		for _, tc := range cases {
			errs := testErrors(3)
			op := &testOp{errs: errs, clk: h.Clk, took: tc.took}
			p := Policy{MaxAttempts: 3, BaseDelay: 200 * ms}
			var opts []katatest.CtxOption
			if tc.took == 0 {
				opts = append(opts, katatest.Cancelled())
			}
			c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op.call) }, opts...)
			if c.Broken() {
				return
			}
			if tc.took > 0 {
				h.Advance(10 * ms)
				c.Cancel() // op returns "flaky 1"
			}
			if instant, _ := c.ReturnsAtOnce(200 * ms); !instant {
				t.Errorf("%s: after attempt %d failed Do must return at once, without pausing: the pause's select "+
					"finds ctx.Done() ready", tc.name, op.Calls())
				c.Stop()
				return
			}
			_, err, ok := c.Finish("Do")
			if !ok {
				return
			}
			if op.Calls() == 0 {
				t.Errorf("%s: Do returned (error: %v) without calling op: the first attempt is always made, and op "+
					"gets ctx to honour it; look at ctx only in the pause", tc.name, err)
				return
			}
			assert.Equal(t, 1, op.Calls(), "%s: no attempt may start after the cancel", tc.name)
			fix := "look at ctx in the pause, and wrap with %w both ctx.Err() and the last op error: " +
				"fmt.Errorf(\"…%w…%w\", ctx.Err(), err)"
			testIs(t, err, context.Canceled, tc.name+": the error must match ctx.Err() (context.Canceled)", fix)
			testIs(t, err, errs[0], tc.name+": the error must also match the error of attempt 1", fix)
		}
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
			testIs(t, err, tc.err, "op returned "+tc.name+": Do must return the context error",
				"return it as it is, or wrap it with %w")
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
		op := func(ctx context.Context) (string, error) {
			if err := gate.Hold(ctx); err != nil {
				return "", fmt.Errorf("fetch: %w", err)
			}
			return "ok", nil
		}
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op) })
		if c.Broken() {
			return
		}
		if !testFirstAttemptRuns(c, gate) {
			return
		}

		c.Cancel() // op returns "fetch: context canceled"
		if instant, _ := c.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("the caller cancelled while op ran, and op returned the context error; Do must return at once " +
				"instead of pausing to try again: a context error is never retried")
			c.Stop()
			return
		}
		_, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.Equal(t, 1, gate.Entered(), "op returned a context error: it must not be retried")
		assert.Empty(t, hooks.All(), "op returned a context error: it must not be retried, so no pause and no BeforeSleep")
		testIs(t, err, context.Canceled, "op returned a context error: Do must return it",
			"return it as it is, or wrap it with %w")
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

func TestR6_JitterIsClampedAndZeroJitterSkipsRand(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		var calls atomic.Int32
		cases := []struct {
			jitter, r float64
			want      []time.Duration
			why       string
		}{
			{2, 0.75, []time.Duration{150 * ms, 300 * ms}, "Jitter 2 is clamped to 1: d·(1 − 1 + 2·0.75) = 1.5·d"},
			{-0.5, 0.75, []time.Duration{100 * ms, 200 * ms}, "Jitter −0.5 is clamped to 0: no jitter, the pause is exactly d"},
			{0, 0.75, []time.Duration{100 * ms, 200 * ms}, "Jitter 0: no jitter, the pause is exactly d"},
		}
		for _, tc := range cases {
			calls.Store(0)
			p := Policy{MaxAttempts: 10, BaseDelay: 100 * ms, Jitter: tc.jitter,
				Rand: func() float64 { calls.Add(1); return tc.r }}
			if !(testPlan{policy: p, errs: testErrors(len(tc.want)), want: tc.want, tol: 1, why: func(n int) string {
				return fmt.Sprintf("%s, with d = 100ms·2^%d and Rand returning %v", tc.why, n-1, tc.r)
			}}).run(h) {
				return
			}
			if tc.jitter <= 0 {
				assert.Zero(t, calls.Load(), "Jitter %v means no jitter: Rand must not be called", tc.jitter)
			}
		}
	})
}

func TestR6_MaxDelayCapsEvenTheFirstPause(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		cases := []struct {
			jitter float64
			want   []time.Duration
		}{
			{0, []time.Duration{time.Second, time.Second, time.Second}},
			{0.5, []time.Duration{500 * ms, 500 * ms}},
		}
		for _, tc := range cases {
			p := Policy{MaxAttempts: 10, BaseDelay: 2 * time.Second, MaxDelay: time.Second, Jitter: tc.jitter,
				Rand: func() float64 { return 0 }}
			if !(testPlan{policy: p, errs: testErrors(len(tc.want)), want: tc.want, tol: 1, why: func(n int) string {
				return fmt.Sprintf("BaseDelay 2s is above MaxDelay 1s, so d = BaseDelay·2^%d saturates at 1s from the "+
					"first pause on; then jitter J = %v at r = 0 scales it by %v", n-1, tc.jitter, 1-tc.jitter)
			}}).run(h) {
				return
			}
		}
	})
}

func TestR6_CallsSharingAPolicyWithoutRandDoNotRace(t *testing.T) {
	// A Policy may be shared by concurrent calls of Do, and a nil Rand
	// means math/rand/v2's Float64, which is safe for concurrent use. Each
	// call here gets a clock of its own, so that nothing but the Policy is
	// shared and nothing orders the calls: whatever Do keeps behind a nil
	// Rand (a generator of its own, say) is used by every call at once, and
	// the race detector sees it.
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		const callers = 8
		p := Policy{MaxAttempts: 2, BaseDelay: 100 * ms, Jitter: 0.5}
		clks := make([]*katatest.Clock, callers)
		ops := make([]*testOp, callers)
		calls := make([]*katatest.Call[string], callers)
		for i := range calls {
			clk, op := katatest.NewClock(), &testOp{errs: testErrors(1)}
			clks[i], ops[i] = clk, op
			calls[i] = katatest.Start(h, func(ctx context.Context) (v string, err error) {
				katatest.AtFreshDepth(func() { v, err = Do(ctx, clk, p, op.call) })
				return v, err
			})
		}
		stop := func() {
			for _, c := range calls {
				c.Stop()
			}
		}
		for _, c := range calls {
			if c.Broken() {
				stop()
				return
			}
		}
		// r is in [0, 1), so every pause is in [50ms, 150ms).
		for _, clk := range clks {
			clk.Add(50*ms - 1)
		}
		synctest.Wait()
		for _, op := range ops {
			if op.Calls() != 1 {
				t.Errorf("%d calls of Do shared a Policy with Jitter 0.5 and no Rand; one made its second attempt "+
					"less than 50ms after the first failed: with BaseDelay 100ms the pause is 100ms·(1 − J + 2J·r) "+
					"with r in [0, 1) from math/rand/v2's Float64, so at least 50ms", callers)
				stop()
				return
			}
		}
		for _, clk := range clks {
			clk.Add(100 * ms)
		}
		synctest.Wait()
		for _, c := range calls {
			if !c.Returned() {
				t.Errorf("%d calls of Do shared a Policy with Jitter 0.5 and no Rand; one had not made its second "+
					"attempt 150ms after the first failed: with BaseDelay 100ms the pause is 100ms·(1 − J + 2J·r) "+
					"with r in [0, 1) from math/rand/v2's Float64, so under 150ms", callers)
				stop()
				return
			}
		}
		for _, c := range calls {
			if v, err, ok := c.Finish("Do"); !ok || !assert.NoError(t, err) || !assert.Equal(t, "ok", v) {
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
		require.Error(t, err, "precondition: every attempt failed")
		assert.Zero(t, reply, "attempts exhausted: on failure Do must return the zero value of T, "+
			"not what op returned along with its error")

		errBadRequest := errors.New("400 bad request")
		body, err, ok := testRun(h, Policy{MaxAttempts: 2, Retryable: func(error) bool { return false }},
			func(context.Context) ([]byte, error) { return []byte("partial"), errBadRequest })
		if !ok {
			return
		}
		require.Error(t, err, "precondition: the attempt failed")
		assert.Nil(t, body, "a non-retryable error: on failure Do must return the zero value of T (nil for a slice), "+
			"not what op returned along with its error")
	})
}

func TestR7_ASuccessAfterTheCancelIsASuccess(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		gate := katatest.NewGate()
		p := Policy{MaxAttempts: 3, BaseDelay: 10 * ms}
		op := func(ctx context.Context) (testReply, error) {
			_ = gate.Hold(ctx) // the reply arrives even though ctx was cancelled
			return testReply{200, "in stock"}, nil
		}
		c := katatest.Start(h, func(ctx context.Context) (testReply, error) { return Do(ctx, h.Clk, p, op) })
		if c.Broken() {
			return
		}
		if !testFirstAttemptRuns(c, gate) {
			return
		}
		c.Cancel()
		if instant, _ := c.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("op succeeded right after the cancel, yet Do did not return at once: return the value as soon as op succeeds")
			c.Stop()
			return
		}
		reply, err, ok := c.Finish("Do")
		if !ok {
			return
		}
		assert.NoError(t, err, "op succeeded after the cancel (its reply arrived anyway): a success is a success, "+
			"so Do returns nil; look at ctx only in the pause, not after op returned")
		assert.Equal(t, testReply{200, "in stock"}, reply, "op succeeded after the cancel: Do must return its value")
	})
}

package partial

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

func TestR1_OutcomesFollowTheInputs(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(5)
		b := testNewBackend()
		gates := make([]*testGate, len(skus))
		for i, sku := range skus {
			gates[i] = testNewGate(h)
			b.calls[sku] = testCall{wait: gates[i], deaf: true}
		}
		b.calls["sku-3"] = testCall{wait: gates[2], deaf: true, err: testErrNotFound}
		c := testStart(h, skus, b.fn, nil)
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		// The calls finish in reverse order: sku-5 first, sku-1 last.
		for i := len(skus) - 1; i >= 0; i-- {
			if c.Returned() {
				t.Errorf("Gather returned while the call for %s was still running: wait for every call "+
					"(a sync.WaitGroup) before returning", skus[i])
				c.Stop()
				return
			}
			gates[i].Release()
			synctest.Wait()
		}
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for i, sku := range skus {
			if out[i].Input == "" && out[i].Err != nil {
				t.Errorf("out[%d] has the error %q but no Input: set Input on every outcome, failures included "+
					"(out[i].Input = inputs[i] before the call), so the caller can tell which input failed", i, out[i].Err)
				return
			}
			if out[i].Input != sku {
				t.Errorf("out[%d] is the outcome of %q, not of input %d, %q (the calls finished in reverse order, "+
					"and sku-3 failed): out[i] must be the outcome of inputs[i] whatever order the calls finish in "+
					"and whether they fail — let the goroutine for input i write out[i] and nothing else",
					i, out[i].Input, i, sku)
				return
			}
		}
		for i, sku := range skus {
			if sku == "sku-3" {
				assert.ErrorIs(t, out[i].Err, testErrNotFound, "out[%d]: the call for %s failed; its outcome must carry that error", i, sku)
				continue
			}
			assert.NoError(t, out[i].Err, "out[%d]: the call for %s succeeded", i, sku)
			assert.Equal(t, testPrice(sku), out[i].Value, "out[%d]: the value must be what the call for %s returned", i, sku)
		}
		started := b.started.All()
		slices.Sort(started)
		assert.Equal(t, skus, started, "fn must be called exactly once for each input")

		before := slices.Clone(out)
		ok2, failed := Split(out)
		assert.Equal(t, []string{"sku-1", "sku-2", "sku-4", "sku-5"}, testInputs(ok2),
			"Split must return the successes in input order")
		assert.Equal(t, []string{"sku-3"}, testInputs(failed), "Split must return the failures in input order")
		for i := range out {
			if out[i].Input != before[i].Input || !errors.Is(out[i].Err, before[i].Err) {
				t.Errorf("after Split, out[%d] was the outcome of %q, no longer of %q: Split must leave the outcomes "+
					"it was given as they were — the caller still uses them (partial.Join(outcomes) in the "+
					"README's example); build new slices, do not filter in place with outcomes[:0]",
					i, out[i].Input, before[i].Input)
				return
			}
		}
	})
}

func TestR1_NoInputsNoCalls(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		b := testNewBackend()
		out := Gather(context.Background(), nil, b.fn)
		assert.Empty(t, out, "Gather with no inputs must return no outcomes")
		assert.Empty(t, b.started.All(), "Gather with no inputs must not call fn")
		ok, failed := Split(out)
		assert.Empty(t, ok, "Split of no outcomes: no successes")
		assert.Empty(t, failed, "Split of no outcomes: no failures")
	})
}

func TestR2_AFailureCancelsNothing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus, b, held, trigger := testSKU2FailsOthersHeld(h)
		c := testStart(h, skus, b.fn, nil)
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		trigger.Release() // sku-2 fails while the three others are running
		synctest.Wait()
		if n := held.Cancelled(); n > 0 {
			t.Errorf("when the call for sku-2 failed, %d of the 3 other calls saw their ctx cancelled: one failure "+
				"must cancel nothing (errgroup.WithContext cancels its ctx at the first error) — give every call "+
				"the caller's ctx", n)
			c.Stop()
			return
		}
		if c.Returned() {
			t.Errorf("Gather returned as soon as the call for sku-2 failed, while 3 calls were still running: " +
				"a failure ends nothing; wait for every call")
			c.Stop()
			return
		}
		held.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-1", "sku-3", "sku-4"} {
			if o, ok := testFind(h, out, sku); ok {
				assert.NoError(t, o.Err, "the call for %s succeeded after sku-2 had failed: its outcome must be a success", sku)
				assert.Equal(t, testPrice(sku), o.Value, "the call for %s succeeded after sku-2 had failed: keep its value", sku)
			}
		}
		if o, ok := testFind(h, out, "sku-2"); ok {
			assert.ErrorIs(t, o.Err, testErrNotFound, "the call for sku-2 failed: its outcome must carry that error")
		}
	})
}

func TestR3_ErrorsKeepTheirIdentityAndNameTheirInput(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(4)
		gate := testNewGate(h) // every call starts before any fails
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: gate, deaf: true}
		}
		b.calls["sku-2"] = testCall{wait: gate, deaf: true, err: testErrNotFound}
		b.calls["sku-4"] = testCall{wait: gate, deaf: true, err: &testStatusError{503}}
		c := testStart(h, skus, b.fn, nil)
		if c.Broken() {
			return
		}
		gate.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-1", "sku-3"} {
			if o, ok := testFind(h, out, sku); ok {
				assert.NoError(t, o.Err, "the call for %s succeeded: its outcome's Err must be nil", sku)
			}
		}
		if o, ok := testFind(h, out, "sku-2"); ok {
			assert.ErrorIs(t, o.Err, testErrNotFound, "the call for sku-2 failed with %q: errors.Is must still find it "+
				"in the outcome's error (wrap with %%w, not %%v)", testErrNotFound)
			assert.True(t, testNames(o.Err, "sku-2"), "the error of sku-2 is %q, which does not name its input: "+
				"say which input failed, e.g. fmt.Errorf(\"input %%d (%%v): %%w\", i, in, err)", o.Err)
		}
		if o, ok := testFind(h, out, "sku-4"); ok {
			var status *testStatusError
			if assert.ErrorAs(t, o.Err, &status, "the call for sku-4 failed with a *testStatusError: errors.As must "+
				"still find it in the outcome's error (wrap with %%w)") {
				assert.Equal(t, 503, status.code, "errors.As found another *testStatusError than the one sku-4 failed with")
			}
			assert.True(t, testNames(o.Err, "sku-4"), "the error of sku-4 is %q, which does not name its input: "+
				"say which input failed, e.g. fmt.Errorf(\"input %%d (%%v): %%w\", i, in, err)", o.Err)
		}

		err := Join(out)
		require.Error(t, err, "sku-2 and sku-4 failed: Join must return an error")
		assert.ErrorIs(t, err, testErrNotFound, "Join: errors.Is must find the error of sku-2 (errors.Join keeps every error)")
		var status *testStatusError
		assert.ErrorAs(t, err, &status, "Join: errors.As must find the error of sku-4 (errors.Join keeps every error)")
		assert.True(t, testNames(err, "sku-2") && testNames(err, "sku-4"),
			"Join's message %q must name both failed inputs, sku-2 and sku-4", err)
		assert.NoError(t, Join(out[:0]), "Join of no outcomes must be nil")
		succeeded, _ := Split(out)
		assert.NoError(t, Join(succeeded), "Join of outcomes that all succeeded must be nil")
	})
}

// testPanicValue is what fn panics with in the tests.
const testPanicValue = "boom (the test's fn panicked on purpose: recover it in the goroutine that calls fn)"

func TestR4_APanicBecomesThatInputsError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(3)
		held, trigger := testNewGate(h), testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		b.calls["sku-2"] = testCall{wait: trigger, deaf: true, panic: testPanicValue}
		c := testStart(h, skus, b.fn, nil)
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		trigger.Release() // sku-2 panics while the two others are running
		synctest.Wait()
		if c.Returned() && c.Panicked() {
			return // the harness reported the panic that escaped Gather
		}
		if n := held.Cancelled(); n > 0 {
			t.Errorf("when the call for sku-2 panicked, %d of the 2 other calls saw their ctx cancelled: "+
				"a panic is that input's failure and, like any failure, cancels nothing", n)
			c.Stop()
			return
		}
		if c.Returned() {
			t.Errorf("Gather returned as soon as the call for sku-2 panicked, while 2 calls were still running: " +
				"a panic is that input's failure; wait for every call")
			c.Stop()
			return
		}
		held.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-1", "sku-3"} {
			if o, ok := testFind(h, out, sku); ok {
				assert.NoError(t, o.Err, "the call for %s succeeded after sku-2 had panicked: its outcome must be a success", sku)
				assert.Equal(t, testPrice(sku), o.Value, "the call for %s succeeded after sku-2 had panicked: keep its value", sku)
			}
		}
		o, ok := testFind(h, out, "sku-2")
		if !ok {
			return
		}
		if o.Err == nil {
			t.Errorf("the call for sku-2 panicked, but its outcome has no error: a recovered panic must become " +
				"that input's error, or the caller takes a zero value for an answer")
			return
		}
		assert.ErrorIs(t, o.Err, ErrPanic, "the call for sku-2 panicked: its outcome's error must match ErrPanic "+
			"(e.g. fmt.Errorf(\"%%w: %%v\", ErrPanic, r) with r from recover())")
		assert.Contains(t, o.Err.Error(), "boom", "the call for sku-2 panicked with %q: the error must show the panic value", testPanicValue)
		assert.True(t, testNames(o.Err, "sku-2"), "the error of sku-2, which panicked, is %q and does not name its "+
			"input: a panic is a failure like any other, so name the input as for an error "+
			"(e.g. fmt.Errorf(\"input %%d (%%v): %%w\", i, in, panicErr))", o.Err)
	})
}

func TestR5_CallerCancelReachesTheCallsAndGatherWaitsForThem(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(3)
		held, deaf := testNewGate(h), testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		b.calls["sku-2"] = testCall{wait: deaf, deaf: true} // ignores ctx: still running after the cancel
		skus = append(skus, "sku-4")
		b.calls["sku-4"] = testCall{wait: deaf, deaf: true, err: &testStatusError{502}} // fails on its own after the cancel
		c := testStart(h, skus, b.fn, nil)
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		c.Cancel()
		synctest.Wait()
		if n := held.Cancelled(); n < 2 {
			t.Errorf("after the caller cancelled, only %d of the 2 calls waiting on their ctx saw it: "+
				"give every call the caller's ctx, or a context derived from it, never context.Background()", n)
			c.Stop()
			return
		}
		if c.Returned() {
			t.Errorf("Gather returned right after the cancel while the calls for sku-2 and sku-4, which ignore ctx, were " +
				"still running: those calls are orphaned, their goroutines outlive Gather and their results are lost; " +
				"a cancel reaches the calls through their ctx, and Gather still waits for every call")
			deaf.Release()
			return
		}
		deaf.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-1", "sku-3"} {
			if o, ok := testFind(h, out, sku); ok {
				assert.ErrorIs(t, o.Err, context.Canceled, "the call for %s returned ctx.Err() after the caller "+
					"cancelled: its outcome's error must match context.Canceled (wrap with %%w)", sku)
			}
		}
		if o, ok := testFind(h, out, "sku-2"); ok {
			assert.NoError(t, o.Err, "the call for sku-2 ignored the cancel and succeeded: keep what each call returned")
			assert.Equal(t, testPrice("sku-2"), o.Value, "the call for sku-2 ignored the cancel and succeeded: keep its value")
		}
		if o, ok := testFind(h, out, "sku-4"); ok {
			var status *testStatusError
			assert.ErrorAs(t, o.Err, &status, "the call for sku-4 ignored the cancel and then failed with status 502 "+
				"of its own, but its outcome's error is %v: keep what each call returned, do not replace a real "+
				"error with ctx.Err() because ctx ended", o.Err)
		}
	})
}

func TestR5_ACtxCancelledBeforeTheCallStillGivesAnOutcomePerInput(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(3)
		held := testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		out, ok := testGatherCancelled(h, skus, b, "every call honours ctx")
		if !ok {
			return
		}
		for _, sku := range skus {
			if o, ok := testFind(h, out, sku); ok {
				assert.ErrorIs(t, o.Err, context.Canceled, "ctx was cancelled before Gather was called: the outcome "+
					"of %s must be an error matching context.Canceled (from the call, which sees the cancelled ctx)", sku)
			}
		}
	})
}

// The caller's ctx ends by its deadline. A ctx derived from the caller's
// has that deadline and ends as the caller's does: ctx.Err() is
// context.DeadlineExceeded, and the outcomes keep it.
func TestR5_TheCallersDeadlineReachesTheCalls(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 300 * time.Millisecond
		skus := testSKUs(3)
		held, deaf := testNewGate(h), testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		b.calls["sku-2"] = testCall{wait: deaf, deaf: true} // ignores ctx: still running after the deadline
		want := h.Clk.Now().Add(timeout)
		var mu sync.Mutex
		var lost []string // the calls whose ctx had not the caller's deadline
		fn := func(ctx context.Context, sku string) (int, error) {
			if dl, ok := ctx.Deadline(); !ok || !dl.Equal(want) {
				mu.Lock()
				lost = append(lost, sku)
				mu.Unlock()
			}
			return b.fn(ctx, sku)
		}
		c := testStart(h, skus, fn, nil, katatest.Timeout(timeout))
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		mu.Lock()
		slices.Sort(lost)
		lostNow := slices.Clone(lost)
		mu.Unlock()
		if len(lostNow) > 0 {
			t.Errorf("the caller's ctx has a deadline 300ms ahead, but the calls for %q got a ctx without it: give "+
				"every call the caller's ctx, or a context derived from it (context.WithCancel(ctx)); a context "+
				"of your own made from context.Background() loses the caller's deadline and values, even when "+
				"the caller's cancel is forwarded to it", lostNow)
			c.Stop()
			return
		}
		h.Advance(timeout) // the caller's deadline passes
		if n := held.Cancelled(); n < 2 {
			t.Errorf("after the caller's deadline passed, only %d of the 2 calls waiting on their ctx saw it: "+
				"give every call the caller's ctx, or a context derived from it, never context.Background()", n)
			c.Stop()
			return
		}
		if c.Returned() {
			t.Errorf("Gather returned right after the caller's deadline passed while the call for sku-2, which " +
				"ignores ctx, was still running: that call is orphaned; Gather still waits for every call")
			deaf.Release()
			return
		}
		deaf.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-1", "sku-3"} {
			if o, ok := testFind(h, out, sku); ok && !errors.Is(o.Err, context.DeadlineExceeded) {
				t.Errorf("the caller's deadline passed and the call for %s returned its ctx.Err(), but its outcome's "+
					"error is %v, which does not match context.DeadlineExceeded: give every call the caller's ctx, "+
					"or a context derived from it (context.WithCancel(ctx)), which ends as the caller's does; a "+
					"context of your own that the caller's cancel is forwarded to reports every end as "+
					"context.Canceled", sku, o.Err)
				return
			}
		}
		if o, ok := testFind(h, out, "sku-2"); ok {
			assert.NoError(t, o.Err, "the call for sku-2 ignored the deadline and succeeded: keep what each call returned")
			assert.Equal(t, testPrice("sku-2"), o.Value, "the call for sku-2 ignored the deadline and succeeded: keep its value")
		}
	})
}

// A ctx cancelled before Gather, and calls that never look at it (an
// in-memory table): each is still called once, and keeps its value.
func TestR1_ACtxCancelledBeforeGatherStillCallsFnForEveryInput(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(3)
		b := testNewBackend() // the calls return their price at once, whatever ctx says
		out, ok := testGatherCancelled(h, skus, b, "every call returns at once")
		if !ok {
			return
		}
		if got := b.started.All(); len(got) != len(skus) {
			t.Errorf("ctx was cancelled before Gather was called, and fn was called for %d of the %d inputs: Gather "+
				"calls fn once per input whatever ctx says — fn decides what a cancelled ctx means (a table in "+
				"memory answers anyway), and an outcome is what its call returned", len(got), len(skus))
			return
		}
		for _, sku := range skus {
			if o, ok := testFind(h, out, sku); ok && (o.Err != nil || o.Value != testPrice(sku)) {
				t.Errorf("ctx was cancelled before Gather was called, and the call for %s ignored it and returned %d; "+
					"its outcome is (%d, %v): a call that succeeded anyway keeps its value", sku, testPrice(sku), o.Value, o.Err)
				return
			}
		}
	})
}

func TestR6_EqualInputsStaySeparate(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := []string{"sku-1", "sku-7", "sku-1", "sku-1"}
		gate := testNewGate(h)
		errBusy := errors.New("503: busy")
		var mu sync.Mutex
		calls := map[string]int{}
		// The first call for sku-1 fails; the next ones answer 102, then 103.
		fn := func(ctx context.Context, sku string) (int, error) {
			gate.Hold(context.Background())
			mu.Lock()
			calls[sku]++
			n := calls[sku]
			mu.Unlock()
			if sku != "sku-1" {
				return testPrice(sku), nil
			}
			if n == 1 {
				return 0, errBusy
			}
			return 100 + n, nil
		}
		c := katatest.Start(h, func(ctx context.Context) (testOutcomes, error) { return Gather(ctx, skus, fn), nil })
		if c.Broken() {
			return
		}
		gate.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		mu.Lock()
		n := calls["sku-1"]
		mu.Unlock()
		require.Equal(t, 3, n, "sku-1 appears 3 times among the inputs: fn must be called once per input, equal inputs included")
		for i, o := range out {
			if o.Input == "" {
				t.Errorf("out[%d] has no Input (inputs %v): set Input on every outcome, failures included, "+
					"to inputs[i]", i, skus)
				return
			}
		}
		var errs, values []int
		for i, o := range out {
			if o.Input != "sku-1" {
				continue
			}
			if o.Err != nil {
				require.ErrorIs(t, o.Err, errBusy, "precondition: the only error of a sku-1 call is %q", errBusy)
				errs = append(errs, i)
			} else {
				values = append(values, o.Value)
			}
		}
		slices.Sort(values)
		if len(errs) != 1 || !slices.Equal(values, []int{102, 103}) {
			t.Errorf("the 3 calls for sku-1 ended with one error and the values 102 and 103, but the outcomes of "+
				"sku-1 show %d errors and the values %v: equal inputs must keep their own results — key them by "+
				"index, not by input (in a map keyed by input, equal inputs collide)", len(errs), values)
		}
		if o, ok := testFind(h, out, "sku-7"); ok {
			assert.Equal(t, testPrice("sku-7"), o.Value, "the call for sku-7 succeeded: keep its value")
		}
	})
}

// testGatherCancelled runs Gather with a ctx cancelled before the call and
// checks that it returns one outcome per input; calls says how the calls
// behave.
func testGatherCancelled(h *katatest.H, skus []string, b *testBackend, calls string) (testOutcomes, bool) {
	t := h.T
	t.Helper()
	c := testStart(h, skus, b.fn, nil, katatest.Cancelled())
	if !c.Returns("ctx was cancelled before Gather was called, and %s, but Gather did not return", calls) {
		return nil, false
	}
	out, _, ok := c.Finish("Gather")
	if !ok {
		return nil, false
	}
	if len(out) != len(skus) {
		t.Errorf("ctx was cancelled before Gather was called, and Gather returned %d outcomes for %d inputs: a "+
			"cancelled ctx is no reason to return fewer; every input gets its call and its outcome", len(out), len(skus))
		return nil, false
	}
	return out, true
}

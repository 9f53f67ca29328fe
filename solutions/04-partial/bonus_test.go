package partial

import (
	"context"
	"fmt"
	"math"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestB1_FailFastSkipsTheCallsStillRunning(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(5)
		held, trigger, slow := testNewGate(h), testNewGate(h), testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		b.calls["sku-2"] = testCall{wait: trigger, deaf: true, err: testErrNotFound}
		b.calls["sku-4"] = testCall{wait: slow, deaf: true}                             // ignores ctx and succeeds after the stop
		b.calls["sku-5"] = testCall{wait: slow, deaf: true, err: &testStatusError{502}} // ignores ctx and fails after the stop
		c := testStart(h, skus, b.fn, &Options{FailFast: true})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		trigger.Release() // sku-2 fails: the first failure
		synctest.Wait()
		if n := held.Cancelled(); n < 2 {
			t.Errorf("with FailFast, the failure of sku-2 must cancel the calls still running, but only %d of the 2 "+
				"calls waiting on their ctx saw a cancel: give the calls a ctx from context.WithCancel(ctx) and "+
				"cancel it at the first failure", n)
			c.Stop()
			return
		}
		if c.Returned() {
			t.Errorf("with FailFast, GatherWith returned right after the first failure while the calls for sku-4 " +
				"and sku-5, which ignore ctx, were still running: stopping early cancels the calls, then still waits for them")
			c.Stop()
			return
		}
		slow.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-1", "sku-3"} {
			if o, ok := testFind(h, out, sku); ok {
				assert.ErrorIs(t, o.Err, ErrSkipped, "with FailFast, the call for %s was cancelled by the stop: "+
					"its outcome's error must match ErrSkipped", sku)
				assert.NotErrorIs(t, o.Err, context.Canceled, "with FailFast, the call for %s was cancelled by the "+
					"stop, not by the caller: its error must not match context.Canceled, so callers can tell "+
					"their own cancel from a stop", sku)
			}
		}
		if o, ok := testFind(h, out, "sku-2"); ok {
			assert.ErrorIs(t, o.Err, testErrNotFound, "with FailFast, the failure that stopped the gather keeps its own error")
			assert.NotErrorIs(t, o.Err, ErrSkipped, "with FailFast, the failure that stopped the gather is not skipped")
		}
		if o, ok := testFind(h, out, "sku-4"); ok {
			assert.NoError(t, o.Err, "with FailFast, the call for sku-4 ignored the stop and succeeded: keep its result")
			assert.Equal(t, testPrice("sku-4"), o.Value, "with FailFast, the call for sku-4 succeeded: keep its value")
		}
		if o, ok := testFind(h, out, "sku-5"); ok {
			var status *testStatusError
			assert.ErrorAs(t, o.Err, &status, "with FailFast, the call for sku-5 ignored the stop and then failed with "+
				"status 502 of its own: keep that error; only an error matching context.Canceled becomes ErrSkipped")
			assert.NotErrorIs(t, o.Err, ErrSkipped, "with FailFast, the call for sku-5 failed on its own with status "+
				"502 after the stop: that is a failure, not a skip; only an error matching context.Canceled "+
				"becomes ErrSkipped")
		}
	})
}

func TestB1_FailFastWinsOverMaxFailures(t *testing.T) {
	for _, limit := range []int{1, 3, math.MaxInt} {
		katatest.Run(t, func(h *katatest.H) {
			skus, b, held, trigger := testSKU2FailsOthersHeld(h)
			c := testStart(h, skus, b.fn, &Options{FailFast: true, MaxFailures: limit})
			if c.Broken() || !testAllStarted(h, c, b, skus) {
				return
			}
			trigger.Release() // sku-2 fails: the first failure
			synctest.Wait()
			if n := held.Cancelled(); n < 3 {
				t.Errorf("with FailFast and MaxFailures both set, FailFast wins: the first failure stops the gather, "+
					"but with Options{FailFast: true, MaxFailures: %d} the failure of sku-2 cancelled only %d of the 3 "+
					"calls still running: test FailFast first, and use MaxFailures only when FailFast is off", limit, n)
				c.Stop()
				return
			}
			out, ok := testCollect(h, c, skus)
			if !ok {
				return
			}
			for _, sku := range []string{"sku-1", "sku-3", "sku-4"} {
				if o, ok := testFind(h, out, sku); ok {
					assert.ErrorIs(t, o.Err, ErrSkipped, "with FailFast and MaxFailures %d, the call for %s was "+
						"cancelled by the stop at the first failure: its outcome's error must match ErrSkipped", limit, sku)
				}
			}
		})
	}
}

func TestB2_MaxFailuresStopsOnceMoreHaveFailed(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(6)
		held := testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		// sku-3, sku-5 and then sku-1 fail, one after the other.
		failing := []string{"sku-3", "sku-5", "sku-1"}
		gates := []*testGate{testNewGate(h), testNewGate(h), testNewGate(h)}
		b.calls["sku-3"] = testCall{wait: gates[0], deaf: true, err: testErrNotFound}
		b.calls["sku-5"] = testCall{wait: gates[1], deaf: true, err: &testStatusError{503}}
		b.calls["sku-1"] = testCall{wait: gates[2], deaf: true, err: testErrNotFound}
		c := testStart(h, skus, b.fn, &Options{MaxFailures: 2})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		for n, g := range gates {
			g.Release()
			synctest.Wait()
			cancelled := held.Cancelled()
			if n < 2 && cancelled > 0 {
				t.Errorf("with MaxFailures 2, failure %d (%s) cancelled %d of the 3 calls still running: up to "+
					"MaxFailures failures cancel nothing; stop only once more than MaxFailures inputs have failed",
					n+1, failing[n], cancelled)
				c.Stop()
				return
			}
			if n == 2 && cancelled < 3 {
				t.Errorf("with MaxFailures 2, after the 3rd failure (%s) only %d of the 3 calls still "+
					"running saw a cancel: once more than MaxFailures inputs have failed, "+
					"cancel the calls still running", failing[n], cancelled)
				c.Stop()
				return
			}
		}
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-2", "sku-4", "sku-6"} {
			if o, ok := testFind(h, out, sku); ok {
				assert.ErrorIs(t, o.Err, ErrSkipped, "with MaxFailures 2, the call for %s was cancelled by the stop: "+
					"its outcome's error must match ErrSkipped", sku)
			}
		}
		for _, sku := range failing {
			if o, ok := testFind(h, out, sku); ok {
				assert.Error(t, o.Err, "with MaxFailures 2, the call for %s failed: keep its error", sku)
				assert.NotErrorIs(t, o.Err, ErrSkipped, "with MaxFailures 2, the call for %s failed on its own: it is not skipped", sku)
			}
		}
	})
}

func TestB2_MaxFailuresBelowOneNeverStops(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(4)
		held := testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		fail := testNewGate(h)
		b.calls["sku-2"] = testCall{wait: fail, deaf: true, err: testErrNotFound}
		c := testStart(h, skus, b.fn, &Options{MaxFailures: -1})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		fail.Release() // sku-2 fails while the others run
		synctest.Wait()
		if n := held.Cancelled(); n > 0 {
			t.Errorf("with MaxFailures -1, the failure of sku-2 cancelled %d of the 3 calls still running: only "+
				"MaxFailures above 0 sets a limit; 0 or less never stops the gather (test opt.MaxFailures > 0, "+
				"not != 0)", n)
			c.Stop()
			return
		}
		held.Release()
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range skus {
			if o, ok := testFind(h, out, sku); ok && sku != "sku-2" {
				assert.NoError(t, o.Err, "with MaxFailures -1 nothing stops: the call for %s succeeded", sku)
			}
		}
	})
}

func TestB2_PanicsCountAsFailures(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(4)
		held, panics, fails := testNewGate(h), testNewGate(h), testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		b.calls["sku-1"] = testCall{wait: panics, deaf: true, panic: testPanicValue}
		b.calls["sku-2"] = testCall{wait: fails, deaf: true, err: testErrNotFound}
		c := testStart(h, skus, b.fn, &Options{MaxFailures: 1})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		panics.Release() // sku-1 panics: failure 1 of the 1 tolerated
		synctest.Wait()
		if c.Returned() && c.Panicked() {
			return // the harness reported the panic that escaped GatherWith
		}
		if n := held.Cancelled(); n > 0 {
			t.Errorf("with MaxFailures 1, the panic of sku-1 was the first failure, yet %d of the 2 calls still "+
				"running saw a cancel: up to MaxFailures failures cancel nothing", n)
			c.Stop()
			return
		}
		fails.Release() // sku-2 fails: failure 2, one more than tolerated
		synctest.Wait()
		if n := held.Cancelled(); n < 2 {
			t.Errorf("with MaxFailures 1, sku-1 panicked and then sku-2 failed, yet only %d of the 2 calls still "+
				"running saw a cancel: a panic is a failure and counts towards MaxFailures like an error, so 2 "+
				"inputs had failed and the gather must stop", n)
			c.Stop()
			return
		}
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range []string{"sku-3", "sku-4"} {
			if o, ok := testFind(h, out, sku); ok {
				assert.ErrorIs(t, o.Err, ErrSkipped, "with MaxFailures 1, the call for %s was cancelled by the stop: "+
					"its outcome's error must match ErrSkipped", sku)
			}
		}
		if o, ok := testFind(h, out, "sku-1"); ok {
			assert.ErrorIs(t, o.Err, ErrPanic, "with MaxFailures 1, the call for sku-1 panicked: its error must match ErrPanic")
		}
	})
}

func TestB2_ACallerCancelIsNotAStop(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(3)
		held := testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		c := testStart(h, skus, b.fn, &Options{MaxFailures: 5})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		c.Cancel() // the caller's cancel: 3 failures at most, fewer than the 5 tolerated
		synctest.Wait()
		if n := held.Cancelled(); n < len(skus) {
			t.Errorf("with MaxFailures 5, after the caller cancelled, only %d of the %d calls waiting on their ctx saw "+
				"it: derive the calls' ctx from the caller's ctx, never from context.Background()", n, len(skus))
			c.Stop()
			return
		}
		out, ok := testCollect(h, c, skus)
		if !ok {
			return
		}
		for _, sku := range skus {
			if o, ok := testFind(h, out, sku); ok {
				if !assert.NotErrorIs(t, o.Err, ErrSkipped, "with MaxFailures 5, the caller cancelled and the call for %s "+
					"returned ctx.Err(); the gather never stopped (3 failures, 5 tolerated), so the error must not "+
					"match ErrSkipped: ErrSkipped is for a stop of GatherWith's own, not for the caller's cancel "+
					"(tell them apart with context.Cause, or a flag set when you stop)", sku) {
					continue
				}
				assert.ErrorIs(t, o.Err, context.Canceled, "with MaxFailures 5, the caller cancelled and the call for "+
					"%s returned ctx.Err(): its outcome's error must match context.Canceled", sku)
			}
		}
	})
}

func TestB2_TwoFailuresAtOnceStillStop(t *testing.T) {
	// With MaxFailures 1, two calls fail at the same instant: that is more
	// than one failure, so the gather stops, whichever counts first. A count
	// read in one step and raised in another lets both read 0 and neither
	// stop. It depends on the schedule: repeated.
	katatest.Repeat(t, 16, func(h *katatest.H) {
		skus := testSKUs(5)
		held, failing := testNewGate(h), testNewGate(h)
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		b.calls["sku-2"] = testCall{wait: failing, deaf: true, err: &testStatusError{503}}
		b.calls["sku-4"] = testCall{wait: failing, deaf: true, err: testErrNotFound}
		c := testStart(h, skus, b.fn, &Options{MaxFailures: 1})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			return
		}
		failing.Release() // sku-2 and sku-4 fail together
		synctest.Wait()
		if cancelled := held.Cancelled(); cancelled < 3 {
			t.Errorf("with MaxFailures 1, sku-2 and sku-4 failed at the same instant, and only %d of the 3 calls "+
				"still running saw a cancel: two failures are more than 1, whichever is counted first — count a "+
				"failure and compare the count in one step (failures.Add(1) > MaxFailures), not a read and a "+
				"later increment", cancelled)
			c.Stop()
			return
		}
		testCollect(h, c, skus)
	})
}

// testHugeMaxFailures are valid tolerances beyond any batch: each wraps to
// a small or negative number in 32 bits.
var testHugeMaxFailures = []int{math.MaxInt, 1 << 32, math.MaxInt32 + 1, 1<<32 + 1}

func TestB2_AHugeMaxFailuresIsJustALargeTolerance(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(5)
		for k, max := range testHugeMaxFailures {
			held := testNewGate(h)
			fail := testNewGate(h)
			b := testNewBackend()
			for i, sku := range skus {
				b.calls[sku] = testCall{wait: held}
				if i < 3 {
					b.calls[sku] = testCall{wait: fail, deaf: true, err: fmt.Errorf("%s: %w", sku, testErrNotFound)}
				}
			}
			c := testStart(h, skus, b.fn, &Options{MaxFailures: max})
			if c.Broken() {
				return
			}
			if !testAllStarted(h, c, b, skus) {
				return
			}
			fail.Release() // three calls fail while two run
			synctest.Wait()
			if n := held.Cancelled(); n > 0 {
				t.Errorf("with MaxFailures %d, three failures cancelled %d of the 2 calls still running: any "+
					"MaxFailures above 0 is a tolerance that large, up to math.MaxInt; keep it and the failure "+
					"count an int (or int64): a narrower type, such as int32(opt.MaxFailures), wraps %d to %d",
					max, n, max, int32(max))
				c.Stop()
				return
			}
			held.Release()
			out, ok := testCollect(h, c, skus)
			if !ok {
				return
			}
			for _, sku := range skus[3:] {
				if o, ok := testFind(h, out, sku); ok && o.Err != nil {
					t.Errorf("with MaxFailures %d, after three failures, the call for %s succeeded but its outcome has "+
						"the error %v: the gather tolerates that many failures, so nothing stops", max, sku, o.Err)
					return
				}
			}
			if k == len(testHugeMaxFailures)-1 {
				break
			}
		}
	})
}

package partial

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestB1_FailFastSkipsTheCallsStillRunning(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(4)
		held, trigger, slow := testNewGate(), testNewGate(), testNewGate()
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		b.calls["sku-2"] = testCall{wait: trigger, deaf: true, err: testErrNotFound}
		b.calls["sku-4"] = testCall{wait: slow, deaf: true} // ignores ctx and succeeds after the stop
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := testStart(h, ctx, skus, b.fn, &Options{FailFast: true})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			testStop(c, cancel, held, trigger, slow)
			return
		}
		trigger.Release() // sku-2 fails: the first failure
		synctest.Wait()
		if n := held.Cancelled(); n < 2 {
			t.Errorf("with FailFast, the failure of sku-2 must cancel the calls still running, but only %d of the 2 "+
				"calls waiting on their ctx saw a cancel: give the calls a ctx from context.WithCancel(ctx) and "+
				"cancel it at the first failure", n)
			testStop(c, cancel, held, slow)
			return
		}
		if c.Returned() {
			t.Errorf("with FailFast, GatherWith returned right after the first failure while the call for sku-4, " +
				"which ignores ctx, was still running: stopping early cancels the calls, then still waits for them")
			testStop(c, cancel, slow)
			return
		}
		slow.Release()
		out, ok := testCollect(h, c, cancel, skus)
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
	})
}

func TestB2_MaxFailuresStopsOnceMoreHaveFailed(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		skus := testSKUs(6)
		held := testNewGate()
		b := testNewBackend()
		for _, sku := range skus {
			b.calls[sku] = testCall{wait: held}
		}
		// sku-3, sku-5 and then sku-1 fail, one after the other.
		failing := []string{"sku-3", "sku-5", "sku-1"}
		gates := []*testGate{testNewGate(), testNewGate(), testNewGate()}
		b.calls["sku-3"] = testCall{wait: gates[0], deaf: true, err: testErrNotFound}
		b.calls["sku-5"] = testCall{wait: gates[1], deaf: true, err: &testStatusError{503}}
		b.calls["sku-1"] = testCall{wait: gates[2], deaf: true, err: testErrNotFound}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c := testStart(h, ctx, skus, b.fn, &Options{MaxFailures: 2})
		if c.Broken() {
			return
		}
		if !testAllStarted(h, c, b, skus) {
			testStop(c, cancel, append(gates, held)...)
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
				testStop(c, cancel, append(gates, held)...)
				return
			}
			if n == 2 && cancelled < 3 {
				t.Errorf("with MaxFailures 2, after the 3rd failure (%s) only %d of the 3 calls still "+
					"running saw a cancel: once more than MaxFailures inputs have failed, "+
					"cancel the calls still running", failing[n], cancelled)
				testStop(c, cancel, held)
				return
			}
		}
		out, ok := testCollect(h, c, cancel, skus)
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

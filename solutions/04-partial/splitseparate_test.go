package partial

// R1's Split hands back two slices that the caller owns: appending to one
// (a fallback price for the page, say) must not change the other.

import (
	"errors"
	"testing"

	"gokata/internal/katatest"
)

func TestR1_SplitReturnsTwoSeparateSlices(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errDown := errors.New("503: pricing down")
		outcomes := []Outcome[string, int]{
			{Input: "sku-1", Value: 100},
			{Input: "sku-2", Err: errDown},
			{Input: "sku-3", Value: 300},
			{Input: "sku-4", Err: errDown},
		}
		ok, failed := Split(outcomes)
		if len(ok) != 2 || len(failed) != 2 || ok[0].Input != "sku-1" || ok[1].Input != "sku-3" ||
			failed[0].Input != "sku-2" || failed[1].Input != "sku-4" {
			return // what goes where, in input order: graded by the other tests of Split
		}
		_ = append(ok, Outcome[string, int]{Input: "fallback", Value: 1})
		if failed[0].Input != "sku-2" {
			h.Errorf("ok, failed := Split(outcomes) over sku-1 (ok), sku-2 (failed), sku-3 (ok), sku-4 (failed); then "+
				"append(ok, fallback) changed failed[0] to %q: ok and failed share one array, so the caller's append "+
				"to one writes over the other. Give each its own array (or cap ok with a full slice expression, "+
				"buf[:k:k])", failed[0].Input)
			return
		}
		_ = append(failed, Outcome[string, int]{Input: "retry", Err: errDown})
		if outcomes[0].Input != "sku-1" || outcomes[1].Input != "sku-2" || outcomes[2].Input != "sku-3" ||
			outcomes[3].Input != "sku-4" || ok[0].Input != "sku-1" || ok[1].Input != "sku-3" {
			h.Errorf("ok, failed := Split(outcomes); appending to failed changed ok or the outcomes Split was given: " +
				"Split returns slices of its own, and leaves its argument as it was")
		}
	})
}

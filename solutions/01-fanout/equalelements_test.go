package fanout

// R1 over an input whose elements repeat: Map calls fn for every element,
// not for every distinct value. Two equal SKUs in a basket are two
// lookups (a price may change between them, fn may count them, or have
// effects), and each result lands at its own index.

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"gokata/internal/katatest"
)

func TestR1_EqualElementsAreCalledOnceEach(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		in := []string{"sku-7", "sku-7", "sku-3", "sku-7", "sku-3"}
		var (
			mu    sync.Mutex
			calls = map[string]int{}
		)
		gate := h.Gate()
		fn := func(ctx context.Context, sku string) (string, error) {
			mu.Lock()
			calls[sku]++
			n := calls[sku]
			mu.Unlock()
			if err := gate.Hold(ctx); err != nil {
				return "", err
			}
			return fmt.Sprintf("%s (lookup %d)", sku, n), nil
		}
		c := katatest.Start(h, func(ctx context.Context) ([]string, error) { return Map(ctx, in, fn) })
		if c.Broken() {
			return
		}
		synctest.Wait()
		mu.Lock()
		seen := fmt.Sprint(calls)
		all := calls["sku-7"] == 3 && calls["sku-3"] == 2
		mu.Unlock()
		if !all {
			h.Errorf("Map over %q called fn %s (calls per value); want map[sku-3:2 sku-7:3], all in flight at "+
				"once: fn is called for every element, equal ones included, not once per distinct value", in, seen)
			gate.Release()
			c.Stop()
			return
		}
		gate.Release()
		if !c.Returns("every call of fn had returned, but Map was still waiting") {
			return
		}
		c.Finish("Map") // what it returned is R2's and R3's to check
	})
}

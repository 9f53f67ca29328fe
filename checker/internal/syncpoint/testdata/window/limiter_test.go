package window

import (
	"testing"

	"gokata/internal/katatest"
)

// One repetition per test: go test -count=N counts the runs that catch it.
func TestTakeKeepsTheLimit(t *testing.T) {
	katatest.Repeat(t, 1, func(h *katatest.H) {
		const callers, limit = 4, 2
		l := New(limit)
		start := make(chan struct{})
		var calls []*katatest.Call[bool]
		for range callers {
			calls = append(calls, katatest.Go(h, func() (bool, error) { <-start; return l.Take(), nil }))
		}
		close(start)
		taken := 0
		for _, c := range calls {
			if ok, _ := c.Result(); ok {
				taken++
			}
		}
		if taken > limit {
			t.Errorf("%d of %d callers at once took a limit of %d", taken, callers, limit)
		}
	})
}

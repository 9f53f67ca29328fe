package breaker

// R1: IsFailure is asked about the errors fn returns, and only about them:
// nil is a success before anything else. An IsFailure written for errors
// (one that reads err.Error(), say) must never see a nil.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"gokata/internal/katatest"
)

func TestR1_IsFailureIsNeverAskedAboutASuccess(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		var mu sync.Mutex
		nils, asked := 0, 0
		isFailure := func(err error) bool {
			mu.Lock()
			defer mu.Unlock()
			asked++
			if err == nil {
				nils++
				return false // what a nil-safe IsFailure says; err.Error() would have panicked
			}
			return !strings.HasPrefix(err.Error(), "404")
		}
		b := New(h.Clk, Settings{MaxFailures: 2, IsFailure: isFailure})
		calls := []error{nil, errors.New("404 unknown sku"), nil, errors.New("503 service unavailable"), nil}
		for _, e := range calls {
			err := b.Do(context.Background(), func(context.Context) error { return e })
			if err != e {
				h.Errorf("Do returned %v; fn returned %v, and Do returns fn's error as it is", err, e)
				return
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if nils > 0 {
			h.Errorf("IsFailure was asked about nil %d time(s), for the calls whose fn succeeded: it is asked only "+
				"about the errors fn returns (cancellations aside), and nil is a success before IsFailure is asked; "+
				"an IsFailure written for errors, one that reads err.Error(), panics on a nil", nils)
			return
		}
		if asked != 2 {
			h.Errorf("IsFailure was asked %d time(s) about 2 errors fn returned (a 404 and a 503); want once each", asked)
		}
	})
}

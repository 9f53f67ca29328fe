package blockingloop

// B2 when the clock jumps past Grace in one move: lookups that ignore their
// ctx return on timers of their own on clk, one before Grace runs out and
// one at that very instant, and one more never returns. Run may then find
// a result and Grace's timer ready at once, and take the result when Grace
// has already run out. Grace is over all the same: Run gives up on the
// lookup still running.

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

func TestB2_AClockThatJumpsPastGraceEndsTheWait(t *testing.T) {
	const grace, jump = time.Second, 3 * time.Second
	// Run's select picks at random among the cases ready, so the results
	// come first in about half the runs.
	katatest.Repeat(t, 12, func(h *katatest.H) {
		backend := testNewBackend()
		h.Own(backend.releaseAll)
		backend.holdDeaf("stuck")
		returnsAfter := map[string]time.Duration{"early": 200 * time.Millisecond, "atexpiry": grace}
		lookup := func(ctx context.Context, key string) (string, error) {
			if d, ok := returnsAfter[key]; ok {
				<-h.Clk.After(d) // ignores ctx: returns on its own timer
				return "v:" + key, nil
			}
			return backend.lookup(ctx, key)
		}
		cache := New(h.Clk, lookup, Config{MaxInFlight: 3, Grace: grace})
		run := katatest.StartErr(h, cache.Run)
		var gets []*katatest.Call[string]
		for _, k := range []string{"stuck", "early", "atexpiry"} {
			gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, k) }))
		}
		defer func() {
			for _, g := range gets {
				g.Cancel()
			}
			run.Cancel()
			backend.releaseAll()
			synctest.Wait()
		}()
		synctest.Wait()
		if backend.Calls("stuck") != 1 || run.Returned() {
			return // the three lookups did not all start: R1 and R4 say more
		}
		run.Cancel() // the three lookups ignore it
		synctest.Wait()
		if run.Returned() {
			return // Run did not wait for the lookups: the other B2 tests say more
		}
		h.Clk.Add(jump)
		synctest.Wait()
		const what = "Run's ctx ended with three lookups running that ignore it (Grace 1s); on the clock, one " +
			"returned 200ms later, one as Grace ran out, and the third never did. The clock moved those 3s in one step"
		if !run.Returned() {
			h.Errorf("%s, and Run had not returned: Grace had run out, counted from the moment Run's ctx ended, "+
				"and it stays over when Run takes a result at that instant or later. If you work out the time "+
				"left after each result, none left means give up now, not wait without a bound", what)
			backend.releaseAll()
			h.Advance(time.Hour)
			return
		}
		err := run.Err()
		switch {
		case !errors.Is(err, ErrAbandoned):
			h.Errorf("%s, and Run returned %v; want an error matching ErrAbandoned: the third lookup was still "+
				"running when Grace ran out", what, err)
		case !testSaysCount(err, 1, 3):
			// The two results may reach Run after it gave up: 1 to 3.
			h.Errorf("%s, and Run's error %q does not say how many lookups it abandoned: one was still running "+
				"when Grace ran out (two or three, if Run gave up before it took the results)", what, err)
		}
	})
}

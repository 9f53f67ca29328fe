package blockingloop

// B2 when the lookups return at the very instant Grace runs out. Run's
// goroutine may be held by the scheduler at any point, also right after
// it made its Grace timer: meanwhile Grace runs out and the lookups that
// ignored their ctx return. When Run goes on it finds both ready, and may
// take the results or give up on the lookups; either is right, but a
// lookup's goroutine must end either way, also when it looked for Run
// before Run gave up and tries to report only after.

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"gokata/internal/katatest"
)

// testGraceHeldClock is the mock clock, except that once armed, a call
// that makes a timer of the Grace period is held at a gate right after
// the timer is made, as the scheduler may hold Run's goroutine there.
type testGraceHeldClock struct {
	*katatest.Clock
	grace time.Duration
	gate  *katatest.Gate
	armed atomic.Bool
}

func (c *testGraceHeldClock) Timer(d time.Duration) *clock.Timer {
	t := c.Clock.Timer(d)
	if c.armed.Load() && d == c.grace {
		_ = c.gate.Hold(context.Background())
	}
	return t
}

func (c *testGraceHeldClock) After(d time.Duration) <-chan time.Time { return c.Timer(d).C }

func TestB2_LookupsThatReturnAsGraceRunsOutStillEnd(t *testing.T) {
	// Six lookups that ignore their ctx, all released as Grace runs out:
	// Run's select then finds Grace's timer and their results ready at
	// once, and may take some results before it gives up.
	const grace, running = 5 * time.Second, 6
	katatest.Repeat(t, 3, func(h *katatest.H) {
		clk := &testGraceHeldClock{Clock: h.Clk, grace: grace, gate: h.Gate()}
		backend := testNewBackend()
		h.Own(backend.releaseAll)
		var keys []string
		for i := range running {
			k := fmt.Sprintf("key%d", i+1)
			keys = append(keys, k)
			backend.holdDeaf(k)
		}
		cache := New(clk, backend.lookup, Config{MaxInFlight: running, Grace: grace})
		base := h.Goroutines()
		run := katatest.StartErr(h, cache.Run)
		var gets []*katatest.Call[string]
		for _, k := range keys {
			gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, k) }))
		}
		defer func() {
			run.Cancel()
			for _, g := range gets {
				g.Cancel()
			}
			backend.releaseAll()
			clk.gate.Release()
			synctest.Wait()
		}()
		synctest.Wait()
		if backend.running.Now() != running {
			return // the lookups did not all start: R1 and R4 say more
		}
		clk.armed.Store(true)
		run.Cancel() // the lookups ignore it
		synctest.Wait()
		if clk.gate.Waiting() == 0 {
			return // Run made no clk.Timer(Grace) as its ctx ended: the other B2 tests say more
		}
		h.Advance(grace)     // Grace runs out while Run is held
		backend.releaseAll() // and every lookup returns at that instant
		synctest.Wait()      // their goroutines try to report
		clk.gate.Release()   // Run goes on
		synctest.Wait()
		what := fmt.Sprintf("Run's ctx ended with %d lookups running that ignore it (Grace %v); they all returned at "+
			"the very instant Grace ran out, while Run was just starting to wait for them", running, grace)
		if !run.Returned() {
			h.Errorf("%s, and Run had not returned once they had all returned: with every lookup back it returns nil, "+
				"or an error matching ErrAbandoned if it gave up on them first", what)
			return
		}
		err := run.Err()
		if err != nil && !errors.Is(err, ErrAbandoned) {
			h.Errorf("%s, and Run returned %v; want nil, or an error matching ErrAbandoned if it gave up on them first",
				what, err)
			return
		}
		for i, g := range gets {
			if !g.Returned() {
				h.Errorf("%s, and Run returned %v, but Get(%q), waiting when Run's ctx ended, had not returned: once "+
					"the cache stops, waiting callers return ErrStopped at once", what, err, keys[i])
				return
			}
		}
		if extra := h.Goroutines() - base; extra > 0 {
			how := "Run returned nil"
			if err != nil {
				how = fmt.Sprintf("Run gave up on them (%q)", err)
			}
			h.Errorf("%s. %s, and then %d goroutine(s) the cache started were still blocked, for good: a lookup "+
				"that returns after Run has given up must have its goroutine drop the result and end, not wait for "+
				"a loop that is gone. Checking whether Run has given up and then sending the result is two steps, "+
				"and Run can give up in between: make the send itself end when Run gives up (a select with a "+
				"channel that Run closes as it gives up), or send into a buffer with room for every running lookup",
				what, how, extra)
			return
		}
		h.NoLeaks("Run, which had given up on lookups that returned as Grace ran out,")
	})
}

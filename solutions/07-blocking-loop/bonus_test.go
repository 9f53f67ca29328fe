package blockingloop

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

func TestB1_ConcurrentMissesForOneKeyShareOneLookup(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		ga := tb.backend.hold("a")
		var as []*katatest.Call[string]
		for range 3 {
			as = append(as, tb.get("a"))
		}
		synctest.Wait()
		if n := tb.backend.Calls("a"); n != 1 {
			t.Errorf("3 concurrent Gets of \"a\" started %d lookups; want 1: a miss for a key whose lookup is already "+
				"running must share it. Keep the callers waiting for each key in the loop, and answer them all "+
				"when the result arrives", n)
			return
		}
		gb := tb.backend.hold("b")
		b := tb.get("b")
		synctest.Wait()
		if tb.backend.Calls("b") != 1 {
			t.Errorf("with one lookup of \"a\" shared by 3 callers and MaxInFlight 2, Get(\"b\") should start a " +
				"second lookup; it did not. A shared lookup takes one slot, not one per caller. (Or is the loop " +
				"frozen inside the first lookup? R1 says more.)")
			return
		}

		// Both slots are busy: two misses for "c" queue one lookup.
		cs := []*katatest.Call[string]{tb.get("c"), tb.get("c")}
		synctest.Wait()
		st := tb.stats()
		if !testAnswered(st) {
			t.Errorf("Stats did not answer with 2 lookups running and 2 misses for \"c\" waiting for a slot: the loop " +
				"froze at the limit (MaxInFlight 2); queue the misses in the loop instead of blocking it")
			return
		}
		s, err := st.Result()
		require.NoError(t, err, "Stats while the cache runs")
		assert.Equal(t, Stats{Misses: 6, InFlight: 2, Queued: 1}, s, "Stats with \"a\" (3 callers) and \"b\" running, "+
			"which fills MaxInFlight 2, and 2 misses for \"c\" waiting: misses for a queued key must share one "+
			"place in the queue")

		ga.Release()
		synctest.Wait()
		for i, c := range append(as, cs...) {
			if !c.Returned() {
				t.Errorf("caller %d of Get(\"a\") or Get(\"c\") did not return once its shared lookup had answered: "+
					"answer every caller waiting for the key", i+1)
				return
			}
			v, err := c.Result()
			want := "v:a"
			if i >= len(as) {
				want = "v:c"
			}
			assert.NoError(t, err, "a caller sharing a lookup")
			assert.Equal(t, want, v, "every caller sharing a lookup must get its value")
		}
		assert.Equal(t, 1, tb.backend.Calls("a"), "3 Gets of \"a\" must share one lookup")
		assert.Equal(t, 1, tb.backend.Calls("c"), "2 Gets of \"c\", queued, must share one lookup")
		gb.Release()
		if !testAnswered(b) {
			t.Errorf("Get(\"b\") did not return once its lookup had answered")
		}
	})
}

func TestB2_AGraceBelowZeroWaitsForEveryLookup(t *testing.T) {
	// Only Grace > 0 bounds the wait: below zero, as at zero, Run waits
	// for every running lookup, however long it takes.
	for _, grace := range []time.Duration{-1, -5 * time.Second} {
		katatest.Run(t, func(h *katatest.H) {
			tb := testStart(h, 2, grace)
			defer tb.close()
			ga := tb.backend.holdDeaf("a")
			tb.get("a")
			synctest.Wait()
			if tb.backend.running.Now() != 1 {
				return // the lookup did not start: R1 and R4 say more
			}
			tb.run.Cancel() // the lookup ignores it
			synctest.Wait()
			h.Advance(time.Hour)
			if tb.run.Returned() {
				h.Errorf("Run returned while a lookup that ignores its ctx was still running, an hour after its ctx "+
					"ended, with Grace %v (it returned %v): only a Grace above zero bounds the wait; at zero or "+
					"below, Run returns nil once every running lookup has returned", grace, tb.run.Err())
				return
			}
			ga.Release()
			synctest.Wait()
			if !tb.run.Returned() {
				h.Errorf("with Grace %v, Run had not returned once its last running lookup had returned: is the "+
					"lookup goroutine stuck sending its result to a loop that no longer receives?", grace)
				return
			}
			assert.NoError(t, tb.run.Err(), "with Grace %v, Run waited for every lookup: nothing was abandoned", grace)
		})
	}
}

func TestB2_GraceBoundsTheWaitForLookupsThatIgnoreCtx(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const grace = 5 * time.Second
		tb := testStart(h, 2, grace)
		defer tb.close()
		ga := tb.backend.holdDeaf("a")
		gb := tb.backend.holdDeaf("b")
		a := katatest.Start(h, func(ctx context.Context) (string, error) { return tb.cache.Get(ctx, "a") })
		synctest.Wait()
		tb.get("b")
		synctest.Wait()
		running := tb.backend.running.Now()

		a.Cancel()
		if instant, _ := a.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("a caller whose ctx ended must return at once, even when its lookup ignores ctx; Get(\"a\") " +
				"kept waiting: select on ctx.Done() and the reply together")
			return
		}
		_, err := a.Result()
		assert.ErrorIs(t, err, context.Canceled, "a caller who gave up: Get must return ctx.Err()")

		// Grace counts from the moment Run's ctx ends, not from Run's start.
		h.Advance(3 * time.Second)
		stoppedAt := h.Elapsed()
		tb.run.Cancel() // the two lookups ignore it
		synctest.Wait()
		if tb.run.Returned() {
			t.Errorf("Run returned while two lookups that ignore their ctx were still running, as soon as its ctx "+
				"ended: with Grace %v it must wait for them up to Grace on the clock", grace)
			return
		}
		h.Advance(grace - 1)
		if tb.run.Returned() {
			t.Errorf("Run returned while two lookups that ignore their ctx were still running, by %v after its ctx "+
				"ended (%v after Run started): with Grace %v it must wait for them up to Grace on the clock, "+
				"counted from the moment its ctx ended; start the clk.Timer(Grace) then, not when Run starts",
				h.Elapsed()-stoppedAt, h.Elapsed(), grace)
			return
		}
		h.Advance(1)
		if !tb.run.Returned() {
			t.Errorf("Run had not returned %v (Grace) after its ctx ended, with lookups that ignore their ctx still running: "+
				"a legacy backend must not hold Run forever. Stop waiting when a clk.Timer(Grace) fires "+
				"(a loop frozen inside a lookup cannot even do that)", grace)
			return
		}
		if running != 2 {
			t.Errorf("precondition: with MaxInFlight 2, the misses for \"a\" and \"b\" should both have had a lookup "+
				"running when Run's ctx ended; lookups running: %d. (Is the loop frozen inside the first lookup? "+
				"R1 and R4 say more.)", running)
			return
		}
		err = tb.run.Err()
		assert.ErrorIs(t, err, ErrAbandoned, "Run gave up on 2 lookups when Grace expired: its error must match ErrAbandoned")
		if err != nil {
			assert.Contains(t, err.Error(), "2", "Run's error must say how many lookups it abandoned (2)")
		}

		ga.Release()
		synctest.Wait()
		gb.Release()
		h.NoLeaks("the abandoned lookups")
	})
}

package blockingloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

func TestR1_StatsAndCachedGetsAnswerWhileALookupIsHeld(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		if !tb.fetch("warm") {
			return
		}
		gate := tb.backend.hold("slow")
		slow := tb.get("slow")
		synctest.Wait()
		if n := tb.backend.Calls("slow"); !slow.Reaches(n == 1, "precondition: Get(\"slow\"), a miss, should have started a lookup (it started %d)", n) {
			return
		}

		st := tb.stats()
		if !testAnswered(st) {
			t.Errorf("Stats did not answer while the lookup of \"slow\" was held: the loop is frozen inside lookup. " +
				"A loop that calls the slow backend itself serves nobody until the backend answers; run each lookup " +
				"on a goroutine of its own that sends its result back to the loop")
			return
		}
		s, err := st.Result()
		require.NoError(t, err, "Stats while the cache runs")
		assert.Equal(t, Stats{Entries: 1, Misses: 2, InFlight: 1}, s, "Stats while the lookup of \"slow\" runs: "+
			"1 entry (\"warm\"), 2 misses (\"warm\", \"slow\"), 1 lookup in flight")

		hit := tb.get("warm")
		if !testAnswered(hit) {
			t.Errorf("Get(\"warm\"), a cached key, did not answer while the lookup of \"slow\" was held: " +
				"the loop is frozen inside lookup; a cached key must not wait for somebody else's miss")
			return
		}
		v, err := hit.Result()
		assert.NoError(t, err, "Get(\"warm\") of a cached key")
		assert.Equal(t, "v:warm", v, "Get(\"warm\") of a cached key must return the stored value")

		gate.Release()
		if !testAnswered(slow) {
			t.Errorf("Get(\"slow\") did not return once its lookup had answered: the lookup must send its result to " +
				"the loop, which stores it and answers every caller waiting for the key")
			return
		}
		v, err = slow.Result()
		assert.NoError(t, err, "Get(\"slow\") once its lookup answered")
		assert.Equal(t, "v:slow", v, "Get(\"slow\") must return the value its lookup found")
	})
}

func TestR2_HeartbeatTicksWhileALookupIsHeld(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		ticks := func() int { return len(tb.ticks.All()) }
		if !h.StandsStill(10*testTick, "OnTick was called", func() bool { return ticks() > 0 }) {
			return
		}
		h.Advance(testTick - 1)
		if n := ticks(); n != 0 {
			t.Errorf("OnTick was called %d times before the first Tick (%v) had passed on the mock clock: "+
				"call it once per Tick, from a clk.Ticker(Tick)", n, testTick)
			return
		}
		h.Advance(1)
		if n := ticks(); n != 1 {
			t.Errorf("OnTick was called %d times when the first Tick (%v) had passed on the mock clock; want 1: "+
				"give the loop's select a case for a clk.Ticker(Tick) and call OnTick on each tick", n, testTick)
			return
		}

		gate := tb.backend.hold("slow")
		slow := tb.get("slow")
		synctest.Wait()
		if n := tb.backend.Calls("slow"); !slow.Reaches(n == 1, "precondition: Get(\"slow\"), a miss, should have started a lookup (it started %d)", n) {
			return
		}
		for want := 2; want <= 4; want++ {
			h.Advance(testTick)
			if n := ticks(); n != want {
				t.Errorf("the heartbeat stopped while the lookup of \"slow\" was held: by %v of mock time OnTick "+
					"should have run %d times, once per Tick, but it ran %d. The loop is frozen inside lookup, so it "+
					"never gets back to its select to see the ticker: run the lookup on a goroutine of its own",
					h.Elapsed(), want, n)
				return
			}
		}
		all := tb.ticks.All()
		assert.Equal(t, 1, all[len(all)-1].InFlight, "the Stats given to OnTick while the lookup of \"slow\" runs: "+
			"InFlight counts it")
		gate.Release()
		if !testAnswered(slow) {
			t.Errorf("Get(\"slow\") did not return once its lookup had answered")
			return
		}
		h.Advance(testTick)
		all = tb.ticks.All()
		if assert.Len(t, all, 5, "the heartbeat must go on after the lookup ended: one OnTick per Tick") {
			assert.Equal(t, Stats{Entries: 1, Misses: 1}, all[4], "the Stats given to OnTick after the lookup of \"slow\" "+
				"stored its value")
		}
	})
}

func TestR3_ACallerWhoLeavesReturnsAtOnceAndTheResultIsKept(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		gate := tb.backend.hold("a")
		first := katatest.Start(h, func(ctx context.Context) (string, error) { return tb.cache.Get(ctx, "a") })
		synctest.Wait()
		if n := tb.backend.Calls("a"); !first.Reaches(n == 1, "precondition: Get(\"a\"), a miss, should have started a lookup (it started %d)", n) {
			return
		}

		first.Cancel()
		if instant, _ := first.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("a caller whose ctx ended while its lookup ran must return at once; Get(\"a\") kept waiting " +
				"for the lookup: select on ctx.Done() and the reply together")
			return
		}
		_, err := first.Result()
		assert.ErrorIs(t, err, context.Canceled, "a caller who gave up: Get must return ctx.Err()")
		if gate.Cancelled() > 0 {
			t.Errorf("the lookup of \"a\" was cancelled when its caller left: its result is for everybody, so run " +
				"lookups with Run's ctx, not the caller's")
			return
		}

		gate.Release()
		synctest.Wait() // the late result reaches the loop before the next Get does
		second := tb.get("a")
		if !testAnswered(second) {
			t.Errorf("once the lookup of \"a\" had answered a caller who had left, the loop stopped answering: a new " +
				"Get(\"a\") got no reply. Is the loop stuck sending the late result to the caller who left? Give every " +
				"reply channel room for one answer (make(chan …, 1)), so the loop never waits for a caller")
			return
		}
		v, err := second.Result()
		assert.NoError(t, err, "Get(\"a\") after the late result arrived")
		assert.Equal(t, "v:a", v, "the late result of a lookup whose caller left must still be stored")
		assert.Equal(t, 1, tb.backend.Calls("a"), "Get(\"a\") after the late result arrived must be answered from the "+
			"cache, not by a second lookup")
	})
}

func TestR3_AFailedLookupIsNotStored(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		tb.backend.fail("bad")
		for attempt := 1; attempt <= 2; attempt++ {
			c := tb.get("bad")
			if !testAnswered(c) {
				t.Errorf("Get(\"bad\") #%d did not return after its lookup failed: send the lookup's error to the "+
					"callers waiting for the key, and forget the key, so the next miss starts a new lookup", attempt)
				return
			}
			if n := tb.backend.Calls("bad"); n != attempt {
				v, err := c.Result()
				t.Errorf("Get(\"bad\") #%d was answered (%q, %v) without a new lookup (lookups: %d): a failed "+
					"lookup must not be stored; store a value only when its lookup returned a nil error, so the "+
					"next Get of the key asks the backend again", attempt, v, err, n)
				return
			}
			_, err := c.Result()
			// The backend's error says "lookup "bad": backend: 503 unavailable".
			if want := fmt.Errorf("lookup %q: %w", "bad", testErrBackend); err == nil || err.Error() != want.Error() ||
				!errors.Is(err, testErrBackend) {
				t.Errorf("Get(\"bad\") #%d returned %v; the lookup failed with %q: want the error its lookup returned, "+
					"as it is — not wrapped or rewritten, so that the caller sees what the backend said", attempt, err, want)
				return
			}
		}
		st := tb.stats()
		if !testAnswered(st) {
			t.Errorf("Stats did not answer")
			return
		}
		s, err := st.Result()
		require.NoError(t, err, "Stats while the cache runs")
		assert.Equal(t, Stats{Misses: 2}, s, "Stats after two failed lookups: nothing stored, 2 misses")
	})
}

func TestR4_AtMostMaxInFlightLookupsRunAndTheLoopStaysResponsive(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		if !tb.fetch("warm") {
			return
		}
		keys := []string{"a", "b", "c", "d"}
		gates := map[string]*testGate{}
		calls := map[string]*katatest.Call[string]{}
		for _, k := range keys {
			gates[k] = tb.backend.hold(k)
			calls[k] = tb.get(k)
			synctest.Wait() // the misses reach the loop one by one, in this order
		}
		switch n := tb.backend.running.Now(); {
		case n > 2:
			t.Errorf("%d lookups ran at once with MaxInFlight 2: a miss must not start a lookup while MaxInFlight "+
				"are running; queue it in the loop and start it when a running one reports back", n)
			return
		case n < 2:
			t.Errorf("lookups running after 4 misses with MaxInFlight 2: %d; want 2. A loop that calls lookup "+
				"itself is frozen inside the first one and can never run two: start each lookup on a goroutine", n)
			return
		}

		st := tb.stats()
		if !testAnswered(st) {
			t.Errorf("Stats did not answer with 2 lookups running and 2 misses waiting for a slot: the loop froze at " +
				"the limit. A miss beyond MaxInFlight must wait in a queue the loop owns; a semaphore that the loop " +
				"itself acquires blocks the whole loop")
			return
		}
		s, err := st.Result()
		require.NoError(t, err, "Stats while the cache runs")
		assert.Equal(t, Stats{Entries: 1, Misses: 5, InFlight: 2, Queued: 2}, s, "Stats at the limit: "+
			"1 entry (\"warm\"), 5 misses, 2 lookups in flight (MaxInFlight) and 2 queued")
		hit := tb.get("warm")
		if !testAnswered(hit) {
			t.Errorf("Get(\"warm\"), a cached key, did not answer with 2 lookups running and 2 misses queued: the loop " +
				"froze at the limit")
			return
		}

		for i, k := range keys {
			gates[k].Release()
			if !testAnswered(calls[k]) {
				t.Errorf("Get(%q) did not return once its lookup had answered", k)
				return
			}
			if i == 0 && tb.backend.Calls("d") > 0 && tb.backend.Calls("c") == 0 {
				t.Errorf("the misses for \"c\" and \"d\" queued in that order; when the lookup of \"a\" reported " +
					"back, \"d\" started instead of \"c\": queued misses start oldest first (a FIFO queue: take " +
					"from the front), or under steady load the oldest miss waits forever")
				return
			}
			started := tb.backend.Calls("c") + tb.backend.Calls("d")
			if want := min(i+1, 2); started < want {
				t.Errorf("after %d of the running lookups had ended, only %d of the 2 queued misses had started; "+
					"want %d: when a lookup reports back, give its slot to the next queued miss", i+1, started, want)
				return
			}
			if n := tb.backend.running.Max(); n > 2 {
				t.Errorf("%d lookups ran at once with MaxInFlight 2 once slots started to free: start one queued "+
					"miss per lookup that ends", n)
				return
			}
		}
		for _, k := range keys {
			v, err := calls[k].Result()
			assert.NoError(t, err, "Get(%q) after its lookup answered", k)
			assert.Equal(t, "v:"+k, v, "Get(%q), queued or not, must return the value its lookup found", k)
		}
	})
}

func TestR5_StoppingCancelsLookupsAndWaitsForThem(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		keys := []string{"a", "b"}
		holds := map[string]*testGate{}
		cleanups := map[string]*testGate{}
		calls := map[string]*katatest.Call[string]{}
		for _, k := range keys {
			holds[k] = tb.backend.hold(k)
			cleanups[k] = tb.backend.slowToStop(k)
			calls[k] = tb.get(k)
			synctest.Wait()
		}
		running := tb.backend.running.Now()

		tb.run.Cancel() // the lookups see their ctx cancelled, then take a while to return
		synctest.Wait()
		for _, k := range keys {
			if !calls[k].Returned() {
				t.Errorf("when Run's ctx ended, Get(%q) kept waiting for its lookup: once the cache stops, waiting "+
					"callers must return ErrStopped at once (close a channel that Get selects on). A loop frozen "+
					"inside a lookup cannot even tell them", k)
				return
			}
			_, err := calls[k].Result()
			assert.ErrorIs(t, err, ErrStopped, "Get(%q), waiting when Run's ctx ended, must return ErrStopped", k)
		}
		if running != 2 {
			t.Errorf("precondition: with MaxInFlight 2, the misses for \"a\" and \"b\" should both have had a lookup "+
				"running when Run's ctx ended; lookups running: %d. (Is the loop frozen inside the first lookup? "+
				"R1 and R4 say more.)", running)
			return
		}
		for _, k := range keys {
			if holds[k].Cancelled() != 1 {
				t.Errorf("when Run's ctx ended, the lookup of %q did not see its ctx cancelled: run every lookup with "+
					"Run's ctx, so that stopping Run cancels it", k)
				return
			}
		}
		if tb.run.Returned() {
			t.Errorf("Run returned while the lookups of \"a\" and \"b\" were still running (their ctx was cancelled, " +
				"but they had not returned yet): Run must wait for every lookup it started, or their goroutines " +
				"outlive it")
			return
		}
		cleanups["a"].Release()
		synctest.Wait()
		if tb.run.Returned() {
			t.Errorf("Run returned while the lookup of \"b\" was still running: Run must wait for every lookup it " +
				"started, not just one")
			return
		}
		cleanups["b"].Release()
		if !testAnswered(tb.run.Call) {
			t.Errorf("Run did not return after its ctx had ended and every lookup had returned: keep receiving " +
				"results until every running lookup has reported back. A lookup goroutine stuck sending its result " +
				"to a loop that stopped receiving never ends, so Run (or a WaitGroup) waits forever")
			return
		}
		err, ok := tb.run.Finish("Run")
		if !ok {
			return
		}
		assert.NoError(t, err, "Run stopped by its ctx, once every lookup has returned, must return nil")

		late := tb.get("a")
		if !testAnswered(late) {
			t.Errorf("Get after Run returned must return ErrStopped at once; it waited")
			return
		}
		_, err = late.Result()
		assert.ErrorIs(t, err, ErrStopped, "Get after Run returned")
		st := tb.stats()
		if !testAnswered(st) {
			t.Errorf("Stats after Run returned must return ErrStopped at once; it waited")
			return
		}
		_, err = st.Result()
		assert.ErrorIs(t, err, ErrStopped, "Stats after Run returned")
	})
}

func TestR6_OnlyTheLoopTouchesTheMap(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStartAt(h, 3, 0, true)
		defer tb.close()
		if !tb.fetch("warm") {
			return
		}
		keys := []string{"k1", "k2", "k3"}
		gate := tb.backend.hold(keys...)
		var calls []*katatest.Call[string]
		for _, k := range keys {
			calls = append(calls, tb.get(k))
		}
		synctest.Wait()
		// The loop reads the map for a cached key, and builds two Stats
		// snapshots from the map and the counters. WaitUnordered, unlike
		// synctest.Wait, leaves those reads unordered with what the lookups
		// and the loop do once released (a snapshot built on the caller's
		// goroutine reads the state while the loop writes it); and the three
		// lookups end in one step, with nothing to order them either.
		hit := tb.get("warm")
		snaps := []*katatest.Call[Stats]{tb.stats(), tb.stats()}
		h.WaitUnordered()
		gate.Release()
		synctest.Wait()
		for _, sn := range snaps {
			if !sn.Returned() {
				t.Errorf("Stats, called while three lookups ran, did not answer once they had returned")
				return
			}
			if _, err := sn.Result(); err != nil {
				t.Errorf("Stats, called while three lookups ran, returned %v; want the loop's Stats", err)
				return
			}
		}
		for i, c := range calls {
			if !c.Returned() {
				t.Errorf("Get(%q) did not return once its lookup had answered", keys[i])
				return
			}
			v, err := c.Result()
			assert.NoError(t, err, "Get(%q) once its lookup answered", keys[i])
			assert.Equal(t, "v:"+keys[i], v, "Get(%q) must return the value its lookup found", keys[i])
		}
		if !hit.Returned() {
			t.Errorf("Get(\"warm\"), a cached key, did not return")
			return
		}
		v, err := hit.Result()
		assert.NoError(t, err, "Get(\"warm\") of a cached key")
		assert.Equal(t, "v:warm", v, "Get(\"warm\") of a cached key must return the stored value")
		st := tb.stats()
		if !testAnswered(st) {
			t.Errorf("Stats did not answer")
			return
		}
		s, err := st.Result()
		require.NoError(t, err, "Stats while the cache runs")
		assert.Equal(t, 4, s.Entries, "Stats.Entries after storing \"warm\", \"k1\", \"k2\" and \"k3\"")
	})
}

func TestR4_AFailedLookupFreesItsSlotForTheQueue(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 1, 0)
		defer tb.close()
		gate := tb.backend.hold("bad")
		tb.backend.fail("bad")
		bad := tb.get("bad")
		synctest.Wait()
		next := tb.get("next") // MaxInFlight 1: it waits in the queue behind "bad"
		synctest.Wait()
		if n := tb.backend.Calls("bad"); !bad.Reaches(n == 1, "precondition: Get(\"bad\"), a miss, should have started a lookup (it started %d)", n) {
			return
		}
		if n := tb.backend.Calls("next"); n != 0 {
			t.Errorf("with MaxInFlight 1 and the lookup of \"bad\" running, Get(\"next\") started a lookup (%d): "+
				"a miss beyond MaxInFlight must wait in the loop's queue", n)
			return
		}

		gate.Release() // the lookup of "bad" fails
		if !testAnswered(bad) {
			t.Errorf("Get(\"bad\") did not return once its lookup had failed: send the lookup's error to every " +
				"caller waiting for the key")
			return
		}
		_, err := bad.Result()
		assert.ErrorIs(t, err, testErrBackend, "Get(\"bad\") must return the error of its failed lookup")
		if !testAnswered(next) {
			st := tb.stats()
			if testAnswered(st) {
				s, _ := st.Result()
				t.Errorf("the miss for \"next\", queued behind a lookup that failed, never started (Stats: %+v): a "+
					"failed lookup frees its slot just like one that succeeds, so give the slot to the next queued "+
					"key on the error path too", s)
			} else {
				t.Errorf("once the lookup of \"bad\" had failed, the loop stopped answering: the queued miss for " +
					"\"next\" never returned and Stats got no reply")
			}
			return
		}
		v, err := next.Result()
		assert.NoError(t, err, "Get(\"next\"), queued behind a failed lookup")
		assert.Equal(t, "v:next", v, "Get(\"next\"), queued behind a failed lookup, must get its own value")
		st := tb.stats()
		if !testAnswered(st) {
			t.Errorf("Stats did not answer")
			return
		}
		s, err := st.Result()
		require.NoError(t, err, "Stats while the cache runs")
		assert.Equal(t, [2]int{0, 0}, [2]int{s.InFlight, s.Queued}, "Stats [InFlight, Queued] once \"bad\" failed "+
			"and \"next\" was answered: no lookup in flight and none queued")
	})
}

func TestR5_QueuedLookupsNeverStartOnceStopped(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 1, 0)
		defer tb.close()
		hold := tb.backend.hold("a")
		cleanup := tb.backend.slowToStop("a")
		a := tb.get("a")
		synctest.Wait()
		b := tb.get("b") // MaxInFlight 1: queued behind "a"
		synctest.Wait()
		if n := tb.backend.Calls("a"); !a.Reaches(n == 1, "precondition: Get(\"a\"), a miss, should have started a lookup (it started %d)", n) {
			return
		}
		if n := tb.backend.Calls("b"); n != 0 {
			t.Errorf("precondition: with MaxInFlight 1 and the lookup of \"a\" running, Get(\"b\") started a second " +
				"lookup instead of waiting in the queue (R4 says more)")
			return
		}
		if st := tb.stats(); !testAnswered(st) {
			t.Errorf("precondition: Stats did not answer with 1 lookup running (MaxInFlight 1) and a miss for \"b\" " +
				"waiting for a slot: the loop froze at the limit, so it cannot even see its ctx end (R4 says more)")
			return
		}

		tb.run.Cancel()
		synctest.Wait()
		for _, c := range []*katatest.Call[string]{a, b} {
			if !c.Returned() {
				t.Errorf("when Run's ctx ended, a waiting Get kept waiting: waiting callers, queued or not, must " +
					"return ErrStopped at once")
				return
			}
			_, err := c.Result()
			assert.ErrorIs(t, err, ErrStopped, "a Get waiting when Run's ctx ended must return ErrStopped")
		}
		require.Equal(t, 1, hold.Cancelled(), "precondition: the running lookup of \"a\" should see its ctx cancelled")
		cleanup.Release() // the lookup of "a" returns, cancelled, and frees its slot
		synctest.Wait()
		if n := tb.backend.Calls("b"); n != 0 {
			t.Errorf("the queued miss for \"b\" started a lookup after Run's ctx had ended (%d lookup): queued "+
				"lookups never start once the cache stops. While Run waits for the running lookups, it must not "+
				"hand their freed slots to the queue", n)
			return
		}
		if !tb.run.Returned() {
			t.Errorf("Run did not return once its only running lookup had returned: a queued key never started, " +
				"so Run must not wait for it; and keep receiving results while it waits (a lookup goroutine stuck " +
				"sending its result to a loop that stopped receiving never ends)")
			return
		}
		err, ok := tb.run.Finish("Run")
		if ok {
			assert.NoError(t, err, "Run stopped by its ctx, once every lookup has returned, must return nil")
		}
	})
}

func TestR2_TheHeartbeatStartsWithRun(t *testing.T) {
	// The cache is made, and Run starts 2.5 Ticks later: the heartbeat is
	// Run's (its ticker is stopped when Run returns), so the first OnTick
	// comes one Tick after Run started, and none at Run's start, when the
	// clock stands still. A ticker made in New ticks before Run, and the
	// tick it holds reaches OnTick as soon as Run starts.
	katatest.Run(t, func(h *katatest.H) {
		tb := &testBed{h: h, backend: testNewBackend(), ticks: &katatest.Recorder[Stats]{}}
		h.Own(tb.backend.releaseAll)
		tb.cache = New(h.Clk, tb.backend.lookup, Config{MaxInFlight: 2, Tick: testTick, OnTick: tb.ticks.Add})
		h.Advance(2*testTick + testTick/2)
		tb.run = katatest.StartErr(h, tb.cache.Run)
		defer tb.close()
		if tb.run.Broken() {
			return
		}
		synctest.Wait()
		if n := len(tb.ticks.All()); n != 0 {
			t.Errorf("the cache was made at 0s and Run started at %v; OnTick was called %d time(s) as Run started, "+
				"with the clock standing still: the heartbeat was ticking before Run, from a ticker made in New. "+
				"Make the clk.Ticker in Run, so that it ticks every Tick from Run's start and stops when Run "+
				"returns", h.Elapsed(), n)
			return
		}
		h.Advance(testTick - 1)
		if n := len(tb.ticks.All()); n != 0 {
			t.Errorf("Run started at %v, and OnTick was called %d time(s) before a Tick (%v) had passed since: the "+
				"heartbeat ticks every Tick from Run's start; make the clk.Ticker in Run, not in New",
				2*testTick+testTick/2, n, testTick)
			return
		}
		h.Advance(1)
		assert.Len(t, tb.ticks.All(), 1, "one Tick after Run started, OnTick must have been called once")
	})
}

func TestR2_TheHeartbeatKeepsItsScheduleWhileRequestsArrive(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		tb := testStart(h, 2, 0)
		defer tb.close()
		// A Stats call every 400ms keeps the loop busy; the heartbeat must
		// still come every Tick (1s), at 1s, 2s and 3s.
		const every = 400 * time.Millisecond
		for step := 1; step <= 8; step++ {
			h.Advance(every)
			if want, n := int(h.Elapsed()/testTick), len(tb.ticks.All()); n != want {
				t.Errorf("with a Stats call every %v, OnTick ran %d times by %v; want %d, once per Tick (%v). A "+
					"timer made afresh in each pass of the loop (clk.After in the select) starts over with every "+
					"request, so a busy loop never ticks: create one clk.Ticker(Tick) before the loop",
					every, n, h.Elapsed(), want, testTick)
				return
			}
			st := tb.stats()
			if !testAnswered(st) {
				t.Errorf("Stats did not answer at %v", h.Elapsed())
				return
			}
		}
	})
}

// testTickerClock is the mock clock, with every period asked of Ticker or
// Tick noted: a negative one would make the mock clock spin.
type testTickerClock struct {
	clock.Clock
	periods katatest.Recorder[time.Duration]
}

func (c *testTickerClock) Ticker(d time.Duration) *clock.Ticker {
	c.periods.Add(d)
	if d <= 0 {
		d = time.Hour // the test reports it; the clock must not spin meanwhile
	}
	return c.Clock.Ticker(d)
}

func (c *testTickerClock) Tick(d time.Duration) <-chan time.Time {
	c.periods.Add(d)
	if d <= 0 {
		d = time.Hour
	}
	return c.Clock.Tick(d)
}

func TestR2_ATickOfZeroOrLessTurnsTheHeartbeatOff(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		for _, tick := range []time.Duration{-time.Second, 0} {
			clk := &testTickerClock{Clock: h.Clk}
			var ticks katatest.Recorder[Stats]
			backend := testNewBackend()
			cache := New(clk, backend.lookup, Config{MaxInFlight: 2, Tick: tick, OnTick: ticks.Add})
			run := katatest.StartErr(h, cache.Run)
			h.Advance(10 * time.Second)
			bad := slices.DeleteFunc(clk.periods.All(), func(d time.Duration) bool { return d > 0 })
			if len(bad) > 0 || len(ticks.All()) > 0 {
				t.Errorf("Config.Tick is %v, with an OnTick set: the heartbeat is off, but Run asked the clock for "+
					"tickers of %v and OnTick ran %d times in 10s: Tick <= 0 turns the heartbeat off — a ticker of a "+
					"period below 1 panics on a real clock (and never stops firing on a mock one)",
					tick, bad, len(ticks.All()))
			}
			run.Cancel()
			synctest.Wait()
			if !run.Returned() {
				t.Errorf("Tick %v: Run did not return once its ctx had ended", tick)
				return
			}
			if t.Failed() {
				return
			}
		}
	})
}

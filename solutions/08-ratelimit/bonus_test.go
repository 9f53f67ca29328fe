package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

func TestB1_CombinedAllowTakesAllOrNothing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		full, empty := New(h.Clk, 10, 1), New(h.Clk, 10, 1)
		require.True(t, empty.Allow(), "precondition: a new limiter with burst 1 has a token")
		for _, order := range []string{"Combine(full, empty)", "Combine(empty, full)"} {
			m := Combine(full, empty)
			if order == "Combine(empty, full)" {
				m = Combine(empty, full)
			}
			if m.Allow() {
				t.Errorf("%s.Allow() returned true, but one of the limiters had no token", order)
				return
			}
		}
		assert.True(t, full.Allow(), "the refused calls of Combine(full, empty).Allow and Combine(empty, full).Allow "+
			"must take nothing: full's token must still be there (check every limiter first, then take from all)")

		perSecond, perMinute := New(h.Clk, 2, 2), New(h.Clk, 3.0/60, 3) // 2 per second and 3 per minute
		m := Combine(perSecond, perMinute)
		steps := []struct {
			at   time.Duration
			want []bool
			why  string
		}{
			{0, []bool{true, true, false}, "2 per second with burst 2: the third call must wait for the per-second limit"},
			{0, nil, ""}, // the mock clock stands still: nothing may come back
			{500 * testMs, []bool{true, false}, "a per-second token is due at 500ms, and the per-minute limit has its third"},
			{time.Second, []bool{false}, "the per-minute limit is empty until 20s, whatever the per-second limit has"},
		}
		for _, st := range steps {
			if st.want == nil {
				if !h.StandsStill(time.Second, "Combine(2/s, 3/min).Allow() succeeded", m.Allow) {
					return
				}
				continue
			}
			if st.at > h.Elapsed() {
				h.Advance(st.at - h.Elapsed())
			}
			for i, want := range st.want {
				if got := m.Allow(); got != want {
					t.Errorf("at %v, call %d of Combine(2/s, 3/min).Allow() returned %v; want %v: %s",
						st.at, i+1, got, want, st.why)
					return
				}
			}
		}
		assert.True(t, perSecond.Allow(), "at 1s Combine(2/s, 3/min).Allow() was refused by the per-minute limit; it "+
			"must not have taken the per-second token due at 1s")
	})
}

func TestB1_CombinedWaitWaitsForTheLatestToken(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		perSecond, perMinute := New(h.Clk, 2, 1), New(h.Clk, 3.0/60, 1) // tokens every 500ms and every 20s
		m := Combine(perSecond, perMinute)
		require.True(t, m.Allow(), "precondition: two new limiters have a token each")

		w := katatest.StartErr(h, m.Wait)
		if testBroken(h, w) {
			return
		}
		if !testWakesAt(h, w, 20*time.Second, "the per-second token is due at 500ms, the per-minute token at 20s: "+
			"a combined Wait returns when the latest of them is due") {
			return
		}

		w = katatest.StartErr(h, m.Wait) // the per-minute token is due at 40s
		if testBroken(h, w) {
			return
		}
		h.Advance(10 * time.Second)
		w.Cancel()
		if instant, _ := w.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("cancel during a combined Wait must return at once; it was still waiting with the mock clock stopped")
			w.Stop()
			return
		}
		if err, ok := w.Finish("Wait"); !ok || !assert.ErrorIs(t, err, context.Canceled, "a cancelled Wait returns ctx.Err()") {
			return
		}
		h.Advance(10*time.Second - 1)
		assert.False(t, m.Allow(), "1ns before 40s the per-minute limit has no token")
		h.Advance(1)
		if !assert.True(t, m.Allow(), "at 40s the per-minute token the cancelled Wait had reserved must be free "+
			"again: a cancel gives back the token of every limiter") {
			return
		}

		h.Advance(time.Second) // 41s: the per-second limit is full, the per-minute one empty until 60s
		w = katatest.StartErr(h, m.Wait, katatest.Timeout(10*time.Second))
		if !w.Returns("the per-minute token is due in 19s, the deadline in 10s: a combined Wait must fail at once " +
			"with ErrWouldExceedDeadline, not sleep into the deadline") {
			return
		}
		if err, ok := w.Finish("Wait"); !ok || !testIsDeadline(h, err, "a deadline before the latest token") {
			return
		}
		assert.True(t, perSecond.Allow(), "a combined Wait that failed on its deadline must take nothing: the "+
			"per-second token must still be there")

		// The latest token may be any limiter's: here the one made first and
		// passed first.
		slow, fast := New(h.Clk, 1, 1), New(h.Clk, 10, 10)
		m = Combine(slow, fast)
		require.True(t, m.Allow(), "precondition: two new limiters have a token each")
		w = katatest.StartErr(h, m.Wait)
		if testBroken(h, w) {
			return
		}
		testWakesAt(h, w, h.Elapsed()+time.Second, "Combine(slow, fast) with slow = New(clk, 1, 1) made first and "+
			"fast = New(clk, 10, 10): fast has a token now, slow one 1s later; a combined Wait returns when the "+
			"latest of them is due, whichever limiter it belongs to, not when the last one reserved is")
	})
}

// testFreezeClock is the mock clock, but the first call of Now after
// freeze waits until thaw: a limiter that reads the clock under its lock
// holds the lock meanwhile.
type testFreezeClock struct {
	*katatest.Clock
	mu   sync.Mutex
	gate chan struct{}
}

func (c *testFreezeClock) Now() time.Time {
	c.mu.Lock()
	g := c.gate
	c.gate = nil
	c.mu.Unlock()
	if g != nil {
		<-g
	}
	return c.Clock.Now()
}

func (c *testFreezeClock) freeze() (thaw func()) {
	g := make(chan struct{})
	c.mu.Lock()
	c.gate = g
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.gate == g {
			c.gate = nil
		}
		c.mu.Unlock()
		close(g)
	}
}

// testHoldsWhileWaiting reports whether m.Allow, waiting for a (held by a
// call of a.Allow frozen in clk.Now), already holds b: whether a call of
// b.Allow then waits too, though it did not before m.Allow began, while
// a Multi over two other limiters does not (Multis that all take one
// lock first cannot hold a limiter each).
func testHoldsWhileWaiting(h *katatest.H, clk *testFreezeClock, m *Multi, a, b *Limiter) (holds, ok bool) {
	allow := func(l interface{ Allow() bool }) *katatest.Call[bool] {
		return katatest.Go(h, func() (bool, error) { return l.Allow(), nil })
	}
	thaw := clk.freeze()
	calls := []*katatest.Call[bool]{allow(a)}
	h.Settle()
	if probe := allow(b); h.Settle() != nil || !probe.Returned() {
		calls = append(calls, probe) // b waits on a's holder itself (one lock for all): nothing to learn
	} else {
		calls = append(calls, allow(m))
		h.Settle()
		probe = allow(b)
		h.Settle()
		holds = !probe.Returned()
		calls = append(calls, probe)
		if holds {
			// Holding b while waiting for a deadlocks with a Multi that
			// takes them the other way round, unless every Multi call
			// first takes one lock of its own: then no two Multis ever
			// hold a limiter each, and a Multi over two other limiters
			// waits too.
			other := allow(Combine(New(h.Clk, 10, 100), New(h.Clk, 10, 100)))
			h.Settle()
			holds = other.Returned()
			calls = append(calls, other)
		}
	}
	thaw()
	if stuck := h.Settle(); stuck != nil {
		h.T.Errorf("Allow calls on two limiters and a Multi over both stayed stuck on a mutex after the call "+
			"that held one of the limiters had returned: a lock is never unlocked. Stuck:\n\t%s", strings.Join(stuck, "\n\t"))
		return false, false
	}
	for _, c := range calls {
		if !c.Returns("an Allow call on two limiters or a Multi over both never returned, though no call held a lock") {
			return false, false
		}
	}
	return holds, true
}

func TestB1_MultisSharingLimitersLockThemInOneOrder(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		clk := &testFreezeClock{Clock: h.Clk}
		x, y := New(clk, 10, 100), New(clk, 10, 100)
		multis := []struct {
			name string
			m    *Multi
		}{{"Combine(x, y)", Combine(x, y)}, {"Combine(y, x)", Combine(y, x)}}
		var xFirst, yFirst string // a Multi that holds x while it waits for y, and one that holds y waiting for x
		for _, mm := range multis {
			holds, ok := testHoldsWhileWaiting(h, clk, mm.m, y, x)
			if !ok {
				return
			}
			if holds && xFirst == "" {
				xFirst = mm.name
			}
			if holds, ok = testHoldsWhileWaiting(h, clk, mm.m, x, y); !ok {
				return
			}
			if holds && yFirst == "" {
				yFirst = mm.name
			}
		}
		if xFirst != "" && yFirst != "" {
			t.Errorf("%s.Allow locked x and then waited for y, while %s.Allow locked y and then waited for x: "+
				"called at once from two goroutines, each gets one mutex and waits forever for the other, and "+
				"every later call on x or y hangs. Lock the limiters of every Multi in one order, whatever the "+
				"order passed to Combine (sort them in Combine, for example by a number New gives each limiter)",
				xFirst, yFirst)
		}
	})
}

func TestB2_EveryKeyHasItsOwnBucket(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		k := NewKeyed(h.Clk, 1, 2, time.Minute)
		assert.True(t, k.Allow("alice"), "alice's first call: her bucket starts full")
		assert.True(t, k.Allow("alice"), "alice's second call: burst 2")
		assert.False(t, k.Allow("alice"), "alice's third call: her bucket is empty")
		if !h.StandsStill(10*time.Second, `Allow("alice") succeeded`, func() bool { return k.Allow("alice") }) {
			return
		}
		assert.True(t, k.Allow("bob"), "bob has a bucket of his own: alice emptying hers must not limit him")
		assert.Equal(t, 2, k.Len(), "two keys in use")

		w := katatest.StartErr(h, func(ctx context.Context) error { return k.Wait(ctx, "alice") })
		if testBroken(h, w) {
			return
		}
		testWakesAt(h, w, time.Second, "alice's bucket emptied at 0 at 1 per second")
	})
}

func TestB2_ForgetsKeysThatAreFullAndIdle(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		k := NewKeyed(h.Clk, 10, 1, time.Minute)
		require.True(t, k.Allow("erin"), "precondition: a new key has a token")
		h.Advance(time.Minute - 1)
		assert.Equal(t, 1, k.Len(), "erin's bucket is full again, but her key was used 1ns less than idle "+
			"(1 minute) ago: keep it")
		h.Advance(1)
		assert.Equal(t, 0, k.Len(), "erin's bucket has been full since 100ms and nobody used her key for the "+
			"idle minute: forget it, or memory grows with every client ever seen")

		slow := NewKeyed(h.Clk, 0.01, 1, time.Minute) // a token every 100s
		start := h.Elapsed()
		require.True(t, slow.Allow("carol"), "precondition: a new key has a token")
		h.Advance(time.Minute)
		if slow.Len() != 1 {
			t.Errorf("carol's key was forgotten after the idle minute although her bucket is empty until 100s: " +
				"forget only full buckets, or a client gets a fresh burst by pausing for the idle time")
			return
		}
		h.Advance(start + 100*time.Second - 1 - h.Elapsed())
		assert.Equal(t, 1, slow.Len(), "carol's key has been idle for more than a minute, but her bucket fills "+
			"only 100s after her call: keep it until then")
		h.Advance(1)
		assert.Equal(t, 0, slow.Len(), "at exactly 100s carol's bucket is full again (her token came back at that instant: "+
			"full means anchor + ⌈n·1e9/r⌉ ≤ now) and her key idle for more than a minute: forget it")

		// Idle counts from the last use, not the first: a key in steady use
		// is never forgotten.
		steady := NewKeyed(h.Clk, 10, 1, time.Minute)
		for i := range 12 {
			if !steady.Allow("dave") {
				t.Errorf("dave calls Allow every 10s with 10 tokens/s: call %d found no token", i+1)
				return
			}
			h.Advance(10 * time.Second)
			if steady.Len() != 1 {
				t.Errorf("dave used his key every 10s, the last time 10s ago, and after %v his key was forgotten: a "+
					"key is forgotten only when no Allow or Wait has used it for idle (1 minute) — record the time "+
					"of every use, not only the first", time.Duration(i+1)*10*time.Second)
				return
			}
		}

		// Every call forgets every such key, however many there are: a
		// crowd of clients that goes quiet is gone at the next call.
		crowd := NewKeyed(h.Clk, 10, 1, time.Minute)
		const clients, busy = 1000, 7
		for i := range clients {
			require.True(t, crowd.Allow(fmt.Sprintf("client-%d", i)), "precondition: a new key has a token")
		}
		h.Advance(30 * time.Second)
		for i := range busy {
			require.True(t, crowd.Allow(fmt.Sprintf("client-%d", i*100)), "precondition: a full bucket has a token")
		}
		h.Advance(30 * time.Second)
		if n := crowd.Len(); n != busy {
			t.Errorf("%d clients each used their key once; 30s later %d of them used it again; 30s after that Len() "+
				"returned %d; want %d: the other %d keys are full and idle for the whole minute, and every call of "+
				"Allow, Wait and Len first forgets every such key, not a few of them per call", clients, busy, n, busy,
				clients-busy)
		}
	})
}

func TestB1_CombinedWaitWithACtxAlreadyDoneTakesNothing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		perSecond, perMinute := New(h.Clk, 10, 1), New(h.Clk, 100.0/60, 1)
		m := Combine(perSecond, perMinute)
		c := katatest.StartErr(h, m.Wait, katatest.Cancelled())
		if !c.Returns("Combine(…).Wait with a ctx already done was still waiting with the mock clock stopped: " +
			"return ctx.Err() at once") {
			return
		}
		err := c.Err()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Combine(…).Wait with a ctx already cancelled, every limiter with a token to spare, returned %v: "+
				"a ctx already done gets ctx.Err() at once and takes nothing — look at ctx before reserving, as "+
				"Limiter.Wait does", err)
			return
		}
		assert.True(t, perSecond.Allow() && perMinute.Allow(), "Combine(…).Wait with a ctx already done must take "+
			"nothing: each limiter's one token must still be there")
	})
}

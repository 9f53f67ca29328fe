package blockingloop

// R4 when callers give up: a lookup whose callers have all left still runs
// (R3: it goes on, and its value is stored), so it still takes one of the
// MaxInFlight slots until it reports back. Misses that come meanwhile queue
// behind it, and start oldest first as the lookups end, not as their
// callers leave.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testLeftSlot is one scenario: MaxInFlight lookups running, the callers
// of some of them leave, more misses come, then the lookups whose callers
// left return one by one.
type testLeftSlot struct {
	maxInFlight int
	left        []int // the running keys (0-based) whose caller leaves, in this order
	queued      int   // misses for new keys after the callers left
	release     []int // the order the left lookups return in
}

func (s testLeftSlot) limit() int { return max(s.maxInFlight, 1) }

func testLeftKey(i int) string   { return fmt.Sprintf("R%d", i+1) }
func testQueuedKey(j int) string { return fmt.Sprintf("Q%d", j+1) }

func (s testLeftSlot) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d; every lookup waits until the test lets it return", s.maxInFlight)
	fmt.Fprintf(&b, "\n  Get %d distinct keys (R1..R%d), one caller each: their lookups run", s.limit(), s.limit())
	for _, i := range s.left {
		fmt.Fprintf(&b, "\n  the caller of %s gives up (its ctx is cancelled)", testLeftKey(i))
	}
	fmt.Fprintf(&b, "\n  Get %d more distinct keys (Q1..Q%d), one after the other", s.queued, s.queued)
	for _, i := range s.release {
		fmt.Fprintf(&b, "\n  the lookup of %s returns its value", testLeftKey(i))
	}
	return b.String()
}

func testDrawLeftSlot(r *rapid.T) testLeftSlot {
	s := testLeftSlot{maxInFlight: rapid.IntRange(0, 3).Draw(r, "MaxInFlight")}
	all := make([]int, s.limit())
	for i := range all {
		all[i] = i
	}
	order := rapid.Permutation(all).Draw(r, "who leaves")
	s.left = order[:rapid.IntRange(1, s.limit()).Draw(r, "callers who leave")]
	s.queued = rapid.IntRange(1, 3).Draw(r, "misses after")
	s.release = rapid.Permutation(s.left).Draw(r, "order the left lookups return in")
	return s
}

func (s testLeftSlot) play(h *katatest.H) {
	be := testNewBackend()
	h.Own(be.releaseAll)
	gates := make([]*testGate, s.limit())
	for i := range gates {
		gates[i] = be.hold(testLeftKey(i))
	}
	for j := range s.queued {
		be.hold(testQueuedKey(j))
	}
	cache := New(h.Clk, be.lookup, Config{MaxInFlight: s.maxInFlight})
	run := katatest.StartErr(h, cache.Run)
	get := func(key string) *katatest.Call[string] {
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, key) })
		synctest.Wait() // in order: the queue is FIFO
		return c
	}
	var running []*katatest.Call[string]
	for i := range s.limit() {
		running = append(running, get(testLeftKey(i)))
		if be.Calls(testLeftKey(i)) != 1 {
			return // below the limit a miss starts its lookup: R4's other tests say so
		}
	}
	for _, i := range s.left {
		running[i].Cancel()
		if !running[i].Returns("the caller of %s gave up, and Get kept waiting", testLeftKey(i)) {
			return
		}
	}
	for _, i := range s.left {
		if gates[i].Cancelled() > 0 {
			return // the caller's leave ended its lookup: R3's tests name that mistake
		}
	}
	for j := range s.queued {
		get(testQueuedKey(j))
	}
	for j := range s.queued {
		if n := be.Calls(testQueuedKey(j)); n != 0 {
			h.Errorf("the miss for %s started a lookup while %d lookup(s) already ran, MaxInFlight %d: a lookup "+
				"whose callers all left still runs (it goes on, and its value is stored), so it keeps its slot "+
				"until it reports back; freeing the slot when its last caller leaves lets more than MaxInFlight "+
				"lookups run at once", testQueuedKey(j), s.limit(), s.maxInFlight)
			return
		}
	}
	stats := katatest.Start(h, cache.Stats)
	if !stats.Returns("Stats kept waiting while lookups ran") {
		return
	}
	st, err := stats.Result()
	if err != nil {
		h.Errorf("Stats returned %v while the cache ran", err)
		return
	}
	if st.InFlight != s.limit() || st.Queued != s.queued {
		h.Errorf("Stats said InFlight %d, Queued %d, with %d lookup(s) running (the callers of %d of them gone) "+
			"and %d miss(es) waiting for a slot; want InFlight %d, Queued %d: a lookup whose callers all left "+
			"still runs and keeps its slot until it reports back", st.InFlight, st.Queued, s.limit(), len(s.left),
			s.queued, s.limit(), s.queued)
		return
	}
	for k, i := range s.release {
		gates[i].Release()
		synctest.Wait()
		probe := katatest.Start(h, cache.Stats)
		if synctest.Wait(); !probe.Returned() {
			probe.Cancel()
			return // answering the caller who left blocked the loop: R3's tests name that mistake
		}
		for j := range s.queued {
			want := 0
			if j <= k {
				want = 1
			}
			if n := be.Calls(testQueuedKey(j)); n != want {
				h.Errorf("once %d lookup(s) whose callers had left returned (the last: %s), the queued miss for "+
					"%s had started %d lookup(s); want %d: each lookup that reports back frees its slot for the "+
					"oldest queued miss, one slot per lookup, when it returns and not when its callers leave",
					k+1, testLeftKey(i), testQueuedKey(j), n, want)
				return
			}
		}
	}
	// The lookups end first, while Run still receives: what Run does with
	// a lookup that returns after its ctx ended is R5's business.
	be.releaseAll()
	h.Settle()
	run.Cancel()
	if !run.Returns("Run did not return once its ctx had ended and every lookup had returned") {
		return
	}
	run.Finish("Run")
}

func TestR4_ExploreALookupWhoseCallersLeftKeepsItsSlot(t *testing.T) {
	play := func(h *katatest.H, s testLeftSlot) { s.play(h) }
	katatest.Replay(t, []testLeftSlot{{maxInFlight: 1, left: []int{0}, queued: 2, release: []int{0}}}, play)
	katatest.Explore(t, 10, testDrawLeftSlot, play)
}

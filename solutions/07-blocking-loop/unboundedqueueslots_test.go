package blockingloop

// R4, explored at the one moment a slot can be handed out wrong: a running
// lookup has returned, but the loop, busy inside OnTick, has not taken its
// report yet, and a new miss arrives meanwhile. When the loop is back at
// its select, the report and the Get are ready together, and it may take
// either first. Either way the slot frees only when the loop takes the
// report, and goes to the oldest queued miss; the new miss queues behind
// the others, and never more than MaxInFlight lookups run. A select picks
// among ready cases at random, so each scenario plays several rounds.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testSlotRace is a full cache with misses queued, played in rounds.
type testSlotRace struct {
	maxInFlight int
	queued      int   // misses queued behind the running lookups before the first round
	releases    []int // each round: which running lookup (oldest first) returns while the loop is in OnTick
}

func (s testSlotRace) String() string {
	var b strings.Builder
	limit := max(s.maxInFlight, 1)
	fmt.Fprintf(&b, "MaxInFlight %d, Tick %v; every lookup is held until the test lets it answer", s.maxInFlight, testTick)
	fmt.Fprintf(&b, "\n  Get %s, one after the other (the first %d run, the others queue)",
		testSlotKeys(0, limit+s.queued), limit)
	for r, pick := range s.releases {
		fmt.Fprintf(&b, "\n  round %d: the clock moves %v and OnTick takes a while (the clock stands still); "+
			"meanwhile running lookup %d (oldest first) answers and Get %s, a new miss, is called; then OnTick "+
			"returns", r+1, testTick, pick, testSlotKey(limit+s.queued+r))
	}
	return b.String()
}

func testSlotKey(i int) string { return fmt.Sprintf("K%02d", i+1) }

func testSlotKeys(from, to int) string {
	keys := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		keys = append(keys, testSlotKey(i))
	}
	return strings.Join(keys, ", ")
}

func testDrawSlotRace(r *rapid.T) testSlotRace {
	s := testSlotRace{maxInFlight: rapid.IntRange(0, 3).Draw(r, "MaxInFlight")}
	s.queued = rapid.IntRange(1, 3).Draw(r, "queued")
	s.releases = rapid.SliceOfN(rapid.IntRange(0, 3), 8, 8).Draw(r, "releases")
	return s
}

// testSlotRaceFixed: two slots, one miss queued, the newest running lookup
// answering first, then the oldest.
var testSlotRaceFixed = testSlotRace{maxInFlight: 2, queued: 1, releases: []int{1, 0, 1, 0, 0, 1, 1, 0, 0, 1}}

func (s testSlotRace) play(h *katatest.H) {
	be := testNewBackend()
	h.Own(be.releaseAll)
	limit := max(s.maxInFlight, 1)
	total := limit + s.queued + len(s.releases)
	gates := make([]*testGate, total)
	for i := range gates {
		gates[i] = be.hold(testSlotKey(i))
	}
	var mu sync.Mutex
	var inTick, held *katatest.Gate // while inTick is set, OnTick waits in it; held is the last one
	onTick := func(Stats) {
		mu.Lock()
		g := inTick
		mu.Unlock()
		if g != nil {
			_ = g.Hold(context.Background()) // an OnTick that takes a while, the clock standing still
		}
	}
	cache := New(h.Clk, be.lookup, Config{MaxInFlight: s.maxInFlight, Tick: testTick, OnTick: onTick})
	run := katatest.StartErr(h, cache.Run)
	gets := make([]*katatest.Call[string], total)
	get := func(i int) {
		gets[i] = katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, testSlotKey(i)) })
	}
	defer func() { // stop everything, whatever happened
		mu.Lock()
		inTick = nil
		mu.Unlock()
		if held != nil {
			held.Release()
		}
		// The lookups end first, while Run still receives: what Run does
		// with a lookup that returns after its ctx ended is R5's business.
		be.releaseAll()
		h.Settle()
		run.Cancel()
	}()
	var running, queue []int
	for i := range limit + s.queued {
		get(i)
		synctest.Wait() // in order: the queue is FIFO
		if i < limit {
			running = append(running, i)
		} else {
			queue = append(queue, i)
		}
	}
	for i := range limit + s.queued {
		if n := be.Calls(testSlotKey(i)); i < limit && n != 1 || i >= limit && n != 0 {
			h.Errorf("precondition: with MaxInFlight %d, the first %d misses should have a lookup running and the "+
				"%d after them wait in the queue; the lookup of %q started %d times (R4's other tests say more)",
				s.maxInFlight, limit, s.queued, testSlotKey(i), n)
			return
		}
	}
	for r, pick := range s.releases {
		round := fmt.Sprintf("in round %d", r+1)
		hold := h.Gate()
		held = hold
		mu.Lock()
		inTick = hold
		mu.Unlock()
		h.Advance(testTick)
		if hold.Waiting() != 1 {
			return // the loop did not call OnTick on the clock's Tick: R2 says more
		}
		j := pick % len(running)
		done := running[j]
		running = append(running[:j:j], running[j+1:]...)
		gates[done].Release()
		synctest.Wait() // the lookup has returned; its report waits for the loop
		fresh := limit + s.queued + r
		get(fresh)
		synctest.Wait() // the new miss waits for the loop too
		mu.Lock()
		inTick = nil
		mu.Unlock()
		hold.Release()
		synctest.Wait()
		oldest := queue[0]
		if be.Calls(testSlotKey(fresh)) > 0 {
			what := fmt.Sprintf("while %s, queued before it, still waited", testSlotKey(oldest))
			if be.Calls(testSlotKey(oldest)) > 0 {
				what = fmt.Sprintf("besides %s, the oldest queued miss, so %d lookups ran with MaxInFlight %d",
					testSlotKey(oldest), limit+1, s.maxInFlight)
			}
			h.Errorf("Get(%q), a new miss, started its lookup %s (%s: the lookup of %q had returned, but the loop, "+
				"busy in OnTick, had not taken its report yet, when the new miss arrived). A slot frees only when "+
				"the loop takes a lookup's report, and goes to the oldest queued miss: count the running lookups in "+
				"the loop (up when it starts one, down when it takes a report), never in the lookup goroutine, and "+
				"queue a new miss behind the older ones", testSlotKey(fresh), what, round, testSlotKey(done))
			return
		}
		if be.Calls(testSlotKey(oldest)) == 0 {
			h.Errorf("the lookup of %q returned and the loop took its report %s, but %s, the oldest queued miss, did "+
				"not start: when a running lookup reports back, its slot goes to the oldest queued miss",
				testSlotKey(done), round, testSlotKey(oldest))
			return
		}
		for _, q := range queue[1:] {
			if be.Calls(testSlotKey(q)) > 0 {
				h.Errorf("one lookup returned %s, and both %s and %s, queued, started: a report frees one slot, "+
					"for one queued miss", round, testSlotKey(oldest), testSlotKey(q))
				return
			}
		}
		if n := be.running.Max(); n > limit {
			h.Errorf("%d lookups ran at once with MaxInFlight %d %s: a slot frees only when the loop takes a "+
				"lookup's report", n, s.maxInFlight, round)
			return
		}
		if !gets[done].Returns("Get(%q) did not return once its lookup had answered and OnTick had returned",
			testSlotKey(done)) {
			return
		}
		if v, err := gets[done].Result(); err != nil || v != "v:"+testSlotKey(done) {
			h.Errorf("Get(%q) returned (%q, %v) once its lookup had answered; want %q", testSlotKey(done), v, err,
				"v:"+testSlotKey(done))
			return
		}
		running = append(running, oldest)
		queue = append(queue[1:], fresh)
	}
}

func TestR4_ExploreANewMissNeverTakesTheSlotOfAQueuedOne(t *testing.T) {
	play := func(h *katatest.H, s testSlotRace) { s.play(h) }
	katatest.Replay(t, []testSlotRace{testSlotRaceFixed}, play)
	katatest.Explore(t, 4, testDrawSlotRace, play)
}

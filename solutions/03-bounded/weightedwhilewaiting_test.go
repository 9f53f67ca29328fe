package bounded

// B1 and R6 together: ForEachWeighted waits for room "exactly as for
// ForEach", and ForEach's goroutines grow with limit, not with the number
// of items, never one goroutine per item waiting for a slot. One or two
// ForEachWeighted calls run at once, each with a small capacity and many
// items; every call waits until the test lets it return. Round after
// round, the test lets just enough calls of one caller return (picked at
// random) for the item at the head of its line to fit, so that item starts
// and the next one waits for room again: each round is one more item that
// waited. After every settled round it counts the goroutines in the bubble,
// while the calls are held: at most the capacities plus a constant few per
// caller, however many items have waited. A count after the run returns
// would miss goroutines that live until the run ends.

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testWGCaller struct {
	capacity int
	weights  []int // as weight(item) returns them
}

// counted is the weight item i takes while its call runs.
func (cl testWGCaller) counted(i int) int { return min(max(cl.weights[i], 1), cl.capacity) }

type testWGScenario struct {
	callers []testWGCaller
	rounds  []int  // per round: the caller whose calls make room for its next item
	seed    uint64 // picks which calls in flight return, in which order
}

func (s testWGScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d ForEachWeighted call(s) at once, every call waiting until the test lets it return:", len(s.callers))
	for c, cl := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d: capacity %d, %d items, weights %v", c+1, cl.capacity, len(cl.weights), cl.weights)
	}
	var who []string
	for _, c := range s.rounds {
		who = append(who, fmt.Sprint(c+1))
	}
	fmt.Fprintf(&b, "\n  then %d rounds, one for each caller in turn in the order %s: in each, calls in flight of that "+
		"caller (picked at random, seed %d) return one after the other until its next item fits, and the run settles"+
		"\n  then every call returns", len(s.rounds), strings.Join(who, ", "), s.seed)
	return b.String()
}

func testDrawWG(r *rapid.T) testWGScenario {
	var s testWGScenario
	for c := range rapid.IntRange(1, 2).Draw(r, "callers") {
		cl := testWGCaller{capacity: rapid.IntRange(1, 4).Draw(r, fmt.Sprintf("capacity %d", c))}
		weights := []int{-1, 0, 1, 1, 1, 2, cl.capacity - 1, cl.capacity, cl.capacity + 3, math.MaxInt}
		// capacity+9 rounds, each starting at most capacity items: enough
		// items that each round ends with one waiting for room.
		least := cl.capacity*(cl.capacity+10) + 1
		for i := range rapid.IntRange(least, least+8).Draw(r, fmt.Sprintf("items %d", c)) {
			cl.weights = append(cl.weights, rapid.SampledFrom(weights).Draw(r, fmt.Sprintf("weight %d.%d", c, i)))
		}
		s.callers = append(s.callers, cl)
		for range cl.capacity + 9 {
			s.rounds = append(s.rounds, c)
		}
	}
	s.seed = rapid.Uint64().Draw(r, "seed")
	mrand.New(mrand.NewPCG(s.seed, 0x3a17)).Shuffle(len(s.rounds), func(i, j int) {
		s.rounds[i], s.rounds[j] = s.rounds[j], s.rounds[i]
	})
	return s
}

// testWGRun is one ForEachWeighted call of a scenario and what its calls did.
type testWGRun struct {
	testGates
	cl testWGCaller
	c  katatest.ErrCall

	mu       sync.Mutex
	started  int          // calls made so far (items start in input order: B1's other tests check it)
	inFlight map[int]bool // items whose call runs
}

func (x *testWGRun) fn(ctx context.Context, i int) error {
	x.mu.Lock()
	x.started++
	x.inFlight[i] = true
	x.mu.Unlock()
	select {
	case <-x.gates[i]:
	case <-ctx.Done():
	}
	x.mu.Lock()
	delete(x.inFlight, i)
	x.mu.Unlock()
	return nil
}

// makeRoom lets calls in flight return, in an order pick draws, until the
// next item fits next to the calls that still run.
func (x *testWGRun) makeRoom(pick *mrand.Rand) {
	x.mu.Lock()
	next := x.started
	var flight []int
	load := 0
	for i := range x.inFlight {
		if !x.released[i] {
			flight = append(flight, i)
			load += x.cl.counted(i)
		}
	}
	x.mu.Unlock()
	if next >= len(x.cl.weights) {
		return
	}
	// map order is random: sort, then shuffle by the scenario's seed
	for i := 1; i < len(flight); i++ {
		for j := i; j > 0 && flight[j] < flight[j-1]; j-- {
			flight[j], flight[j-1] = flight[j-1], flight[j]
		}
	}
	pick.Shuffle(len(flight), func(i, j int) { flight[i], flight[j] = flight[j], flight[i] })
	for _, i := range flight {
		if x.cl.capacity-load >= x.cl.counted(next) {
			return
		}
		x.release(i)
		load -= x.cl.counted(i)
	}
}

func testWGPlay(h *katatest.H, s testWGScenario) {
	runs := make([]*testWGRun, len(s.callers))
	bound := 0
	for c, cl := range s.callers {
		runs[c] = &testWGRun{testGates: testNewGates(len(cl.weights)), cl: cl, inFlight: map[int]bool{}}
		h.Own(runs[c].releaseAll)
		bound += cl.capacity + testLSlack
	}
	before := h.Goroutines()
	for _, x := range runs {
		x.c = katatest.StartErr(h, func(ctx context.Context) error {
			return ForEachWeighted(ctx, testItems(len(x.cl.weights)), x.cl.capacity,
				func(i int) int { return x.cl.weights[i] }, x.fn)
		})
	}
	stopAll := func() {
		for _, x := range runs {
			x.c.Stop()
		}
	}
	var caps []int
	for _, cl := range s.callers {
		caps = append(caps, cl.capacity)
	}
	pick := mrand.New(mrand.NewPCG(s.seed, 0x5ca1e))
	for round := 0; round <= len(s.rounds); round++ {
		testSettle(h)
		running, done := 0, false
		for _, x := range runs {
			x.mu.Lock()
			running += len(x.inFlight)
			x.mu.Unlock()
			done = done || x.c.Returned()
		}
		if done {
			break // a return with calls held is for B1's and R6's other tests to judge
		}
		if extra := h.Goroutines() - before; extra > bound {
			h.Errorf("B1: ForEachWeighted waits for room exactly as ForEach waits for a slot, whose goroutines grow "+
				"with limit, not with the number of items (R6), but with %d call(s) at once (capacities %v) %d "+
				"goroutines were alive after the calls had made room %d times for an item that waited, while %d calls ran; want at most "+
				"each capacity plus %d: something was left behind by each wait for room (a goroutine started to "+
				"watch ctx.Done() while the item waited, and not stopped when the room came), never one goroutine "+
				"per item waiting: wait in a select on ctx.Done() and a wake-up, or stop what you started for the "+
				"wait (context.AfterFunc's stop) as soon as the item fits", len(runs), caps, extra, round, running,
				testLSlack)
			stopAll()
			return
		}
		if round < len(s.rounds) {
			runs[s.rounds[round]].makeRoom(pick)
		}
	}
	for _, x := range runs {
		x.releaseAll()
	}
	for c, x := range runs {
		if !testReturns(h, x.c, "B1: caller %d (capacity %d): every call returned, but ForEachWeighted did not return",
			c+1, x.cl.capacity) {
			stopAll()
			return
		}
	}
	for c, x := range runs {
		err, ok := testResult(x.c)
		if !ok {
			return
		}
		if err != nil {
			h.Errorf("B1: caller %d (capacity %d): every call succeeded, so ForEachWeighted returns nil, but it "+
				"returned %s", c+1, x.cl.capacity, testXDescribe(err))
			return
		}
	}
}

func TestB1_ExploreGoroutinesStayWithinCapacityWhileItemsWaitForRoom(t *testing.T) {
	katatest.Explore(t, 3, testDrawWG, testWGPlay)
}

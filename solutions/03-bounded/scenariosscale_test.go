package bounded

// R1 and R6 at scale: limits and item counts well above the sizes of the
// other tests, a thousand and more, and none of them a power of two. The
// limit is the caller's number: nothing may cap the calls or the slots at
// a fixed number (a pool of at most 1000 workers, a channel of at most
// 1024 slots), convert it into another unit, or make goroutines beyond it.
// Each scenario is one ForEach of 1,025 to 1,100 items; the test lets
// hundreds of calls in flight return at once, picked at random (so in any
// order), a few times, then all of them, and checks after every settled
// step what the README says.

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testLSlack is the constant few goroutines ForEach may run beside the
// calls (its loop, a feeder, a waiter).
const testLSlack = 10

type testLScenario struct {
	limit, n int
	rounds   []int  // how many of the calls in flight return at once, one round after the other
	seed     uint64 // picks which calls return in each round
}

func (s testLScenario) String() string {
	var rounds []string
	for _, k := range s.rounds {
		rounds = append(rounds, fmt.Sprint(k))
	}
	return fmt.Sprintf("ForEach with limit %d and %d items; every call waits until the test lets it return; "+
		"then, one round after the other, %s of the calls in flight (picked at random, seed %d) return at once; "+
		"then every call returns as it starts", s.limit, s.n, strings.Join(rounds, ", then "), s.seed)
}

// testDrawL draws limits and items above a thousand: for R1 both above
// 1,024, so that min(limit, items) is too; for R6 a limit at least 40
// below the items, so that items wait for a slot.
func testDrawL(req string) func(*rapid.T) testLScenario {
	return func(r *rapid.T) testLScenario {
		var s testLScenario
		if req == "R1" {
			s.limit = rapid.IntRange(1025, 1100).Draw(r, "limit")
			s.n = rapid.IntRange(1025, 1100).Draw(r, "items")
		} else {
			s.limit = rapid.IntRange(1001, 1060).Draw(r, "limit")
			if s.limit == 1024 {
				s.limit = 1023
			}
			s.n = rapid.IntRange(s.limit+40, 1100).Draw(r, "items")
		}
		for k := range rapid.IntRange(1, 2).Draw(r, "rounds") {
			s.rounds = append(s.rounds, rapid.IntRange(1, 300).Draw(r, fmt.Sprintf("round %d", k)))
		}
		s.seed = rapid.Uint64().Draw(r, "seed")
		return s
	}
}

// testLRun is the ForEach of a scenario and what its calls did.
type testLRun struct {
	testGates
	peak katatest.Peak

	mu       sync.Mutex
	calls    []int
	running  map[int]bool
	returned int

	insideAtReturn int // calls running when ForEach returned
}

func (x *testLRun) fn(ctx context.Context, i int) error {
	x.mu.Lock()
	x.calls[i]++
	x.running[i] = true
	x.mu.Unlock()
	leave := x.peak.Enter()
	select {
	case <-x.gates[i]:
	case <-ctx.Done():
	}
	x.mu.Lock()
	delete(x.running, i)
	x.returned++
	x.mu.Unlock()
	leave()
	return nil
}

// inFlight lists the items whose call runs, in item order.
func (x *testLRun) inFlight() []int {
	x.mu.Lock()
	defer x.mu.Unlock()
	var r []int
	for i := range x.calls {
		if x.running[i] {
			r = append(r, i)
		}
	}
	return r
}

func testLPlay(h *katatest.H, s testLScenario, req string) {
	x := &testLRun{testGates: testNewGates(s.n), calls: make([]int, s.n), running: map[int]bool{}}
	h.Own(x.releaseAll)
	before := h.Goroutines()
	c := katatest.StartErr(h, func(ctx context.Context) error {
		err := ForEach(ctx, testItems(s.n), s.limit, x.fn)
		x.insideAtReturn = x.peak.Now() // read at once: no settle orders this after the calls
		return err
	})
	pick := mrand.New(mrand.NewPCG(s.seed, 0x5ca1e))
	for round := 0; round <= len(s.rounds); round++ {
		synctest.Wait()
		if c.Returned() && c.Panicked() {
			return
		}
		x.mu.Lock()
		running, returned := len(x.running), x.returned
		x.mu.Unlock()
		after := "once ForEach got going"
		if round > 0 {
			after = fmt.Sprintf("after %d calls had returned", returned)
		}
		switch req {
		case "R1":
			if p := x.peak.Max(); p > s.limit {
				h.Errorf("R1: at most limit calls run at once, but with limit %d and %d items %d calls ran at once "+
					"(%s): take a slot before each call, and count the slots in calls, one slot per call",
					s.limit, s.n, p, after)
				c.Stop()
				return
			}
			if want := min(s.limit, s.n-returned); running != want && !c.Returned() {
				h.Errorf("R1: min(limit, items left) calls run together, but with limit %d and %d items, %d calls "+
					"were running %s; want %d: nothing may cap the calls at a fixed number (a pool of at most 1000 "+
					"workers, a channel of at most 1024 slots, a count in a type too small for the limit) or "+
					"convert the limit into another unit: the limit the caller gives is the number of calls that "+
					"run together, however large", s.limit, s.n, running, after, want)
				c.Stop()
				return
			}
		case "R6":
			if extra := h.Goroutines() - before; running > 0 && extra > s.limit+testLSlack {
				h.Errorf("R6: at most limit goroutines run calls, plus a constant few, but with limit %d and %d items "+
					"%d goroutines were alive %s, while %d calls ran: never more goroutines than the limit — take a "+
					"slot before you start a goroutine, or run min(limit, len(items)) workers, not more workers than "+
					"slots and not one goroutine per item", s.limit, s.n, extra, after, running)
				c.Stop()
				return
			}
			if c.Returned() && running > 0 {
				h.Errorf("R6: ForEach returns only after every call it started has returned, but with limit %d and "+
					"%d items it returned %s while %d calls still ran: wait for every call you started",
					s.limit, s.n, after, running)
				c.Stop()
				return
			}
		}
		if round == len(s.rounds) {
			break
		}
		flight := x.inFlight()
		pick.Shuffle(len(flight), func(i, j int) { flight[i], flight[j] = flight[j], flight[i] })
		for _, i := range flight[:min(s.rounds[round], len(flight))] {
			x.release(i)
		}
	}
	x.releaseAll()
	if !c.Returns("with limit %d and %d items, every call returned, but ForEach did not", s.limit, s.n) {
		return
	}
	err, ok := testResult(c)
	if !ok {
		return
	}
	switch req {
	case "R1":
		if err != nil {
			h.Errorf("R1: with limit %d and %d items every call succeeded, so ForEach returns nil, but it returned %s",
				s.limit, s.n, testXDescribe(err))
		}
	case "R6":
		if x.insideAtReturn > 0 {
			h.Errorf("R6: ForEach returns only after every call it started has returned, but with limit %d and %d "+
				"items %d calls were still running when it returned: wait for every call you started",
				s.limit, s.n, x.insideAtReturn)
		}
	}
	for i, k := range x.calls {
		if k != 1 && req == "R1" {
			h.Errorf("R1: with limit %d and %d items, fn was called %d time(s) for item %d; want once: every item "+
				"runs, in its turn", s.limit, s.n, k, i)
			return
		}
	}
}

func TestR1_ExploreLimitsAndItemsAboveAThousand(t *testing.T) {
	katatest.Explore(t, 3, testDrawL("R1"), func(h *katatest.H, s testLScenario) { testLPlay(h, s, "R1") })
}

func TestR6_ExploreGoroutinesStayWithinALimitAboveAThousand(t *testing.T) {
	katatest.Explore(t, 3, testDrawL("R6"), func(h *katatest.H, s testLScenario) { testLPlay(h, s, "R6") })
}

package bounded

// A call that fails at once, as every call does when the store rejects the
// credentials, fails while the loop is still busy, not while it waits, so
// the loop can meet the failure and the room it gave back both at its next
// look. The weighted loop is held where it calls weight for the next item,
// so that both are there every round.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// The weighted loop calls weight for the next item while the call before
// it fails at once: a weight can take a while (a HEAD request for the
// object's size). Each round holds weight for the item behind the failing
// one until everything else has settled, then lets it return: the room the
// failed call gave back and the failure are both there when the loop looks,
// so a loop that does not look at the run's ctx after it got room starts
// that item about every other round.

type testWeighCaller struct {
	capacity int
	weights  []int // the gated items, the one that fails at once, then the items behind it
	fails    int   // the index of the item that fails at once
}

type testWeighScenario struct {
	callers []testWeighCaller
	rounds  int
}

func (s testWeighScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d round(s), each with %d ForEachWeighted call(s) at once:", s.rounds, len(s.callers))
	for c, cl := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d: capacity %d, weights %v; items before %d wait until their ctx ends, item %d "+
			"fails at once (it fills the capacity: item %d does not fit while it runs), weight(item %d) returns only "+
			"once everything else has settled, items %d to %d must never start", c+1, cl.capacity, cl.weights,
			cl.fails, cl.fails, cl.fails+1, cl.fails+1, cl.fails+1, len(cl.weights)-1)
	}
	return b.String()
}

func testDrawWeigh(r *rapid.T) testWeighScenario {
	var s testWeighScenario
	for c := range rapid.IntRange(1, 3).Draw(r, "callers") {
		cl := testWeighCaller{capacity: rapid.IntRange(1, 5).Draw(r, fmt.Sprintf("capacity %d", c))}
		wf := rapid.IntRange(1, cl.capacity).Draw(r, fmt.Sprintf("failing weight %d", c))
		load := wf
		for k := range rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("gated %d", c)) {
			if load == cl.capacity {
				break
			}
			w := rapid.IntRange(1, cl.capacity-load).Draw(r, fmt.Sprintf("weight %d.%d", c, k))
			load += w
			cl.weights = append(cl.weights, w)
		}
		cl.fails = len(cl.weights)
		cl.weights = append(cl.weights, wf)
		// The next item does not fit while every item before it runs.
		cl.weights = append(cl.weights, rapid.IntRange(cl.capacity-load+1, cl.capacity+2).Draw(r, fmt.Sprintf("next %d", c)))
		for k := range rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("behind %d", c)) {
			cl.weights = append(cl.weights, rapid.IntRange(-1, cl.capacity+1).Draw(r, fmt.Sprintf("behind %d.%d", c, k)))
		}
		s.callers = append(s.callers, cl)
	}
	s.rounds = rapid.IntRange(5, 7).Draw(r, "rounds")
	return s
}

func TestB1_ExploreNothingStartsAfterACallThatFailsWhileTheNextIsWeighed(t *testing.T) {
	katatest.Explore(t, 5, testDrawWeigh, func(h *katatest.H, s testWeighScenario) {
		for r := range s.rounds {
			works := make([]*testWork, len(s.callers))
			holds := make([]chan struct{}, len(s.callers))
			var calls []katatest.ErrCall
			for c, cl := range s.callers {
				n := len(cl.weights)
				w := testNewWork(n)
				w.errs[cl.fails] = fmt.Errorf("thumb-%d: %w", cl.fails, &testXStatus{403})
				w.open(cl.fails)
				hold := make(chan struct{})
				h.Own(func() {
					select {
					case <-hold:
					default:
						close(hold)
					}
				})
				weight := func(i int) int {
					if i == cl.fails+1 {
						<-hold
					}
					return cl.weights[i]
				}
				works[c], holds[c] = w, hold
				calls = append(calls, katatest.StartErr(h, func(ctx context.Context) error {
					return ForEachWeighted(ctx, testItems(n), cl.capacity, weight, w.call)
				}))
			}
			testSettle(h)
			for _, hold := range holds {
				close(hold)
			}
			for c, x := range calls {
				if x.Broken() || !testReturns(h, x, "B1: caller %d (capacity %d, weights %v): item %d failed at once "+
					"and the calls in flight return as soon as their ctx ends, but ForEachWeighted did not return: "+
					"cancel the calls' ctx on the first error", c+1, s.callers[c].capacity, s.callers[c].weights,
					s.callers[c].fails) {
					katatest.Unwind(h, calls...)
					return
				}
			}
			for c, cl := range s.callers {
				var late []int
				for i, k := range works[c].callsOf() {
					if i > cl.fails && k > 0 {
						late = append(late, i)
					}
				}
				if len(late) > 0 {
					h.Errorf("B1: after a call fails, no new call starts, but in round %d caller %d (capacity %d, "+
						"weights %v) started item(s) %v after item %d failed at once: item %d did not fit until the "+
						"failed call gave its room back, and it gives it back only after its failure was recorded and "+
						"the calls' ctx cancelled. After you get room, look at the ctx you cancel on the first error "+
						"(the one the calls get), not only at the caller's ctx; %s", r+1, c+1, cl.capacity,
						cl.weights, late, cl.fails, cl.fails+1, testRandomHint)
					return
				}
			}
			for _, x := range calls {
				if _, ok := testResult(x); !ok {
					return
				}
			}
		}
	})
}

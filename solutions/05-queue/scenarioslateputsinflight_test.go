package queue

// Explored late puts with puts still in flight (R5, and the same rule for
// RunBatches and RunDrainTimeout): before produce returns it leaves
// goroutines putting, which wait on the full queue while every consumer is
// held. A put that starts after produce returned still returns ErrClosed at
// once: no clock move and no room in the queue may be needed for it. The
// puts left in flight take their item once the consumers make room (or
// return ErrClosed, or ctx.Err() after a stop), and an item taken is
// consumed exactly once.

import (
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDrawLatePutsInFlight draws a testLatePuts for variant, with puts
// left in flight, most often on a full queue.
func testDrawLatePutsInFlight(variant int) func(r *rapid.T) testLatePuts {
	return func(r *rapid.T) testLatePuts {
		s := testDrawLatePuts(r)
		s.variant = variant
		s.produceErr = 0 // an error of produce stops nothing: other tests say so
		if variant == testLateBatches {
			s.size = rapid.IntRange(1, 2).Draw(r, "Size")
		}
		s.behind = rapid.IntRange(1, 3).Draw(r, "puts left in flight")
		// A consumer with a partial batch calls no consume: fill every
		// batch, so each consumer is held inside consume.
		if s.size > 1 || rapid.IntRange(0, 3).Draw(r, "room left") > 0 {
			s.items = s.full()
		}
		return s
	}
}

// testLateInFlight are the cases every run tries first. In the first, two
// puts wait on the full queue as produce returns, and two goroutines put at
// once right after, while the consumers are still held. In the second, a
// consume call fails while two puts produce left wait on the full queue
// and produce waits for its next record, and two goroutines put once
// produce returned.
func testLateInFlight(variant, size int) []testLatePuts {
	ss := []testLatePuts{
		{capacity: 1, consumers: 2, ending: testLateEnds,
			putters: []testLatePutter{{testLateDraining, 1}, {testLateDraining, 2}, {testLateReturned, 1}}},
		{capacity: 0, consumers: 2, ending: testLateFailFirst, pick: 1,
			putters: []testLatePutter{{testLateStopped, 2}, {testLateStopped, 1}, {testLateReturned, 1}}},
	}
	for i := range ss {
		ss[i].variant, ss[i].size, ss[i].behind = variant, size, 2
		ss[i].items = ss[i].full()
	}
	return ss
}

func testExploreLatePutsInFlight(t *testing.T, checks, variant, size int) {
	play := func(h *katatest.H, s testLatePuts) { s.play(h) }
	katatest.Replay(t, testLateInFlight(variant, size), play)
	katatest.Explore(t, checks, testDrawLatePutsInFlight(variant), play)
}

func TestR5_ExploreALatePutNeverWaitsBehindThePutsInFlight(t *testing.T) {
	testExploreLatePutsInFlight(t, 4, testLateRun, 0)
}

func TestB1_ExploreALatePutNeverWaitsBehindThePutsInFlight(t *testing.T) {
	testExploreLatePutsInFlight(t, 2, testLateBatches, 2)
}

func TestB2_ExploreALatePutNeverWaitsBehindThePutsInFlight(t *testing.T) {
	testExploreLatePutsInFlight(t, 2, testLateDrainTimeout, 0)
}

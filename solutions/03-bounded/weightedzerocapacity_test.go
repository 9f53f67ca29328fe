package bounded

// Bonus B1, over the values the README allows: a capacity below 1 is, like
// a limit below 1, a configuration mistake. ForEachWeighted returns an
// error matching ErrInvalidLimit at once, "before looking at ctx or the
// items" ("the rest is as for ForEach"), and calls neither weight nor fn:
// with a ctx already done too, and with no items at all. A loop that looks
// at ctx first reports the cancel, and the wrong capacity goes unnoticed
// until the day ctx is live.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// The caller's ctx as ForEachWeighted is called.
const (
	testCapLive      = iota // live
	testCapCancelled        // cancelled
	testCapCause            // cancelled with a cause (context.WithCancelCause)
	testCapExpired          // past its deadline
)

var testCapCtxHow = [...]string{"live", "already cancelled", "already cancelled with a cause", "already past its deadline"}

type testCapScenario struct {
	capacity int
	items    int
	ctx      int // testCap…
}

func (s testCapScenario) String() string {
	return fmt.Sprintf("ForEachWeighted(ctx, %d items, capacity %d, weight, fn) with a ctx %s", s.items, s.capacity,
		testCapCtxHow[s.ctx])
}

func testDrawCap(r *rapid.T) testCapScenario {
	return testCapScenario{
		capacity: rapid.SampledFrom([]int{0, -1, math.MinInt, -7}).Draw(r, "capacity"),
		items:    rapid.IntRange(0, 3).Draw(r, "items"),
		ctx:      rapid.SampledFrom([]int{testCapCancelled, testCapCause, testCapExpired, testCapLive}).Draw(r, "ctx"),
	}
}

func (s testCapScenario) play(h *katatest.H) {
	var weighed, called atomic.Int32
	weight := func(int) int { weighed.Add(1); return 1 }
	fn := func(context.Context, int) error { called.Add(1); return nil }
	var opts []katatest.CtxOption
	switch s.ctx {
	case testCapCancelled:
		opts = append(opts, katatest.Cancelled())
	case testCapExpired:
		opts = append(opts, katatest.Expired())
	}
	c := katatest.StartErr(h, func(ctx context.Context) error {
		if s.ctx == testCapCause {
			cctx, cancel := context.WithCancelCause(ctx)
			cancel(errors.New("the operator stopped the job"))
			ctx = cctx
		}
		return ForEachWeighted(ctx, testItems(s.items), s.capacity, weight, fn)
	}, opts...)
	if c.Broken() {
		return
	}
	if !testReturns(h, c, "B1: %v must return an error at once; it was still waiting: with a capacity below 1 "+
		"there is never room, so check capacity first and return ErrInvalidLimit", s) {
		return
	}
	err, ok := testResult(c)
	if !ok {
		return
	}
	if !errors.Is(err, ErrInvalidLimit) {
		h.Errorf("B1: ForEachWeighted looked at ctx or the items before the capacity: %v returned %v; a capacity "+
			"below 1 is a mistake in the code, whatever ctx says and however many items there are: check "+
			"capacity first, before ctx and the items (as ForEach does with limit), and return an error matching "+
			"ErrInvalidLimit", s, err)
		return
	}
	if n, k := weighed.Load(), called.Load(); n > 0 || k > 0 {
		h.Errorf("B1: %v returned ErrInvalidLimit but first called weight %d time(s) and fn %d time(s): with a "+
			"capacity below 1 it calls nothing", s, n, k)
	}
}

func TestB1_ExploreACapacityBelowOneIsAMistakeWhateverCtxSays(t *testing.T) {
	katatest.Explore(t, 12, testDrawCap, func(h *katatest.H, s testCapScenario) { s.play(h) })
}

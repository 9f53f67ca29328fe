package bounded

// A cancel that comes from inside: fn (with limit 1) or weight cancels the
// caller's ctx itself, on its way, so the cancel happens before the next
// item is even considered. No call may start after it: "after ctx is
// cancelled, no new call starts", whichever goroutine cancelled and
// however the code learns of the cancel (a flag set later by a callback
// of context.AfterFunc lags behind ctx.Err()).

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testInsideCancel struct {
	weighted bool // ForEachWeighted (capacity 100, weight 1), and weight(items[at]) cancels; else ForEach with limit 1 and fn(items[at]) cancels
	n, at    int
	returns  int // what the cancelling fn returns: 0 nil, 1 ctx.Err(), 2 fmt.Errorf("…: %w", ctx.Err())
}

func (s testInsideCancel) String() string {
	if s.weighted {
		return fmt.Sprintf("ForEachWeighted over items 0..%d, capacity 100, each weighing 1; weight(%d) cancels the "+
			"caller's ctx; every fn returns nil at once", s.n-1, s.at)
	}
	return fmt.Sprintf("ForEach over items 0..%d with limit 1; fn(%d) cancels the caller's ctx, then returns %s; "+
		"every other fn returns nil at once", s.n-1, s.at, [...]string{"nil", "ctx.Err()", "an error wrapping ctx.Err()"}[s.returns])
}

func testDrawInsideCancel(weighted bool) func(r *rapid.T) testInsideCancel {
	return func(r *rapid.T) testInsideCancel { return testDrawInsideCancelFor(r, weighted) }
}

func testDrawInsideCancelFor(r *rapid.T, weighted bool) testInsideCancel {
	s := testInsideCancel{weighted: weighted, n: rapid.IntRange(2, 6).Draw(r, "items")}
	s.at = rapid.IntRange(0, s.n-2).Draw(r, "the item whose call cancels")
	s.returns = rapid.IntRange(0, 2).Draw(r, "what it returns")
	return s
}

func (s testInsideCancel) play(h *katatest.H) {
	items := make([]int, s.n)
	for i := range items {
		items[i] = i
	}
	var started katatest.Recorder[int]
	call := katatest.Start(h, func(ctx context.Context) (struct{}, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		fn := func(fctx context.Context, item int) error {
			started.Add(item)
			if s.weighted || item != s.at {
				return nil
			}
			cancel()
			switch s.returns {
			case 1:
				return fctx.Err()
			case 2:
				return fmt.Errorf("item %d: %w", item, fctx.Err())
			}
			return nil
		}
		if !s.weighted {
			return struct{}{}, ForEach(ctx, items, 1, fn)
		}
		weight := func(item int) int {
			if item == s.at {
				cancel()
			}
			return 1
		}
		return struct{}{}, ForEachWeighted(ctx, items, 100, weight, fn)
	})
	if call.Broken() {
		return
	}
	if stuck := h.Settle(); stuck != nil {
		return
	}
	if !call.Returns("every call had returned after the caller's ctx was cancelled, yet %s was still waiting",
		map[bool]string{false: "ForEach", true: "ForEachWeighted"}[s.weighted]) {
		return
	}
	if _, _, ok := call.Finish("the call"); !ok {
		return
	}
	first := s.at + 1 // the first item that must not start
	by := fmt.Sprintf("fn(%d) had cancelled the caller's ctx and returned, which freed the only slot", s.at)
	if s.weighted {
		// Item at itself may start: a design may look at ctx before it
		// asks weight, and weight is not expected to cancel. The items
		// after it may not.
		by = fmt.Sprintf("weight(%d) had cancelled the caller's ctx", s.at)
	}
	if late := slices.DeleteFunc(started.All(), func(i int) bool { return i < first }); len(late) > 0 {
		slices.Sort(late)
		h.Errorf("fn ran for item(s) %v, after %s: after ctx is cancelled, no new call starts. Look at ctx "+
			"itself (ctx.Err(), or ctx.Done() in the select) right before each start: a flag set by a "+
			"callback of context.AfterFunc, or by any goroutine of its own, is set a moment after the cancel",
			late, by)
	}
}

func TestR3_ExploreACancelFromWithinStopsTheNextStart(t *testing.T) {
	katatest.Explore(t, 6, testDrawInsideCancel(false), func(h *katatest.H, s testInsideCancel) { s.play(h) })
	// And always: a free slot and the cancel are both ready when the loop
	// looks, which a select may pick either way; as it comes, and shaken.
	fixed := testInsideCancel{n: 3, at: 0}
	katatest.Replay(t, []testInsideCancel{fixed, fixed, fixed, fixed}, func(h *katatest.H, s testInsideCancel) { s.play(h) })
	katatest.Repeat(t, 8, func(h *katatest.H) { fixed.play(h) })
}

func TestB1_ExploreACancelInsideWeightStopsThatItem(t *testing.T) {
	katatest.Explore(t, 6, testDrawInsideCancel(true), func(h *katatest.H, s testInsideCancel) { s.play(h) })
	fixed := testInsideCancel{weighted: true, n: 4, at: 2}
	katatest.Replay(t, []testInsideCancel{fixed, fixed, fixed, fixed}, func(h *katatest.H, s testInsideCancel) { s.play(h) })
	katatest.Repeat(t, 8, func(h *katatest.H) { fixed.play(h) })
}

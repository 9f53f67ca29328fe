package bounded

// Limits, capacities and weights over the whole range of int: a valid
// limit may be as large as the caller likes (math.MaxInt is the natural way
// to say "no real limit"), and a weight may be any int. Nothing may cost
// time or memory in proportion to a limit, a capacity or a weight, so each
// test says first, in its log, what a hang at that point means.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"gokata/internal/katatest"
)

// testHugeLimits are valid limits far beyond any number of items.
var testHugeLimits = []int{math.MaxInt, math.MaxInt32, 1 << 40}

const testProportionalHint = "nothing may cost time or memory in proportion to the limit (a channel filled " +
	"with limit tokens one by one, limit workers, a buffer of limit results): size what you make by " +
	"min(limit, len(items)), or count the calls in flight"

func testLimitName(limit int) string {
	switch limit {
	case math.MaxInt:
		return "math.MaxInt"
	case math.MaxInt32:
		return "math.MaxInt32"
	case math.MinInt:
		return "math.MinInt"
	}
	return fmt.Sprint(limit)
}

func TestR1_AHugeLimitRunsEveryItemAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const n = 4
		for k, limit := range testHugeLimits {
			name := testLimitName(limit)
			h.IfItHangs("ForEach(ctx, %d items, limit %s, fn) hung instead of starting the %d calls at once: it "+
				"spends time in proportion to the limit: %s", n, name, n, testProportionalHint)
			w := testNewWork(n)
			c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(n), limit, w.call) })
			if c.Broken() {
				return
			}
			if got := w.peak.Now(); got != n {
				if testReturnedEarly(h, c, "ForEach", "limit "+name) {
					w.openAll()
					return
				}
				h.Errorf("limit %s is a valid limit, as large as the caller likes, so min(limit, items) calls run "+
					"together, but with %d items %d calls were running: %s", name, n, got, testProportionalHint)
				c.Stop()
				return
			}
			w.openAll()
			if !c.Returns("limit %s: every call returned, but ForEach did not", name) {
				return
			}
			if err, ok := testFinish(c, k == len(testHugeLimits)-1); ok && err != nil {
				h.Errorf("limit %s, %d items: every call succeeded, so ForEach returns nil, but it returned %s",
					name, n, testXDescribe(err))
			}
		}
	})
}

func TestR2_AHugeLimitProcessesEveryItemOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const n = 50
		for k, limit := range testHugeLimits {
			name := testLimitName(limit)
			h.IfItHangs("ForEach(ctx, %d items, limit %s, fn) hung, although every call returns at once: it "+
				"spends time in proportion to the limit: %s", n, name, testProportionalHint)
			w := testNewWork(n)
			w.openAll()
			c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(n), limit, w.call) })
			if c.Broken() || !c.Returns("limit %s, %d items: every call returned at once, but ForEach did not: %s",
				name, n, testProportionalHint) {
				return
			}
			err, ok := testFinish(c, k == len(testHugeLimits)-1)
			if !ok {
				return
			}
			if err != nil {
				h.Errorf("limit %s, %d items: every call succeeded, so ForEach returns nil, but it returned %s: %s",
					name, n, testXDescribe(err), testProportionalHint)
				return
			}
			for i, calls := range w.callsOf() {
				if calls != 1 {
					h.Errorf("limit %s, %d items: fn must be called exactly once for every item, but item %d had %d "+
						"call(s)", name, n, i, calls)
					return
				}
			}
		}
	})
}

func TestB1_AHugeCapacityAndExtremeWeights(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct {
			capacity int
			weights  []int
			together int // how many of the first items run together
		}{
			// Light items on a huge capacity all fit at once.
			{math.MaxInt, []int{1, 0, math.MinInt, 3, -1}, 5},
			{1 << 40, []int{2, 1, math.MinInt}, 3},
			// Extreme weights on a small capacity: math.MaxInt counts as the
			// capacity (that item runs alone), math.MinInt as 1.
			{3, []int{math.MaxInt, math.MinInt, math.MinInt, math.MaxInt}, 1},
			// Heavy items on a huge capacity: the weights in flight add up
			// to more than math.MaxInt can hold, so a sum overflows.
			{math.MaxInt, []int{math.MaxInt/2 + 1, math.MaxInt/2 + 1, 1}, 1},
			{math.MaxInt, []int{math.MaxInt, 1}, 1},
			{math.MaxInt, []int{1 << 61, 1 << 61, 1 << 61, math.MaxInt}, 3},
			{1 << 40, []int{1 << 39, 1 << 39, 1}, 2},
		}
		for k, tc := range cases {
			name := testLimitName(tc.capacity)
			h.IfItHangs("ForEachWeighted(ctx, weights %v, capacity %s, weight, fn) hung: it spends time in "+
				"proportion to the capacity or to a weight, and nothing may (a channel filled with capacity "+
				"tokens, weight tokens taken one by one): count the units in use under a lock", tc.weights, name)
			w := testNewWork(len(tc.weights))
			weight := func(i int) int { return tc.weights[i] }
			c := katatest.StartErr(h, func(ctx context.Context) error {
				return ForEachWeighted(ctx, testItems(len(tc.weights)), tc.capacity, weight, w.call)
			})
			if c.Broken() {
				return
			}
			if got := w.peak.Now(); got != tc.together {
				if testReturnedEarly(h, c, "ForEachWeighted", fmt.Sprintf("capacity %s, weights %v", name, tc.weights)) {
					w.openAll()
					return
				}
				if got > tc.together && tc.capacity > math.MaxInt/2 {
					h.Errorf("capacity %s, weights %v: %d calls were running at once; want %d: their weights add up "+
						"to more than the capacity. Near math.MaxInt a sum such as used+w overflows and wraps "+
						"negative, so it seems to fit: compare w with what is free (capacity-used), which cannot "+
						"overflow", name, tc.weights, got, tc.together)
				} else {
					h.Errorf("capacity %s, weights %v: %d calls were running once ForEachWeighted got going; want "+
						"%d: a weight below 1 counts as 1 and one above capacity as capacity (clamp before you add, "+
						"so no sum overflows), and a huge capacity is valid: %s", name, tc.weights, got, tc.together,
						testProportionalHint)
				}
				c.Stop()
				return
			}
			w.openAll()
			if !c.Returns("capacity %s, weights %v: every call returned, but ForEachWeighted did not: it still waits "+
				"for room the returned calls gave back, so the loop missed the wake-up of a call that freed room, or "+
				"counted the room wrong (clamp each weight to 1…capacity before you add or subtract it)", name,
				tc.weights) {
				return
			}
			err, ok := testFinish(c, k == len(cases)-1)
			if !ok {
				return
			}
			if err != nil {
				h.Errorf("capacity %s, weights %v: every call succeeded, so ForEachWeighted returns nil, but it "+
					"returned %s", name, tc.weights, testXDescribe(err))
				return
			}
		}
	})
}

func TestB2_AHugeLimitShedsNothing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		if b, err := NewBulkhead(math.MinInt); b != nil || !errors.Is(err, ErrInvalidLimit) {
			h.Errorf("NewBulkhead(math.MinInt) returned %v, %v: a limit below 1 returns a nil Bulkhead and an error "+
				"matching ErrInvalidLimit", b, err)
			return
		}
		const n = 4
		for k, limit := range testHugeLimits {
			name := testLimitName(limit)
			h.IfItHangs("NewBulkhead(%s), then TryForEach with %d items, hung instead of starting the %d calls at "+
				"once: it spends time in proportion to the limit: %s", name, n, n, testProportionalHint)
			b, err := NewBulkhead(limit)
			if err != nil || b == nil {
				h.Errorf("NewBulkhead(%s) returned %v, %v: any limit of 1 or more is valid", name, b, err)
				return
			}
			w := testNewWork(n)
			c := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(n), w.call) })
			if c.Broken() {
				return
			}
			if got := w.peak.Now(); got != n {
				if testReturnedEarly(h, c, "TryForEach", "a Bulkhead of "+name+" slots") {
					w.openAll()
					return
				}
				h.Errorf("on a Bulkhead of %s slots, a request of %d items had %d calls running: every item finds a "+
					"free slot, so all run at once: %s", name, n, got, testProportionalHint)
				c.Stop()
				return
			}
			w.openAll()
			if !c.Returns("a Bulkhead of %s slots: every call returned, but TryForEach did not", name) {
				return
			}
			if err, ok := testFinish(c, k == len(testHugeLimits)-1); ok && err != nil {
				h.Errorf("a Bulkhead of %s slots, %d items: every call succeeded and none was shed, so TryForEach "+
					"returns nil, but it returned %s", name, n, testXDescribe(err))
				return
			}
		}
	})
}

package bounded

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestR1_LimitCallsRunAtOnceAndFreedSlotsAreReused(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct{ limit, n int }{{3, 10}, {1, 4}, {8, 5}}
		for i, tc := range cases {
			w := testNewWork(tc.n)
			c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(tc.n), tc.limit, w.call) })
			if c.Broken() {
				return
			}
			// Release the running calls one by one; after each, the next
			// item must take the freed slot at once.
			for done := 0; done < tc.n; done++ {
				now, want := w.peak.Now(), min(tc.limit, tc.n-done)
				if w.peak.Max() > tc.limit {
					t.Errorf("%d calls of fn ran at once with limit %d: take a slot before you start a call, "+
						"and give it back only when the call has returned", w.peak.Max(), tc.limit)
					c.Stop()
					return
				}
				if now != want {
					if testReturnedEarly(h, c, "ForEach", fmt.Sprintf("limit %d, %d items, %d calls returned",
						tc.limit, tc.n, done)) {
						w.openAll()
						return
					}
					if done == 0 {
						t.Errorf("limit %d, %d items: %d calls were running once ForEach got going; want %d, "+
							"min(limit, items)", tc.limit, tc.n, now, want)
					} else {
						t.Errorf("limit %d, %d items: after %d calls had returned, %d calls were running with %d items "+
							"left; want %d: a call that returns frees its slot, start the next item at once "+
							"(do not wait for a whole batch to finish)", tc.limit, tc.n, done, now, tc.n-done, want)
					}
					c.Stop()
					return
				}
				w.open(w.running()[0])
				synctest.Wait()
			}
			if !c.Returns("limit %d: every call returned but ForEach did not", tc.limit) {
				return
			}
			err, ok := testFinish(c, i == len(cases)-1)
			if !ok {
				return
			}
			assert.NoError(t, err, "limit %d: every call succeeded", tc.limit)
			assert.Equal(t, min(tc.limit, tc.n), w.peak.Max(), "limit %d, %d items: the most calls running at once "+
				"must be min(limit, items)", tc.limit, tc.n)
		}
	})
}

func TestR2_EveryItemIsProcessedExactlyOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct{ limit, n int }{{7, 100}, {50, 3}, {4, 0}}
		for i, tc := range cases {
			w := testNewWork(tc.n)
			w.openAll()
			c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(tc.n), tc.limit, w.call) })
			if c.Broken() {
				return
			}
			if !c.Returns("limit %d, %d items: every call returned at once, "+
				"but ForEach did not", tc.limit, tc.n) {
				return
			}
			err, ok := testFinish(c, i == len(cases)-1)
			if !ok {
				return
			}
			assert.NoError(t, err, "limit %d, %d items: every call succeeded, so ForEach must return nil", tc.limit, tc.n)
			var wrong []string
			for i, calls := range w.callsOf() {
				if calls != 1 {
					wrong = append(wrong, fmt.Sprintf("item %d: %d calls", i, calls))
				}
			}
			assert.Empty(t, wrong, "limit %d, %d items: fn must be called exactly once for every item", tc.limit, tc.n)
		}
	})
}

// testCancelledBefore runs ForEach with a ctx cancelled before the call and
// expects no call of fn at all.
func testCancelledBefore(h *katatest.H, limit int) bool {
	w := testNewWork(10)
	c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(10), limit, w.call) }, katatest.Cancelled())
	if !c.Returns("ForEach with a ctx cancelled before the call "+
		"(limit %d) did not return: wait for a slot in a select with ctx.Done()", limit) {
		return false
	}
	if _, ok := testResult(c); !ok {
		return false
	}
	if n := w.started(); n > 0 {
		h.T.Errorf("ctx was cancelled before ForEach was called, yet %d calls of fn started (limit %d): "+
			"nothing may start after a cancel: wait for a slot in a select with ctx.Done(), and "+testRandomHint, n, limit)
		return false
	}
	return true
}

// testNothingStartsAfterCancel cancels ctx before ForEach is called, and
// while 2 calls run; no call may start after the cancel.
func testNothingStartsAfterCancel(h *katatest.H) bool {
	t := h.T
	for _, limit := range []int{1, 8} {
		if !testCancelledBefore(h, limit) {
			return false
		}
	}

	// Limit 2, 8 items: items 0 and 1 are running when ctx is cancelled.
	w := testNewWork(8)
	c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(8), 2, w.call) })
	if c.Broken() || !testRunning(h, w, 2, c, "limit 2, 8 items") {
		return false
	}
	c.Cancel()
	if !c.Returns("ctx was cancelled and the 2 calls in flight returned, but ForEach did not: " +
		"wait for a slot in a select with ctx.Done(), and stop at the cancel") {
		return false
	}
	if _, ok := testResult(c); !ok {
		return false
	}
	if n := w.started(); n > 2 {
		t.Errorf("%d calls of fn started after ctx was cancelled (limit 2, 8 items, 2 calls running at the cancel): "+
			"nothing may start after a cancel: wait for a slot in a select with ctx.Done(), and "+testRandomHint, n-2)
		return false
	}
	return assert.Equal(t, 2, w.cancelled(), "the 2 calls in flight must see "+
		"their ctx cancelled when the caller cancels: pass them a ctx derived from the caller's")
}

// testNothingStartsAfterTheFirstError makes a call fail while another runs,
// and then a call fail at once with limit 1; no call may start after that.
func testNothingStartsAfterTheFirstError(h *katatest.H) bool {
	t := h.T
	errBoom := errors.New("thumbnail 0: 500 internal error")
	// Limit 2, 8 items: one call fails while the other is running.
	w := testNewWork(8)
	c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(8), 2, w.call) })
	if c.Broken() || !testRunning(h, w, 2, c, "limit 2, 8 items") {
		return false
	}
	r := w.running()
	w.errs[r[0]] = errBoom
	w.open(r[0])
	synctest.Wait()
	if n := w.started(); n > 2 {
		t.Errorf("%d calls of fn started after the first error (limit 2, 8 items; item %d failed while item %d ran): "+
			"after a call fails nothing new may start; stop the loop at the first error, record the error and "+
			"cancel before you give the slot back, and "+testRandomHint, n-2, r[0], r[1])
		c.Stop()
		return false
	}
	if w.cancelled() != 1 {
		t.Errorf("item %d failed while item %d was running, and item %d's ctx was not cancelled: after the first "+
			"error the calls in flight must see their ctx cancelled so they can stop early "+
			"(derive the calls' ctx with context.WithCancel and cancel it on the first error)", r[0], r[1], r[1])
		c.Stop()
		return false
	}
	if !c.Returns("one call failed and the other returned, but ForEach did not return") {
		return false
	}
	if _, ok := testResult(c); !ok {
		return false
	}

	// Limit 1, and every call fails at once: only the first may run.
	w = testNewWork(5)
	for i := range w.errs {
		w.errs[i] = errBoom
	}
	w.openAll()
	c = katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(5), 1, w.call) })
	if !c.Returns("limit 1: the first call failed at once, but ForEach did not return") {
		return false
	}
	if _, ok := testResult(c); !ok {
		return false
	}
	if n := w.started(); n > 1 {
		t.Errorf("limit 1: the first call failed, then %d more calls of fn started: after the first error "+
			"nothing new may start; record the error and cancel before you give the slot back, and "+testRandomHint, n-1)
		return false
	}
	return true
}

func TestR3_NothingStartsAfterCancelOrTheFirstError(t *testing.T) {
	// A select with ctx.Done() and a free slot both ready picks one of them
	// at random, 1/2 each, independently at every select. A ForEach whose
	// ctx is cancelled before the call meets exactly that select for its
	// first item, so a design that does not check ctx again after getting
	// the slot starts a call there, and fails, with probability 1/2 per
	// such ForEach. The bubble runs the whole scenario testR3Rounds times
	// (2 such calls each) and then testR3Draws more such calls, which cost
	// little next to a fresh bubble: 2*2 + 46 = 50 independent draws, so
	// that design passes with probability 2^-50 ≈ 8.9e-16 per run (the
	// in-flight cancel and the first error give it more chances, not
	// counted here).
	katatest.Run(t, func(h *katatest.H) {
		for round := 1; round <= testR3Rounds; round++ {
			if !testNothingStartsAfterCancel(h) || !testNothingStartsAfterTheFirstError(h) {
				h.T.Logf("(this failure came in round %d of %d of the same scenario)", round, testR3Rounds)
				return
			}
		}
		for i := range testR3Draws {
			if !testCancelledBefore(h, 1+i%8) {
				h.T.Logf("(this failure came in call %d of %d with a ctx cancelled before the call)", i+1, testR3Draws)
				return
			}
		}
	})
}

func TestR3_AFailedCallsSlotGoesToNoOneElse(t *testing.T) {
	// Limit 1: the loop waits for the one slot while item 0 runs. Item 0
	// fails; its slot frees, and the loop must see the failure before it
	// sees the slot. A call that gives its slot back first and records the
	// failure after leaves a window a few instructions wide: repeated.
	katatest.Repeat(t, 16, func(h *katatest.H) {
		errBoom := errors.New("thumbnail 0: 500 internal error")
		w := testNewWork(4)
		w.errs[0] = errBoom
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(4), 1, w.call) })
		if c.Broken() || !testRunning(h, w, 1, c, "limit 1, 4 items") {
			return
		}
		w.open(0)
		synctest.Wait()
		if n := w.started(); n > 1 {
			h.T.Errorf("limit 1, 4 items: item 0 failed, and %d more call(s) of fn started after it: the failed call "+
				"gave its slot back before it recorded the error and cancelled, and the loop took that slot first "+
				"— record the error and cancel, then release the slot (defer release() at the top of the goroutine "+
				"runs last)", n-1)
			w.openAll()
			c.Stop()
			return
		}
		w.openAll()
		if !c.Returns("limit 1: item 0 failed, but ForEach did not return") {
			return
		}
		testResult(c)
	})
}

// TestR3 runs its whole scenario testR3Rounds times, then makes testR3Draws
// more calls of ForEach with a ctx cancelled before the call.
const testR3Rounds, testR3Draws = 2, 46

func TestR4_ReturnsTheFirstError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errBoom := errors.New("thumbnail 1: 500 internal error")
		// Limit 3, 6 items: one call fails while two others run; when
		// cancelled, those return errors of their own, later.
		w := testNewWork(6)
		w.onCancel = func(i int, err error) error { return fmt.Errorf("thumbnail %d: upload interrupted: %w", i, err) }
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(6), 3, w.call) })
		if c.Broken() || !testRunning(h, w, 3, c, "limit 3, 6 items") {
			return
		}
		r := w.running()
		w.errs[r[1]] = errBoom
		w.open(r[1])
		synctest.Wait()
		w.openAll() // in case the calls in flight were not cancelled
		if !c.Returns("one call failed and the others returned, but ForEach did not return") {
			return
		}
		err, ok := c.Finish("ForEach")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, errBoom, "item %d failed before any other call: ForEach must return that first error "+
			"(keep it with sync.Once)", r[1])
		assert.NotErrorIs(t, err, context.Canceled, "item %d failed first; the calls you then cancelled failed later "+
			"with context.Canceled: return the first error, not a later one", r[1])
	})
}

func TestR4_ReturnsCtxErrWhenItemsWereSkipped(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct {
			name     string
			onCancel func(int, error) error
		}{
			{"the cancelled calls return their context error", nil},
			{"the cancelled calls finish their work anyway and return nil", func(int, error) error { return nil }},
		}
		for _, tc := range cases {
			w := testNewWork(6)
			w.onCancel = tc.onCancel
			c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(6), 2, w.call) })
			if c.Broken() {
				return
			}
			c.Cancel()
			if !c.Returns("limit 2, 6 items, cancel while 2 calls run (%s): "+
				"ForEach did not return", tc.name) {
				return
			}
			err, ok := testFinish(c, false) // the last call, below, checks for leaks
			if !ok {
				return
			}
			assert.ErrorIs(t, err, context.Canceled, "limit 2, 6 items, ctx cancelled while 2 calls ran (%s): "+
				"the other 4 items are skipped, so ForEach must return ctx.Err(), not nil as if every item had been "+
				"processed", tc.name)
		}

		w := testNewWork(3)
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(3), 2, w.call) }, katatest.Expired())
		if !c.Returns("ForEach with an expired ctx did not return") {
			return
		}
		err, ok := c.Finish("ForEach")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, context.DeadlineExceeded, "ctx had passed its deadline before ForEach was called, "+
			"so no item was processed: return ctx.Err() (here context.DeadlineExceeded, not a cancel of your own)")
	})
}

func TestR5_LimitBelowOneIsAnError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		cases := []struct {
			limit, n  int
			cancelled bool // ctx cancelled before the call: the limit is checked first all the same
		}{{0, 3, false}, {-1, 3, false}, {math.MinInt, 3, false}, {0, 0, false}, {0, 3, true}}
		for i, tc := range cases {
			w := testNewWork(tc.n)
			w.openAll()
			var opts []katatest.CtxOption
			if tc.cancelled {
				opts = append(opts, katatest.Cancelled())
			}
			c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(tc.n), tc.limit, w.call) }, opts...)
			if c.Broken() {
				return
			}
			if !c.Returns("ForEach(ctx, %d items, limit %d, fn) must return an error at once; "+
				"it was still waiting: with a limit below 1 no slot is ever free, so check limit first "+
				"and return ErrInvalidLimit", tc.n, tc.limit) {
				return
			}
			err, ok := testFinish(c, i == len(cases)-1)
			if !ok {
				return
			}
			if tc.cancelled {
				assert.ErrorIs(t, err, ErrInvalidLimit, "ForEach(ctx, %d items, limit %d, fn) with a ctx cancelled "+
					"before the call returned %v: a limit below 1 is a mistake in the code, whatever ctx says; "+
					"check limit first, before ctx and the items, and return an error matching ErrInvalidLimit",
					tc.n, tc.limit, err)
			} else {
				assert.ErrorIs(t, err, ErrInvalidLimit, "ForEach(ctx, %d items, limit %d, fn): a limit below 1 is a "+
					"mistake; the error must match ErrInvalidLimit", tc.n, tc.limit)
			}
			assert.Zero(t, w.started(), "ForEach(ctx, %d items, limit %d, fn) must not call fn", tc.n, tc.limit)
		}
	})
}

func TestR6_WaitsForEveryCallItStarted(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errBoom := errors.New("thumbnail 0: 500 internal error")
		cases := []struct {
			name string
			stop func(w *testWork, c katatest.ErrCall)
		}{
			{"one call failed while another, which ignores its ctx, still ran",
				func(w *testWork, _ katatest.ErrCall) {
					r := w.running()
					w.errs[r[0]] = errBoom
					w.open(r[0])
				}},
			{"ctx was cancelled while 2 calls, which ignore their ctx, still ran",
				func(_ *testWork, c katatest.ErrCall) { c.Cancel() }},
		}
		for i, tc := range cases {
			w := testNewWork(5)
			for item := range 5 {
				w.deaf[item] = true
			}
			c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(5), 2, w.call) })
			if c.Broken() || !testRunning(h, w, 2, c, "limit 2, 5 items") {
				return
			}
			tc.stop(w, c)
			synctest.Wait()
			if c.Returned() {
				t.Errorf("%s: ForEach returned while that call was still running; it must wait for every call it "+
					"started (a sync.WaitGroup), even after an error or a cancel, or the caller cannot know when "+
					"the work is over", tc.name)
				w.openAll()
				return
			}
			w.openAll()
			if !c.Returns("%s: every call returned, but ForEach did not", tc.name) {
				return
			}
			if _, ok := testFinish(c, i == len(cases)-1); !ok {
				return
			}
		}
	})
}

func TestR6_GoroutinesGrowWithLimitNotWithItems(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const n, limit, slack = 100, 4, 10
		gate := katatest.NewGate()
		var peak katatest.Peak
		fn := func(ctx context.Context, _ int) error {
			defer peak.Enter()()
			return gate.Hold(ctx)
		}
		before := h.Goroutines()
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(n), limit, fn) })
		if c.Broken() {
			return
		}
		// Every goroutine is blocked now: limit calls at the gate, the
		// rest of ForEach waiting for a slot.
		extra := h.Goroutines() - before
		if extra > limit+slack {
			t.Errorf("%d items, limit %d: %d goroutines were alive while %d calls ran; want at most limit + %d: "+
				"take a slot before you start a goroutine (or run min(limit, len(items)) workers), not one goroutine per item "+
				"waiting for a slot: with a million items that is a million stacks", n, limit, extra, peak.Now(), slack)
			c.Stop()
			return
		}
		gate.Release()
		if !c.Returns("%d items, limit %d: every call returns at once, but ForEach did not return", n, limit) {
			return
		}
		err, ok := c.Finish("ForEach")
		if !ok {
			return
		}
		assert.NoError(t, err, "%d items, limit %d: every call succeeded", n, limit)
		assert.Equal(t, n, gate.Entered(), "%d items, limit %d: fn must be called for every item", n, limit)
	})
}

// testCancelAfterStart runs ForEach with limit 3 on 3 items, so every item
// has started when the test cancels ctx; then settle(w) makes the calls
// return, and ForEach's error is returned.
func testCancelAfterStart(h *katatest.H, setup func(w *testWork), settle func(w *testWork)) (err error, ok bool) {
	w := testNewWork(3)
	setup(w)
	c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(3), 3, w.call) })
	if c.Broken() || !testRunning(h, w, 3, c, "limit 3, 3 items") {
		return nil, false
	}
	c.Cancel()
	synctest.Wait()
	settle(w)
	if !c.Returns("ctx was cancelled after every item had started, and every call returned, " +
		"but ForEach did not") {
		return nil, false
	}
	return testResult(c)
}

func TestR4_ACallsOwnCancelIsAnError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// Limit 2, 4 items, the caller's ctx never cancelled: one call
		// fails with an error wrapping context.Canceled of its own (its
		// upload was cancelled by someone else). That is a failure like
		// any other: ForEach stops and returns it.
		w := testNewWork(4)
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(4), 2, w.call) })
		if c.Broken() || !testRunning(h, w, 2, c, "limit 2, 4 items") {
			return
		}
		r := w.running()
		errOwn := fmt.Errorf("thumbnail %d: upload: %w", r[0], context.Canceled)
		w.errs[r[0]] = errOwn
		w.open(r[0])
		synctest.Wait()
		w.openAll()
		if !c.Returns("a call failed and the other returned, but ForEach did not return") {
			return
		}
		err, ok := c.Finish("ForEach")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, errOwn, "limit 2, 4 items, the caller's ctx live: item %d failed with %q, which "+
			"wraps context.Canceled of its own: ForEach must stop and return the first error a call returned, as "+
			"it is; do not drop a call's error because it is a context error: only the caller's ctx says "+
			"whether the caller cancelled",
			r[0], errOwn)
	})
}

func TestR4_ResultsThatArriveAfterACancel(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// Limit 2, 4 items, calls that ignore the cancel: after the cancel,
		// one call fails with an error of its own, then the other succeeds;
		// the 2 items not started are skipped.
		errBoom := errors.New("thumbnail: 500 internal error")
		w := testNewWork(4)
		for i := range 4 {
			w.deaf[i] = true
		}
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(4), 2, w.call) })
		if c.Broken() || !testRunning(h, w, 2, c, "limit 2, 4 items") {
			return
		}
		r := w.running()
		w.errs[r[0]] = errBoom
		c.Cancel()
		synctest.Wait()
		if testReturnedEarly(h, c, "ForEach", "limit 2, 4 items, calls that ignore their ctx, 2 of them running; "+
			"ctx was cancelled") {
			w.openAll()
			return
		}
		w.open(r[0])
		synctest.Wait()
		w.openAll()
		if !c.Returns("ctx was cancelled and both calls in flight returned, but ForEach did not") {
			return
		}
		err, ok := testResult(c)
		if !ok {
			return
		}
		if !assert.ErrorIs(t, err, errBoom, "limit 2, 4 items: ctx was cancelled, then item %d failed with %q: a "+
			"call failed, so ForEach must return that first error, not ctx.Err(); ctx.Err() is the answer only "+
			"when no call failed", r[0], errBoom) {
			return
		}

		// Every item has started; the calls honour the cancel and return
		// their context errors: that is the first error a call returned.
		err, ok = testCancelAfterStart(h, func(w *testWork) {
			w.onCancel = func(i int, err error) error { return fmt.Errorf("thumbnail %d: upload interrupted: %w", i, err) }
		}, func(*testWork) {})
		if !ok {
			return
		}
		if !assert.ErrorIs(t, err, context.Canceled, "limit 3, 3 items: every item had started when ctx was "+
			"cancelled, and each call then returned an error matching context.Canceled: ForEach must return the "+
			"first error a call returned; do not drop a call's error because it is a context error") {
			return
		}

		// Every item has started; the calls ignore the cancel and succeed.
		err, ok = testCancelAfterStart(h, func(w *testWork) {
			for i := range 3 {
				w.deaf[i] = true
			}
		}, func(w *testWork) { w.openAll() })
		if !ok {
			return
		}
		if !assert.NoError(t, err, "limit 3, 3 items: every item had started before ctx was cancelled, and every "+
			"call then succeeded: no call failed and no item was skipped, so ForEach must return nil; return "+
			"ctx.Err() only when ctx ended before every item had started (count the items you started)") {
			return
		}
	})
}

func TestR6_ReturnsOnlyAfterEveryCallHasReturned(t *testing.T) {
	// The calls return at once, so the goroutines ForEach starts may still
	// be on their way when its loop ends. A ForEach that counts a call in
	// its WaitGroup only from inside the goroutine can reach wg.Wait before
	// the last goroutines have counted themselves, and return while they
	// run. Whether it does depends on the schedule, so the bubble makes
	// testR6Rounds such calls: with a single P the goroutine started last
	// has not run when the loop reaches Wait, and with more it rarely has.
	katatest.Run(t, func(h *katatest.H) {
		const n = 16
		for round := 1; round <= testR6Rounds; round++ {
			w := testNewWork(n)
			w.openAll()
			var made, inside int
			c := katatest.StartErr(h, func(ctx context.Context) error {
				err := ForEach(ctx, testItems(n), n, w.call)
				made, inside = w.started(), w.peak.Now()
				return err
			})
			if !c.Returns("limit %d, %d items: every call returns at "+
				"once, but ForEach did not return", n, n) {
				return
			}
			if _, ok := testFinish(c, round == testR6Rounds); !ok {
				return
			}
			if made < n || inside > 0 {
				t.Errorf("limit %d, %d items, every call returns at once: when ForEach returned, only %d of the "+
					"%d calls had been made and %d of them were still running (round %d of %d): ForEach must "+
					"return only after every call it started has returned; call wg.Add(1) before the go "+
					"statement, not inside the goroutine it counts", n, n, made, n, inside, round, testR6Rounds)
				return
			}
		}
	})
}

// TestR6_ReturnsOnlyAfterEveryCallHasReturned makes this many calls.
const testR6Rounds = 10

// testPanicChild is set in the environment of the copy of the test binary
// that TestR4_APanicInFnCrashesTheProgram starts: that copy only calls
// ForEach with a panicking fn, and says what happened.
const testPanicChild = "KATA_03_PANIC_CHILD"

// A panic in fn is a bug in fn: not recovered, it crashes the program, as
// in errgroup. The crash is watched from outside, in a copy of the test
// binary.
func TestR4_APanicInFnCrashesTheProgram(t *testing.T) {
	if os.Getenv(testPanicChild) == "1" {
		before := runtime.NumGoroutine()
		err := ForEach(context.Background(), testItems(3), 2, func(_ context.Context, item int) error {
			if item == 1 {
				panic("image 1 is corrupt (the test panics in fn on purpose)")
			}
			return nil
		})
		// A panicking goroutine runs its deferred calls (wg.Done among
		// them) before it ends the program, so ForEach may return first:
		// wait until ForEach's goroutines are gone, or the crash.
		for runtime.NumGoroutine() > before {
			runtime.Gosched()
		}
		fmt.Printf("ForEach returned %v\n", err)
		return
	}
	katatest.Run(t, func(h *katatest.H) {
		c := katatest.StartErr(h, func(ctx context.Context) error {
			return ForEach(ctx, testItems(1), 1, func(context.Context, int) error { return nil })
		})
		if !c.Returns("limit 1, 1 item whose call returns at once: ForEach did not return") {
			return
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestR4_APanicInFnCrashesTheProgram$")
		cmd.Env = append(os.Environ(), testPanicChild+"=1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && strings.Contains(string(out), "panic: image 1 is corrupt"):
			// It crashed, with fn's own panic.
		case strings.Contains(string(out), "ForEach returned"):
			line, _, _ := strings.Cut(string(out[strings.Index(string(out), "ForEach returned"):]), "\n")
			t.Errorf("fn panicked for item 1, and the program went on: %s. A panic in fn is a bug in fn, not an "+
				"error: do not recover it (errgroup does not either); let it crash the program, where its stack "+
				"shows the bug", line)
		default:
			tail := string(out)
			if len(tail) > 2000 {
				tail = "…" + tail[len(tail)-2000:]
			}
			t.Errorf("fn panicked for item 1, and the program ended without fn's panic (%v); what it printed:\n%s", err, tail)
		}
	})
}

package firstwins

// Answers that come together: several replicas answer at one instant, or
// every replica has answered by the time First gets to look. The README
// orders nothing among them, and nothing it says changes: a success among
// them is returned, and when every one failed, every failure is.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

// testTogetherCallers is how many goroutines call First at once, each with
// replicas of its own, in each repetition.
const testTogetherCallers = 12

// testTogetherErr is replica i's own error: a distinct value per replica.
type testTogetherErr struct{ caller, replica int }

func (e *testTogetherErr) Error() string {
	return fmt.Sprintf("503 busy (caller %d, region %d)", e.caller, e.replica)
}

func TestR2_FailuresTogetherAreAllReturned(t *testing.T) {
	katatest.Repeat(t, 16, func(h *katatest.H) {
		all := testNewLatch() // opening it makes every replica of every caller fail at one instant
		errs := make([][]error, testTogetherCallers)
		calls := make([]*katatest.Call[string], testTogetherCallers)
		for k := range calls {
			n := 2 + k%4 // 2 to 5 replicas
			reps := make([]testCall, n)
			for i := range reps {
				errs[k] = append(errs[k], &testTogetherErr{k, i})
				reps[i] = all.replica("stale", errs[k][i])
			}
			calls[k] = katatest.Start(h, func(ctx context.Context) (string, error) {
				return First(ctx, h.Clk, 0, reps...)
			})
		}
		synctest.Wait()
		for _, c := range calls {
			if c.Returned() {
				v, err := c.Result()
				if !c.Panicked() {
					t.Errorf("First returned (%q, %v) before any replica answered", v, err)
				}
				katatest.Unwind(h, calls...)
				all.open()
				return
			}
		}
		all.open()
		synctest.Wait()
		for k, c := range calls {
			n := len(errs[k])
			if !c.Returned() {
				t.Errorf("all %d replicas failed at the same instant, but First was still waiting: when the last "+
					"replica fails, return all their errors at once, also when the failures come together", n)
				all.open()
				katatest.Unwind(h, calls...)
				return
			}
			v, err := c.Result()
			if c.Panicked() {
				return
			}
			if err == nil {
				t.Errorf("all %d replicas failed at the same instant, but First returned (%q, nil): every failure "+
					"is an error; when every replica failed, return all their errors", n, v)
				return
			}
			for i, e := range errs[k] {
				if errors.Is(err, e) {
					continue
				}
				if msg := katatest.LostWrap(err, e, `fmt.Errorf("replica %d: %w", i, err)`); msg != "" {
					t.Errorf("every replica failed and First returned %q: %s", err, msg)
					return
				}
				t.Errorf("all %d replicas failed at the same instant, and First returned %q, without the error of "+
					"replica %d (%q): it returned before that failure was recorded. When the last replica fails, "+
					"the error holds every failure: decide that every replica failed only from failures already "+
					"recorded, counting each one in the same step that records its error (under one lock, or as "+
					"First reads it from the replies), never counted first and recorded after", n, err, i, e)
				return
			}
			msg, prev := err.Error(), -1
			for i, e := range errs[k] {
				tag := fmt.Sprintf("replica %d: %v", i, e)
				at := strings.Index(msg, tag)
				if at <= prev {
					t.Errorf("every replica failed and First returned %q: the error must tag each replica's error "+
						"with its index in calls, in the order of calls (%q next), whatever order they failed in",
						msg, tag)
					return
				}
				prev = at
			}
			if v != "" {
				t.Errorf("every replica failed, but First returned the value %q: every failure returns the zero "+
					"value of T, not what a failed replica returned along with its error", v)
				return
			}
		}
		for _, c := range calls {
			if _, _, ok := c.Finish("First"); !ok {
				return
			}
		}
	})
}

// testTogetherFirst is one caller of TestR1_ASuccessAmongAnswersThatCameTogetherWins.
type testTogetherFirst struct {
	oks    []bool // which replicas succeed; they all answer at once when called
	clk    *katatest.HeldClock
	called *katatest.Recorder[int]
	c      *katatest.Call[string]
}

func (f *testTogetherFirst) value(i int) string { return fmt.Sprintf("%d.99", 10+i) }

func (f *testTogetherFirst) String() string {
	var parts []string
	for i, ok := range f.oks {
		if ok {
			parts = append(parts, fmt.Sprintf("replica %d succeeds with %q", i, f.value(i)))
		} else {
			parts = append(parts, fmt.Sprintf("replica %d fails", i))
		}
	}
	return strings.Join(parts, ", ")
}

func TestR1_ASuccessAmongAnswersThatCameTogetherWins(t *testing.T) {
	shapes := [][]bool{
		{false, true},               // the success is the last replica in calls
		{false, false, true},        // two failures, then the success
		{true, false},               // the success first in calls
		{false, true, false, false}, // the success among failures
		{true, true},                // every replica succeeds
		{false, false, false, true},
	}
	shapes = slices.Concat(shapes, shapes, shapes) // each shape called by three goroutines at once
	katatest.Repeat(t, 5, func(h *katatest.H) {
		firsts := make([]*testTogetherFirst, len(shapes))
		calls := make([]*katatest.Call[string], len(shapes))
		for k, oks := range shapes {
			f := &testTogetherFirst{oks: oks, clk: h.HeldClock(), called: &katatest.Recorder[int]{}}
			f.clk.HoldNextTimer(true)
			reps := make([]testCall, len(oks))
			for i, ok := range oks {
				reps[i] = func(context.Context) (string, error) {
					f.called.Add(i)
					if ok {
						return f.value(i), nil
					}
					return "stale", fmt.Errorf("503 busy (region %d)", i)
				}
			}
			f.c = katatest.Start(h, func(ctx context.Context) (string, error) {
				return First(ctx, f.clk, time.Second, reps...)
			})
			firsts[k], calls[k] = f, f.c
		}
		// Each First is held right after it made its first timer; its
		// replicas, which answer at once, may all answer meanwhile.
		synctest.Wait()
		for _, f := range firsts {
			f.clk.HoldNextTimer(false)
			f.clk.Gate.Release()
		}
		synctest.Wait()
		for _, f := range firsts {
			var wins []string
			for i, ok := range f.oks {
				if ok {
					wins = append(wins, f.value(i))
				}
			}
			if !f.c.Returned() {
				t.Errorf("First(%s), every replica answering at once: a replica succeeded, but First was still "+
					"waiting: return the first success at once", f)
				katatest.Unwind(h, calls...)
				return
			}
			v, err := f.c.Result()
			if f.c.Panicked() {
				return
			}
			if err != nil || !slices.Contains(wins, v) {
				when := "by the time First looked"
				if f.clk.Held() && len(f.called.All()) == len(f.oks) {
					when = "while First was held right after it made its first timer on clk, before it looked"
				}
				got := "nil"
				if err != nil {
					got = fmt.Sprintf("%q", err)
				}
				t.Errorf("First(%s): every replica answered at the same instant, %s, and First returned (%q, %s) "+
					"instead of a success (one of %q): a success is an answer even when every other replica has "+
					"answered too by the time First looks. Decide that every replica failed only from failures "+
					"counted, never from every replica having returned: the one that returned last may have "+
					"succeeded", f, when, v, got, wins)
				katatest.Unwind(h, calls...)
				return
			}
		}
		for _, c := range calls {
			if _, _, ok := c.Finish("First"); !ok {
				return
			}
		}
	})
}

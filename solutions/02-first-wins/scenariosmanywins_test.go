package firstwins

// R1 and B1 when several replicas succeed close together: the first
// replica whose call returns a nil error wins, and First (or Hedge)
// returns its value, not the value of a success that came a moment later.
//
// "First" shows only as an order, so each successful replica takes a
// number from one counter as its very last act before it returns. The
// scenarios run on one processor (GOMAXPROCS 1) and without yields
// (shake.Off): a replica's goroutine runs on from taking its number,
// through its return, to whatever the code does with the answer (a send,
// a lock and a write) until it blocks or ends, and no other replica runs
// in between. So the winner is the success with the lowest number. Every
// replica of several callers is held and then let go at one instant; the
// goroutine a win wakes (First's) runs after the replicas already waiting
// to run about half the time (the race detector's scheduler puts a
// goroutine it wakes either next or last), and then a design that decides
// the winner in one place and reads its value in another (a slot every
// success writes, the last writer winning; the answers scanned after the
// wake-up) returns a later success's value. A scenario fails when two or
// more of its callers return a later success: the runtime itself may
// pause one replica between its number and its return (a preemption),
// whatever the design, while a late read shows in about every other
// caller.

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

// What a replica of testManyWins does once it is let go.
const (
	testManySucceeds = iota // answers its own value, nil
	testManyFails           // answers an error of its own
	testManyRuns            // keeps working: answers when its ctx is cancelled, or once the test has read the results
)

const testManyUnit = 10 * time.Millisecond

// testManyErr is a replica's own error, a distinct value per replica.
type testManyErr struct{ caller, replica int }

func (e *testManyErr) Error() string {
	return fmt.Sprintf("503 busy (caller %d, region %d)", e.caller, e.replica)
}

// testManyCaller is one caller's replicas.
type testManyCaller struct {
	kinds   []int
	empty   int           // the success that answers "" (the zero value of T), or -1
	delay   time.Duration // Hedge's delay
	timeout time.Duration
}

func (c testManyCaller) value(k, i int) string {
	if i == c.empty {
		return ""
	}
	return fmt.Sprintf("%d.%d9", 10+i, k)
}

// started is how far the clock must move until every replica has started.
func (c testManyCaller) started() time.Duration {
	if c.delay <= 0 {
		return 0
	}
	return time.Duration(len(c.kinds)-1) * c.delay
}

type testManyWins struct {
	hedge   bool
	callers []testManyCaller
}

func (s testManyWins) fn() string {
	if s.hedge {
		return "Hedge"
	}
	return "First"
}

func (c testManyCaller) describe(fn string, k int) string {
	var b strings.Builder
	if fn == "Hedge" {
		fmt.Fprintf(&b, "Hedge(timeout %v, delay %v)", c.timeout, c.delay)
	} else {
		fmt.Fprintf(&b, "First(timeout %v)", c.timeout)
	}
	b.WriteString(" with")
	for i, kind := range c.kinds {
		if i > 0 {
			b.WriteString(",")
		}
		switch kind {
		case testManySucceeds:
			fmt.Fprintf(&b, " replica %d succeeding with %q", i, c.value(k, i))
		case testManyFails:
			fmt.Fprintf(&b, " replica %d failing", i)
		default:
			fmt.Fprintf(&b, " replica %d still working (it answers when its ctx is cancelled)", i)
		}
	}
	return b.String()
}

func (s testManyWins) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d goroutines each call %s at once:", len(s.callers), s.fn())
	for k, c := range s.callers {
		fmt.Fprintf(&b, "\n  caller %d: %s", k, c.describe(s.fn(), k))
	}
	if s.hedge {
		b.WriteString("\n  the clock moves until every replica has started;")
	}
	b.WriteString("\n  every replica is held, then all are let go at one instant and answer at once")
	return b.String()
}

func testDrawManyWins(hedge bool) func(*rapid.T) testManyWins {
	return func(r *rapid.T) testManyWins {
		s := testManyWins{hedge: hedge}
		callers := rapid.IntRange(7, 8).Draw(r, "callers")
		for k := range callers {
			n := rapid.IntRange(2, 5).Draw(r, fmt.Sprintf("caller %d: replicas", k))
			c := testManyCaller{empty: -1}
			succeeding := 0
			for i := range n {
				kind := rapid.IntRange(0, 4).Draw(r, fmt.Sprintf("caller %d: replica %d (0-2 succeeds, 3 fails, 4 keeps working)", k, i))
				switch {
				case kind <= 2:
					c.kinds = append(c.kinds, testManySucceeds)
					succeeding++
				case kind == 3:
					c.kinds = append(c.kinds, testManyFails)
				default:
					c.kinds = append(c.kinds, testManyRuns)
				}
			}
			// Two successes at least: the one that returned first, and a later one.
			for i := 0; succeeding < 2; i++ {
				if c.kinds[i] != testManySucceeds {
					c.kinds[i] = testManySucceeds
					succeeding++
				}
			}
			if rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("caller %d: a success answers the zero value (0)", k)) == 0 {
				var wins []int
				for i, kind := range c.kinds {
					if kind == testManySucceeds {
						wins = append(wins, i)
					}
				}
				c.empty = rapid.SampledFrom(wins).Draw(r, fmt.Sprintf("caller %d: the success that answers \"\"", k))
			}
			if hedge {
				c.delay = time.Duration(rapid.IntRange(-1, 3).Draw(r, fmt.Sprintf("caller %d: delay (x10ms)", k))) * testManyUnit
			}
			c.timeout = rapid.SampledFrom([]time.Duration{0, time.Hour}).Draw(r, fmt.Sprintf("caller %d: timeout", k))
			s.callers = append(s.callers, c)
		}
		return s
	}
}

// play plays s once; it reports at once what no schedule explains, and a
// later success returned when two or more callers returned one.
func (s testManyWins) play(h *katatest.H) {
	shake.Off() // see the top of the file: a replica runs on from its number until it blocks or ends
	fn := s.fn()
	var (
		next    atomic.Int32 // the numbers the successes take
		letGo   = make(chan struct{})
		letOnce sync.Once
		done    = make(chan struct{}) // closed once the results are read: the replicas still working answer
		endOnce sync.Once
	)
	open := func() { letOnce.Do(func() { close(letGo) }) }
	end := func() { endOnce.Do(func() { close(done) }) }
	h.Own(open)
	h.Own(end)
	seqs := make([][]atomic.Int32, len(s.callers)) // 0: not returned yet
	calls := make([]*katatest.Call[string], len(s.callers))
	var moves time.Duration
	for k, c := range s.callers {
		seqs[k] = make([]atomic.Int32, len(c.kinds))
		reps := make([]testCall, len(c.kinds))
		for i, kind := range c.kinds {
			reps[i] = func(ctx context.Context) (string, error) {
				if kind == testManyRuns {
					select {
					case <-ctx.Done():
						return "", fmt.Errorf("still working (caller %d, region %d): %w", k, i, ctx.Err())
					case <-done: // nothing told it to stop: that is R4's to check
						return "", &testManyErr{k, i}
					}
				}
				<-letGo
				if kind == testManyFails {
					return "stale", &testManyErr{k, i}
				}
				v := c.value(k, i)
				seqs[k][i].Store(next.Add(1)) // the very last act before the return
				return v, nil
			}
		}
		calls[k] = katatest.Start(h, func(ctx context.Context) (string, error) {
			if s.hedge {
				return Hedge(ctx, h.Clk, c.timeout, c.delay, reps...)
			}
			return First(ctx, h.Clk, c.timeout, reps...)
		})
		moves = max(moves, c.started())
	}
	for range moves / testManyUnit {
		h.Advance(testManyUnit)
	}
	synctest.Wait()
	for k, c := range calls {
		if c.Returned() {
			if !c.Panicked() {
				v, err := c.Result()
				h.Errorf("caller %d: %s returned (%q, %v) before any replica answered: wait for the first "+
					"success", k, fn, v, err)
			}
			katatest.Unwind(h, calls...)
			return
		}
	}
	open()
	synctest.Wait()
	var late, zero []string // the callers that returned a later success; those whose first success answered ""
	for k, c := range calls {
		if !c.Returned() {
			h.Errorf("caller %d: replicas succeeded, but %s was still waiting: return the first success at "+
				"once", k, fn)
			katatest.Unwind(h, calls...)
			return
		}
		v, err := c.Result()
		if c.Panicked() {
			katatest.Unwind(h, calls...)
			return
		}
		cs := s.callers[k]
		won, wonSeq := -1, int32(0)
		got := -1
		var order []string
		for i, kind := range cs.kinds {
			if kind != testManySucceeds {
				continue
			}
			n := seqs[k][i].Load()
			if n != 0 && (won < 0 || n < wonSeq) {
				won, wonSeq = i, n
			}
			if v == cs.value(k, i) {
				got = i
			}
		}
		if err != nil || got < 0 || won < 0 {
			h.Errorf("caller %d: replicas succeeded, and %s returned (%q, %v): return the value of the first "+
				"success, with a nil error", k, fn, v, err)
			katatest.Unwind(h, calls...)
			return
		}
		if got == won {
			continue
		}
		// The successes in the order they returned, for the message.
		for n := int32(1); n <= next.Load(); n++ {
			for i := range cs.kinds {
				if seqs[k][i].Load() == n {
					order = append(order, fmt.Sprintf("replica %d (%q)", i, cs.value(k, i)))
				}
			}
		}
		what := fmt.Sprintf("caller %d: %s; the replicas that succeeded returned in this order: %s; %s returned "+
			"%q, the value of replica %d, though replica %d had returned its success before it",
			k, cs.describe(fn, k), strings.Join(order, ", "), fn, v, got, won)
		if won == cs.empty {
			zero = append(zero, what)
		} else {
			late = append(late, what)
		}
	}
	end()
	for _, c := range calls {
		if _, _, ok := c.Finish(fn); !ok {
			return
		}
	}
	if len(late)+len(zero) < 2 {
		return // none, or one: the runtime may pause a replica between its number and its return, whatever the design
	}
	if len(late) == 0 {
		h.Errorf("every replica answered at one instant, and %s returned a success that came after the first one, "+
			"when the first one answered \"\", the zero value of T. %s (and %d more of the %d callers the same way). "+
			"The README: the first replica whose call returns a nil error wins, and %s returns its value, whatever "+
			"the value: never take the zero value for no answer", fn, zero[0], len(zero)-1, len(calls), fn)
		return
	}
	h.Errorf("every replica answered at one instant, and %s returned a success that came after the first one. "+
		"%s (and %d more of the %d callers the same way). The README: the first replica whose call returns a nil "+
		"error wins, and %s returns its value. A later success took the winner's place: the winner was decided in "+
		"one place and its value read in another, after %s woke up (a result slot that every success writes, so "+
		"the last writer wins; the answers read in the order of calls once awake). Take the winner's value in the "+
		"same step that decides it: send the value itself to %s, or record it under the lock only while no "+
		"replica has won, and never let a later success change it",
		fn, late[0], len(late)+len(zero)-1, len(calls), fn, fn, fn)
}

func TestR1_ExploreTheFirstOfSuccessesTogetherWins(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	katatest.Explore(t, 3, testDrawManyWins(false), func(h *katatest.H, s testManyWins) { s.play(h) })
}

func TestB1_ExploreTheFirstOfSuccessesTogetherWins(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	katatest.Explore(t, 3, testDrawManyWins(true), func(h *katatest.H, s testManyWins) { s.play(h) })
}

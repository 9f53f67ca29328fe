package katatest

import (
	"context"
	"sync"
	"testing/synctest"

	"errors"
	"fmt"
	"github.com/anishathalye/porcupine"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"
)

// sumOf adds up to 3 numbers right: from the fourth on it drops them.
func sumOf(xs []int) int {
	s := 0
	for i, x := range xs {
		if i < 3 {
			s += x
		}
	}
	return s
}

type numbers []int

func (n numbers) String() string { return fmt.Sprintf("add %v", []int(n)) }

func drawNumbers(r *rapid.T) numbers {
	return rapid.SliceOfN(rapid.IntRange(1, 9), 0, 12).Draw(r, "numbers")
}

func TestFixtureExploreShrinks(t *testing.T) {
	fixture(t)
	// What the shrink finds, not how fast: on a loaded machine 400ms may
	// not reach the smallest scenario.
	shrinkEach, shrinkBudget.total = time.Minute, time.Minute
	Explore(t, 200, drawNumbers, func(h *H, xs numbers) {
		want := 0
		for _, x := range xs {
			want += x
		}
		assert.Equal(h, want, sumOf(xs), "the sum of %d numbers", len(xs))
	})
}

func TestFixtureExplorePanics(t *testing.T) {
	fixture(t)
	Explore(t, 200, drawNumbers, func(h *H, xs numbers) {
		c := Go(h, func() (int, error) {
			if len(xs) > 4 {
				panic(errors.New("too many"))
			}
			return len(xs), nil
		})
		c.Finish("the call")
	})
}

func TestFixtureReplayStopsAtTheFirstFailure(t *testing.T) {
	fixture(t)
	Replay(t, []numbers{{1, 2}, {1, 2, 3, 4}, {5, 5, 5, 5, 5}}, func(h *H, xs numbers) {
		want := 0
		for _, x := range xs {
			want += x
		}
		assert.Equal(h, want, sumOf(xs), "the sum of %d numbers", len(xs))
	})
}

func TestExplorePassesCorrectCode(t *testing.T) {
	scenarios := 0
	Explore(t, 50, drawNumbers, func(h *H, xs numbers) {
		scenarios++
		assert.Zero(h, h.Elapsed(), "every scenario gets a fresh mock clock")
		h.Advance(1)
		assert.LessOrEqual(h, len(xs), 12)
	})
	assert.Equal(t, 50, scenarios, "Explore plays as many scenarios as it is asked to")
}

// counter is a register whose Inc reads and writes in two critical
// sections: two goroutines at once can both read n and both write n+1.
// Between the two it waits at between, if set, so a test can hold every
// caller in the window.
type counter struct {
	mu      sync.Mutex
	n       int
	between *Gate
}

func (c *counter) Inc() int {
	c.mu.Lock()
	n := c.n
	c.mu.Unlock()
	if c.between != nil {
		c.between.Hold(context.Background())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n = n + 1
	return c.n
}

// counterModel: Inc returns the count after it.
var counterModel = porcupine.Model{
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		n := state.(int) + 1
		return output.(int) == n, n
	},
	DescribeOperation: func(_, output any) string { return fmt.Sprintf("Inc() = %d", output) },
}

func TestLinearizableAcceptsAnyOrderOfOverlappingCalls(t *testing.T) {
	Run(t, func(h *H) {
		var hi History
		// Two overlapping calls may return 2 and 1: the second started
		// before the first returned.
		a := hi.Call(0, nil)
		b := hi.Call(1, nil)
		b(1)
		a(2)
		assert.True(t, h.Linearizable(counterModel, &hi, "Inc"))
	})
}

func TestFixtureLinearizableCatchesALostUpdate(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		c := counter{between: NewGate()}
		var hi History
		var wg sync.WaitGroup
		for g := range 3 {
			wg.Go(func() {
				done := hi.Call(g, nil)
				done(c.Inc())
			})
		}
		synctest.Wait() // every caller has read n
		c.between.Release()
		wg.Wait()
		h.Linearizable(counterModel, &hi, "Inc")
	})
}

func TestAScenarioStuckForGoodIsShownBeforeItsPrecondition(t *testing.T) {
	stuck := stuckPrefix + ": it waits for something that never comes"
	for _, tc := range []struct {
		msgs []string
		want string
	}{
		{[]string{"precondition (R1): only 0 of 3 calls were in flight", stuck}, stuck},
		{[]string{"run 2: precondition: every consumer is inside consume", stuck}, stuck},
		{[]string{"precondition: replica 0 had not been called"}, "precondition: replica 0 had not been called"},
		{[]string{"every way out of Submit must call Done", stuck}, "every way out of Submit must call Done"},
		{[]string{stuck, "precondition: after the deadlock"}, stuck},
	} {
		got, failed := (&record{msgs: tc.msgs}).first()
		assert.True(t, failed)
		assert.Equal(t, tc.want, got, "record %q", tc.msgs)
	}
	_, failed := (&record{}).first()
	assert.False(t, failed, "a scenario that reported nothing did not fail")
}

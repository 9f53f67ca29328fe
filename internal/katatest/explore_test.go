package katatest

import (
	"errors"
	"fmt"
	"testing"

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

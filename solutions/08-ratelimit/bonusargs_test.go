package ratelimit

// B1: Combine(ls...) is given the caller's own slice. The Multi combines
// the limiters it was given, whatever the caller does with that slice
// afterwards, and the caller's slice stays as it was.

import (
	"testing"

	"gokata/internal/katatest"
)

func TestB1_CombineKeepsTheLimitersItWasGiven(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		a, b, empty := New(h.Clk, 1, 1), New(h.Clk, 1, 1), New(h.Clk, 1, 1)
		if !empty.Allow() {
			return // a new limiter with burst 1 has a token: graded by R1
		}
		ls := []*Limiter{b, a} // not in the order they were made
		m := Combine(ls...)
		if ls[0] != b || ls[1] != a {
			t.Errorf("ls := []*Limiter{b, a}; Combine(ls...) changed the caller's slice (its order or its " +
				"elements): Combine is handed the caller's own slice, so sort or compact a copy (slices.Clone) " +
				"and leave the arguments as they were given")
			return
		}
		for i := range ls {
			ls[i] = empty // the caller reuses its slice
		}
		if m.Allow() {
			return
		}
		// The same Multi over a slice nobody touches: if it refuses too,
		// the Allow itself is wrong, which the other B1 tests grade.
		if !Combine(New(h.Clk, 1, 1), New(h.Clk, 1, 1)).Allow() {
			return
		}
		t.Errorf("m := Combine(ls...) over b and a, both with a token; then the caller put another limiter, one " +
			"with no token, in every element of ls, and m.Allow() returned false: the Multi combines the limiters " +
			"it was given, so keep a copy of them, not the caller's slice")
	})
}

package ratelimit

// B1: a Multi's Allow takes from every limiter or from none, at one
// instant for every observer. Many rounds at one instant of the mock clock
// each: limiters with tokens left ("holders") and limiters with none
// ("empties"), Multis that each include an empty one, and goroutines that
// call the Multis' Allow and the holders' own Allow all at once. Every
// Multi must answer false and take nothing, so each holder's own Allow
// finds its tokens there (the test never asks for more than it holds), and
// whatever the direct calls did not take is still there after the round.

import (
	"fmt"
	"strings"
	"testing"

	"gokata/internal/katatest"
)

// testUndoRound is one round. Limiters are named a, b … (holders) then
// e, f … (empties), made in that order; rate 1 per second, so nothing comes
// back while the clock stands still.
type testUndoRound struct {
	tokens  []int   // per holder: the tokens it has at the round's instant
	burst   []int   // per holder: its burst (≥ tokens; the rest taken before the round)
	empties int     // limiters of burst 1 whose token was taken before the round
	multis  [][]int // each Multi's limiters: holders 0…, empties len(tokens)…, in the order they were made
	callers []int   // per Multi: goroutines calling its Allow, twice each
	direct  []int   // per holder: goroutines calling its own Allow, once each (≤ its tokens)
}

func (r testUndoRound) name(i int) string {
	if i < len(r.tokens) {
		return string(rune('a' + i))
	}
	return string(rune('e' + i - len(r.tokens)))
}

func (r testUndoRound) multiName(m int) string {
	names := make([]string, len(r.multis[m]))
	for j, i := range r.multis[m] {
		names[j] = r.name(i)
	}
	return fmt.Sprintf("m%d = Combine(%s)", m+1, strings.Join(names, ", "))
}

func (r testUndoRound) String() string {
	var parts []string
	for i, n := range r.tokens {
		parts = append(parts, fmt.Sprintf("%s = New(clk, 1, %d) with %d token(s) left", r.name(i), r.burst[i], n))
	}
	for i := range r.empties {
		parts = append(parts, fmt.Sprintf("%s = New(clk, 1, 1) with none", r.name(len(r.tokens)+i)))
	}
	for m := range r.multis {
		parts = append(parts, r.multiName(m))
	}
	var calls []string
	for m, n := range r.callers {
		calls = append(calls, fmt.Sprintf("%d goroutine(s) calling m%d.Allow() twice", n, m+1))
	}
	for i, n := range r.direct {
		calls = append(calls, fmt.Sprintf("%d goroutine(s) calling %s.Allow() once", n, r.name(i)))
	}
	return strings.Join(parts, "; ") + "; then, all at once at the same instant: " + strings.Join(calls, ", ")
}

var testUndoRounds = []testUndoRound{
	{tokens: []int{1}, burst: []int{1}, empties: 1, multis: [][]int{{0, 1}}, callers: []int{1}, direct: []int{1}},
	{tokens: []int{2}, burst: []int{2}, empties: 1, multis: [][]int{{0, 1}}, callers: []int{2}, direct: []int{1}},
	{tokens: []int{1, 1}, burst: []int{1, 2}, empties: 1, multis: [][]int{{0, 2}, {1, 2}, {0, 1, 2}},
		callers: []int{1, 1, 1}, direct: []int{1, 1}},
	{tokens: []int{2}, burst: []int{3}, empties: 2, multis: [][]int{{0, 1}, {0, 2}}, callers: []int{2, 1}, direct: []int{2}},
	{tokens: []int{1}, burst: []int{2}, empties: 1, multis: [][]int{{0, 1}}, callers: []int{3}, direct: []int{1}},
	{tokens: []int{2, 1}, burst: []int{2, 1}, empties: 1, multis: [][]int{{0, 1, 2}}, callers: []int{2}, direct: []int{1, 1}},
}

const testUndoFix = "take from all under all their locks, or from none"

// play plays the round; false once it failed (reported).
func (r testUndoRound) play(h *katatest.H, round int) bool {
	ls := make([]*Limiter, len(r.tokens)+r.empties)
	for i := range ls {
		burst, left := 1, 0
		if i < len(r.tokens) {
			burst, left = r.burst[i], r.tokens[i]
		}
		ls[i] = New(h.Clk, 1, burst)
		for range burst - left {
			if !ls[i].Allow() {
				h.Errorf("round %d, before the calls: a new limiter of burst %d refused Allow number %d at the "+
					"instant it was made; it starts full", round, burst, burst-left)
				return false
			}
		}
	}
	ms := make([]*Multi, len(r.multis))
	for m, set := range r.multis {
		args := make([]*Limiter, len(set))
		for j, i := range set {
			args[j] = ls[i]
		}
		ms[m] = Combine(args...)
	}
	start := make(chan struct{})
	type multiCall struct {
		m int
		c *katatest.Call[[2]bool]
	}
	type directCall struct {
		l int
		c *katatest.Call[bool]
	}
	var mcs []multiCall
	var dcs []directCall
	// Interleave the goroutines: a Multi's, a holder's, a Multi's …
	for k := 0; ; k++ {
		more := false
		for m, n := range r.callers {
			if k < n {
				more = true
				mcs = append(mcs, multiCall{m, katatest.Go(h, func() ([2]bool, error) {
					<-start
					first := ms[m].Allow()
					return [2]bool{first, ms[m].Allow()}, nil
				})})
			}
		}
		for i, n := range r.direct {
			if k < n {
				more = true
				dcs = append(dcs, directCall{i, katatest.Go(h, func() (bool, error) {
					<-start
					return ls[i].Allow(), nil
				})})
			}
		}
		if !more {
			break
		}
	}
	stop := func() {
		for _, c := range mcs {
			c.c.Stop()
		}
		for _, c := range dcs {
			c.c.Stop()
		}
	}
	close(start)
	if stuck := h.Settle(); stuck != nil {
		h.Errorf("round %d (%v): calls were stuck on a limiter's mutex with the mock clock stopped; Allow never "+
			"waits. Stuck:\n\t%s", round, r, strings.Join(stuck, "\n\t"))
		stop()
		return false
	}
	for _, c := range mcs {
		if !c.c.Returned() {
			h.Errorf("round %d (%v): m%d.Allow() did not return, with the mock clock stopped; Allow never waits",
				round, r, c.m+1)
			stop()
			return false
		}
	}
	for _, c := range dcs {
		if !c.c.Returned() {
			h.Errorf("round %d (%v): %s.Allow() did not return, with the mock clock stopped; Allow never waits",
				round, r, r.name(c.l))
			stop()
			return false
		}
	}
	for _, c := range mcs {
		if c.c.Panicked() {
			return false
		}
	}
	for _, c := range dcs {
		if c.c.Panicked() {
			return false
		}
	}
	for _, c := range mcs {
		if got, _ := c.c.Result(); got[0] || got[1] {
			h.Errorf("round %d: %s.Allow() answered true, but one of its limiters had no token: Allow takes from "+
				"every limiter or from none; %s.\nThe round: %v", round, r.multiName(c.m), testUndoFix, r)
			return false
		}
	}
	for _, c := range dcs {
		if got, _ := c.c.Result(); !got {
			h.Errorf("Allow of a Multi took a token from one limiter and gave it back later: a direct Allow on that "+
				"limiter found it gone meanwhile; %s. In round %d, %s had %d token(s) and %d direct Allow call(s), "+
				"and every Multi over it includes a limiter with no token, so every Multi's Allow must answer false "+
				"without touching %s and each direct %s.Allow() must answer true, in whatever order the calls ran; "+
				"one answered false.\nThe round: %v", testUndoFix, round, r.name(c.l), r.tokens[c.l],
				r.direct[c.l], r.name(c.l), r.name(c.l), r)
			return false
		}
	}
	for i, n := range r.tokens {
		left := 0
		for range n + 1 {
			if ls[i].Allow() {
				left++
			}
		}
		if want := n - r.direct[i]; left != want {
			h.Errorf("Allow of a Multi took a token from one limiter and gave it back later, or never: after the "+
				"round, %s had %d token(s) left; want %d: it had %d and its own calls took %d, and every Multi "+
				"over it answered false, so they must have taken nothing of it (a give-back that comes after "+
				"another call took a token is refused, and the token is lost); %s.\nRound %d: %v",
				r.name(i), left, want, n, r.direct[i], testUndoFix, round, r)
			return false
		}
	}
	return true
}

func TestB1_ARefusedCombinedAllowNeverHidesATokenFromOthers(t *testing.T) {
	katatest.Repeat(t, 3, func(h *katatest.H) {
		for i, r := range testUndoRounds {
			if !r.play(h, i+1) {
				return
			}
		}
	})
}

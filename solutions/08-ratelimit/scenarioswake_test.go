package ratelimit

// R3 at any rate: waiters that start at once on one limiter, at rates as
// people write them (0.7, 55, 2.5, 0.03 per second), each woken exactly
// when the README's expression says its token is due.

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testWakeScenario: a new limiter; the clock moves offset; Allow is called
// allows times (allows ≤ burst, so each finds a token); then waiters Waits
// start at once, and the clock moves to 1ns before each token's due time,
// then to it.
type testWakeScenario struct {
	r       float64
	burst   int
	offset  time.Duration
	allows  int
	waiters int
}

func (s testWakeScenario) String() string {
	out := fmt.Sprintf("New(clk, %v per second, burst %d)", s.r, s.burst)
	if s.offset > 0 {
		out += fmt.Sprintf("; move the clock %v", s.offset)
	}
	if s.allows > 0 {
		out += fmt.Sprintf("; Allow ×%d", s.allows)
	}
	return out + fmt.Sprintf("; %d goroutines call Wait at once; move the clock to 1ns before each token's "+
		"due time, then to it", s.waiters)
}

// testDrawWake draws rates as people write them, one or two digits, from a
// token every 100s to 99 per second, and a third.
func testDrawWake(r *rapid.T) testWakeScenario {
	m := rapid.IntRange(1, 99).Draw(r, "rate's digits")
	div := rapid.SampledFrom([]float64{1, 10, 100}).Draw(r, "divided by")
	s := testWakeScenario{r: float64(m) / div}
	if rapid.IntRange(0, 9).Draw(r, "a third per second (1 in 10)") == 0 {
		s.r = 1.0 / 3
	}
	s.burst = rapid.IntRange(1, 3).Draw(r, "burst")
	if rapid.Bool().Draw(r, "clock moves first") {
		s.offset = time.Duration(rapid.Int64Range(1, int64(time.Second)).Draw(r, "offset ns"))
	}
	s.allows = rapid.IntRange(0, s.burst).Draw(r, "Allow calls")
	s.waiters = rapid.IntRange(1, 8).Draw(r, "waiters")
	return s
}

// testFixedWake are scenarios every run plays besides the explored ones:
// rates at which a later token is due at a whole number of milliseconds
// (the 8th token past the burst at 0.7 per second, 10s after the anchor;
// the 11th at 55 per second, 200ms; the 9th at 75, 120ms; the 3rd at 2.5,
// 1.2s), where a float expression other than the README's one rounds to
// the nanosecond after.
var testFixedWake = []testWakeScenario{
	{r: 0.7, burst: 1, allows: 1, waiters: 8},
	{r: 55, burst: 2, allows: 2, waiters: 11},
	{r: 75, burst: 1, allows: 1, waiters: 9},
	{r: 2.5, burst: 2, allows: 1, waiters: 4},
}

func (s testWakeScenario) play(h *katatest.H) {
	l := New(h.Clk, s.r, s.burst)
	if s.offset > 0 {
		h.Advance(s.offset)
	}
	for i := 1; i <= s.allows; i++ {
		if !l.Allow() {
			h.Errorf("Allow %d of a new limiter with burst %d returned false: a new limiter starts full", i, s.burst)
			return
		}
	}
	ws := make([]katatest.ErrCall, s.waiters)
	for i := range ws {
		ws[i] = katatest.StartErr(h, l.Wait)
	}
	if !testSettle(h, fmt.Sprintf("%d Waits starting at once", s.waiters), ws...) || testBroken(h, ws...) {
		return
	}
	// The waiters take tokens allows+1 … allows+waiters since the anchor,
	// the instant of the first call, in whatever order they reserve.
	dues := make([]time.Duration, s.waiters)
	for i := range dues {
		dues[i] = s.offset + testDue(s.r, s.burst, s.allows+i+1)
	}
	// check that exactly the waiters whose token is due by now returned.
	check := func(when string, atStart bool) bool {
		now := h.Elapsed()
		want := 0
		for _, d := range dues {
			if d <= now {
				want++
			}
		}
		got := testReturned(ws)
		if got == want {
			return true
		}
		rule := func(k int) string { // the waiters' k-th token, k ≥ 1
			j := s.allows + k
			return fmt.Sprintf("at %v per second with burst %d, token j = %d since the anchor at %v (the first call) "+
				"is due at anchor + ⌈(j − burst)·1e9/r⌉ = %v + ⌈%d·1e9/%v⌉ ns = %v", s.r, s.burst, j, s.offset,
				s.offset, j-s.burst, s.r, dues[k-1])
		}
		switch {
		case got < want && atStart:
			h.Errorf("a Wait did not return at once with a token there (%d of the %d Waits had returned, with the "+
				"mock clock stopped; want %d): a token due now returns at once, without a timer", got, s.waiters, want)
		case got < want:
			h.Errorf("a Wait was still waiting at %v (%s), when its token was due: %s; %d of the %d waiters had "+
				"returned, want %d. Compute the due time as time.Duration(math.Ceil(float64(j-burst) * 1e9 / r)), "+
				"that expression in that order: a stored interval 1e9/r times k, k/r·1e9 or k·(1/r)·1e9 round "+
				"differently and land a nanosecond late at some rates", now, when, rule(want), got, s.waiters, want)
		default:
			h.Errorf("%d of the %d waiters had returned at %v (%s); want %d: a Wait returned before its token was "+
				"due (%s), or two waiters woke on one token; each Wait reserves its own token as it starts and "+
				"returns exactly when it is due", got, s.waiters, now, when, want, rule(want+1))
		}
		katatest.Unwind(h, ws...)
		return false
	}
	if !check("right after the Waits started", true) {
		return
	}
	for _, d := range dues {
		if d <= h.Elapsed() {
			continue
		}
		h.Advance(d - h.Elapsed() - 1)
		if !check("1ns before the next token", false) {
			return
		}
		h.Advance(1)
		if !check("the next token's due time", false) {
			return
		}
	}
	for i, w := range ws {
		err, ok := w.Finish("Wait")
		if !ok {
			return
		}
		if err != nil {
			h.Errorf("Wait %d returned %q when its token was due; want nil", i+1, err)
			return
		}
	}
}

func TestR3_ExploreWaitersWakeWhenTheirTokenIsDueAtAnyRate(t *testing.T) {
	katatest.Replay(t, testFixedWake, func(h *katatest.H, s testWakeScenario) { s.play(h) })
	katatest.Explore(t, 10, testDrawWake, func(h *katatest.H, s testWakeScenario) { s.play(h) })
}

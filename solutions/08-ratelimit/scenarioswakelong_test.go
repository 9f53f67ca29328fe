package ratelimit

// R3 over a long run: a few goroutines call Wait again and again, each as
// soon as its last Wait returned, so the limiter stays in debt and every
// due time is counted from one anchor, token after token. At rates whose
// float arithmetic rounds unevenly, only the README's expression, in its
// order, puts every one of them on the right nanosecond: k/r·1e9, k·(1/r)·1e9
// and a stored 1e9/r times k agree with it on the first tokens and land a
// nanosecond late or early on some later one.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testLongRunScenario: a new limiter; the clock moves offset; then one
// goroutine per entry of waits calls Wait that many times in a row, all
// starting at once; the clock moves to 1ns before each token's due time,
// then to it.
type testLongRunScenario struct {
	r      float64
	burst  int
	offset time.Duration
	waits  []int
}

func (s testLongRunScenario) tokens() int {
	n := 0
	for _, w := range s.waits {
		n += w
	}
	return n
}

func (s testLongRunScenario) String() string {
	out := fmt.Sprintf("New(clk, %v per second, burst %d)", s.r, s.burst)
	if s.offset > 0 {
		out += fmt.Sprintf("; move the clock %v", s.offset)
	}
	return out + fmt.Sprintf("; %d goroutines start at once, each calling Wait again as soon as its last Wait "+
		"returned, %v times each (%d tokens, %d past the burst); move the clock to 1ns before each token's due "+
		"time, then to it", len(s.waits), s.waits, s.tokens(), s.tokens()-s.burst)
}

// testAwkwardRates are rates as people write them at which the float
// arithmetic rounds unevenly: for each, one of k/r·1e9, k·(1/r)·1e9 and a
// stored 1e9/r times k puts a token within the first 33 past the burst a
// nanosecond away from ⌈k·1e9/r⌉ (at 3 summed intervals drift).
var testAwkwardRates = []float64{0.7, 1.4, 5.6, 0.35, 0.011, 0.044, 0.352, 0.704, 0.03, 0.11, 3.3, 55, 75, 2.5, 10, 250, 3}

// testDrawLongRun draws a rate from testAwkwardRates, a burst, 1 to 4
// goroutines and 24 to 33 tokens past the burst among them.
func testDrawLongRun(r *rapid.T) testLongRunScenario {
	s := testLongRunScenario{
		r:     rapid.SampledFrom(testAwkwardRates).Draw(r, "rate"),
		burst: rapid.SampledFrom([]int{1, 1, 2, 3, 10}).Draw(r, "burst"),
	}
	if rapid.Bool().Draw(r, "clock moves first") {
		s.offset = time.Duration(rapid.Int64Range(1, int64(time.Second)).Draw(r, "offset ns"))
	}
	callers := rapid.IntRange(1, 4).Draw(r, "goroutines")
	left := s.burst + rapid.IntRange(24, 33).Draw(r, "tokens past the burst")
	s.waits = make([]int, callers)
	for i := range s.waits {
		if i == callers-1 {
			s.waits[i] = left
			break
		}
		s.waits[i] = rapid.IntRange(1, left-(callers-1-i)).Draw(r, "Waits of a goroutine")
		left -= s.waits[i]
	}
	return s
}

// testFixedLongRuns are played every run besides the explored ones: the
// README's example, 10 per second with bursts of 10, over 90 tokens past
// the burst (at 10 per second k/r·1e9 puts the 83rd a nanosecond late), and
// 0.7 per second over 24 (k/r·1e9 puts the 21st a nanosecond late).
var testFixedLongRuns = []testLongRunScenario{
	{r: 10, burst: 10, waits: []int{34, 33, 33}},
	{r: 0.7, burst: 1, waits: []int{13, 12}},
}

func (s testLongRunScenario) play(h *katatest.H) {
	l := New(h.Clk, s.r, s.burst)
	if s.offset > 0 {
		h.Advance(s.offset)
	}
	var returned atomic.Int64 // Waits that returned nil
	cs := make([]katatest.ErrCall, len(s.waits))
	for i, n := range s.waits {
		cs[i] = katatest.StartErr(h, func(ctx context.Context) error {
			for k := 1; k <= n; k++ {
				if err := l.Wait(ctx); err != nil {
					return fmt.Errorf("Wait %d of %d of this goroutine: %w", k, n, err)
				}
				returned.Add(1)
			}
			return nil
		})
	}
	if !testSettle(h, fmt.Sprintf("%d goroutines calling Wait at once", len(s.waits)), cs...) || testBroken(h, cs...) {
		return
	}
	// Token j since the anchor, the instant of the first Wait, is due at
	// offset + testDue(r, burst, j), whichever goroutine reserved it: every
	// Wait reserves the next token as it starts, before its due time.
	n := s.tokens()
	due := func(j int) time.Duration { return s.offset + testDue(s.r, s.burst, j) }
	// check that exactly the Waits whose token is due by now returned.
	check := func(when string) bool {
		now := h.Elapsed()
		want := 0
		for want < n && due(want+1) <= now {
			want++
		}
		got := int(returned.Load())
		if got == want {
			return true
		}
		rule := func(j int) string {
			return fmt.Sprintf("at %v per second with burst %d, token j = %d since the anchor at %v (the first Wait) "+
				"is due at anchor + ⌈(j − burst)·1e9/r⌉ = %v + ⌈%d·1e9/%v⌉ ns = %v", s.r, s.burst, j, s.offset,
				s.offset, j-s.burst, s.r, due(j))
		}
		order := "Compute every due time from the anchor as time.Duration(math.Ceil(float64(j-burst) * 1e9 / r)), " +
			"that expression in that order: k/r·1e9 (seconds first), k·(1/r)·1e9 or a stored interval 1e9/r times k " +
			"agree with it on the first tokens but put some later token of a long run a nanosecond off"
		switch {
		case got < want:
			h.Errorf("a Wait was still waiting at %v (%s), when its token was due: %s; %d Waits had returned, "+
				"want %d. %s", now, when, rule(want), got, want, order)
		default:
			h.Errorf("%d Waits had returned at %v (%s); want %d: a Wait returned before its token was due (%s), "+
				"not a nanosecond before is allowed. %s", got, now, when, want, rule(want+1), order)
		}
		katatest.Unwind(h, cs...)
		return false
	}
	if !check("right after the goroutines started") {
		return
	}
	for j := 1; j <= n; j++ {
		d := due(j)
		if d <= h.Elapsed() {
			continue
		}
		h.Advance(d - h.Elapsed() - 1)
		if !check(fmt.Sprintf("1ns before token %d was due", j)) {
			return
		}
		h.Advance(1)
		if !check(fmt.Sprintf("token %d's due time", j)) {
			return
		}
	}
	for _, c := range cs {
		err, ok := c.Finish("Wait")
		if !ok {
			return
		}
		if err != nil {
			h.Errorf("%v; want nil: every Wait of the run had a token, and no ctx was cancelled", err)
			return
		}
	}
}

func TestR3_ExploreALongRunOfWaitsStaysOnTheNanosecond(t *testing.T) {
	katatest.Replay(t, testFixedLongRuns, func(h *katatest.H, s testLongRunScenario) { s.play(h) })
	katatest.Explore(t, 3, testDrawLongRun, func(h *katatest.H, s testLongRunScenario) { s.play(h) })
}

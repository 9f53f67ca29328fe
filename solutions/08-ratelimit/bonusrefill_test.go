package ratelimit

// B1, a cancel after the bucket filled again: a combined Wait takes its
// token of a fast limiter at once and sleeps for a slow limiter's token;
// meanwhile the fast limiter fills up again (all its tokens back, the
// time it sits full lost) and calls on it alone take tokens from a new
// anchor, all at once. The cancel that follows must not give the fast
// limiter a token: the one the Wait took came back with the rest when the
// bucket filled, and since then calls took tokens after it. Right after
// the cancel the fast limiter has exactly burst minus the tokens taken
// since its new anchor, whatever their count, the count the Wait left
// behind included.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testRefillScenario struct {
	fastRate  float64
	fastBurst int
	slowRate  float64
	slowFirst bool          // slow is made (and passed to Combine) first
	pos       int           // the combined Wait's token of fast is token pos since fast's anchor
	extra     time.Duration // how long after fast is full again the calls come
	calls     []bool        // the calls on fast alone after it filled, all at once: true = Wait, false = Allow
}

// testRefillAfter is ⌈k·1e9/r⌉ ns, the README's arithmetic.
func testRefillAfter(k int, r float64) time.Duration {
	return time.Duration(math.Ceil(float64(k) * 1e9 / r))
}

// full is when fast is full again: all pos tokens taken since its anchor
// at 0 are back.
func (s testRefillScenario) full() time.Duration { return testRefillAfter(s.pos, s.fastRate) }

func (s testRefillScenario) slowDue() time.Duration { return testRefillAfter(1, s.slowRate) }

func (s testRefillScenario) names() string {
	fast := fmt.Sprintf("fast = New(clk, %v, %d)", s.fastRate, s.fastBurst)
	slow := fmt.Sprintf("slow = New(clk, %v, 1)", s.slowRate)
	if s.slowFirst {
		return slow + ", " + fast + ", m = Combine(slow, fast)"
	}
	return fast + ", " + slow + ", m = Combine(fast, slow)"
}

func (s testRefillScenario) callNames() string {
	var names []string
	for _, wait := range s.calls {
		names = append(names, map[bool]string{true: "fast.Wait", false: "fast.Allow"}[wait])
	}
	return strings.Join(names, ", ")
}

func (s testRefillScenario) String() string {
	steps := []string{s.names(), "at 0: slow.Allow()"}
	if s.pos > 1 {
		steps = append(steps, fmt.Sprintf("fast.Allow() %d times", s.pos-1))
	}
	steps = append(steps, fmt.Sprintf("m.Wait(ctx), which takes fast's token %d and waits for slow's token, due at %v",
		s.pos, s.slowDue()))
	at := s.full() + s.extra
	if len(s.calls) > 0 {
		steps = append(steps, fmt.Sprintf("at %v (fast full again at %v): %s, all at once", at, s.full(), s.callNames()))
	}
	steps = append(steps, fmt.Sprintf("at %v: cancel m.Wait's ctx", at),
		fmt.Sprintf("fast.Allow() until it answers false (want %d trues)", s.fastBurst-len(s.calls)))
	return strings.Join(steps, "; ")
}

func testDrawRefill(r *rapid.T) testRefillScenario {
	s := testRefillScenario{
		fastRate:  rapid.SampledFrom([]float64{3, 4, 7, 10}).Draw(r, "fastRate"),
		fastBurst: rapid.IntRange(1, 4).Draw(r, "fastBurst"),
		slowRate:  rapid.SampledFrom([]float64{0.5, 0.25, 3.0 / 60}).Draw(r, "slowRate"),
		slowFirst: rapid.Bool().Draw(r, "slowFirst"),
	}
	// Token pos of fast: one of the burst, due at once, or the first after
	// it, due 1/r later.
	s.pos = rapid.IntRange(1, s.fastBurst+1).Draw(r, "pos")
	// Fast is full again long before slow's token (at most 5 tokens at 3/s
	// are back by 1.67s, slow's token comes at 2s or later): the calls come
	// at that instant or up to just before slow's token.
	if rapid.Bool().Draw(r, "atFull") {
		s.extra = 0
	} else {
		s.extra = time.Duration(rapid.Int64Range(1, int64(s.slowDue()-s.full()-1)).Draw(r, "extra"))
	}
	// As many calls as the Wait left on fast's count (when that is at most
	// the burst), or any number up to the burst.
	n := s.pos
	if n > s.fastBurst || rapid.Bool().Draw(r, "anyCount") {
		n = rapid.IntRange(0, s.fastBurst).Draw(r, "calls")
	}
	s.calls = rapid.SliceOfN(rapid.Bool(), n, n).Draw(r, "waits")
	return s
}

func (s testRefillScenario) play(h *katatest.H) {
	var fast, slow *Limiter
	var m *Multi
	if s.slowFirst {
		slow = New(h.Clk, s.slowRate, 1)
		fast = New(h.Clk, s.fastRate, s.fastBurst)
		m = Combine(slow, fast)
	} else {
		fast = New(h.Clk, s.fastRate, s.fastBurst)
		slow = New(h.Clk, s.slowRate, 1)
		m = Combine(fast, slow)
	}
	if !slow.Allow() {
		h.Errorf("the first slow.Allow() on a new limiter answered false; a new limiter starts full, with burst tokens")
		return
	}
	for i := 1; i < s.pos; i++ {
		if !fast.Allow() {
			h.Errorf("fast.Allow() call %d at 0 answered false, but a new limiter with burst %d lets %d calls through at once",
				i, s.fastBurst, s.fastBurst)
			return
		}
	}
	w := katatest.StartErr(h, m.Wait)
	if !testSettle(h, "a combined Wait starting", w) || testBroken(h, w) {
		return
	}
	if w.Returned() {
		err, _ := w.Finish("Wait")
		h.Errorf("m.Wait returned %v at once, but slow's next token is due only at %v: a combined Wait returns "+
			"when the latest of its limiters' tokens is due", err, s.slowDue())
		return
	}
	at := s.full() + s.extra
	h.Advance(at)

	// The calls on fast alone, all at once: fast is full, each gets a token.
	calls := make([]*katatest.Call[bool], len(s.calls))
	for i, wait := range s.calls {
		calls[i] = katatest.Start(h, func(ctx context.Context) (bool, error) {
			if wait {
				return true, fast.Wait(ctx)
			}
			return fast.Allow(), nil
		})
	}
	release := func() {
		katatest.Unwind(h, calls...)
		katatest.Unwind(h, w)
	}
	if !testSettle(h, fmt.Sprintf("%s at %v while a combined Wait waited", s.callNames(), at)) {
		release()
		return
	}
	for i, c := range calls {
		if !c.Returned() {
			h.Errorf("%s, called at %v, was still waiting, but fast had been full again since %v (all %d tokens "+
				"taken since its anchor back): its token was there, so it must return nil at once",
				map[bool]string{false: "fast.Allow", true: "fast.Wait"}[s.calls[i]], at, s.full(), s.pos)
			release()
			return
		}
		if c.Panicked() {
			release()
			return
		}
		if ok, err := c.Result(); !ok || err != nil {
			h.Errorf("at %v fast had been full again since %v (all %d tokens taken since its anchor back), yet "+
				"%d calls on it alone at once did not all get a token: one answered %v, %v. A full bucket has burst "+
				"(%d) tokens; %s", at, s.full(), s.pos, len(s.calls), ok, err, s.fastBurst, testArithmetic)
			release()
			return
		}
	}

	w.Cancel()
	if !testSettle(h, "cancelling a combined Wait", w) {
		release()
		return
	}
	if !w.Returned() {
		h.Errorf("m.Wait, cancelled at %v while it waited, did not return at once (the mock clock stood still): "+
			"select on ctx.Done() together with the timer", at)
		release()
		return
	}
	if err, ok := w.Finish("Wait"); !ok {
		return
	} else if !errors.Is(err, context.Canceled) {
		h.Errorf("m.Wait, cancelled at %v while it waited, returned %v; want ctx.Err() (context.Canceled)", at, err)
		return
	}

	want := s.fastBurst - len(s.calls)
	got := 0
	for got <= want && fast.Allow() {
		got++
	}
	switch {
	case got > want:
		h.Errorf("a cancelled combined Wait gave back a token of fast that had already come back: right after the "+
			"cancel, fast.Allow() let %d call(s) through at %v, want %d. The combined Wait took "+
			"fast's token %d since its anchor at 0 and waited for slow's token, due at %v; at %v fast was full again "+
			"(that token back with the others, the time it sat full lost), so its next token started a new anchor, "+
			"and %d call(s) on fast alone took tokens from it before the cancel at %v. A cancel gives a token back "+
			"only if it is still the last one taken since the same anchor: compare the anchor as well as the count "+
			"(the count of a new anchor can match the old one), or the bucket holds more than burst tokens", got, at, want, s.pos, s.slowDue(), s.full(), len(s.calls), at)
	case got < want:
		h.Errorf("right after a cancelled combined Wait, fast.Allow() let %d call(s) through at %v, want %d: fast "+
			"was full again at %v and only %d call(s) on it alone had taken tokens since, so it has burst (%d) "+
			"minus those; a cancel never takes a token", got, at, want, s.full(), len(s.calls), s.fastBurst)
	}
}

// testRefillCases: the count after the refill matches the one the Wait
// left behind: the Wait's token the first of the burst, one in the
// middle, the last.
var testRefillCases = []testRefillScenario{
	{fastRate: 4, fastBurst: 1, slowRate: 1.0 / 2, pos: 1, calls: []bool{false}},
	{fastRate: 3, fastBurst: 3, slowRate: 1.0 / 4, slowFirst: true, pos: 2, extra: time.Second, calls: []bool{true, false}},
	{fastRate: 10, fastBurst: 2, slowRate: 3.0 / 60, pos: 2, calls: []bool{false, true}},
}

func TestB1_ExploreACancelAfterTheFastLimiterFilledAgain(t *testing.T) {
	katatest.Replay(t, testRefillCases, func(h *katatest.H, s testRefillScenario) { s.play(h) })
	katatest.Explore(t, 10, testDrawRefill, func(h *katatest.H, s testRefillScenario) { s.play(h) })
}

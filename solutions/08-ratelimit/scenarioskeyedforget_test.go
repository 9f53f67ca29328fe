package ratelimit

// B2: when a key is forgotten. A key is remembered while its bucket is
// still filling, and forgotten once its bucket is full again and no call
// used it for idle, to the nanosecond. A cancelled Wait that gives its
// token back makes the bucket full earlier than it was when the Wait
// started: the key goes at that earlier instant.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testForgetKey is what happens on one key at time 0: allows Allow calls,
// then waits Waits, one after another; at the cancel instant, Wait #cancel
// (-1: none), if still waiting, is cancelled.
type testForgetKey struct {
	allows, waits, cancel int
}

type testForgetScenario struct {
	r        float64
	burst    int
	idle     time.Duration
	cancelAt time.Duration // every key's cancel, all at once
	keys     []testForgetKey
}

func (s testForgetScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "k := NewKeyed(clk, %v per second, burst %d, idle %v); at 0, on every key at once (a goroutine "+
		"each):", s.r, s.burst, s.idle)
	for i, kk := range s.keys {
		fmt.Fprintf(&b, " [%q: Allow ×%d, then Waits #1..#%d one after another]", testKeys[i], kk.allows, kk.waits)
	}
	fmt.Fprintf(&b, "; move the clock %v; cancel at once:", s.cancelAt)
	for i, kk := range s.keys {
		if kk.cancel >= 0 {
			fmt.Fprintf(&b, " Wait #%d of %q (if still waiting),", kk.cancel+1, testKeys[i])
		}
	}
	b.WriteString(" then call Len at every instant a key may go, and 1ns before")
	return b.String()
}

func testDrawForget(r *rapid.T) testForgetScenario {
	s := testForgetScenario{
		r:     rapid.SampledFrom([]float64{10, 4, 2, 1, 0.5}).Draw(r, "rate"),
		burst: rapid.IntRange(1, 2).Draw(r, "burst"),
	}
	iv := testDue(s.r, 0, 1)
	s.idle = iv / 2 * time.Duration(rapid.SampledFrom([]int{0, 0, 1, 2, 3}).Draw(r, "idle, in half intervals"))
	s.cancelAt = iv / 2 * time.Duration(rapid.IntRange(1, 3).Draw(r, "cancel at, in half intervals"))
	for range rapid.IntRange(1, 3).Draw(r, "keys") {
		kk := testForgetKey{allows: rapid.IntRange(0, s.burst+1).Draw(r, "Allow calls")}
		kk.waits = rapid.IntRange(0, 3).Draw(r, "Waits")
		if kk.allows+kk.waits == 0 {
			kk.waits = 1
		}
		kk.cancel = -1
		if kk.waits > 0 && rapid.IntRange(0, 3).Draw(r, "cancel: 0 none") > 0 {
			kk.cancel = kk.waits - 1
			if rapid.Bool().Draw(r, "cancel another than the last") {
				kk.cancel = rapid.IntRange(0, kk.waits-1).Draw(r, "cancelled Wait")
			}
		}
		s.keys = append(s.keys, kk)
	}
	return s
}

// testForgetPlan is what the README says of one key: its Waits' due times,
// which of them is cancelled while it waits, when its bucket is full again,
// and the last instant a call on it returned.
type testForgetPlan struct {
	dues      []time.Duration
	cancelled int // -1: none
	full      time.Duration
	lastUse   time.Duration // latest return: a call may count as a use until it returns
}

func (s testForgetScenario) plan(kk testForgetKey) testForgetPlan {
	b := testBucket{r: s.r, burst: s.burst}
	p := testForgetPlan{cancelled: -1}
	for range kk.allows {
		if b.next(0) <= 0 {
			b.taken++
		}
	}
	var holds []testReservation
	for range kk.waits {
		p.dues = append(p.dues, b.next(0))
		b.taken++
		holds = append(holds, testReservation{anchor: b.anchor, taken: b.taken})
	}
	for i, due := range p.dues {
		switch {
		case i == kk.cancel && due > s.cancelAt:
			p.cancelled = i
			if h := holds[i]; b.taken == h.taken && b.anchor == h.anchor {
				b.taken--
			}
			p.lastUse = max(p.lastUse, s.cancelAt)
		default:
			p.lastUse = max(p.lastUse, due)
		}
	}
	p.full = b.anchor + testDue(s.r, 0, b.taken)
	return p
}

func (s testForgetScenario) play(h *katatest.H) {
	k := NewKeyed(h.Clk, s.r, s.burst, s.idle)
	plans := make([]testForgetPlan, len(s.keys))
	for i, kk := range s.keys {
		plans[i] = s.plan(kk)
	}
	var waiters [][]katatest.ErrCall
	var all []katatest.ErrCall
	release := func() { katatest.Unwind(h, all...) }
	// Every key's Allow calls at once, then its Waits: the j-th Wait of
	// every key at once.
	start := make(chan struct{})
	var allows []*katatest.Call[struct{}]
	for i, kk := range s.keys {
		allows = append(allows, katatest.Go(h, func() (struct{}, error) {
			<-start
			for range kk.allows {
				k.Allow(testKeys[i])
			}
			return struct{}{}, nil
		}))
	}
	close(start)
	if !testSettle(h, "Allow on several keys at once") {
		return
	}
	for _, c := range allows {
		if _, _, ok := c.Finish("Allow"); !ok {
			return
		}
	}
	waiters = make([][]katatest.ErrCall, len(s.keys))
	for j := range slices.MaxFunc(s.keys, func(a, b testForgetKey) int { return a.waits - b.waits }).waits {
		for i, kk := range s.keys {
			if j < kk.waits {
				w := katatest.StartErr(h, func(ctx context.Context) error { return k.Wait(ctx, testKeys[i]) })
				waiters[i] = append(waiters[i], w)
				all = append(all, w)
			}
		}
		if !testSettle(h, "Wait on several keys at once", all...) || testBroken(h, all...) {
			return
		}
	}
	h.Advance(s.cancelAt)
	for i, p := range plans {
		if p.cancelled >= 0 {
			waiters[i][p.cancelled].Cancel()
		}
	}
	if !testSettle(h, "cancelling waiting Waits", all...) || testBroken(h, all...) {
		return
	}
	// The instants where Len's answer changes: a bucket full again, idle
	// passed since a call, and 1ns before each.
	var at []time.Duration
	for _, p := range plans {
		for _, t := range []time.Duration{p.full, s.idle, p.lastUse + s.idle, max(p.full, p.lastUse+s.idle)} {
			at = append(at, t-1, t)
		}
	}
	slices.Sort(at)
	for _, t := range slices.Compact(at) {
		if t <= h.Elapsed() {
			continue
		}
		h.Advance(t - h.Elapsed())
		// Every call started at 0: a key must stay while its bucket fills or
		// idle has not passed since 0; it must go once its bucket is full and
		// idle has passed since its last call returned.
		keep, gone := 0, 0
		var why []string
		for i, p := range plans {
			switch {
			case t < p.full:
				keep++
			case t < s.idle:
				keep++
			case t >= p.lastUse+s.idle:
				gone++
				if p.cancelled >= 0 {
					why = append(why, fmt.Sprintf("%q's bucket is full again since %v: its Wait #%d, cancelled at %v, "+
						"gave its token back (nobody reserved after it), and its last call returned at %v",
						testKeys[i], p.full, p.cancelled+1, s.cancelAt, p.lastUse))
				} else {
					why = append(why, fmt.Sprintf("%q's bucket is full again since %v, and its last call returned at %v",
						testKeys[i], p.full, p.lastUse))
				}
			}
		}
		n := k.Len()
		if n < keep {
			h.Errorf("Len() is %d at %v, but %d key(s) must still be remembered: a key whose bucket is still "+
				"filling, or that a call used less than idle (%v) ago, is never forgotten", n, t, keep, s.idle)
			release()
			return
		}
		if n > len(s.keys)-gone {
			h.Errorf("a key was still remembered at %v, when its bucket was full again and unused for idle (%v): "+
				"Len() is %d, want at most %d. %s. A cancelled Wait's give-back makes the bucket full earlier "+
				"than it was when the Wait started: decide whether a key is full when forgetting, from its "+
				"bucket as it is now, never from a full time noted at its last call", t, s.idle, n,
				len(s.keys)-gone, strings.Join(why, "; "))
			release()
			return
		}
	}
	// Every Wait not cancelled has its token due by now.
	for _, w := range all {
		if !w.Returns("a Wait on a Keyed was still waiting at %v, after its key's bucket was full again", h.Elapsed()) {
			release()
			return
		}
	}
	for _, w := range all {
		if _, ok := w.Finish("Wait"); !ok {
			return
		}
	}
}

// testFixedForget: the key goes when its cancelled Wait's give-back made
// its bucket full, earlier than when the Wait started.
var testFixedForget = []testForgetScenario{
	{r: 1, burst: 1, cancelAt: time.Second / 2, keys: []testForgetKey{{allows: 1, waits: 1, cancel: 0}}},
	{r: 2, burst: 2, idle: 250 * time.Millisecond, cancelAt: 500 * time.Millisecond,
		keys: []testForgetKey{{allows: 2, waits: 2, cancel: 1}, {allows: 1, waits: 0, cancel: -1}}},
}

func TestB2_ExploreAKeyGoesOnceItsBucketIsFullAndIdle(t *testing.T) {
	katatest.Replay(t, testFixedForget, func(h *katatest.H, s testForgetScenario) { s.play(h) })
	katatest.Explore(t, 8, testDrawForget, func(h *katatest.H, s testForgetScenario) { s.play(h) })
}

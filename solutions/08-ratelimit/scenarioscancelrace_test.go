package ratelimit

// R5, B1 and B2 when a cancel and a new Wait come at the same instant. The
// bucket is empty and Wait #1 waits for the next token; then, at once, the
// test cancels #1 and Wait #2 starts. Either the cancel gives #1's token
// back before #2 reserves (so #2 gets it), or #2 reserves first (so #1's
// token is lost and #2 gets the one after). Both are right. Wait #3, which
// starts once both settled, shows which: it gets the token right after
// #2's. A design that decides "nobody reserved after me" in one critical
// section and gives the token back in another lets #2 reserve in between:
// #2 keeps the later token and the one given back is handed out again, so
// #2 and #3 go through on one token. The window is a few instructions
// wide; each scenario is played on many shaken schedules.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

type testCancelRace struct {
	kind  int // testAfterLimiter, testAfterMulti or testAfterKeyed
	r     float64
	burst int
}

func (s testCancelRace) String() string {
	what := fmt.Sprintf("l := New(clk, %v per second, burst %d)", s.r, s.burst)
	switch s.kind {
	case testAfterMulti:
		what = fmt.Sprintf("l := Combine(New(clk, %v per second, burst %d), New(clk, %v per second, burst %d))",
			s.r, s.burst, 2*s.r, s.burst)
	case testAfterKeyed:
		what = fmt.Sprintf("l := NewKeyed(clk, %v per second, burst %d, idle 1h), every call on key %q", s.r,
			s.burst, testKeys[0])
	}
	return what + fmt.Sprintf("; %d Allows empty the bucket at 0s; Wait #1 waits for the next token; "+
		"then, at the same instant, the test cancels Wait #1 and Wait #2 starts; once both settled, "+
		"Wait #3 starts", s.burst)
}

func (s testCancelRace) play(h *katatest.H) {
	h.T.Helper()
	var (
		allow func() bool
		wait  func(context.Context) error
	)
	switch s.kind {
	case testAfterLimiter:
		l := New(h.Clk, s.r, s.burst)
		allow, wait = l.Allow, l.Wait
	case testAfterMulti:
		m := Combine(New(h.Clk, s.r, s.burst), New(h.Clk, 2*s.r, s.burst))
		allow, wait = m.Allow, m.Wait
	case testAfterKeyed:
		k := NewKeyed(h.Clk, s.r, s.burst, time.Hour)
		allow = func() bool { return k.Allow(testKeys[0]) }
		wait = func(ctx context.Context) error { return k.Wait(ctx, testKeys[0]) }
	}
	iv := testDue(s.r, 0, 1) // the token after the burst; the faster limiter of a Multi is due by then
	for i := range s.burst {
		if !allow() {
			h.Errorf("Allow #%d at 0s returned false; a new limiter starts full\nThe scenario: %s", i+1, s)
			return
		}
	}
	w1 := katatest.StartErr(h, wait)
	h.Settle()
	if w1.Returned() {
		h.Errorf("Wait #1 returned at once (%v) on an empty bucket; it waits for the token due at %v\n"+
			"The scenario: %s", w1.Err(), iv, s)
		return
	}
	start := make(chan struct{})
	w2 := katatest.StartErr(h, func(ctx context.Context) error { <-start; return wait(ctx) })
	canceller := katatest.Go(h, func() (struct{}, error) { <-start; w1.Cancel(); return struct{}{}, nil })
	close(start)
	h.Settle()
	if !w1.Returns("Wait #1 was cancelled but did not return at once\nThe scenario: %s", s) {
		w2.Stop()
		return
	}
	if err := w1.Err(); !errors.Is(err, context.Canceled) {
		h.Errorf("cancelled while it waited, Wait #1 returned %v; want ctx.Err() (context.Canceled)\n"+
			"The scenario: %s", err, s)
		w2.Stop()
		return
	}
	canceller.Result()
	w3 := katatest.StartErr(h, wait)
	h.Settle()
	// Move the clock one token interval at a time and note when each Wait
	// returns.
	at := map[int]time.Duration{}
	for step := 0; step <= 4 && len(at) < 2; step++ {
		if step > 0 {
			h.Advance(iv)
		}
		for i, c := range map[int]katatest.ErrCall{2: w2, 3: w3} {
			if _, seen := at[i]; seen || !c.Returned() {
				continue
			}
			if err := c.Err(); err != nil {
				h.Errorf("Wait #%d returned %v at %v; nothing cancelled it, so it returns nil when its "+
					"token is due\nThe scenario: %s", i, err, h.Elapsed(), s)
				w2.Stop()
				w3.Stop()
				return
			}
			at[i] = h.Elapsed()
		}
	}
	if len(at) < 2 {
		h.Errorf("by %v, Wait #2 and Wait #3 had not both returned (returned at: %v); the tokens they "+
			"reserved are due by %v\nThe scenario: %s", h.Elapsed(), at, 3*iv, s)
		w2.Stop()
		w3.Stop()
		return
	}
	if at[2] == at[3] {
		h.Errorf("Wait #2 and Wait #3 both returned at %v, two calls on one token: Wait #2 reserved while "+
			"the cancelled Wait #1 was giving its token back, and that token was handed out again. Deciding "+
			"\"nobody reserved after me\" and giving the token back must happen in one critical section, "+
			"under the lock that reserving takes\nThe scenario: %s", at[2], s)
		return
	}
	if want := [][2]time.Duration{{iv, 2 * iv}, {2 * iv, 3 * iv}}; !slices.Contains(want, [2]time.Duration{at[2], at[3]}) {
		h.Errorf("Wait #2 returned at %v and Wait #3 at %v; want %v and %v (the cancel gave Wait #1's "+
			"token back before Wait #2 reserved), or %v and %v (Wait #2 reserved first, so Wait #1's token "+
			"is lost)\nThe scenario: %s", at[2], at[3], iv, 2*iv, 2*iv, 3*iv, s)
	}
}

func testCancelRaces(kind int) []testCancelRace {
	var out []testCancelRace
	for _, r := range []float64{10, 2} {
		for _, burst := range []int{1, 2} {
			out = append(out, testCancelRace{kind: kind, r: r, burst: burst})
		}
	}
	return out
}

func TestR5_ACancelRacesANewWait(t *testing.T) {
	for _, s := range testCancelRaces(testAfterLimiter) {
		katatest.Repeat(t, 8, func(h *katatest.H) { s.play(h) })
	}
}

func TestB1_ACancelledCombinedWaitRacesANewOne(t *testing.T) {
	for _, s := range testCancelRaces(testAfterMulti) {
		katatest.Repeat(t, 8, func(h *katatest.H) { s.play(h) })
	}
}

func TestB2_ACancelledKeyedWaitRacesANewOne(t *testing.T) {
	for _, s := range testCancelRaces(testAfterKeyed) {
		katatest.Repeat(t, 8, func(h *katatest.H) { s.play(h) })
	}
}

// R5 and B1 when the cancel comes at the same instant as the token. Wait
// #1 reserves a token due at 100ms, makes its timer and is held right
// there; the clock reaches 100ms (the timer fires) and its ctx is
// cancelled; then it goes on, and finds both ready. It may return nil (it
// got its token) or ctx.Err() (it was cancelled first): both are right. But
// a cancelled Wait gives its token back, nobody having reserved after it,
// so if it returned ctx.Err() an Allow at 100ms finds the token there, and
// if it returned nil the token is spent.
func TestR5_ACancelAtTheInstantTheTokenComesDue(t *testing.T) {
	for _, multi := range []bool{false, true} {
		katatest.Repeat(t, 8, func(h *katatest.H) {
			clk := h.HeldClock()
			l := New(clk, 10, 1)
			wait, allow, what := l.Wait, l.Allow, "l := New(clk, 10 per second, burst 1)"
			if multi {
				m := Combine(l, New(clk, 20, 1))
				wait, allow = m.Wait, m.Allow
				what = "l := Combine(New(clk, 10 per second, burst 1), New(clk, 20 per second, burst 1))"
			}
			if !allow() {
				h.Errorf("%s: the first Allow() was refused; a new limiter starts full", what)
				return
			}
			clk.HoldNextTimer(true)
			w := katatest.StartErr(h, wait)
			synctest.Wait()
			clk.HoldNextTimer(false)
			if clk.Gate.Entered() == 0 {
				katatest.Unwind(h, w.Call) // it waits without a clk.Timer: this test cannot hold it there
				return
			}
			h.Clk.Add(100 * testMs)
			w.Cancel()
			clk.Gate.Release()
			h.Advance(0)
			err, ok := w.Finish("Wait")
			if !ok {
				return
			}
			got := allow()
			switch {
			case err == nil && got:
				h.Errorf("%s; Allow(); Wait #1 (its token due at 100ms); at 100ms its ctx is cancelled: Wait "+
					"returned nil, so it took its token, yet Allow() right after it at 100ms found one too", what)
			case err != nil && !got:
				h.Errorf("%s; Allow(); Wait #1 reserves its token, due at 100ms; at 100ms, the very instant its token "+
					"came due, its ctx is cancelled, and Wait returned %v: then its token goes back (no call reserved "+
					"after it), but Allow() right after it at 100ms was refused. A Wait that returns ctx.Err() gives "+
					"its token back, also when its timer has fired meanwhile: decide by what you return, not by "+
					"whether timer.Stop() reports true", what, err)
			}
		})
		if t.Failed() {
			return
		}
	}
}

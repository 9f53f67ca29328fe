package firstwins

// Explored B2: answers that come at the very instant Collect ends. The
// README does not order an answer and the timeout (or the caller's
// cancel) that come together, so such a replica's Reply may be its answer
// or a missing one; but once Collect has returned, the slice it returned
// is the caller's: an answer that lost the race must not be written into
// it afterwards. The racing answers come in the same step as the end, with
// nothing settled between them (some just before it, some just after,
// or from inside a replica that cancels the caller's ctx as it answers),
// and the slice is read right after Collect returned, unordered with
// anything a replica does later, so the race detector sees a late write.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// What ends Collect in a race.
const (
	testRaceTimeout      = iota // the timeout, with the racing answers
	testRaceCancel              // the caller's cancel, from the test, with the racing answers
	testRaceCancelInCall        // the caller's cancel, from inside a racing replica as it answers
)

func testDrawCollectRace(r *rapid.T) testCollectScenario {
	const unit = 10 * time.Millisecond
	var s testCollectScenario
	n := rapid.IntRange(1, 4).Draw(r, "replicas")
	end := time.Duration(rapid.IntRange(1, 8).Draw(r, "the end at (x10ms)")) * unit
	racer := rapid.IntRange(0, n-1).Draw(r, "a racing replica")
	for i := range n {
		// 0: answers before the end; 1: races the end; 2: answers only after.
		role := 1
		if i != racer {
			role = rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("replica %d: early, racing or late", i))
		}
		s.reps = append(s.reps, testCollectReplica{
			answers: role != 2,
			races:   role == 1,
			at:      time.Duration(rapid.IntRange(0, int(end/unit)-1).Draw(r, fmt.Sprintf("replica %d answers early at (x10ms)", i))) * unit,
			kind:    rapid.IntRange(0, testCollectKinds-1).Draw(r, fmt.Sprintf("replica %d answers with", i)),
			honours: rapid.Bool().Draw(r, fmt.Sprintf("replica %d honours ctx", i)),
		})
		if role == 1 {
			s.reps[i].at = end
		}
	}
	// The other way to end Collect comes later, or never.
	later := time.Duration(rapid.IntRange(0, 3).Draw(r, "the other end later by (x10ms, 0: never)")) * unit
	switch rapid.IntRange(testRaceTimeout, testRaceCancelInCall).Draw(r, "what ends Collect") {
	case testRaceTimeout:
		s.timeout = end
		if later > 0 {
			s.cancel = end + later
		}
	case testRaceCancelInCall:
		s.cancelBy = racer + 1
		fallthrough
	default:
		s.cancel = end
		s.timeout = rapid.SampledFrom([]time.Duration{0, -1}).Draw(r, "no timeout")
		if later > 0 {
			s.timeout = end + later
		}
	}
	s.answersFirst = rapid.Bool().Draw(r, "the racing answers come first")
	return s
}

func (s testCollectScenario) playRace(h *katatest.H) {
	var c *katatest.Call[[]Reply[string]] // set before any gate opens
	f := s.fakes(h, func() { c.Cancel() })
	gates, calls, replies := f.gates, f.calls, f.replies
	var before []Reply[string] // the slice as Collect returned it, read at once
	c = katatest.Start(h, func(ctx context.Context) ([]Reply[string], error) {
		got := Collect(ctx, h.Clk, s.timeout, calls...)
		before = slices.Clone(got) // unordered with a replica that writes into it later
		return got, nil
	})
	if c.Broken() {
		return
	}
	endAt, why := s.end()
	// The answers before the end, each settled.
	var instants []time.Duration
	for _, r := range s.reps {
		if r.answers && !r.races {
			instants = append(instants, r.at)
		}
	}
	slices.Sort(instants)
	for _, t := range slices.Compact(instants) {
		if t > h.Elapsed() {
			h.Advance(t - h.Elapsed())
		}
		for i, r := range s.reps {
			if r.answers && !r.races && r.at == t && t > 0 {
				gates[i].Release()
			}
		}
		synctest.Wait()
	}
	// Up to the end: the timeout's last nanosecond is left for the step below.
	upTo := endAt
	if why == testCollectTimedOut {
		upTo--
	}
	if upTo > h.Elapsed() {
		h.Advance(upTo - h.Elapsed())
	}
	if c.Returned() {
		got, _ := c.Result()
		h.Errorf("Collect returned %v at %v, before anything ended it (it returns at %v, when %s): wait until "+
			"every replica has answered, the timeout passes (timeout <= 0 means no timeout) or ctx is done",
			got, h.Elapsed(), endAt, s.endText())
		katatest.Unwind(h, c)
		return
	}
	// The end and the racing answers, in one step.
	answer := func() {
		for i, r := range s.reps {
			if r.races {
				gates[i].Release()
			}
		}
	}
	if s.answersFirst {
		answer()
	}
	switch {
	case why == testCollectTimedOut:
		h.Clk.Add(endAt - h.Elapsed())
	case s.cancelBy == 0:
		c.Cancel()
	}
	if !s.answersFirst {
		answer()
	}
	h.WaitUnordered() // no settle: what the replicas do next stays unordered with the read of the slice

	if !c.Returned() {
		h.Errorf("Collect was still waiting at %v, when %s, while some replicas answered at that very instant: "+
			"return as soon as every replica has answered, the timeout passes on clk or ctx is done, and drop "+
			"the answers that come later%s", endAt, s.endText(), h.Waiting())
		katatest.Unwind(h, c)
		return
	}
	if c.Panicked() {
		return
	}
	got, _ := c.Result()
	if !s.checkReplies(h, replies, before) {
		katatest.Unwind(h, c)
		return
	}
	live := f.live()
	for i, ctx := range live {
		if ctx != nil && !s.answered(i) && !s.reps[i].races && ctx.Err() == nil {
			h.Errorf("Collect returned at %v (%s), but the ctx of replica %d, still running, was never "+
				"cancelled: when Collect returns it cancels the replicas still running; derive their ctx with "+
				"context.WithCancel(ctx) and defer cancel()", endAt, s.endText(), i)
			katatest.Unwind(h, c)
			return
		}
	}
	for _, g := range gates {
		g.Release() // the late replicas answer now
	}
	if _, _, ok := c.Finish("Collect"); !ok {
		return
	}
	for i := range got {
		if got[i] != before[i] {
			when := "after Collect had returned"
			if s.reps[i].races {
				when = "at the very instant Collect returned"
			}
			h.Errorf("replica %d answered %s at %v (%s), and the slice Collect returned changed after it "+
				"returned, from %v to %v: once Collect returns, the replies belong to the caller. Decide under "+
				"one lock (or in the one goroutine that owns the replies) whether an answer still counts and "+
				"record it there; an answer that lost the race is dropped, never written into the returned "+
				"slice", i, when, endAt, s.endText(), before[i], got[i])
			return
		}
	}
}

func TestB2_ExploreAnAnswerRacingTheEndNeverChangesTheReplies(t *testing.T) {
	katatest.Explore(t, 40, testDrawCollectRace, func(h *katatest.H, s testCollectScenario) { s.playRace(h) })
}

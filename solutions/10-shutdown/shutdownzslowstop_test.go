package shutdown

// Explored slow stops (R5): after the hard stop Shutdown waits for every
// worker "however long handle takes". Every running job is still in handle
// when the grace runs out: some ignore their ctx, some honour it and then
// clean up at length. The clock then moves on for a long while (minutes,
// hours, a day) with every job still in handle, and the jobs return one by
// one in any order, the clock moving between them: Shutdown must still be
// waiting until the last one has returned. A wait for the workers bounded
// by a timer of its own ("a second grace", "at most 5s more") returns
// while handle runs.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testSlowJob is a running job at the hard stop: deaf ignores its ctx and
// returns nil once let go; otherwise it sees its ctx end, cleans up until
// let go, then returns what stopped says (see testPlan).
type testSlowJob struct {
	deaf    bool
	stopped string
}

type testSlowStop struct {
	queue   int
	jobs    []testSlowJob // one per worker, all running at the hard stop
	queued  int           // jobs waiting in the queue behind them
	grace   time.Duration
	moves   []time.Duration // the clock moves after the hard stop, every job still in handle
	order   []int           // the order in which the jobs return
	between []time.Duration // the clock moves after each job returns but the last (0: it does not)
}

func (s testSlowStop) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d); Start", len(s.jobs), s.queue)
	for i, j := range s.jobs {
		switch {
		case j.deaf:
			fmt.Fprintf(&b, "\njob-%d runs and ignores its ctx", i+1)
		default:
			ret := map[string]string{"": "the ctx error, wrapped", "plain": "an error of its own", "nil": "nil"}[j.stopped]
			fmt.Fprintf(&b, "\njob-%d runs, sees its ctx end, cleans up, then returns %s", i+1, ret)
		}
	}
	if s.queued > 0 {
		fmt.Fprintf(&b, "\n%d more job(s) wait in the queue", s.queued)
	}
	fmt.Fprintf(&b, "\nShutdown with a deadline %v ahead; the clock passes it (the hard stop)", s.grace)
	for _, d := range s.moves {
		fmt.Fprintf(&b, "\nthe clock moves %v, every job still in handle", d)
	}
	for k, i := range s.order {
		fmt.Fprintf(&b, "\njob-%d returns", i+1)
		if k < len(s.between) && s.between[k] > 0 {
			fmt.Fprintf(&b, "; the clock moves %v", s.between[k])
		}
	}
	return b.String()
}

var testSlowMoves = []time.Duration{1, time.Millisecond, time.Second, 5 * time.Second, 30 * time.Second}

var testSlowLong = []time.Duration{time.Minute, time.Hour, 24 * time.Hour}

func testDrawSlowStop(r *rapid.T) testSlowStop {
	s := testSlowStop{queue: rapid.IntRange(0, 2).Draw(r, "queue")}
	for i := range rapid.IntRange(1, 3).Draw(r, "workers") {
		j := testSlowJob{deaf: rapid.Bool().Draw(r, fmt.Sprintf("job %d ignores its ctx", i+1))}
		if !j.deaf {
			j.stopped = rapid.SampledFrom([]string{"", "plain", "nil"}).Draw(r, fmt.Sprintf("job %d returns", i+1))
		}
		s.jobs = append(s.jobs, j)
	}
	s.queued = rapid.IntRange(0, s.queue).Draw(r, "queued")
	s.grace = rapid.SampledFrom([]time.Duration{1, time.Millisecond, time.Second, 10 * time.Second}).Draw(r, "grace")
	for range rapid.IntRange(0, 2).Draw(r, "short moves") {
		s.moves = append(s.moves, rapid.SampledFrom(testSlowMoves).Draw(r, "move"))
	}
	s.moves = append(s.moves, rapid.SampledFrom(testSlowLong).Draw(r, "long move"))
	order := make([]int, len(s.jobs))
	for i := range order {
		order[i] = i
	}
	s.order = rapid.Permutation(order).Draw(r, "return order")
	for range len(s.jobs) - 1 {
		d := time.Duration(0)
		if rapid.Bool().Draw(r, "the clock moves after a job returns") {
			d = rapid.SampledFrom(append(slices.Clone(testSlowMoves), testSlowLong...)).Draw(r, "move after")
		}
		s.between = append(s.between, d)
	}
	return s
}

func (s testSlowStop) play(h *katatest.H) {
	t := h.T
	r := testNew(h, len(s.jobs), s.queue)
	r.svc.Start()
	ids := testJobs(len(s.jobs) + s.queued)
	running, queued := ids[:len(s.jobs)], ids[len(s.jobs):]
	lets := make([]*katatest.Gate, len(s.jobs)) // what lets each job return
	for i, j := range s.jobs {
		hold := r.gate()
		if j.deaf {
			r.plan(running[i], testPlan{hold: hold, deaf: true})
			lets[i] = hold
			continue
		}
		lets[i] = r.gate()
		r.plan(running[i], testPlan{hold: hold, cleanup: lets[i], stopped: j.stopped})
	}
	if !r.accept("the workers were idle", running...) || !r.wantRunning("the jobs submitted", running...) ||
		!r.accept("the queue had room", queued...) {
		return
	}
	sd := r.shutdownWithin(s.grace)
	if !r.advance(s.grace, "the grace running out") || testBroken(r, sd) {
		return
	}
	after := time.Duration(0)
	inHandle := func() string { return fmt.Sprintf("%v", r.running()) }
	const rule = "after cancelling the jobs' ctx, Shutdown waits for every worker to return, however long handle " +
		"takes: no timer, no second grace on that wait (a job that ignores its ctx keeps Shutdown waiting, and that " +
		"is the contract); nothing the Service started may run after Shutdown returns"
	for _, d := range s.moves {
		if !r.advance(d, "the clock moving after the hard stop") {
			return
		}
		after += d
		if !sd.Waits("Shutdown returned while %s were still in handle, %v after the hard stop: %s", inHandle(), after,
			rule) {
			return
		}
	}
	for k, i := range s.order {
		lets[i].Release()
		if !r.settle(fmt.Sprintf("job-%d returning", i+1)) {
			return
		}
		if k == len(s.order)-1 {
			break
		}
		if d := s.between[k]; d > 0 {
			if !r.advance(d, "the clock moving between the jobs' returns") {
				return
			}
			after += d
		}
		if !sd.Waits("Shutdown returned while %s were still in handle, %v after the hard stop: %s", inHandle(), after,
			rule) {
			return
		}
	}
	if _, _, ok := testFinish(r, sd, "Shutdown", "every job had returned after the hard stop, but Shutdown did not return"); !ok {
		return
	}
	if got := r.running(); len(got) > 0 {
		t.Errorf("Shutdown returned while %v were still in handle: %s", got, rule)
	}
	// What the Report lists, and the error, are R3's: its tests check them.
}

func TestR5_ExploreAHardStopWaitsHoweverLongTheJobsTake(t *testing.T) {
	katatest.Replay(t, []testSlowStop{{queue: 1, queued: 1, grace: time.Second,
		jobs:  []testSlowJob{{deaf: true}, {stopped: ""}},
		moves: []time.Duration{5 * time.Second, time.Hour}, order: []int{1, 0}, between: []time.Duration{time.Hour}}},
		func(h *katatest.H, s testSlowStop) { s.play(h) })
	katatest.Explore(t, 4, testDrawSlowStop, func(h *katatest.H, s testSlowStop) { s.play(h) })
}

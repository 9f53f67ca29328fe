package shutdown

// The hard stop racing the rest of the Service: workers that take their
// next job at the very instant the grace ends (R3), and Shutdown calls that
// wait for the first one's result (R4). Each scenario is explored with the
// schedule shaken, so that a window a few statements wide between a check
// and an act shows.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testStopScenario struct {
	req      string
	workers  int
	queued   int  // jobs queued behind the running ones; once started, each runs until its ctx ends
	deadline bool // the grace ends on the clock; else Shutdown's ctx is cancelled
	endFirst bool // the grace ends just before the running jobs finish, in the same step (R3, cancel only)
	trigger  int  // else, if not 0, Shutdown's ctx is cancelled as queued job number trigger starts (R3)
	chain    bool // the running jobs finish one after the other, each as the one before it returns (R3)
	waiters  int  // later Shutdown calls, waiting for the first one's end (R4)
}

func (s testStopScenario) String() string {
	var b strings.Builder
	n := s.workers + s.queued
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle); job-1…job-%d submitted; Start(): job-1…job-%d run, "+
		"job-%d…job-%d wait in the queue (each, once started, runs until its ctx ends)", s.workers, n, n, s.workers,
		s.workers+1, n)
	how := "is cancelled"
	if s.deadline {
		fmt.Fprintf(&b, "; Shutdown(ctx) with a deadline %v later on the clock", testStopGrace)
		how = "reaches its deadline"
	} else {
		b.WriteString("; Shutdown(ctx)")
	}
	if s.waiters > 0 {
		fmt.Fprintf(&b, "; %d more Shutdown calls, without a deadline, while the first one drains", s.waiters)
		fmt.Fprintf(&b, "; then the first Shutdown's ctx %s while the running jobs still run", how)
		return b.String()
	}
	finish := fmt.Sprintf("job-1…job-%d finish", s.workers)
	if s.chain {
		finish = fmt.Sprintf("job-1…job-%d finish one after the other, each as the one before it returns", s.workers)
	}
	switch {
	case s.trigger > 0:
		fmt.Fprintf(&b, "; then %s, and Shutdown's ctx is cancelled as job-%d starts", finish, s.workers+s.trigger)
	case s.endFirst:
		fmt.Fprintf(&b, "; then, in one step, Shutdown's ctx %s and %s", how, finish)
	default:
		fmt.Fprintf(&b, "; then, in one step, %s and Shutdown's ctx %s", finish, how)
	}
	return b.String()
}

const testStopGrace = 10 * time.Second

func testDrawStop(req string) func(*rapid.T) testStopScenario {
	return func(r *rapid.T) testStopScenario {
		s := testStopScenario{req: req}
		if req == "R4" {
			s.workers = rapid.IntRange(1, 6).Draw(r, "workers")
			s.queued = rapid.IntRange(1, s.workers+1).Draw(r, "queued")
			s.deadline = rapid.Bool().Draw(r, "deadline")
			s.waiters = rapid.IntRange(1, 3).Draw(r, "later Shutdown calls")
			return s
		}
		// How the grace ends while the workers take their next jobs: most
		// often as the first of them starts, when the others are about to
		// take theirs; with a job queued for every worker.
		least := 1
		switch rapid.IntRange(0, 5).Draw(r, "when the grace ends") {
		case 0:
			s.deadline = true
		case 1:
			s.endFirst = true
		case 2:
		default:
			s.trigger, least = 1, 4
		}
		s.workers = rapid.IntRange(least, 10).Draw(r, "workers")
		s.queued = rapid.IntRange(s.workers, s.workers+2).Draw(r, "queued")
		s.chain = rapid.IntRange(0, 3).Draw(r, "one after the other (3 in 4)") > 0
		return s
	}
}

// testStopJob is what one call of handle did.
type testStopJob struct {
	ended    bool // its ctx ended while handle ran
	returned bool
	err      error
}

func testPlayStop(h *katatest.H, s testStopScenario) {
	var (
		mu      sync.Mutex
		started []string
		jobs    = map[string]*testStopJob{}
	)
	ids := testJobs(s.workers + s.queued)
	gates := map[string]*katatest.Gate{}
	for _, id := range ids[:s.workers] {
		gates[id] = h.Gate()
	}
	never := h.Gate()                    // the queued jobs run until their ctx ends
	chain := map[string]*katatest.Gate{} // job → the gate it opens as it returns
	if s.chain {
		for i, id := range ids[:s.workers-1] {
			chain[id] = gates[ids[i+1]]
		}
	}
	var first *katatest.Call[Report]
	trigger := ""
	if s.trigger > 0 {
		trigger = ids[s.workers+s.trigger-1]
	}
	handle := func(ctx context.Context, j Job) error {
		run := &testStopJob{}
		mu.Lock()
		started = append(started, j.ID)
		jobs[j.ID] = run
		mu.Unlock()
		mu.Lock()
		shut := first // nil while the test unwinds a Service that ran jobs before Shutdown
		mu.Unlock()
		if j.ID == trigger && shut != nil {
			shut.Cancel()
		}
		stop := context.AfterFunc(ctx, func() {
			mu.Lock()
			run.ended = true
			mu.Unlock()
		})
		defer stop()
		g := gates[j.ID]
		if g == nil {
			g = never
		}
		var err error
		if held := g.Hold(ctx); held != nil {
			err = fmt.Errorf("render %s: %w", j.ID, held)
		} else if next := chain[j.ID]; next != nil {
			next.Release()
		}
		mu.Lock()
		run.returned, run.err = true, err
		mu.Unlock()
		return err
	}
	// Every job is queued before Start, so that one settle is enough: the
	// workers then take job-1…job-workers, in order.
	svc := New(h.Clk, s.workers, s.workers+s.queued, handle)
	var calls []katatest.Stopper
	unwind := func() {
		for _, g := range gates {
			g.Release()
		}
		never.Release()
		katatest.Unwind(h, calls...)
	}
	settled := func(what string) bool {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s", testMutexHeld(what, stuck))
			unwind()
			return false
		}
		return true
	}
	subs := katatest.Start(h, func(ctx context.Context) (struct{}, error) {
		for _, id := range ids {
			if err := svc.Submit(ctx, Job{ID: id, Payload: "resize " + id}); err != nil {
				return struct{}{}, err
			}
		}
		return struct{}{}, nil
	})
	calls = append(calls, subs)
	if !settled("Submit before Start, with room in the queue") {
		return
	}
	if !subs.Returned() || subs.Panicked() {
		unwind()
		return // the older tests say that Submit returns at once with room in the queue
	}
	if _, err := subs.Result(); err != nil {
		unwind()
		return // the older tests say that Submit accepts a job with room in the queue
	}
	svc.Start()
	if !settled("Start with jobs queued") {
		return
	}
	mu.Lock()
	running := len(started)
	mu.Unlock()
	if running != s.workers {
		unwind()
		return // the older tests say how many jobs run
	}
	var opts []katatest.CtxOption
	if s.deadline {
		opts = append(opts, katatest.Timeout(testStopGrace))
	}
	shut := katatest.Start(h, svc.Shutdown, opts...)
	mu.Lock()
	first = shut
	mu.Unlock()
	calls = append(calls, first)
	shuts := []*katatest.Call[Report]{first}
	if !settled("Shutdown while the jobs ran") {
		return
	}
	var later []*katatest.Call[Report]
	for range s.waiters {
		c := katatest.Start(h, svc.Shutdown)
		calls = append(calls, c)
		shuts = append(shuts, c)
		later = append(later, c)
	}
	if s.waiters > 0 && !settled("later Shutdown calls while the first one drained") {
		return
	}
	if slices.ContainsFunc(shuts, (*katatest.Call[Report]).Returned) {
		unwind()
		return // the older tests say that Shutdown waits for the running jobs (or report its panic)
	}
	release := func() { // the running jobs finish
		if s.chain {
			gates[ids[0]].Release()
			return
		}
		for _, id := range ids[:s.workers] {
			gates[id].Release()
		}
	}
	end := func() {
		if s.deadline {
			h.Clk.Add(testStopGrace)
		} else {
			first.Cancel()
		}
	}
	switch {
	case s.waiters > 0:
		end()
	case s.endFirst:
		end()
		release()
	case s.trigger > 0:
		release()
	default:
		release()
		end()
	}
	if !settled("the hard stop") {
		return
	}
	mu.Lock()
	var orphans []string
	stopped := false // some job's ctx was cancelled: the hard stop came
	for _, id := range started {
		run := jobs[id]
		stopped = stopped || run.ended
		if !run.returned && !run.ended {
			orphans = append(orphans, id)
		}
	}
	mu.Unlock()
	if len(orphans) > 0 && !stopped {
		if s.req == "R4" {
			unwind()
			return // the R3 tests say that the end of the grace cancels the running jobs
		}
		h.Errorf("the grace ran out while %s ran, and the ctx of none of them was cancelled: when Shutdown's ctx "+
			"ends, cancel the running jobs' ctx (select on ctx.Done() together with the drain), then wait for the "+
			"workers", strings.Join(orphans, ", "))
		unwind()
		return
	}
	if len(orphans) > 0 {
		h.Errorf("%s started as the grace ran out, and the hard stop never cancelled its ctx, so Shutdown waits for "+
			"it forever: a worker checked that the hard stop had not come, and only later made its job's ctx one the "+
			"hard stop cancels. Decide \"start or drop\" and make the job cancellable in one step: one critical section "+
			"shared with the hard stop, or one ctx for every job that the hard stop cancels", strings.Join(orphans, ", "))
		unwind()
		return
	}
	for _, c := range shuts {
		if !c.Returned() {
			h.Errorf("every job had returned once its ctx was cancelled, but a Shutdown call did not return: after " +
				"the hard stop, wait for the workers and return")
			unwind()
			return
		}
		if c.Panicked() {
			unwind()
			return
		}
	}
	rep, err := first.Result()
	if s.req == "R4" {
		testSameResult(h, rep, err, later)
		return
	}
	testStopReport(h, s, ids, started, jobs, rep, err)
}

// testStopReport checks the first Shutdown's result against what the jobs
// did: ctx.Err(), the started jobs that returned an error as Abandoned, the
// jobs never started as Dropped.
func testStopReport(h *katatest.H, s testStopScenario, ids, started []string, jobs map[string]*testStopJob,
	rep Report, err error) {
	want := context.Canceled
	if s.deadline {
		want = context.DeadlineExceeded
	}
	if !errors.Is(err, want) {
		h.Errorf("the hard stop came, and Shutdown returned %v; want ctx.Err(), %v", err, want)
		return
	}
	var wantAbandoned, wantDropped []string
	for _, id := range ids {
		run := jobs[id]
		switch {
		case run == nil:
			wantDropped = append(wantDropped, id)
		case run.err != nil:
			wantAbandoned = append(wantAbandoned, id)
		}
	}
	slices.Sort(wantAbandoned)
	slices.Sort(wantDropped)
	if got := testIDs(rep.Dropped); !slices.Equal(got, wantDropped) {
		h.Errorf("Report.Dropped is %v; want %v: the accepted jobs that never started (handled: %v)", got,
			wantDropped, started)
		return
	}
	if got := testIDs(rep.Abandoned); !slices.Equal(got, wantAbandoned) {
		h.Errorf("Report.Abandoned is %v; want %v: the jobs running at the hard stop whose handle returned an error",
			got, wantAbandoned)
	}
}

// testSameResult checks that every later Shutdown call returned the first
// one's result.
func testSameResult(h *katatest.H, rep Report, err error, later []*katatest.Call[Report]) {
	for i, c := range later {
		r, e := c.Result()
		same := (e == nil) == (err == nil) && (e == nil || e.Error() == err.Error() && errors.Is(e, context.DeadlineExceeded) ==
			errors.Is(err, context.DeadlineExceeded)) &&
			slices.Equal(testIDs(r.Abandoned), testIDs(rep.Abandoned)) && slices.Equal(testIDs(r.Dropped), testIDs(rep.Dropped))
		if !same {
			h.Errorf("a Shutdown call that waited for the first one's end returned before the first one's result was "+
				"stored: later call %d returned %v with Abandoned %v and Dropped %v, while the first returned %v with "+
				"Abandoned %v and Dropped %v. Store the report and the error before you release the waiting calls "+
				"(set them, then close the channel they wait on), so that every call returns the same result",
				i+1, e, testIDs(r.Abandoned), testIDs(r.Dropped), err, testIDs(rep.Abandoned), testIDs(rep.Dropped))
			return
		}
	}
}

func TestR3_ExploreTheHardStopAsWorkersTakeTheirNextJob(t *testing.T) {
	// Ten workers finish one after the other and each takes a queued job;
	// the grace ends as the first of those starts. A worker whose check of
	// the hard stop and whose job's start are two steps shows in most
	// repetitions: eight make a miss in a check rarer than one in a
	// thousand.
	busy := testStopScenario{req: "R3", workers: 10, queued: 10, trigger: 1, chain: true}
	katatest.Repeat(t, 8, func(h *katatest.H) { testPlayStop(h, busy) })
	katatest.Explore(t, 8, testDrawStop("R3"), testPlayStop)
}

func TestR4_ExploreShutdownsWaitingForAHardStopGetItsResult(t *testing.T) {
	// A later call reads the result too early only when the schedule runs
	// it between the release and the store: with 8 scenarios, a check
	// missed that about once in a hundred on a loaded machine.
	katatest.Explore(t, 12, testDrawStop("R4"), testPlayStop)
}

package shutdown

// Explored requirements: each test draws many scenarios (katatest.Explore):
// pool sizes, how many callers submit at once, how long each job takes and
// how it reacts to the hard stop, when the grace ends; then it checks the
// README's statements about the shutdown over the whole scenario.

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

// testJobError is an error of a type of its own, as a renderer's would be.
type testJobError struct{ id string }

func (e *testJobError) Error() string { return "render " + e.id + ": disk quota exceeded" }

// How a job's handle reacts when its ctx is cancelled.
const (
	testStopsWithCtxErr = iota // returns ctx.Err() wrapped
	testStopsWithOwnErr        // returns an error of its own that does not wrap ctx.Err()
	testStopsWithNil           // finishes its last write anyway and returns nil
	testStopsLate              // keeps going for a while, deaf, then returns an error
	testStopsKinds
)

var testStopNames = []string{"returns fmt.Errorf(\"render: %w\", ctx.Err())", "returns an error of its own type, not wrapping ctx.Err()",
	"returns nil (it finished its last write anyway)", "takes %v more before it returns ctx.Err()"}

type testJobPlan struct {
	dur    time.Duration // time handle takes on the clock, if not cancelled
	fails  bool          // handle returns an error of its own when done (R2 only)
	onStop int
	late   time.Duration
}

type testShutdownScenario struct {
	req        string
	workers    int
	queue      int
	startFirst bool // Start before the jobs are submitted
	jobs       []testJobPlan
	before     time.Duration // time between the submits and Shutdown
	grace      time.Duration
	oneByOne   bool // the jobs are submitted one after the other, not at once
	atOnce     bool // Shutdown right after Start, while the workers are still starting
}

func (s testShutdownScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle)", s.workers, s.queue)
	if s.startFirst {
		b.WriteString("; Start()")
	}
	if s.oneByOne {
		fmt.Fprintf(&b, "; %d jobs submitted one after the other:", len(s.jobs))
	} else {
		fmt.Fprintf(&b, "; %d goroutines call Submit at once, one job each:", len(s.jobs))
	}
	for i, j := range s.jobs {
		fmt.Fprintf(&b, "\n\tjob %d takes %v on the clock", i+1, j.dur)
		if j.fails {
			b.WriteString(" and then fails on its own")
		}
		if s.req != "R2" {
			stop := testStopNames[j.onStop]
			if j.onStop == testStopsLate {
				stop = fmt.Sprintf(stop, j.late)
			}
			fmt.Fprintf(&b, "; cancelled, it %s", stop)
		}
	}
	switch {
	case s.atOnce:
		fmt.Fprintf(&b, "\nthen Start() and at once Shutdown(ctx) with a deadline %v later on the clock", s.grace)
		return b.String()
	case !s.startFirst:
		b.WriteString("\nthen Start()")
	}
	fmt.Fprintf(&b, "\nthe clock moves %v; Shutdown(ctx) with a deadline %v later on the clock", s.before, s.grace)
	return b.String()
}

// testTick is the unit of the scenarios' durations; deadlines fall half a
// tick off, so that no job ends at the very instant of the deadline.
const testTick = 10 * time.Millisecond

func testDrawShutdown(req string) func(r *rapid.T) testShutdownScenario {
	return func(r *rapid.T) testShutdownScenario {
		s := testShutdownScenario{req: req}
		s.workers = rapid.IntRange(1, 3).Draw(r, "workers")
		s.queue = rapid.IntRange(0, 3).Draw(r, "queue")
		s.startFirst = rapid.Bool().Draw(r, "Start first")
		room := s.queue
		if s.startFirst {
			room += s.workers
		}
		lo := 0
		if req == "R3" {
			lo = 1
		}
		n := rapid.IntRange(lo, max(lo, min(room, 5))).Draw(r, "jobs") // room for every Submit before Shutdown
		if room == 0 {
			// Nobody takes a job before Start: submit after it.
			s.startFirst = true
			n = rapid.IntRange(lo, s.workers).Draw(r, "jobs with Start first")
		}
		s.oneByOne = rapid.Bool().Draw(r, "one by one")
		s.atOnce = !s.startFirst && rapid.Bool().Draw(r, "Shutdown right after Start")
		var total time.Duration
		for i := range n {
			j := testJobPlan{dur: time.Duration(rapid.IntRange(0, 6).Draw(r, fmt.Sprintf("job %d ticks", i+1))) * testTick}
			j.fails = req == "R2" && rapid.IntRange(0, 2).Draw(r, "fails on its own") == 0
			j.onStop = rapid.IntRange(0, testStopsKinds-1).Draw(r, "on stop")
			j.late = time.Duration(rapid.IntRange(1, 4).Draw(r, "late ticks")) * testTick
			total += j.dur
			s.jobs = append(s.jobs, j)
		}
		s.before = time.Duration(rapid.IntRange(0, 3).Draw(r, "ticks before Shutdown")) * testTick
		if req == "R2" {
			s.grace = total + time.Hour // the drain always ends first
		} else {
			s.grace = time.Duration(rapid.IntRange(0, 6).Draw(r, "grace ticks"))*testTick + testTick/2
			// The first job outlasts the grace: the hard stop always comes.
			s.jobs[0].dur = s.before + s.grace + time.Duration(rapid.IntRange(1, 3).Draw(r, "first job's extra ticks"))*testTick - testTick/2
			if s.atOnce {
				s.jobs[0].dur = s.grace + testTick/2
			}
		}
		return s
	}
}

// testJobRun is what one job's handle did.
type testJobRun struct {
	id        string
	start     time.Duration // mock time, since the scenario began
	end       time.Duration
	cancelled time.Duration // when it saw its ctx end; -1 never
	err       error
	returned  bool
}

func testPlayShutdown(h *katatest.H, s testShutdownScenario) {
	var (
		mu      sync.Mutex
		runs    []*testJobRun
		running int
	)
	plans := map[string]testJobPlan{}
	for i, j := range s.jobs {
		plans[fmt.Sprint("job-", i+1)] = j
	}
	handle := func(ctx context.Context, j Job) error {
		p := plans[j.ID]
		mu.Lock()
		r := &testJobRun{id: j.ID, start: h.Elapsed(), cancelled: -1}
		runs = append(runs, r)
		running++
		mu.Unlock()
		err := func() error {
			t := h.Clk.Timer(p.dur)
			defer t.Stop()
			done := ctx.Done()
			if s.req == "R2" {
				done = nil // R2's jobs take their time, whatever their ctx says
			}
			select {
			case <-t.C:
				if p.fails {
					return &testJobError{j.ID}
				}
				return nil
			case <-done:
			}
			mu.Lock()
			r.cancelled = h.Elapsed()
			mu.Unlock()
			switch p.onStop {
			case testStopsWithCtxErr:
				return fmt.Errorf("render: %w", ctx.Err())
			case testStopsWithOwnErr:
				return &testJobError{j.ID}
			case testStopsWithNil:
				return nil
			}
			late := h.Clk.Timer(p.late)
			defer late.Stop()
			<-late.C
			return ctx.Err()
		}()
		mu.Lock()
		r.end, r.err, r.returned = h.Elapsed(), err, true
		running--
		mu.Unlock()
		return err
	}
	svc := New(h.Clk, s.workers, s.queue, handle)
	if s.startFirst {
		svc.Start()
	}
	subs := make([]*katatest.Call[struct{}], len(s.jobs))
	for i := range s.jobs {
		job := Job{ID: fmt.Sprint("job-", i+1), Payload: fmt.Sprintf("photos/%d.jpg", 1000+i)}
		subs[i] = katatest.Start(h, func(ctx context.Context) (struct{}, error) { return struct{}{}, svc.Submit(ctx, job) })
		if s.oneByOne {
			if stuck := h.Settle(); stuck != nil {
				h.Errorf("%s", testMutexHeld(fmt.Sprintf("Submit of %s", job.ID), stuck))
				return
			}
		}
	}
	if !s.startFirst {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s", testMutexHeld("the Submits before Start", stuck))
			return
		}
		svc.Start()
	}
	if !s.atOnce {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s", testMutexHeld("Start with the jobs submitted", stuck))
			return
		}
		h.Advance(s.before)
	}
	t0 := h.Elapsed()
	deadline := t0 + s.grace
	ctx, cancel := h.Clk.WithTimeout(context.Background(), s.grace)
	defer cancel()
	type result struct {
		r   Report
		err error
	}
	shut := katatest.Go(h, func() (result, error) {
		r, err := svc.Shutdown(ctx)
		return result{r, err}, nil
	})
	// Move the clock a tick at a time until Shutdown returns: the jobs end
	// on ticks, the deadline half a tick off.
	for step := 0; step < 1000; step++ {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s", testMutexHeld(fmt.Sprintf("Shutdown, %v after it began", h.Elapsed()-t0), stuck))
			return
		}
		if shut.Returned() {
			break
		}
		h.Clk.Add(testTick / 2)
	}
	if !shut.Returned() {
		h.Errorf("Shutdown did not return %v after its deadline, with every job's handle returned: %s",
			h.Elapsed()-deadline, "at the deadline it cancels the running jobs, waits for the workers and returns")
		return
	}
	res, _ := shut.Result()
	accepted := map[string]bool{}
	for i, c := range subs {
		if !c.Returned() {
			h.Errorf("Submit of job %d had not returned when Shutdown returned: once Shutdown begins, a waiting Submit "+
				"returns ErrShuttingDown at once", i+1)
			return
		}
		if _, err := c.Result(); err == nil {
			accepted[fmt.Sprint("job-", i+1)] = true
		}
	}
	// Read what the jobs did right after Shutdown returned: nothing may
	// still run, or write, after that.
	mu.Lock()
	stillRunning := running
	done := slices.Clone(runs)
	mu.Unlock()
	if stillRunning > 0 {
		h.Errorf("Shutdown returned while %d job(s) were still running handle: nothing the Service started may run "+
			"after Shutdown returns; after cancelling, wait for every worker", stillRunning)
		return
	}
	testCheckShutdown(h, s, t0, deadline, accepted, done, res.r, res.err)
}

func testCheckShutdown(h *katatest.H, s testShutdownScenario, t0, deadline time.Duration, accepted map[string]bool,
	runs []*testJobRun, r Report, err error) {
	handled := map[string]*testJobRun{}
	for _, run := range runs {
		if handled[run.id] != nil {
			h.Errorf("%s was handled twice: an accepted job is handled exactly once", run.id)
			return
		}
		handled[run.id] = run
	}
	dropped := map[string]bool{}
	for _, j := range r.Dropped {
		if dropped[j.ID] {
			h.Errorf("Report.Dropped lists %s twice", j.ID)
			return
		}
		dropped[j.ID] = true
	}
	var prev *testJobRun
	for i := range s.jobs {
		id := fmt.Sprint("job-", i+1)
		if !accepted[id] {
			if handled[id] != nil || dropped[id] {
				h.Errorf("%s was refused (its Submit returned an error), yet it was handled or reported: a refused job is never handled", id)
				return
			}
			continue
		}
		if run := handled[id]; s.oneByOne && run != nil {
			if prev != nil && run.start < prev.start {
				h.Errorf("%s started at t=%v, before %s, submitted earlier, which started at t=%v: the queue is FIFO, "+
					"so queued jobs start in the order they were submitted", id, run.start, prev.id, prev.start)
				return
			}
			prev = run
		}
		switch {
		case handled[id] != nil && dropped[id]:
			h.Errorf("%s was handled and is also listed in Report.Dropped: Dropped lists only the accepted jobs that never started", id)
			return
		case handled[id] == nil && !dropped[id]:
			h.Errorf("%s was accepted (Submit returned nil) but was never handled, and Report.Dropped does not list it: "+
				"an accepted job is handled exactly once (queued jobs still start during the drain), or else, after a hard "+
				"stop, Report.Dropped must list it", id)
			return
		}
	}
	var wantAbandoned []string
	hardStop := false
	for _, run := range runs {
		if run.cancelled >= 0 {
			hardStop = true
			if run.cancelled < deadline {
				h.Errorf("%s saw its ctx cancelled at t=%v, before the grace ended at t=%v (Shutdown began at t=%v): "+
					"a job's ctx is cancelled only at the hard stop, never while grace remains", run.id, run.cancelled, deadline, t0)
				return
			}
			if run.err != nil {
				wantAbandoned = append(wantAbandoned, run.id)
			}
		}
		if run.start > deadline {
			h.Errorf("%s started after the hard stop: it started at t=%v, the grace ended at t=%v; after the grace ends "+
				"no queued job starts, it belongs in Report.Dropped", run.id, run.start, deadline)
			return
		}
	}
	hardStop = hardStop || len(r.Dropped) > 0
	var gotAbandoned []string
	for _, j := range r.Abandoned {
		gotAbandoned = append(gotAbandoned, j.ID)
	}
	slices.Sort(gotAbandoned)
	slices.Sort(wantAbandoned)
	if !hardStop {
		if err != nil || len(r.Abandoned)+len(r.Dropped) > 0 {
			h.Errorf("every accepted job finished before the deadline (the last at t=%v, the deadline at t=%v), yet Shutdown "+
				"returned %v and a report of %d abandoned and %d dropped jobs; want nil and an empty report: a job that "+
				"failed on its own during the drain is not abandoned", testLastEnd(runs), deadline, err, len(r.Abandoned), len(r.Dropped))
		}
		return
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		h.Errorf("the grace ran out at t=%v with jobs unfinished, but Shutdown returned %v; want ctx.Err(), "+
			"context.DeadlineExceeded", deadline, err)
		return
	}
	if !slices.Equal(gotAbandoned, wantAbandoned) {
		h.Errorf("Report.Abandoned is %v; want %v: it lists exactly the jobs running at the hard stop whose handle "+
			"then returned an error, whatever the error (wrapping ctx.Err() or not); a job that still returned nil is not listed",
			gotAbandoned, wantAbandoned)
	}
}

func testLastEnd(runs []*testJobRun) time.Duration {
	var last time.Duration
	for _, r := range runs {
		last = max(last, r.end)
	}
	return last
}

func TestR2_ExploreTheDrainFinishesEveryAcceptedJob(t *testing.T) {
	katatest.Explore(t, 15, testDrawShutdown("R2"), testPlayShutdown)
}

func TestR3_ExploreTheHardStopReportsWhatWasLost(t *testing.T) {
	katatest.Explore(t, 15, testDrawShutdown("R3"), testPlayShutdown)
}

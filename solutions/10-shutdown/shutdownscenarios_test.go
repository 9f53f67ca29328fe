package shutdown

// Explored requirements: each test draws many scenarios (katatest.Explore):
// pool sizes, how many callers submit at once, how long each job takes and
// how it reacts to the hard stop, when the grace ends; then it checks the
// README's statements about the shutdown over the whole scenario. B3's
// scenarios add shutdown hooks that take time, wait for their ctx or cancel
// it, so that the grace may end after the drain, while the hooks run, and a
// second Shutdown call whose own ctx may end at any point of it.

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

// What a shutdown hook does (B3), before it returns.
const (
	testHookAtOnce   = iota // returns at once
	testHookTakes           // takes ticks on the clock, deaf to its ctx
	testHookUntilCtx        // waits for its ctx to end, or ticks on the clock
	testHookCancels         // cancels Shutdown's ctx, as a second SIGTERM does
	testHookKinds
)

// What a shutdown hook returns.
const (
	testHookNil    = iota
	testHookOwnErr // an error of its own
	testHookCtxErr // an error wrapping its ctx.Err() if its ctx has ended, else nil
	testHookResults
)

var testHookNames = []string{"close-db", "flush-metrics", "deregister"}

type testHookPlan struct {
	kind   int
	ticks  int
	result int
}

func (p testHookPlan) String() string {
	var b strings.Builder
	switch p.kind {
	case testHookAtOnce:
		b.WriteString("at once")
	case testHookTakes:
		fmt.Fprintf(&b, "after %v on the clock, whatever its ctx says", time.Duration(p.ticks)*testTick)
	case testHookUntilCtx:
		fmt.Fprintf(&b, "once its ctx ends or %v has passed on the clock", time.Duration(p.ticks)*testTick)
	case testHookCancels:
		b.WriteString("after it cancelled Shutdown's ctx (a second SIGTERM)")
	}
	switch p.result {
	case testHookNil:
		b.WriteString(", returns nil")
	case testHookOwnErr:
		b.WriteString(", returns an error of its own")
	case testHookCtxErr:
		b.WriteString(", returns fmt.Errorf(\"…: %w\", ctx.Err()) if its ctx has ended, else nil")
	}
	return b.String()
}

type testShutdownScenario struct {
	req        string
	workers    int
	queue      int
	startFirst bool // Start before the jobs are submitted
	jobs       []testJobPlan
	before     time.Duration // time between the submits and Shutdown
	grace      time.Duration
	oneByOne   bool           // the jobs are submitted one after the other, not at once
	atOnce     bool           // Shutdown right after Start, while the workers are still starting
	hooks      []testHookPlan // B3: registered in this order, after New
	later      int            // B3: 0 no second Shutdown call, 1 one without a deadline, 2 one with laterGrace
	laterGrace time.Duration
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
	for i, hp := range s.hooks {
		if i == 0 {
			b.WriteString("\nOnShutdown hooks, registered in this order:")
		}
		fmt.Fprintf(&b, "\n\t%s: %v", testHookNames[i], hp)
	}
	switch {
	case s.atOnce:
		fmt.Fprintf(&b, "\nthen Start() and at once Shutdown(ctx) with a deadline %v later on the clock", s.grace)
	case !s.startFirst:
		b.WriteString("\nthen Start()")
		fallthrough
	default:
		fmt.Fprintf(&b, "\nthe clock moves %v; Shutdown(ctx) with a deadline %v later on the clock", s.before, s.grace)
	}
	switch s.later {
	case 1:
		b.WriteString("\nonce it is under way, a second Shutdown(ctx) without a deadline")
	case 2:
		fmt.Fprintf(&b, "\nonce it is under way, a second Shutdown(ctx) with a deadline %v after the first one's began", s.laterGrace)
	}
	return b.String()
}

// testTick is the unit of the scenarios' durations; deadlines fall half a
// tick off, so that no job ends at the very instant of the deadline, and a
// second Shutdown's deadline a quarter of a tick off, so that it never
// falls at the instant the first one returns.
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
		lo, most := 0, 5
		switch req {
		case "R3":
			lo = 1
		case "B3":
			most = 3
		}
		n := rapid.IntRange(lo, max(lo, min(room, most))).Draw(r, "jobs") // room for every Submit before Shutdown
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
			j.fails = req != "R3" && rapid.IntRange(0, 2).Draw(r, "fails on its own") == 0
			j.onStop = rapid.IntRange(0, testStopsKinds-1).Draw(r, "on stop")
			j.late = time.Duration(rapid.IntRange(1, 4).Draw(r, "late ticks")) * testTick
			total += j.dur
			s.jobs = append(s.jobs, j)
		}
		s.before = time.Duration(rapid.IntRange(0, 3).Draw(r, "ticks before Shutdown")) * testTick
		switch req {
		case "R2":
			s.grace = total + time.Hour // the drain always ends first
		case "B3":
			// The grace may end during the drain (a hard stop), while the
			// hooks run, or after them.
			s.grace = time.Duration(rapid.IntRange(0, 6).Draw(r, "grace ticks"))*testTick + testTick/2
			for i := range rapid.IntRange(1, len(testHookNames)).Draw(r, "hooks") {
				hp := testHookPlan{kind: rapid.IntRange(0, testHookKinds-1).Draw(r, fmt.Sprintf("hook %d does", i+1))}
				switch hp.kind {
				case testHookTakes:
					hp.ticks = rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("hook %d ticks", i+1))
				case testHookUntilCtx:
					hp.ticks = rapid.IntRange(1, 8).Draw(r, fmt.Sprintf("hook %d ticks at most", i+1))
				}
				hp.result = rapid.IntRange(0, testHookResults-1).Draw(r, fmt.Sprintf("hook %d returns", i+1))
				s.hooks = append(s.hooks, hp)
			}
			s.later = rapid.IntRange(0, 2).Draw(r, "second Shutdown")
			if s.later == 2 {
				s.laterGrace = time.Duration(rapid.IntRange(0, 10).Draw(r, "second Shutdown's ticks"))*testTick + testTick/4
			}
		default:
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

// testHookRun is what one shutdown hook saw and did.
type testHookRun struct {
	name       string
	start, end time.Duration
	running    int // jobs still in handle when it began
	goroutine  int
	err        error
}

// testHookError is a hook's error of its own.
type testHookError struct{ name string }

func (e *testHookError) Error() string { return e.name + ": connection refused" }

func testPlayShutdown(h *katatest.H, s testShutdownScenario) {
	// After a failure, move the clock on until what the scenario started
	// has returned: a goroutine left waiting on the clock would make the
	// leak check of every later scenario slower.
	defer func() {
		for i := 0; i < 4 && h.Failed(); i++ {
			h.Settle()
			h.Clk.Add(time.Hour)
		}
	}()
	var (
		mu      sync.Mutex
		runs    []*testJobRun
		running int
		hooks   []*testHookRun
		stop    context.CancelFunc // cancels the first Shutdown's ctx
	)
	ctxEnd := time.Duration(-1) // when the first Shutdown's ctx ended
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
	for i, hp := range s.hooks {
		name := testHookNames[i]
		svc.OnShutdown(func(ctx context.Context) error {
			mu.Lock()
			run := &testHookRun{name: name, start: h.Elapsed(), running: running, goroutine: katatest.Goroutine()}
			hooks = append(hooks, run)
			cancel := stop
			mu.Unlock()
			switch hp.kind {
			case testHookTakes:
				t := h.Clk.Timer(time.Duration(hp.ticks) * testTick)
				<-t.C
			case testHookUntilCtx:
				t := h.Clk.Timer(time.Duration(hp.ticks) * testTick)
				select {
				case <-t.C:
				case <-ctx.Done():
				}
				t.Stop()
			case testHookCancels:
				cancel()
			}
			var err error
			switch hp.result {
			case testHookOwnErr:
				err = &testHookError{name}
			case testHookCtxErr:
				select {
				case <-ctx.Done():
					err = fmt.Errorf("%s: %w", name, ctx.Err())
				default:
				}
			}
			mu.Lock()
			run.end, run.err = h.Elapsed(), err
			mu.Unlock()
			return err
		})
	}
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
	mu.Lock()
	stop = cancel
	mu.Unlock()
	defer context.AfterFunc(ctx, func() {
		mu.Lock()
		ctxEnd = h.Elapsed()
		mu.Unlock()
	})()
	type result struct {
		r         Report
		err       error
		at        time.Duration
		goroutine int
	}
	shutdown := func(ctx context.Context) func() (result, error) {
		return func() (result, error) {
			g := katatest.Goroutine()
			r, err := svc.Shutdown(ctx)
			return result{r, err, h.Elapsed(), g}, nil
		}
	}
	shut := katatest.Go(h, shutdown(ctx))
	var later *katatest.Call[result]
	// Move the clock a tick at a time until Shutdown returns: the jobs end
	// on ticks, the deadline half a tick off (a second call's, a quarter).
	step := testTick / 2
	if s.later == 2 {
		step = testTick / 4
	}
	// By then the drain, or the hard stop and the jobs' slowest stop, and
	// every hook are over.
	horizon := t0 + s.grace + 5*testTick
	if s.req == "R2" {
		horizon = t0 + 2*testTick
	}
	for _, j := range s.jobs {
		horizon += j.dur
	}
	for _, hp := range s.hooks {
		horizon += time.Duration(hp.ticks) * testTick
	}
	for i := 0; ; i++ {
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s", testMutexHeld(fmt.Sprintf("Shutdown, %v after it began", h.Elapsed()-t0), stuck))
			return
		}
		if i == 0 && s.later > 0 {
			laterCtx := context.Background()
			if s.later == 2 {
				c, cancel := h.Clk.WithTimeout(laterCtx, s.laterGrace)
				defer cancel()
				laterCtx = c
			}
			later = katatest.Go(h, shutdown(laterCtx))
			if stuck := h.Settle(); stuck != nil {
				h.Errorf("%s", testMutexHeld("a second Shutdown call", stuck))
				return
			}
		}
		if shut.Returned() || h.Elapsed() > horizon {
			break
		}
		h.Clk.Add(step)
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
	if s.req != "B3" {
		testCheckShutdown(s, t0, deadline, accepted, done, res.r, res.err, h.Errorf)
		return
	}
	// What R2 and R3 check, B3 leaves to them: it plays on only when those
	// checks pass.
	hardStop, ok := testCheckShutdown(s, t0, deadline, accepted, done, res.r, res.err, func(string, ...any) {})
	if !ok {
		return
	}
	mu.Lock()
	ran := slices.Clone(hooks)
	ended := ctxEnd
	mu.Unlock()
	first := testShutdownEnd{rep: res.r, err: res.err, at: res.at, goroutine: res.goroutine}
	if !testCheckHooks(h, s, t0, deadline, hardStop, testLastEnd(done), ended, ran, first) || later == nil {
		return
	}
	if !later.Returned() {
		h.Errorf("a second Shutdown call had not returned when the first one did, at t=%v: every call waits for "+
			"the same end, hooks included, and returns with the first one", res.at)
		return
	}
	lr, _ := later.Result()
	testCheckLater(h, s, t0, first, testShutdownEnd{rep: lr.r, err: lr.err, at: lr.at})
}

// testCheckShutdown checks the jobs and the report against the README, and
// the error unless B3 checks it; it reports through fail, and says whether
// the hard stop came and whether every check passed.
func testCheckShutdown(s testShutdownScenario, t0, deadline time.Duration, accepted map[string]bool,
	runs []*testJobRun, r Report, err error, fail func(format string, args ...any)) (hardStop, ok bool) {
	handled := map[string]*testJobRun{}
	for _, run := range runs {
		if handled[run.id] != nil {
			fail("%s was handled twice: an accepted job is handled exactly once", run.id)
			return false, false
		}
		handled[run.id] = run
	}
	dropped := map[string]bool{}
	for _, j := range r.Dropped {
		if dropped[j.ID] {
			fail("Report.Dropped lists %s twice", j.ID)
			return false, false
		}
		dropped[j.ID] = true
	}
	var prev *testJobRun
	for i := range s.jobs {
		id := fmt.Sprint("job-", i+1)
		if !accepted[id] {
			if handled[id] != nil || dropped[id] {
				fail("%s was refused (its Submit returned an error), yet it was handled or reported: a refused job is never handled", id)
				return false, false
			}
			continue
		}
		if run := handled[id]; s.oneByOne && run != nil {
			if prev != nil && run.start < prev.start {
				fail("%s started at t=%v, before %s, submitted earlier, which started at t=%v: the queue is FIFO, "+
					"so queued jobs start in the order they were submitted", id, run.start, prev.id, prev.start)
				return false, false
			}
			prev = run
		}
		switch {
		case handled[id] != nil && dropped[id]:
			fail("%s was handled and is also listed in Report.Dropped: %s", id, testHandledYetDropped)
			return false, false
		case handled[id] == nil && !dropped[id]:
			fail("%s was accepted (Submit returned nil) but was never handled, and Report.Dropped does not list it: "+
				"an accepted job is handled exactly once (queued jobs still start during the drain), or else, after a hard "+
				"stop, Report.Dropped must list it", id)
			return false, false
		}
	}
	var wantAbandoned []string
	for _, run := range runs {
		if run.cancelled >= 0 {
			hardStop = true
			if run.cancelled < deadline {
				fail("%s saw its ctx cancelled at t=%v, before the grace ended at t=%v (Shutdown began at t=%v): "+
					"a job's ctx is cancelled only at the hard stop, never while grace remains", run.id, run.cancelled, deadline, t0)
				return false, false
			}
			if run.err != nil {
				wantAbandoned = append(wantAbandoned, run.id)
			}
		}
		if run.start > deadline {
			fail("%s started after the hard stop: it started at t=%v, the grace ended at t=%v; after the grace ends "+
				"no queued job starts, it belongs in Report.Dropped", run.id, run.start, deadline)
			return false, false
		}
	}
	hardStop = hardStop || len(r.Dropped) > 0
	var gotAbandoned []string
	for _, j := range r.Abandoned {
		gotAbandoned = append(gotAbandoned, j.ID)
	}
	slices.Sort(gotAbandoned)
	slices.Sort(wantAbandoned)
	if s.req == "B3" { // the hooks' errors join the error: B3 checks it
		err = nil
	}
	if !hardStop {
		if err != nil || len(r.Abandoned)+len(r.Dropped) > 0 {
			fail("every accepted job finished before the deadline (the last at t=%v, the deadline at t=%v), yet Shutdown "+
				"returned %v and a report of %d abandoned and %d dropped jobs; want nil and an empty report: a job that "+
				"failed on its own during the drain is not abandoned", testLastEnd(runs), deadline, err, len(r.Abandoned), len(r.Dropped))
			return false, false
		}
		return false, true
	}
	if s.req != "B3" && !errors.Is(err, context.DeadlineExceeded) {
		fail("the grace ran out at t=%v with jobs unfinished, but Shutdown returned %v; want ctx.Err(), "+
			"context.DeadlineExceeded", deadline, err)
		return true, false
	}
	if !slices.Equal(gotAbandoned, wantAbandoned) {
		fail("Report.Abandoned is %v; want %v: it lists exactly the jobs running at the hard stop whose handle "+
			"then returned an error, whatever the error (wrapping ctx.Err() or not); a job that still returned nil is not listed",
			gotAbandoned, wantAbandoned)
		return true, false
	}
	return true, true
}

// testShutdownEnd is what a Shutdown call returned, and when.
type testShutdownEnd struct {
	rep       Report
	err       error
	at        time.Duration
	goroutine int
}

// testCheckHooks checks B3 over a scenario whose jobs and report passed R2
// and R3's checks: the hooks ran once each, last registered first, after
// every job, on the first Shutdown's goroutine, and Shutdown's error joins
// ctx.Err() after a hard stop, and only then, with the hooks' errors.
func testCheckHooks(h *katatest.H, s testShutdownScenario, t0, deadline time.Duration, hardStop bool,
	lastJobEnd, ctxEnded time.Duration, ran []*testHookRun, first testShutdownEnd) bool {
	var order, want []string
	for _, run := range ran {
		order = append(order, run.name)
	}
	for i := len(s.hooks) - 1; i >= 0; i-- {
		want = append(want, testHookNames[i])
	}
	if !slices.Equal(order, want) {
		h.Errorf("the hooks ran as %v; want %v: every hook runs once, after the drain or the hard stop, last "+
			"registered first", order, want)
		return false
	}
	for _, run := range ran {
		if run.running > 0 || run.start < lastJobEnd {
			h.Errorf("hook %s began at t=%v while %d job(s) still ran handle (the last job returned at t=%v): hooks "+
				"run once every worker has returned, drained or hard-stopped", run.name, run.start, run.running, lastJobEnd)
			return false
		}
		if run.goroutine != first.goroutine {
			h.Errorf("hook %s ran on a goroutine of its own, not on the goroutine of the first Shutdown call: run the "+
				"hooks in Shutdown itself, one after the other, and return once the last one has", run.name)
			return false
		}
	}
	err := first.err
	failed, ctxErrs := 0, false
	for _, run := range ran {
		if run.err == nil {
			continue
		}
		failed++
		ctxErrs = ctxErrs || errors.Is(run.err, context.DeadlineExceeded) || errors.Is(run.err, context.Canceled)
		if !errors.Is(err, run.err) {
			h.Errorf("hook %s returned %q, and Shutdown's error (%v) does not match it: join every hook's error into "+
				"Shutdown's error (errors.Join), whether the queue was drained or hard-stopped", run.name, run.err, err)
			return false
		}
	}
	if hardStop {
		if !errors.Is(err, context.DeadlineExceeded) {
			h.Errorf("the grace ran out at t=%v with jobs unfinished (a hard stop), and Shutdown returned %v: after a "+
				"hard stop its error is errors.Join of ctx.Err(), context.DeadlineExceeded, and the hooks' errors",
				deadline, err)
			return false
		}
		return true
	}
	if !ctxErrs && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
		when := "after the drain"
		for _, run := range ran {
			if ctxEnded >= run.start && ctxEnded <= run.end {
				when = fmt.Sprintf("at t=%v, while hook %s ran", ctxEnded, run.name)
				if s.hooks[slices.Index(testHookNames, run.name)].kind == testHookCancels {
					when = fmt.Sprintf("when hook %s cancelled it, as a second SIGTERM does", run.name)
				}
			}
		}
		h.Errorf("Shutdown's error holds ctx.Err() (it returned %v) though no hard stop came: every accepted job had "+
			"finished by t=%v, before the deadline at t=%v, and Shutdown's ctx ended only later, %s. Shutdown's error "+
			"is ctx.Err() joined with the hooks' errors only after a hard stop: decide whether the hard stop came where "+
			"the drain ends (the select on the drain and ctx.Done()), not by looking at ctx once the hooks have run",
			err, max(lastJobEnd, t0), deadline, when)
		return false
	}
	if failed == 0 && err != nil {
		h.Errorf("every accepted job finished before the deadline at t=%v and no hook failed, yet Shutdown returned "+
			"%v; want nil: its error is only the hooks' errors joined, plus ctx.Err() after a hard stop", deadline, err)
		return false
	}
	return true
}

// testCheckLater checks a second Shutdown call, made while the first was
// under way: unless its own ctx ended first (R4 checks that case), it
// returns the first one's result as the first returns, hooks included.
func testCheckLater(h *katatest.H, s testShutdownScenario, t0 time.Duration, first, later testShutdownEnd) {
	if s.later == 2 && t0+s.laterGrace < first.at {
		return
	}
	sameErr := (later.err == nil) == (first.err == nil) && (later.err == nil || later.err.Error() == first.err.Error())
	if !sameErr || later.at != first.at || !slices.Equal(testIDs(later.rep.Abandoned), testIDs(first.rep.Abandoned)) ||
		!slices.Equal(testIDs(later.rep.Dropped), testIDs(first.rep.Dropped)) {
		h.Errorf("a second Shutdown call returned %v at t=%v with Abandoned %v and Dropped %v, while the first "+
			"returned %v at t=%v with Abandoned %v and Dropped %v: every call waits for the same end, the hooks "+
			"included, and returns the same Report and error, the hooks' errors joined in", later.err, later.at,
			testIDs(later.rep.Abandoned), testIDs(later.rep.Dropped), first.err, first.at,
			testIDs(first.rep.Abandoned), testIDs(first.rep.Dropped))
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

func TestB3_ExploreHooksWhileTheGraceEnds(t *testing.T) {
	katatest.Explore(t, 10, testDrawShutdown("B3"), testPlayShutdown)
}

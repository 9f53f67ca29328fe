package shutdown

// Explored B1 and R4: the entry points that take a ctx, called with one
// that has already ended (cancelled, cancelled with a cause, past its
// deadline), several at once.
//
// Run (B1): it calls Start, waits for the first signal or the end of its
// ctx, then calls Shutdown with a ctx whose deadline is grace later on the
// clock and whose parent is not Run's ctx. A ctx that ended before the call
// ended first, so the shutdown begins at once, and it is graceful: intake
// stops, the accepted jobs (queued before Run too: Run calls Start) are
// drained, and only when the grace runs out on the clock are the running
// jobs cancelled, with context.DeadlineExceeded and a Report. Run returns
// what that Shutdown returns: never Run's own ctx.Err() nor its cause. No
// signal is sent: whether a signal after a shutdown begun by the ctx counts
// as the "second" is left open. (Submits whose ctx has already ended are
// explored in shutdownwithdonectx_test.go.)
//
// Shutdown (R4): several later calls, at the same instant, each with a ctx
// that has already ended, while the first call drains: each one's own ctx
// ended first, so each returns that ctx.Err() (context.Canceled, even when
// cancelled with a cause) and an empty Report, and the shutdown goes on:
// no job's ctx is cancelled and the queued jobs still start.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testEnded is how a ctx ended before the call: testDoneCtx's three ways
// and a plain context.WithCancel, cancelled (no cause).
type testEnded int

const (
	testEndedPlain testEnded = iota
	testEndedCause
	testEndedDeadline
)

func (k testEnded) String() string {
	if k == testEndedPlain {
		return "had already been cancelled (context.WithCancel)"
	}
	return testDoneCtx(k).String()
}

func (k testEnded) err() error {
	if k == testEndedDeadline {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// start starts f with a ctx that ended k's way, once goNow is closed.
func (k testEnded) start(r *testRig, goNow <-chan struct{}, f func(ctx context.Context) (Report, error)) *katatest.Call[Report] {
	var opts []katatest.CtxOption
	switch k {
	case testEndedCause:
		opts = append(opts, katatest.Cancelled())
	case testEndedDeadline:
		opts = append(opts, katatest.Expired())
	}
	return testGo(r, func(ctx context.Context) (Report, error) {
		if k == testEndedPlain {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			cancel()
		}
		<-goNow
		return f(ctx)
	}, opts...)
}

type testRunEnded struct {
	workers, queue int
	started        bool // Start was called before Run (else the jobs wait in the queue for Run's Start)
	running        int  // jobs held in handle when Run is called
	queued         int  // jobs waiting in the queue when Run is called
	kind           testEnded
	grace          time.Duration
	finish         bool // the jobs finish within the grace; else the grace runs out
}

func (s testRunEnded) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle); every job waits in handle until the test lets it go "+
		"or its ctx ends, then returns its ctx's error, wrapped", s.workers, s.queue)
	ids := testJobs(s.running + s.queued)
	if s.started {
		fmt.Fprintf(&b, "; Start; %s submitted: %s running, %s queued", testList(ids), testList(ids[:s.running]),
			testList(ids[s.running:]))
	} else {
		fmt.Fprintf(&b, "; %s submitted before Start (queued)", testList(ids))
	}
	fmt.Fprintf(&b, "\nRun(ctx, signals, grace %v) with a ctx that %s; no signal ever comes", s.grace, s.kind)
	if s.finish {
		fmt.Fprintf(&b, "\nthe test lets every job go, before the clock moves")
	} else {
		fmt.Fprintf(&b, "\nthe clock moves %v, then 1ns more: the grace runs out", s.grace-1)
	}
	return b.String()
}

func testDrawRunEnded(r *rapid.T) testRunEnded {
	s := testRunEnded{workers: rapid.IntRange(1, 3).Draw(r, "workers"), queue: rapid.IntRange(0, 3).Draw(r, "queue")}
	s.started = rapid.Bool().Draw(r, "Start before Run")
	if s.started {
		s.running = rapid.IntRange(0, s.workers).Draw(r, "jobs running")
		if s.running == s.workers {
			s.queued = rapid.IntRange(0, s.queue).Draw(r, "jobs queued")
		}
	} else {
		s.queued = rapid.IntRange(0, s.queue).Draw(r, "jobs queued before Start")
	}
	s.kind = testEnded(rapid.IntRange(0, 2).Draw(r, "how Run's ctx ended"))
	s.grace = time.Duration(rapid.IntRange(1, 4).Draw(r, "grace ticks")) * testTick
	s.finish = rapid.Bool().Draw(r, "the jobs finish within the grace")
	return s
}

func (s testRunEnded) play(h *katatest.H) {
	r := testNew(h, s.workers, s.queue)
	if s.started {
		r.svc.Start()
	}
	ids := testJobs(s.running + s.queued)
	r.hold(false, ids...)
	if !r.accept("room for every job", ids...) || (s.started && !r.wantRunning("the jobs submitted after Start",
		ids[:s.running]...)) {
		return
	}
	goNow := make(chan struct{})
	signals := make(chan os.Signal, 2)
	run := s.kind.start(r, goNow, func(ctx context.Context) (Report, error) {
		return r.svc.Run(ctx, signals, s.grace)
	})
	close(goNow)
	if !r.settle("Run called with a ctx that had already ended") || testBroken(r, run) {
		return
	}
	rule := fmt.Sprintf("the end of Run's ctx begins a graceful shutdown, even when it ended before the call: "+
		"Run calls Start, sees its ctx done, then calls Shutdown with a ctx whose deadline is the grace (%v) later "+
		"on the clock and whose parent is not Run's ctx, and returns what that Shutdown returns. An early "+
		"`if ctx.Err() != nil { return … }` in Run skips all of that, and so does handing Run's own ctx to Shutdown",
		s.grace)
	accepted := ids
	if run.Returned() && len(accepted) > 0 {
		rep, err := run.Result()
		h.Errorf("Run, called with a ctx that %s, returned at once (error %v, Abandoned %v, Dropped %v), with %v "+
			"accepted and not finished, the clock stopped and the grace of %v ahead: %s", s.kind, err,
			testIDs(rep.Abandoned), testIDs(rep.Dropped), accepted, s.grace, rule)
		r.unwind()
		return
	}
	if cut := r.ended.All(); len(cut) > 0 {
		h.Errorf("Run was called with a ctx that %s, and the ctx of %v was cancelled at once, with the whole grace "+
			"of %v ahead: %s", s.kind, cut, s.grace, rule)
		r.unwind()
		return
	}
	if len(accepted) > 0 {
		want := min(s.workers, len(accepted))
		if running := r.running(); s.started && len(running) > s.workers {
			h.Errorf("Run was called with a ctx that %s, after Start; then %v were in handle at once, with %d "+
				"worker(s): Start called twice (once before Run, once by Run) launched the workers twice — Start "+
				"launches them once and does nothing when called again", s.kind, running, s.workers)
			r.unwind()
			return
		} else if len(running) != want {
			h.Errorf("Run was called with a ctx that %s, with %v accepted; %d worker(s) should each run one of "+
				"them during the grace, but the jobs in handle were %v: %s", s.kind, accepted, s.workers, running,
				rule)
			r.unwind()
			return
		}
		late := r.submit("job-late")
		if !r.settle("Submit while Run shuts down") || testBroken(r, late) ||
			!late.Returns("a Submit made while Run shut down (its ctx had ended before the call) was still "+
				"waiting: once Shutdown begins, Submit returns ErrShuttingDown at once") {
			return
		}
		if _, err := late.Result(); !errors.Is(err, ErrShuttingDown) {
			h.Errorf("Run was called with a ctx that %s; a Submit made after that returned %v, want an error "+
				"matching ErrShuttingDown: %s", s.kind, err, rule)
			r.unwind()
			return
		}
	}
	var running []string
	if len(accepted) > 0 {
		running = r.running()
		if s.finish {
			r.release()
		} else {
			if !r.advance(s.grace-1, "Run with 1ns of its grace left") || testBroken(r, run) {
				return
			}
			if cut := r.ended.All(); run.Returned() || len(cut) > 0 {
				h.Errorf("Run was called with a ctx that %s; with 1ns of its %v grace left, Run had returned or "+
					"the ctx of %v was cancelled: the grace is measured on the injected clock from the shutdown's "+
					"start, and nothing is cancelled before it runs out: %s", s.kind, s.grace, cut, rule)
				r.unwind()
				return
			}
			if !r.advance(1, "Run as its grace ran out") {
				return
			}
		}
	}
	rep, err, ok := testFinish(r, run, "Run", fmt.Sprintf("Run was called with a ctx that %s; its grace of %v "+
		"had run out or every job had finished, yet Run was still waiting", s.kind, s.grace))
	if !ok {
		return
	}
	abandoned, dropped := testIDs(rep.Abandoned), testIDs(rep.Dropped)
	if s.finish || len(accepted) == 0 {
		if err != nil || len(abandoned)+len(dropped) > 0 {
			h.Errorf("Run was called with a ctx that %s; every accepted job (%v) finished within the %v grace, "+
				"yet Run returned %v with Abandoned %v and Dropped %v; want nil and an empty Report: %s", s.kind,
				accepted, s.grace, err, abandoned, dropped, rule)
			return
		}
		if handled := r.started(); !testSameSet(handled, accepted) {
			h.Errorf("Run was called with a ctx that %s, and its drain finished; the jobs handled were %v, want "+
				"every accepted job once, %v (queued jobs still start during the drain): %s", s.kind, handled,
				accepted, rule)
		}
		return
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		h.Errorf("Run was called with a ctx that %s, and its grace of %v ran out on the clock with jobs running; "+
			"it returned %v, want context.DeadlineExceeded, the error of Shutdown's ctx, not Run's: %s", s.kind,
			s.grace, err, rule)
		return
	}
	if started := r.startedAfterStop(); len(started) > 0 {
		h.Errorf("%v started after the hard stop, with their ctx already cancelled: no queued job starts once "+
			"the grace has run out", started)
		return
	}
	slices.Sort(running)
	var rest []string
	for _, id := range accepted {
		if !slices.Contains(running, id) {
			rest = append(rest, id)
		}
	}
	slices.Sort(rest)
	if !slices.Equal(abandoned, running) || !slices.Equal(dropped, rest) {
		h.Errorf("Run was called with a ctx that %s, and its grace of %v ran out; it reported Abandoned %v and "+
			"Dropped %v, want Abandoned %v (running, cancelled, returned an error) and Dropped %v (accepted, never "+
			"started)", s.kind, s.grace, abandoned, dropped, running, rest)
	}
}

func TestB1_ExploreRunWhoseCtxHasAlreadyEnded(t *testing.T) {
	katatest.Replay(t, []testRunEnded{
		{workers: 1, queue: 1, queued: 1, kind: testEndedCause, grace: testTick},
		{workers: 1, queue: 1, started: true, running: 1, queued: 1, kind: testEndedPlain, grace: 2 * testTick},
	}, func(h *katatest.H, s testRunEnded) { s.play(h) })
	katatest.Explore(t, 5, testDrawRunEnded, func(h *katatest.H, s testRunEnded) { s.play(h) })
}

type testLaterEnded struct {
	workers, queue int
	queued         int           // jobs waiting behind the running ones (one per worker)
	grace          time.Duration // the first Shutdown's ctx ends this long after it began; 0: no deadline
	later          []testEnded   // later Shutdown calls at the same instant, each with a ctx that has already ended
}

func (s testLaterEnded) String() string {
	var b strings.Builder
	ids := testJobs(s.workers + s.queued)
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle), Start; %s submitted: %s running (each waits in handle "+
		"until the test lets it go, or its ctx ends), %s queued", s.workers, s.queue, testList(ids),
		testList(ids[:s.workers]), testList(ids[s.workers:]))
	if s.grace > 0 {
		fmt.Fprintf(&b, "\nShutdown(ctx) with a deadline %v later on the clock", s.grace)
	} else {
		b.WriteString("\nShutdown(ctx) without a deadline")
	}
	b.WriteString("\nwhile it drains, at the same instant:")
	for i, k := range s.later {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " Shutdown(ctx) with a ctx that %s", k)
	}
	if s.grace > 0 {
		fmt.Fprintf(&b, "\nthe clock moves %v (1ns of the first call's grace left)", s.grace-1)
	}
	b.WriteString("\nthe test lets every job go")
	return b.String()
}

func testDrawLaterEnded(r *rapid.T) testLaterEnded {
	s := testLaterEnded{workers: rapid.IntRange(1, 3).Draw(r, "workers"), queue: rapid.IntRange(0, 2).Draw(r, "queue")}
	s.queued = rapid.IntRange(0, s.queue).Draw(r, "jobs queued")
	if rapid.Bool().Draw(r, "the first Shutdown has a deadline") {
		s.grace = time.Duration(rapid.IntRange(1, 3).Draw(r, "grace ticks")) * testTick
	}
	for i := range rapid.IntRange(1, 3).Draw(r, "later Shutdown calls") {
		s.later = append(s.later, testEnded(rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("later call %d's ctx", i+1))))
	}
	return s
}

func (s testLaterEnded) play(h *katatest.H) {
	r := testNew(h, s.workers, s.queue)
	r.svc.Start()
	ids := testJobs(s.workers + s.queued)
	r.hold(false, ids...)
	if !r.accept("room for every job", ids...) || !r.wantRunning("the jobs submitted", ids[:s.workers]...) {
		return
	}
	var first *katatest.Call[Report]
	if s.grace > 0 {
		first = r.shutdownWithin(s.grace)
	} else {
		first = r.shutdown()
	}
	if !r.settle("the first Shutdown, draining") || testBroken(r, first) {
		return
	}
	if cut := r.ended.All(); len(cut) > 0 {
		h.Errorf("the first Shutdown began, and the ctx of %v was cancelled at once, with the whole grace ahead: "+
			"a job's ctx is cancelled only at the hard stop, never when Shutdown begins", cut)
		r.unwind()
		return
	}
	if !first.Waits("the first Shutdown returned while %v still ran, with its ctx alive: it drains, and returns "+
		"once every accepted job has finished", ids[:s.workers]) {
		r.unwind()
		return
	}
	goNow := make(chan struct{})
	later := make([]*katatest.Call[Report], len(s.later))
	for i, k := range s.later {
		later[i] = k.start(r, goNow, r.svc.Shutdown)
	}
	close(goNow)
	if !r.settle("later Shutdown calls with a ctx that had already ended") ||
		slices.ContainsFunc(later, func(c *katatest.Call[Report]) bool { return testBroken(r, c) }) {
		return
	}
	const rule = "a later call whose own ctx ends before the shutdown is over returns that ctx.Err() and an " +
		"empty Report, and the shutdown goes on: only the first call's ctx sets the grace"
	for i, c := range later {
		k := s.later[i]
		if !c.Returns("later Shutdown call %d of %d, whose ctx %s, was still waiting while the first one "+
			"drained: %s (select on the end of the shutdown and on its own ctx)", i+1, len(later), k, rule) {
			return
		}
		rep, err := c.Result()
		if !errors.Is(err, k.err()) {
			h.Errorf("later Shutdown call %d of %d, whose ctx %s, returned %v while the first one drained; want "+
				"its own ctx.Err(), %v — return ctx.Err() itself, not context.Cause(ctx) nor another error: %s",
				i+1, len(later), k, err, k.err(), rule)
			r.unwind()
			return
		}
		if len(rep.Abandoned)+len(rep.Dropped) > 0 {
			h.Errorf("later Shutdown call %d of %d, whose ctx %s, returned a Report with Abandoned %v and Dropped "+
				"%v while the first one drained; want an empty Report: %s", i+1, len(later), k,
				testIDs(rep.Abandoned), testIDs(rep.Dropped), rule)
			r.unwind()
			return
		}
	}
	if s.grace > 0 && !r.advance(s.grace-1, "1ns of the first Shutdown's grace left") {
		return
	}
	if cut := r.ended.All(); len(cut) > 0 || first.Returned() {
		h.Errorf("later Shutdown calls came with a ctx that had already ended while the first one drained; then "+
			"the ctx of %v was cancelled or the first Shutdown returned, with its own ctx still alive: %s", cut, rule)
		r.unwind()
		return
	}
	r.release()
	rep, err, ok := testFinish(r, first, "the first Shutdown", "every job had finished, but it did not return")
	if !ok {
		return
	}
	if err != nil || len(rep.Abandoned)+len(rep.Dropped) > 0 {
		h.Errorf("the first Shutdown returned %v with Abandoned %v and Dropped %v; every job finished within its "+
			"grace, so want nil and an empty Report, whatever the later calls' ctx: %s", err,
			testIDs(rep.Abandoned), testIDs(rep.Dropped), rule)
		return
	}
	if handled := r.started(); !testSameSet(handled, ids) {
		h.Errorf("later Shutdown calls came with a ctx that had already ended while the first one drained; the "+
			"jobs handled were %v, want every accepted job once, %v (queued jobs still start during the drain): %s",
			handled, ids, rule)
	}
}

func TestR4_ExploreLaterShutdownsWhoseCtxHasAlreadyEnded(t *testing.T) {
	// The fixed case first: every way a ctx ends, the cause among them.
	katatest.Replay(t, []testLaterEnded{{workers: 1, queue: 1, queued: 1,
		later: []testEnded{testEndedCause, testEndedPlain, testEndedDeadline}}},
		func(h *katatest.H, s testLaterEnded) { s.play(h) })
	katatest.Explore(t, 4, testDrawLaterEnded, func(h *katatest.H, s testLaterEnded) { s.play(h) })
}

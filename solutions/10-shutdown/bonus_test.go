package shutdown

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testRun starts Run(ctx, signals, grace) on the rig's Service.
func testRun(r *testRig, signals <-chan os.Signal, grace time.Duration) *katatest.Call[Report] {
	return testGo(r, func(ctx context.Context) (Report, error) { return r.svc.Run(ctx, signals, grace) })
}

func TestB1_RunShutsDownOnTheFirstSignal(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const grace = 10 * time.Second
		r := testNew(h, 1, 1)
		gates := r.hold(false, "job-1", "job-2")
		signals := make(chan os.Signal, 2)
		run := testRun(r, signals, grace)
		if !r.accept("Run started the workers and the queue was empty", "job-1", "job-2") ||
			!r.wantRunning("Run started; 2 jobs submitted", "job-1") {
			return
		}
		if !r.advance(time.Hour, "Run with no signal") || testBroken(r, run) {
			return
		}
		if run.Returned() {
			_, err := run.Result()
			t.Errorf("Run returned (error: %v) before any signal came: it serves until the first signal or until its ctx ends", err)
			r.unwind()
			return
		}
		signals <- syscall.SIGTERM
		if !r.settle("Run after SIGTERM") || testBroken(r, run) {
			return
		}
		_, err, ok := testAsk(r, "Submit after SIGTERM", "Run must begin the shutdown when the first signal comes",
			func() (struct{}, error) { return struct{}{}, r.svc.Submit(context.Background(), Job{ID: "job-3"}) })
		if !ok {
			return
		}
		if !assert.ErrorIs(t, err, ErrShuttingDown, "SIGTERM came: Run must begin the shutdown, so Submit is refused") {
			r.unwind()
			return
		}
		if !r.advance(grace-1, "Run with 1ns of grace left") || testBroken(r, run) {
			return
		}
		if run.Returned() || gates[0].Cancelled() > 0 {
			t.Errorf("with 1ns of the 10s grace left after SIGTERM, Run had returned or job-1 was cancelled: " +
				"the grace is measured on the injected clock from the signal (clk.WithTimeout)")
			r.unwind()
			return
		}
		if !r.advance(1, "Run when the grace ran out") {
			return
		}
		rep, err, ok := testFinish(r, run, "Run", "the 10s grace after SIGTERM ran out on the clock, but Run was "+
			"still waiting: shut down with a ctx whose deadline is grace after the signal, on clk")
		if !ok {
			return
		}
		// What the report says in detail is R3's business; here it must
		// show that Run's shutdown hard-stopped job-1 and kept job-2.
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the grace after SIGTERM ran out: Run returns what Shutdown returns")
		assert.Contains(t, testIDs(rep.Abandoned), "job-1", "the grace ran out while job-1 ran; cancelled, it "+
			"returned an error: Report.Abandoned must list it — wait for the workers to return before you build the report")
		if !slices.Contains(testIDs(rep.Dropped), "job-2") && !slices.Contains(testIDs(rep.Abandoned), "job-2") {
			t.Errorf("the grace ran out while job-2 was queued, and the Report Run returned lists it nowhere "+
				"(Abandoned %v, Dropped %v): Report.Dropped must list it", testIDs(rep.Abandoned), testIDs(rep.Dropped))
		}
	})
}

func TestB1_SecondSignalEndsTheGraceAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		gates := r.hold(false, "job-1")
		signals := make(chan os.Signal, 2)
		run := testRun(r, signals, time.Minute)
		if !r.accept("Run started the workers", "job-1") {
			return
		}
		signals <- syscall.SIGTERM
		if !r.advance(time.Second, "Run 1s after SIGTERM") || testBroken(r, run) {
			return
		}
		if run.Returned() || gates[0].Cancelled() > 0 {
			t.Errorf("1s after SIGTERM, with a grace of 1m, Run had returned or cancelled job-1: the first signal begins a graceful shutdown")
			r.unwind()
			return
		}
		signals <- syscall.SIGINT
		rep, err, ok := testFinish(r, run, "Run after a second signal", "a second signal came during the "+
			"shutdown and Run kept waiting: a second signal ends the grace at once — keep listening to the "+
			"signals during the shutdown and cancel the grace's ctx")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, context.Canceled, "a second signal cut the grace short: the error must match context.Canceled")
		assert.Equal(t, []string{"job-1"}, testIDs(rep.Abandoned), "a second signal hard-stopped job-1; cancelled, it "+
			"returned an error: Report.Abandoned must list it — wait for the workers to return before you build the report")
	})
}

func TestB1_CancelledCtxStillDrainsWithGrace(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		gates := r.hold(false, "job-1")
		run := testRun(r, make(chan os.Signal), 10*time.Second)
		if !r.accept("Run started the workers", "job-1") {
			return
		}
		run.Cancel()
		if !r.advance(5*time.Second, "Run 5s after its ctx was cancelled") || testBroken(r, run) {
			return
		}
		if gates[0].Cancelled() > 0 || run.Returned() {
			t.Errorf("Run's ctx was cancelled with job-1 running; 5s later, with 5s of the 10s grace left, job-1 " +
				"was cancelled or Run had returned: the end of ctx begins a graceful shutdown like a signal, and " +
				"the grace must not derive from ctx, which has just ended (use context.Background() as its parent)")
			r.unwind()
			return
		}
		gates[0].Release()
		rep, err, ok := testFinish(r, run, "Run", "job-1 finished within the grace, but Run did not return")
		if !ok {
			return
		}
		assert.NoError(t, err, "job-1 finished within the grace: Run must return nil")
		assert.Empty(t, rep.Abandoned, "job-1 finished within the grace: nothing is abandoned")
	})
}

func TestB2_ReadyFlipsAndIntakeLastsThePreDrainDelay(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const delay = 5 * time.Second
		r := testNew(h, 1, 4)
		r.svc.SetPreDrainDelay(delay)
		ready := func(what string) (bool, bool) {
			v, _, ok := testAsk(r, what, "Ready only reads the state", func() (bool, error) { return r.svc.Ready(), nil })
			return v, ok
		}
		if v, ok := ready("Ready before Start"); !ok || !assert.False(t, v, "before Start the Service is not ready") {
			r.unwind()
			return
		}
		r.svc.Start()
		if v, ok := ready("Ready after Start"); !ok || !assert.True(t, v, "after Start the Service is ready") {
			r.unwind()
			return
		}
		r.hold(true, "job-1")
		if !r.accept("the queue was empty", "job-1") {
			return
		}
		sd := r.shutdownWithin(time.Minute)
		if !r.settle("Shutdown with a pre-drain delay") || testBroken(r, sd) {
			return
		}
		if v, ok := ready("Ready after Shutdown began"); !ok || !assert.False(t, v, "Shutdown has begun: Ready must "+
			"turn false at once, so that the load balancer stops sending work during the pre-drain delay") {
			r.unwind()
			return
		}
		if !r.accept("Shutdown began less than the 5s pre-drain delay ago", "job-2") ||
			!r.advance(delay-1, "Shutdown 1ns before the end of the pre-drain delay") ||
			!r.accept("Shutdown began 1ns less than the 5s pre-drain delay ago", "job-3") ||
			!r.advance(1, "Shutdown at the end of the pre-drain delay") {
			return
		}
		_, err, ok := testAsk(r, "Submit after the pre-drain delay", "after the pre-drain delay Submit is refused at once",
			func() (struct{}, error) { return struct{}{}, r.svc.Submit(context.Background(), Job{ID: "job-4"}) })
		if !ok {
			return
		}
		if !assert.ErrorIs(t, err, ErrShuttingDown, "the 5s pre-drain delay had passed on the clock: intake stops "+
			"and Submit returns ErrShuttingDown") {
			r.unwind()
			return
		}
		r.release() // job-1 finishes
		rep, err, ok := testFinish(r, sd, "Shutdown", "every job had finished within the grace, but Shutdown did not return")
		if !ok {
			return
		}
		assert.NoError(t, err, "every job finished within the grace: Shutdown must return nil")
		assert.Empty(t, rep.Dropped, "every job finished within the grace: nothing is dropped")
		assert.Equal(t, []string{"job-1", "job-2", "job-3"}, r.started(), "jobs accepted during the pre-drain "+
			"delay are queued and drained like the others")
	})
}

func TestB2_SubmitsWaitingForRoomDuringThePreDrainDelayGetIn(t *testing.T) {
	// One worker held on job-1 and a queue of 1 holding job-2: job-3 waits
	// for room, Shutdown begins with a 5s pre-drain delay, and job-4
	// arrives during it and waits too. Intake still runs during the delay,
	// so both keep waiting, and both get in when job-1 finishes, 0.5s into
	// the delay, and the queue moves.
	katatest.Run(t, func(h *katatest.H) {
		const delay = 5 * time.Second
		r := testNew(h, 1, 1)
		r.svc.SetPreDrainDelay(delay)
		r.svc.Start()
		r.hold(true, "job-1")
		if !r.accept("the queue was empty", "job-1") || !r.wantRunning("job-1 was submitted to the idle worker", "job-1") ||
			!r.accept("job-1 is running and the queue of 1 was empty", "job-2") {
			return
		}
		j3 := r.submit("job-3")
		if !r.settle("Submit of job-3 with the queue full") || testBroken(r, j3) ||
			!j3.Waits("the queue of 1 holds job-2 and the worker runs job-1, yet Submit of job-3 returned at once: "+
				"with the queue full, Submit waits for room") {
			r.unwind()
			return
		}
		sd := r.shutdownWithin(time.Minute)
		if !r.settle("Shutdown with a pre-drain delay") || testBroken(r, sd) || !r.advance(time.Second/2, "0.5s into the pre-drain delay") {
			return
		}
		j4 := r.submit("job-4")
		if !r.settle("Submit of job-4 during the pre-drain delay") || testBroken(r, j4) {
			return
		}
		waiting := []struct {
			id string
			c  *katatest.Call[struct{}]
		}{{"job-3", j3}, {"job-4", j4}}
		for _, w := range waiting {
			if w.c.Returned() {
				_, err := w.c.Result()
				t.Errorf("Shutdown began with a 5s pre-drain delay, and Submit of %s, waiting for room in the full "+
					"queue, returned %v within the delay: Submit accepts jobs until the delay ends, so one waiting "+
					"for room keeps waiting (wake the waiting Submits when intake stops, after the delay, not when "+
					"Shutdown begins)", w.id, err)
				r.unwind()
				return
			}
		}
		r.release() // job-1 finishes at 0.5s: the queue moves
		for _, w := range waiting {
			if !r.settle("job-1 finished") || !w.c.Returns("job-1 finished during the pre-drain delay and the queue "+
				"moved, but Submit of %s was still waiting for room", w.id) {
				r.unwind()
				return
			}
			if _, err := w.c.Result(); err != nil {
				t.Errorf("job-1 finished during the pre-drain delay and the queue moved, but Submit of %s returned "+
					"%v: room came before the delay ended, so the job is accepted", w.id, err)
				r.unwind()
				return
			}
		}
		if !r.advance(delay, "after the pre-drain delay") {
			return
		}
		if _, err, ok := testFinish(r, sd, "Shutdown", "every job had finished within the grace, but Shutdown did "+
			"not return"); ok {
			assert.NoError(t, err, "every job finished within the grace: Shutdown must return nil")
		}
		assert.ElementsMatch(t, []string{"job-1", "job-2", "job-3", "job-4"}, r.started(), "the jobs that got in "+
			"during the pre-drain delay are drained like the others (job-3 and job-4 waited together: either may "+
			"get in first)")
	})
}

func TestB3_HooksRunOnceAfterTheWorkersInReverseOrder(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errFlush := errors.New("flush metrics: connection refused")
		r := testNew(h, 1, 1)
		type call struct {
			hook    string
			running []string
		}
		var calls katatest.Recorder[call]
		for _, name := range []string{"close-db", "flush-metrics", "deregister"} {
			r.svc.OnShutdown(func(ctx context.Context) error {
				calls.Add(call{name, r.running()})
				if name == "flush-metrics" {
					return errFlush
				}
				return nil
			})
		}
		r.svc.Start()
		gates := r.hold(true, "job-1")
		if !r.accept("the queue was empty", "job-1") {
			return
		}
		sd := r.shutdown()
		if !r.settle("Shutdown while job-1 ran") || testBroken(r, sd) {
			return
		}
		if got := calls.All(); len(got) > 0 {
			t.Errorf("hook %s ran while job-1 was still running: hooks run after every worker has returned, "+
				"so that a hook may close what the jobs use", got[0].hook)
			r.unwind()
			return
		}
		gates[0].Release()
		_, err, ok := testFinish(r, sd, "Shutdown", "job-1 had finished, but Shutdown did not return")
		if !ok {
			return
		}
		var order []string
		for _, c := range calls.All() {
			order = append(order, c.hook)
			assert.Empty(t, c.running, "hook %s ran while jobs were running: hooks run after every worker has returned", c.hook)
		}
		assert.Equal(t, []string{"deregister", "flush-metrics", "close-db"}, order, "the hooks must run once each, "+
			"in reverse order of registration, like deferred calls: the last one registered may depend on the first")
		assert.ErrorIs(t, err, errFlush, "a hook failed: Shutdown's error must match the hook's error (errors.Join)")

		_, err, ok = testFinish(r, r.shutdown(), "a second Shutdown", "a second Shutdown must return at once")
		if !ok {
			return
		}
		assert.Len(t, calls.All(), 3, "a second Shutdown must not run the hooks again")
		assert.ErrorIs(t, err, errFlush, "a second Shutdown must return the first one's error")
	})
}

func TestB3_AHookMayCallTheService(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		var ready katatest.Recorder[bool]
		var refused katatest.Recorder[error]
		// A deregister hook asks the Service whether it is still ready and
		// tries one last Submit, on goroutines of its own so that the test
		// can report a hook stuck behind the Service's mutex.
		r.svc.OnShutdown(func(ctx context.Context) error {
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			r.mu.Lock()
			r.undo = append(r.undo, cancel)
			r.mu.Unlock()
			asked := make(chan bool, 1)
			go func() { asked <- r.svc.Ready() }()
			select {
			case v := <-asked:
				ready.Add(v)
			case <-ctx.Done():
				return nil
			}
			sent := make(chan error, 1)
			go func() { sent <- r.svc.Submit(context.Background(), Job{ID: "late"}) }()
			select {
			case err := <-sent:
				refused.Add(err)
			case <-ctx.Done():
			}
			return nil
		})
		r.svc.Start()
		sd := r.shutdown()
		if stuck := h.Settle(); stuck != nil {
			t.Errorf("a shutdown hook called Ready and got stuck on the Service's mutex, which Shutdown held while "+
				"the hooks ran: run the hooks with no lock held — a hook may call the Service (Ready, Submit), and "+
				"a mutex is not reentrant. Stuck:\n\t%s", strings.Join(stuck, "\n\t"))
			sd.Stop() // it unwinds the rig first
			return
		}
		if _, _, ok := testFinish(r, sd, "Shutdown", "its hook had returned, but Shutdown did not return"); !ok {
			return
		}
		assert.Equal(t, []bool{false}, ready.All(), "a hook runs once Shutdown has begun: Ready must be false")
		if got := refused.All(); assert.Len(t, got, 1, "the hook's Submit must return") {
			assert.ErrorIs(t, got[0], ErrShuttingDown, "a Submit from a hook comes after Shutdown began: ErrShuttingDown")
		}
	})
}

func TestB2_PreDrainDelayEndsWithShutdownsCtx(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 4)
		r.svc.SetPreDrainDelay(10 * time.Second)
		r.svc.Start()
		sd := r.shutdownWithin(5 * time.Second)
		if !r.settle("Shutdown with a 10s pre-drain delay and a 5s ctx") || testBroken(r, sd) ||
			!r.advance(5*time.Second-1, "Shutdown 1ns before its ctx ends") ||
			!r.accept("Shutdown began 1ns less than 5s ago, within its 10s pre-drain delay", "job-1") ||
			!r.advance(1, "Shutdown at the end of its ctx") {
			return
		}
		_, err, ok := testAsk(r, "Submit once Shutdown's ctx had ended", "Submit is refused at once",
			func() (struct{}, error) { return struct{}{}, r.svc.Submit(context.Background(), Job{ID: "job-2"}) })
		if !ok {
			return
		}
		if !errors.Is(err, ErrShuttingDown) {
			t.Errorf("Shutdown's ctx ended at 5s, during the 10s pre-drain delay, but Submit of job-2 at 5s returned "+
				"%v; want ErrShuttingDown: the delay lasts 10s or until Shutdown's ctx ends, whichever comes first — "+
				"wait on the timer in a select with ctx.Done(), then stop intake", err)
			r.unwind()
			h.Advance(time.Minute)
			return
		}
		if _, _, ok := testFinish(r, sd, "Shutdown", "its ctx had ended at 5s, during the 10s pre-drain delay, and no job was "+
			"running, but Shutdown did not return: a ctx that ends cuts the delay short"); !ok {
			return
		}
		if moved := h.PendingTimer(); moved != 0 {
			t.Errorf("Shutdown's ctx ended at 5s and cut the 10s pre-drain delay short, and Shutdown returned, but a timer "+
				"was still waiting on the clock (it fired %v later): stop the delay's timer when the wait ends either way "+
				"(defer t.Stop()), or every Shutdown whose ctx ends early leaves one behind", moved)
		}
	})
}

type testHookKey struct{}

func TestB3_HooksGetTheFirstShutdownsCtx(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), testHookKey{}, "sigterm"))
		r.mu.Lock()
		r.undo = append(r.undo, cancel)
		r.mu.Unlock()
		type seen struct {
			value any
			done  bool
		}
		var got katatest.Recorder[seen]
		r.svc.OnShutdown(func(hookCtx context.Context) error {
			cancel() // a second SIGTERM ends the grace while the hooks run
			s := seen{value: hookCtx.Value(testHookKey{})}
			select {
			case <-hookCtx.Done():
				s.done = true
			default:
			}
			got.Add(s)
			return nil
		})
		r.svc.Start()
		sd := testGo(r, func(context.Context) (Report, error) { return r.svc.Shutdown(ctx) })
		rep, err, ok := testFinish(r, sd, "Shutdown", "no job was running and the hook had returned, but Shutdown "+
			"did not return")
		if !ok {
			return
		}
		all := got.All()
		if !assert.Len(t, all, 1, "the hook must run once") {
			return
		}
		switch s := all[0]; {
		case !s.done:
			t.Errorf("a hook cancelled the first Shutdown call's ctx (as a second SIGTERM does), and the ctx the hook " +
				"got was still not done: call the hooks with Shutdown's ctx, so that a hook sees the grace end and " +
				"gives up at once instead of blocking past it")
		case s.value != "sigterm":
			t.Errorf("the ctx the hook got lacks the values of the first Shutdown call's ctx (value %v; want "+
				"%q): pass that ctx to the hooks as it is", s.value, "sigterm")
		case err != nil || len(rep.Abandoned)+len(rep.Dropped) > 0:
			t.Errorf("Shutdown returned %v, with %d abandoned and %d dropped jobs, though no hard stop came: no job was running, and Shutdown's ctx ended only when the hook cancelled it, as "+
				"a second SIGTERM does; the hook returned nil, so Shutdown returns nil and an empty Report. Shutdown's "+
				"error is ctx.Err() joined with the hooks' errors only after a hard stop: decide whether the hard "+
				"stop came where the drain ends (the select on the drain and ctx.Done()), not by looking at ctx once "+
				"the hooks have run", err, len(rep.Abandoned), len(rep.Dropped))
		}
	})
}

func TestB3_HooksRunAfterAHardStopToo(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errClose := errors.New("close db: broken pipe")
		r := testNew(h, 1, 1)
		var calls katatest.Recorder[[]string]
		r.svc.OnShutdown(func(ctx context.Context) error {
			calls.Add(r.running())
			return errClose
		})
		r.svc.Start()
		// job-1 returns once its ctx is cancelled and it has cleaned up,
		// which the test lets it do after the hard stop: a Shutdown that
		// does not wait for it runs the hook while it still runs.
		cleanup := r.gate()
		r.plan("job-1", testPlan{hold: r.gate(), cleanup: cleanup})
		if !r.accept("the queue was empty", "job-1") {
			return
		}
		sd := r.shutdownWithin(time.Second)
		if !r.settle("Shutdown with a 1s grace while job-1 ran") || testBroken(r, sd) {
			return
		}
		if r.ctxEnded("job-1") {
			t.Errorf("Shutdown began with 1s of grace, and job-1's ctx was cancelled at once: only the hard stop, " +
				"when the grace has run out, cancels the running jobs")
			r.unwind()
			return
		}
		if !r.advance(time.Second, "Shutdown at the end of its 1s grace") {
			return
		}
		cleanup.Release()
		_, err, ok := testFinish(r, sd, "Shutdown", "the grace had ended and job-1 returned once its ctx was "+
			"cancelled and it had cleaned up, but Shutdown did not return")
		if !ok {
			return
		}
		got := calls.All()
		if len(got) == 0 {
			t.Errorf("the 1s grace ran out while job-1 ran, so Shutdown stopped it hard, and the hook never ran: " +
				"hooks run once every worker has returned, drained or hard-stopped — the hook that closes the " +
				"database or flushes the metrics must run either way")
			return
		}
		assert.Len(t, got, 1, "the hook must run once")
		assert.Empty(t, got[0], "the hook ran while jobs were running: after the hard stop, Shutdown must wait for "+
			"every worker to return before it runs the hooks")
		assert.ErrorIs(t, err, context.DeadlineExceeded, "after a hard stop, Shutdown's error must match ctx.Err()")
		assert.ErrorIs(t, err, errClose, "the hook failed: Shutdown's error must match the hook's error too (errors.Join)")
	})
}

// testSpentGrace is Run given a grace of 0 or less: the deadline of the
// shutdown's ctx, grace after the signal on the clock, has passed before
// Shutdown is even called, so the shutdown is a hard stop at once.
type testSpentGrace struct {
	workers, queue int
	running        int // jobs held in handle (at most workers)
	queued         int // jobs waiting in the queue (at most queue)
	grace          time.Duration
	byCtx          bool // Run's ctx ends instead of a signal coming
}

func (s testSpentGrace) String() string {
	how := "a signal comes"
	if s.byCtx {
		how = "Run's ctx is cancelled"
	}
	return fmt.Sprintf("New(clk, %d workers, queue %d, handle); Run(ctx, signals, grace %v); %d job(s) running (each "+
		"returns its ctx's error, wrapped, once its ctx ends) and %d queued; then %s, and the clock does not move",
		s.workers, s.queue, s.grace, s.running, s.queued, how)
}

func testDrawSpentGrace(r *rapid.T) testSpentGrace {
	s := testSpentGrace{workers: rapid.IntRange(1, 3).Draw(r, "workers"), queue: rapid.IntRange(0, 3).Draw(r, "queue")}
	s.running = rapid.IntRange(1, s.workers).Draw(r, "jobs running") // something the grace would let finish
	if s.running == s.workers {
		s.queued = rapid.IntRange(0, s.queue).Draw(r, "jobs queued")
	}
	s.grace = rapid.SampledFrom([]time.Duration{0, 0, -1, -testTick, -time.Minute}).Draw(r, "grace")
	s.byCtx = rapid.Bool().Draw(r, "Run's ctx ends (not a signal)")
	return s
}

func (s testSpentGrace) play(h *katatest.H) {
	r := testNew(h, s.workers, s.queue)
	ids := testJobs(s.running + s.queued)
	gates := r.hold(false, ids...)
	signals := make(chan os.Signal, 2)
	run := testRun(r, signals, s.grace)
	if !r.accept("Run started the workers and there is room for every job", ids...) ||
		!r.wantRunning("the jobs submitted", ids[:s.running]...) {
		return
	}
	if s.byCtx {
		run.Cancel()
	} else {
		signals <- syscall.SIGTERM
	}
	rule := fmt.Sprintf("Run shuts down with a ctx whose deadline is grace later on the clock "+
		"(clk.WithTimeout(context.Background(), grace)); with a grace of %v that deadline has already passed when "+
		"Shutdown is called, so it is a hard stop at once — a grace of 0 or less is not \"no deadline\"", s.grace)
	if !r.settle("Run after the shutdown began") || testBroken(r, run) {
		return
	}
	if !run.Returns("Run, with a grace of %v, was still waiting after the shutdown began, with the clock stopped "+
		"and every running job returning once its ctx ends: %s", s.grace, rule) {
		return
	}
	rep, err := run.Result()
	cut := testNeverCancelled(ids[:s.running], gates) // running jobs whose ctx never ended
	if len(cut) > 0 {
		h.Errorf("Run with a grace of %v returned %v, but the ctx of running job(s) %v was never cancelled: its ctx "+
			"ended before the drain was over (before it began), so cancel the running jobs, start no queued one, "+
			"wait for the workers and report: %s", s.grace, err, cut, rule)
		return
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		h.Errorf("Run with a grace of %v returned %v; want context.DeadlineExceeded: %s", s.grace, err, rule)
		return
	}
	if started := r.startedAfterStop(); len(started) > 0 {
		h.Errorf("%v started after the hard stop (Run's shutdown, with a grace of %v, hard-stopped at once), with "+
			"their ctx already cancelled: %s", started, s.grace, rule)
		return
	}
	abandoned, dropped := testIDs(rep.Abandoned), testIDs(rep.Dropped)
	if ids := r.handledYetDropped(rep.Dropped); len(ids) > 0 {
		h.Errorf("Run with a grace of %v reported Dropped %v, but a worker handled %v: %s", s.grace, dropped, ids,
			testHandledYetDropped)
		return
	}
	if !slices.Equal(abandoned, ids[:s.running]) || !slices.Equal(dropped, ids[s.running:]) {
		h.Errorf("Run with a grace of %v reported Abandoned %v and Dropped %v; want Abandoned %v (running, cancelled, "+
			"returned an error) and Dropped %v (queued, never started): %s", s.grace, abandoned, dropped,
			ids[:s.running], ids[s.running:], rule)
		return
	}
	run.Finish("Run")
}

func TestB1_ExploreAGraceOfZeroOrLessIsAHardStop(t *testing.T) {
	katatest.Replay(t, []testSpentGrace{{workers: 1, queue: 1, running: 1, queued: 1, grace: 0}},
		func(h *katatest.H, s testSpentGrace) { s.play(h) })
	katatest.Explore(t, 6, testDrawSpentGrace, func(h *katatest.H, s testSpentGrace) { s.play(h) })
}

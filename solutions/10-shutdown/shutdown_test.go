package shutdown

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestR1_SubmitIsRefusedOnceShutdownBegins(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 2)
		r.svc.Start()
		r.hold(true, "job-1")
		if !r.accept("the queue was empty", "job-1") {
			return
		}
		sd := r.shutdown() // it drains: job-1 is still running
		if !r.settle("Shutdown while job-1 ran") || testBroken(r, sd) {
			return
		}
		_, err, ok := testAsk(r, "Submit of job-2 after Shutdown began", "once Shutdown has begun, Submit returns "+
			"ErrShuttingDown at once, even with room in the queue", func() (struct{}, error) {
			return struct{}{}, r.svc.Submit(context.Background(), Job{ID: "job-2"})
		})
		if !ok {
			return
		}
		if !assert.ErrorIs(t, err, ErrShuttingDown, "Submit of job-2 came after Shutdown began (it was draining job-1), "+
			"with room in the queue: it must be refused with ErrShuttingDown — intake stops the moment Shutdown begins") {
			r.unwind()
			return
		}
		r.release() // job-1 finishes
		if _, _, ok := testFinish(r, sd, "Shutdown", "job-1 finished, but Shutdown did not return"); !ok {
			return
		}
		_, err, ok = testAsk(r, "Submit of job-3 after Shutdown returned", "Submit never waits after Shutdown",
			func() (struct{}, error) { return struct{}{}, r.svc.Submit(context.Background(), Job{ID: "job-3"}) })
		if !ok {
			return
		}
		assert.ErrorIs(t, err, ErrShuttingDown, "Submit of job-3 came after Shutdown returned: it must be refused with ErrShuttingDown")
		assert.Equal(t, []string{"job-1"}, r.started(), "Submit refused job-2 and job-3: a refused job is never handled")
	})
}

func TestR1_FullQueueSubmitWaitsForRoomOrItsCtx(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		r.svc.Start()
		gates := r.hold(true, "job-1")
		if !r.accept("the queue was empty", "job-1", "job-2") { // job-1 runs, job-2 fills the queue
			return
		}
		cancelled := r.submit("job-3")
		waiting := r.submit("job-4")
		if !r.settle("Submit on a full queue") || testBroken(r, cancelled) || testBroken(r, waiting) {
			return
		}
		if cancelled.Returned() || waiting.Returned() {
			_, err := cancelled.Result()
			t.Errorf("Submit of job-3 returned %v while the queue was full (1 worker busy with job-1, job-2 queued): "+
				"on a full queue Submit waits for room, its ctx or the shutdown — it neither drops the job nor "+
				"refuses it at once (no select with a default case)", err)
			r.unwind()
			return
		}
		cancelled.Cancel()
		if !r.settle("Submit of job-3 on a full queue, after its ctx was cancelled") || testBroken(r, cancelled) ||
			!cancelled.Returns("Submit of job-3 was waiting for room in the queue when its ctx was cancelled, and it "+
				"kept waiting: select on ctx.Done() together with the send") {
			return
		}
		_, err := cancelled.Result()
		if !assert.ErrorIs(t, err, context.Canceled, "Submit of job-3 was waiting for room when its ctx was "+
			"cancelled: it must return ctx.Err()") {
			r.unwind()
			return
		}
		gates[0].Release() // job-1 ends, job-2 starts: room for job-4
		if !r.settle("Submit of job-4 when room appeared") || testBroken(r, waiting) ||
			!waiting.Returns("job-1 finished and job-2 left the queue, but Submit of job-4 was still waiting for room") {
			return
		}
		if _, err := waiting.Result(); !assert.NoError(t, err, "Submit of job-4 waited on a full queue until room "+
			"appeared: it must then accept the job") {
			r.unwind()
			return
		}
		sd := r.shutdown()
		if _, _, ok := testFinish(r, sd, "Shutdown", "every job had finished, but Shutdown did not return"); !ok {
			return
		}
		if !assert.Equal(t, []string{"job-1", "job-2", "job-4"}, r.started(),
			"job-3 was given up by its caller; the others were accepted and must be handled, in order") {
			return
		}

		// Queue 0: no room at all, Submit waits for a free worker.
		r = testNew(h, 1, 0)
		r.svc.Start()
		busy := r.hold(true, "job-1")
		if !r.accept("the only worker was idle", "job-1") {
			return
		}
		blocked := r.submit("job-2")
		if !r.settle("Submit with queue 0 while the only worker was busy") || testBroken(r, blocked) {
			return
		}
		if blocked.Returned() {
			_, err := blocked.Result()
			t.Errorf("with queue 0 and the only worker busy with job-1, Submit of job-2 returned %v at once: queue 0 "+
				"means no room at all — Submit waits until a worker is free to take the job (an unbuffered channel)", err)
			r.unwind()
			return
		}
		busy[0].Release()
		if !r.settle("Submit with queue 0 once the worker was free") || testBroken(r, blocked) ||
			!blocked.Returns("with queue 0, job-1 finished and the worker was free, but Submit of job-2 was still waiting") {
			return
		}
		if _, err := blocked.Result(); !assert.NoError(t, err, "with queue 0, a free worker takes job-2") {
			r.unwind()
			return
		}
		testFinish(r, r.shutdown(), "Shutdown", "every job had finished, but Shutdown did not return")
	})
}

func TestR1_WaitingSubmitIsReleasedWhenShutdownBegins(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		r.svc.Start()
		r.hold(true, "job-1")
		if !r.accept("the queue was empty", "job-1", "job-2") { // job-1 runs, job-2 fills the queue
			return
		}
		// Three Submits wait for room: Shutdown must wake every one of them.
		ids := []string{"job-3", "job-4", "job-5"}
		var waiting []*katatest.Call[struct{}]
		for _, id := range ids {
			waiting = append(waiting, r.submit(id))
		}
		if !r.settle("three Submits on a full queue") ||
			slices.ContainsFunc(waiting, func(c *katatest.Call[struct{}]) bool { return testBroken(r, c) }) {
			return
		}
		for i, c := range waiting {
			if c.Returned() {
				t.Errorf("Submit of %s returned while the queue was full; it must wait for room, its ctx or the "+
					"shutdown", ids[i])
				r.unwind()
				return
			}
		}
		sd := r.shutdown()
		if !r.settle("Shutdown while three Submits waited for room") || testBroken(r, sd) ||
			slices.ContainsFunc(waiting, func(c *katatest.Call[struct{}]) bool { return testBroken(r, c) }) {
			return
		}
		var still []string
		for i, c := range waiting {
			if !c.Returned() {
				still = append(still, ids[i])
			}
		}
		if len(still) == len(ids) {
			t.Errorf("Shutdown began while the Submits of %s waited for room in the full queue, and they kept "+
				"waiting: a waiting Submit must return ErrShuttingDown as soon as Shutdown begins — select on a "+
				"channel that Shutdown closes, together with the send", strings.Join(ids, ", "))
			r.unwind()
			return
		}
		if len(still) > 0 {
			t.Errorf("Shutdown began while the Submits of %s waited for room in the full queue; %s kept waiting: "+
				"every waiting Submit must return ErrShuttingDown as soon as Shutdown begins — a value sent on a "+
				"channel wakes one receiver, closing the channel wakes them all", strings.Join(ids, ", "),
				strings.Join(still, " and "))
			r.unwind()
			return
		}
		for i, c := range waiting {
			_, err := c.Result()
			if !assert.ErrorIs(t, err, ErrShuttingDown, "Shutdown began while Submit of %s waited for room: "+
				"it must return ErrShuttingDown", ids[i]) {
				r.unwind()
				return
			}
		}
		r.release() // job-1 finishes, then job-2
		if _, _, ok := testFinish(r, sd, "Shutdown", "every job had finished, but Shutdown did not return"); !ok {
			return
		}
		assert.Equal(t, []string{"job-1", "job-2"}, r.started(),
			"job-3, job-4 and job-5 were refused and must never be handled; job-1 (running) and job-2 (queued) "+
				"were accepted when Shutdown began, and must be")
	})
}

func TestR1_RacingSubmittersNeverPanic(t *testing.T) {
	katatest.Repeat(t, 3, func(h *katatest.H) {
		const submitters = 12
		r := testNew(h, 2, 4)
		r.svc.Start()
		// The submitters and Shutdown wait at start and are released in one
		// step, with nothing but the Service to order them: a flag read and
		// written without the lock is a race the detector sees, unless by
		// chance every Submit passed its unlock before Shutdown took the lock,
		// which orders them (measured: 1 bubble in 300). Three bubbles make a
		// miss rarer than one in ten million.
		start := make(chan struct{})
		subs := make([]*katatest.Call[struct{}], submitters)
		for i := range subs {
			id := fmt.Sprintf("job-%d", i+1)
			subs[i] = testGo(r, func(ctx context.Context) (struct{}, error) {
				<-start
				return struct{}{}, r.svc.Submit(ctx, Job{ID: id})
			})
		}
		sd := testGo(r, func(ctx context.Context) (Report, error) {
			<-start
			return r.svc.Shutdown(ctx)
		})
		close(start)
		if !r.settle(fmt.Sprintf("%d Submits racing Shutdown", submitters)) {
			return
		}
		if testBroken(r, sd) || slices.ContainsFunc(subs, func(c *katatest.Call[struct{}]) bool { return testBroken(r, c) }) {
			return
		}
		var accepted []string
		for i, c := range subs {
			id := fmt.Sprintf("job-%d", i+1)
			if !c.Returns("%d Submits raced Shutdown; Submit of %s never returned: once Shutdown begins, a Submit "+
				"that waits for room must return ErrShuttingDown", submitters, id) {
				return
			}
			_, err := c.Result()
			switch {
			case err == nil:
				accepted = append(accepted, id)
			case !errors.Is(err, ErrShuttingDown):
				t.Errorf("%d Submits raced Shutdown; Submit of %s returned %q: a Submit either accepts its job (nil) "+
					"or refuses it with ErrShuttingDown, and on a full queue it waits", submitters, id, err)
				r.unwind()
				return
			}
		}
		rep, err, ok := testFinish(r, sd, "Shutdown", fmt.Sprintf("%d Submits raced Shutdown and every job had "+
			"finished, but Shutdown did not return", submitters))
		if !ok {
			return
		}
		if ids := r.handledYetDropped(rep.Dropped); len(ids) > 0 {
			t.Errorf("Shutdown raced %d Submits without a deadline, and its Report lists %v in Dropped, although a "+
				"worker handled them: %s, and a drain with no deadline starts every one of them. Whatever tracks "+
				"the jobs not started yet must forget a job once a worker has taken it, whichever of Submit and "+
				"the worker gets there first", submitters, ids, testHandledYetDropped)
			return
		}
		assert.NoError(t, err, "Shutdown raced %d Submits without a deadline: it must drain and return nil", submitters)
		assert.Empty(t, rep.Abandoned, "Shutdown raced %d Submits without a deadline: nothing may be abandoned", submitters)
		assert.Empty(t, rep.Dropped, "Shutdown raced %d Submits without a deadline: nothing may be dropped", submitters)
		handled := r.started()
		slices.Sort(handled)
		slices.Sort(accepted)
		assert.Equal(t, accepted, handled, "%d Submits raced Shutdown: every job whose Submit returned nil must be "+
			"handled exactly once, and no refused job may be handled — count the Submits that may still send "+
			"(under the same lock as the closed check) and let Shutdown wait for them", submitters)
	})
}

func TestR1_StartTwiceStartsTheWorkersOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 2)
		r.svc.Start()
		r.svc.Start() // main starts the service, and so does Run: the second call must change nothing
		r.hold(true, "job-1", "job-2")
		if !r.accept("the queue was empty", "job-1", "job-2") {
			return
		}
		if got := r.running(); len(got) > 1 {
			t.Errorf("New(clk, 1, 2, handle), Start called twice, two jobs submitted: the jobs in handle were %v; "+
				"want [job-1] — Start launches the workers once, so a second call must not launch another set "+
				"(remember under the lock that the workers were started)", got)
			r.unwind()
			return
		}
		if !r.wantRunning("New(clk, 1, 2, handle), Start called twice, two jobs submitted", "job-1") {
			return
		}
		sd := r.shutdown()
		r.release()
		if _, _, ok := testFinish(r, sd, "Shutdown", "every job had finished, but Shutdown did not return"); !ok {
			return
		}
		assert.Equal(t, []string{"job-1", "job-2"}, r.started(), "with Start called twice, each job is still handled once")
	})
}

func TestR2_DrainsRunningAndQueuedJobs(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		ids := testJobs(6)
		r := testNew(h, 2, 4)
		r.svc.Start()
		gates := r.hold(true, ids...)
		r.plan("job-3", testPlan{hold: gates[2], deaf: true, fails: true}) // fails on its own during the drain
		if !r.accept("2 workers and a queue of 4", ids...) || !r.wantRunning("6 jobs submitted", "job-1", "job-2") {
			return
		}
		sd := r.shutdown()
		for i := range ids {
			if !r.settle("Shutdown while jobs remain") || testBroken(r, sd) {
				return
			}
			if sd.Returned() {
				t.Errorf("Shutdown returned while %v were still running and %d jobs were queued: without a deadline, "+
					"Shutdown drains — queued jobs still start, and it returns only when every accepted job has "+
					"finished", r.running(), len(ids)-len(r.started()))
				r.unwind()
				return
			}
			gates[i].Release()
		}
		rep, err, ok := testFinish(r, sd, "Shutdown", "all 6 jobs had finished, but Shutdown did not return")
		if !ok {
			return
		}
		assert.Equal(t, ids, r.started(), "Shutdown began with job-1 and job-2 running and 4 jobs queued: "+
			"every one must be handled, in order — queued jobs are drained, not dropped")
		assert.NoError(t, err, "Shutdown drained every job without a deadline (job-3 failed on its own, with %q): "+
			"it must return nil", testErrCorrupt)
		assert.Empty(t, testIDs(rep.Abandoned), "Shutdown drained every job: Report.Abandoned must be empty — job-3 "+
			"failed on its own (corrupt image) during the drain, with grace left; Abandoned lists only the jobs cut "+
			"short by the hard stop, not every job whose handle returned an error")
		assert.Empty(t, rep.Dropped, "Shutdown drained every job: Report.Dropped must be empty")
	})
}

func TestR2_QueuedBeforeStartIsDrained(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		ids := testJobs(3)
		r := testNew(h, 2, 3)
		if !r.accept("the queue has room for 3", ids...) {
			return
		}
		r.svc.Start()
		sd := r.shutdown()
		rep, err, ok := testFinish(r, sd, "Shutdown", "the 3 queued jobs had finished, but Shutdown did not return")
		if !ok {
			return
		}
		got := r.started()
		slices.Sort(got)
		assert.Equal(t, ids, got, "3 jobs were submitted before Start: the workers must handle every one")
		assert.NoError(t, err, "Shutdown drained every job: it must return nil")
		if !assert.Empty(t, rep.Dropped, "Shutdown drained every job: Report.Dropped must be empty") {
			return
		}

		// New(clk, 0, …), or fewer, still has one worker.
		for _, workers := range []int{0, -3} {
			r = testNew(h, workers, 2)
			r.svc.Start()
			if !r.accept("the queue has room for 2", "job-1", "job-2") {
				return
			}
			sd = r.shutdown()
			rep, err, ok = testFinish(r, sd, "Shutdown", fmt.Sprintf("New with %d workers, Start, 2 jobs queued: "+
				"Shutdown did not return (workers is at least 1, so one worker handles them)", workers))
			if !ok {
				return
			}
			if !assert.Equal(t, []string{"job-1", "job-2"}, r.started(), "New with %d workers still starts one "+
				"(workers is at least 1): both jobs must be handled, in order (Dropped: %v)", workers,
				testIDs(rep.Dropped)) || !assert.NoError(t, err, "Shutdown drained every job: it must return nil") {
				return
			}
		}
	})
}

func TestR3_DeadlineCancelsRunningJobsAndReportsTheRest(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const grace = 10 * time.Second
		ids := testJobs(5)
		r := testNew(h, 3, 2)
		r.svc.Start()
		gates := r.hold(false, ids...)
		// Cut short, job-1 returns the ctx error, job-2 an error of its own,
		// and job-3 nil: it had finished its last write anyway.
		r.plan("job-2", testPlan{hold: gates[1], stopped: "plain"})
		r.plan("job-3", testPlan{hold: gates[2], stopped: "nil"})
		if !r.accept("3 workers and a queue of 2", ids...) ||
			!r.wantRunning("5 jobs submitted", "job-1", "job-2", "job-3") {
			return
		}
		sd := r.shutdownWithin(grace)
		if !r.advance(grace-1, "Shutdown with 1ns of grace left") || testBroken(r, sd) {
			return
		}
		if sd.Returned() || gates[0].Cancelled()+gates[1].Cancelled()+gates[2].Cancelled() > 0 {
			t.Errorf("with 1ns of its 10s grace left, Shutdown had returned or cancelled the running jobs: until "+
				"the grace runs out it must wait for them (running jobs: %v)", r.running())
			r.unwind()
			return
		}
		if !r.advance(1, "Shutdown when the grace ran out") || testBroken(r, sd) {
			return
		}
		what := "Shutdown was still waiting for them"
		if gates[0].Cancelled() == 0 {
			what = "their ctx was not cancelled: select on ctx.Done() together with the drain, and on ctx.Done() " +
				"cancel the context the Service gives every job (one it owns, not Submit's or Shutdown's)"
		}
		if !sd.Returns("the 10s grace ran out on the clock while job-1, job-2 and job-3 ran (their handle returns as "+
			"soon as their ctx is cancelled), but %s", what) {
			return
		}
		rep, err, ok := sd.Finish("Shutdown")
		if !ok || !r.wantStarted("the grace ran out while job-1, job-2 and job-3 ran and job-4 and job-5 were queued",
			"job-1", "job-2", "job-3") {
			return
		}
		assert.ErrorIs(t, err, context.DeadlineExceeded, "the grace ran out: Shutdown must return ctx.Err(), "+
			"context.DeadlineExceeded")
		abandoned := testIDs(rep.Abandoned)
		switch {
		case slices.Contains(abandoned, "job-3"):
			t.Errorf("Report.Abandoned is %v: job-3 ran at the hard stop but its handle returned nil, so it finished "+
				"and is not abandoned — wait for every running job's handle to return, and list a job only when it returned "+
				"an error", abandoned)
		case !slices.Contains(abandoned, "job-2") && slices.Contains(abandoned, "job-1"):
			t.Errorf("Report.Abandoned is %v: job-2 ran at the hard stop and its handle returned an error of its own "+
				"(%q, not wrapping ctx.Err()): every job running at the hard stop whose handle returned an error is "+
				"abandoned, whatever the error — do not test it with errors.Is(err, context.Canceled)",
				abandoned, "render aborted")
		default:
			assert.Equal(t, []string{"job-1", "job-2"}, abandoned, "the grace ran out while job-1, job-2 and job-3 "+
				"ran; cancelled, job-1 and job-2 returned an error: Report.Abandoned must list them — wait for the "+
				"workers to return before you build the report")
		}
		if !assert.Equal(t, []string{"job-4", "job-5"}, testIDs(rep.Dropped), "the grace ran out with job-4 and "+
			"job-5 still queued: Report.Dropped must list them — queued jobs are never lost silently") {
			return
		}

		// 20 workers each find, at the hard stop, both a cancelled ctx and a
		// queued job. A worker that selects on the two and does not check
		// the ctx again picks the job half of the time: with 20 workers it
		// escapes with probability 2^-20 per run.
		const n = 20
		r = testNew(h, n, n)
		r.svc.Start()
		ids = testJobs(2 * n)
		r.hold(false, ids...)
		for _, id := range ids {
			r.submit(id)
		}
		if !r.settle("40 Submits to 20 workers and a queue of 20") || len(r.running()) != n {
			if !t.Failed() {
				t.Errorf("40 Submits to 20 idle workers and a queue of 20: %d jobs ran, want 20 (each worker takes one)",
					len(r.running()))
				r.unwind()
			}
			return
		}
		sd = r.shutdownWithin(time.Second)
		if !r.advance(time.Second, "Shutdown of 20 busy workers with 20 jobs queued when the grace ran out") ||
			testBroken(r, sd) {
			return
		}
		if _, _, ok := testFinish(r, sd, "Shutdown", "the grace ran out and every job returned when cancelled, but "+
			"Shutdown did not return"); !ok {
			return
		}
		if late := r.startedAfterStop(); len(late) > 0 {
			t.Errorf("20 busy workers with 20 jobs queued were hard-stopped, and %d queued jobs then started with their "+
				"ctx already cancelled: a worker whose select sees both the hard stop and a queued job may take the "+
				"job — check the hard stop again before calling handle, and drop the job", len(late))
		}
	})
}

func TestR4_RepeatedShutdownReturnsTheSameResult(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		r.svc.Start()
		sd := r.shutdown()
		if _, err, ok := testFinish(r, sd, "Shutdown of an idle Service", "an idle Service must shut down at once"); !ok {
			return
		} else if !assert.NoError(t, err, "an idle Service drains at once: Shutdown must return nil") {
			return
		}
		again := r.shutdown()
		rep, err, ok := testFinish(r, again, "a second Shutdown", "the Service was already shut down: "+
			"a second Shutdown must return the first one's result at once")
		if !ok {
			return
		}
		assert.NoError(t, err, "the first Shutdown returned nil: a second Shutdown must return the same")
		assert.Empty(t, rep.Abandoned, "the first Shutdown abandoned nothing: a second one must report the same")

		r = testNew(h, 1, 1)
		r.svc.Start()
		r.hold(false, "job-1")
		if !r.accept("the queue was empty", "job-1", "job-2") {
			return
		}
		sd = r.shutdownWithin(time.Second)
		if !r.advance(time.Second, "Shutdown with a grace of 1s") {
			return
		}
		r.release() // if the grace did not end the jobs (R3), they end now
		first, firstErr, ok := testFinish(r, sd, "Shutdown", "every job had finished, but Shutdown did not return")
		if !ok {
			return
		}
		// The first caller sorts and edits its report, as callers do.
		want := Report{Abandoned: slices.Clone(first.Abandoned), Dropped: slices.Clone(first.Dropped)}
		for _, s := range [][]Job{first.Abandoned, first.Dropped} {
			for i := range s {
				s[i].ID += " (edited by the first caller)"
			}
		}
		first = want
		again = r.shutdown()
		rep, err, ok = testFinish(r, again, "a second Shutdown", "the Service was already shut down: "+
			"a second Shutdown must return the first one's result at once")
		if !ok {
			return
		}
		if firstErr != nil {
			assert.ErrorIs(t, err, firstErr, "the first Shutdown returned %q: a second Shutdown must return the "+
				"first one's result, the same error, not nil — keep the result and return it to every call", firstErr)
		} else {
			assert.NoError(t, err, "the first Shutdown returned nil: a second Shutdown must return the first one's result")
		}
		assert.Equal(t, testIDs(first.Abandoned), testIDs(rep.Abandoned), "a second Shutdown must return the same "+
			"Report as the first: same Abandoned, in a Report of its own (the first caller edited the IDs in its "+
			"report's slices after it returned; give each call copies, slices.Clone)")
		assert.Equal(t, testIDs(first.Dropped), testIDs(rep.Dropped), "a second Shutdown must return the same "+
			"Report as the first: same Dropped")
	})
}

func TestR4_ConcurrentShutdownsWaitForTheSameEnd(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 1, 1)
		r.svc.Start()
		gates := r.hold(true, "job-1")
		if !r.accept("the queue was empty", "job-1", "job-2") {
			return
		}
		calls := []*katatest.Call[Report]{r.shutdown()}
		if !r.settle("Shutdown while job-1 ran") || testBroken(r, calls[0]) {
			return
		}
		calls = append(calls, r.shutdown(), r.shutdown())
		if !r.settle("three Shutdown calls while job-1 ran") {
			return
		}
		for i, c := range calls {
			if testBroken(r, c) {
				return
			}
			if c.Returned() {
				_, err := c.Result()
				t.Errorf("Shutdown call %d of 3 returned (error: %v) while the first was still draining job-1 and "+
					"job-2: every call must wait for the same end and return the same result", i+1, err)
				r.unwind()
				return
			}
		}
		// A later call whose own ctx ends first gives up alone.
		impatient := r.shutdownWithin(time.Second)
		early := r.ctxEnded("job-1") // cancelled when Shutdown began: R6 reports that
		if !r.advance(time.Second, "a later Shutdown whose own 1s ctx ended") || testBroken(r, impatient) {
			return
		}
		if !early && r.ctxEnded("job-1") {
			t.Errorf("a later Shutdown call with a 1s ctx came while the first (without a deadline) drained job-1; " +
				"when that 1s ran out, job-1's ctx was cancelled: only the first call's ctx sets the grace — a later " +
				"call whose own ctx ends returns its ctx.Err() and an empty Report, and the shutdown goes on")
			r.unwind()
			return
		}
		if !impatient.Returns("a later Shutdown call's own 1s ctx ended while the first call still drained job-1, and " +
			"it kept waiting: a later call waits for the end of the shutdown or for its own ctx, whichever comes " +
			"first (select on both), and then returns its ctx.Err() and an empty Report") {
			return
		}
		// Not Finish: the shutdown goes on, so its goroutines still run.
		if rep, err := impatient.Result(); !assert.ErrorIs(t, err, context.DeadlineExceeded, "a later Shutdown whose own ctx ended first "+
			"returns that ctx.Err()") || !assert.Empty(t, testIDs(rep.Abandoned), "a later Shutdown whose own ctx "+
			"ended first returns an empty Report") {
			r.unwind()
			return
		}
		for i, c := range calls {
			if !c.Returned() {
				continue
			}
			_, err := c.Result()
			t.Errorf("Shutdown call %d of 3 returned (error: %v) when a later call's 1s ctx ended: the shutdown goes "+
				"on, and every call without a deadline waits for its end", i+1, err)
			r.unwind()
			return
		}

		gates[0].Release()
		for i, c := range calls {
			rep, err, ok := testFinish(r, c, fmt.Sprintf("Shutdown call %d of 3", i+1),
				"every job had finished, but it did not return")
			if !ok {
				return
			}
			assert.NoError(t, err, "Shutdown call %d of 3: the drain finished, so every call returns nil", i+1)
			assert.Empty(t, rep.Dropped, "Shutdown call %d of 3: the drain finished, so nothing is dropped", i+1)
		}
		assert.Equal(t, []string{"job-1", "job-2"}, r.started(), "three Shutdown calls drain the queued jobs once")
	})
}

func TestR4_ShutdownsCalledAtTheSameInstant(t *testing.T) {
	katatest.Repeat(t, 4, func(h *katatest.H) {
		const callers = 3
		r := testNew(h, 2, 2)
		r.svc.Start()
		gates := r.hold(true, "job-1")
		if !r.accept("the queue had room", "job-1", "job-2", "job-3") {
			return
		}
		// A SIGTERM handler and two admin requests call Shutdown at the same
		// instant, with nothing but the Service to order them.
		start := make(chan struct{})
		calls := make([]*katatest.Call[Report], callers)
		for i := range calls {
			calls[i] = testGo(r, func(ctx context.Context) (Report, error) {
				<-start
				return r.svc.Shutdown(ctx)
			})
		}
		close(start)
		if !r.settle(fmt.Sprintf("%d Shutdown calls at the same instant", callers)) ||
			slices.ContainsFunc(calls, func(c *katatest.Call[Report]) bool { return testBroken(r, c) }) {
			return
		}
		for i, c := range calls {
			if c.Returned() {
				_, err := c.Result()
				t.Errorf("%d Shutdown calls came at the same instant while job-1 ran; call %d returned (error: %v) "+
					"before the drain was over: decide which call is first and mark the shutdown begun in one "+
					"critical section, so that every other call waits for the same end", callers, i+1, err)
				r.unwind()
				return
			}
		}
		gates[0].Release()
		for i, c := range calls {
			rep, err, ok := testFinish(r, c, fmt.Sprintf("Shutdown call %d of %d at the same instant", i+1, callers),
				"every job had finished, but it did not return")
			if !ok {
				return
			}
			if ids := r.handledYetDropped(rep.Dropped); len(ids) > 0 {
				t.Errorf("%d Shutdown calls came at the same instant; call %d's Report lists %v in Dropped, although a "+
					"worker handled them: %s", callers, i+1, ids, testHandledYetDropped)
				return
			}
			assert.NoError(t, err, "Shutdown call %d of %d: the drain finished, so every call returns nil", i+1, callers)
			assert.Empty(t, rep.Dropped, "Shutdown call %d of %d: the drain finished, so nothing is dropped", i+1, callers)
		}
		handled := r.started()
		slices.Sort(handled)
		assert.Equal(t, []string{"job-1", "job-2", "job-3"}, handled,
			"%d Shutdown calls at the same instant drain the accepted jobs once", callers)
	})
}

func TestR5_AnIdleServiceStopsItsWorkers(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 4, 2)
		r.svc.Start()
		sd := r.shutdown()
		rep, err, ok := testFinish(r, sd, "Shutdown of an idle Service", "there was nothing to drain, "+
			"so Shutdown must return at once")
		if !ok {
			return
		}
		assert.NoError(t, err, "Shutdown of an idle Service must return nil")
		assert.Empty(t, rep.Dropped, "Shutdown of an idle Service drops nothing")
	})
}

func TestR5_WaitsForJobsThatStopSlowly(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, 2, 2)
		r.svc.Start()
		hold, cleanup := r.gate(), r.gate()
		r.plan("job-1", testPlan{hold: hold, cleanup: cleanup}) // cleans up for a while after the cancel
		r.hold(false, "job-2")
		if !r.accept("the queue was empty", "job-1", "job-2") || !r.wantRunning("2 jobs submitted", "job-1", "job-2") {
			return
		}
		sd := r.shutdownWithin(5 * time.Second)
		if !r.advance(5*time.Second, "Shutdown when the grace ran out") || testBroken(r, sd) {
			return
		}
		if sd.Returned() && slices.Contains(r.running(), "job-1") {
			t.Errorf("Shutdown returned while job-1's handle was still running (cancelled at the deadline, it was " +
				"cleaning up): after cancelling the jobs, wait for every worker to return — nothing the Service " +
				"started may run after Shutdown returns")
			r.unwind()
			return
		}
		r.release() // job-1 ends its cleanup; a Shutdown that ignored the deadline can finish too
		if _, _, ok := testFinish(r, sd, "Shutdown", "every job had returned, but Shutdown did not return"); !ok {
			return
		}
		assert.Empty(t, r.running(), "Shutdown returned: no job may still be in handle")
	})
}

func TestR6_RunningJobsKeepALiveCtxWhileGraceRemains(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// A job's ctx does not come from Submit's: an upload handler
		// answers 202 and its request ctx ends long before the job starts.
		r := testNew(h, 1, 1)
		r.svc.Start()
		busy := r.hold(true, "job-0")
		job1 := r.hold(false, "job-1")
		if !r.accept("the queue was empty", "job-0") {
			return
		}
		sub := r.submit("job-1")
		if !r.settle("Submit of job-1 behind job-0") || testBroken(r, sub) ||
			!sub.Returns("Submit of job-1 was still waiting, though the queue had room: Submit returns nil at once then") {
			return
		}
		sub.Cancel() // the request that submitted job-1 is over
		busy[0].Release()
		if !r.settle("job-1 starting after its Submit's ctx was cancelled") {
			return
		}
		if starts := r.starts.All(); len(starts) == 2 && (!starts[1].live || job1[0].Cancelled() > 0) {
			t.Errorf("job-1 was accepted, then its Submit's ctx was cancelled (the request was answered), and job-1 " +
				"ran with a cancelled ctx: a job's ctx comes from a context the Service creates in New and cancels " +
				"only at the hard stop — never from Submit's ctx, not even through context.AfterFunc")
			r.unwind()
			return
		}
		job1[0].Release()
		if _, _, ok := testFinish(r, r.shutdown(), "Shutdown", "every job had finished, but Shutdown did not return"); !ok {
			return
		}

		r = testNew(h, 1, 1)
		r.svc.Start()
		gates := r.hold(false, "job-1", "job-2")
		if !r.accept("the queue was empty", "job-1", "job-2") {
			return
		}
		sd := r.shutdownWithin(time.Minute)
		if !r.advance(30*time.Second, "Shutdown with 30s of grace left") || testBroken(r, sd) {
			return
		}
		if gates[0].Cancelled() > 0 {
			t.Errorf("job-1 was running when Shutdown began, and its ctx was cancelled with 30s of its 1m grace " +
				"left: a job's ctx must end only at the hard stop, when Shutdown's ctx ends — not when Shutdown " +
				"begins (the ctx given to handle must not be cancelled by Shutdown itself)")
			r.unwind()
			return
		}
		gates[0].Release()
		if !r.advance(10*time.Second, "Shutdown with 20s of grace left") || testBroken(r, sd) {
			return
		}
		starts := r.starts.All()
		if len(starts) < 2 {
			t.Errorf("job-2 was queued when Shutdown began, and 10s after job-1 finished it had not started: " +
				"queued jobs are drained (R2)")
			r.unwind()
			return
		}
		if !starts[1].live || gates[1].Cancelled() > 0 {
			t.Errorf("job-2 was queued when Shutdown began and started during the drain, with its ctx already "+
				"cancelled or cancelled while 20s of grace were left (starts: %v): queued jobs drained during the "+
				"grace run with a live ctx", starts)
			r.unwind()
			return
		}
		gates[1].Release()
		rep, err, ok := testFinish(r, sd, "Shutdown", "both jobs had finished within the grace, but Shutdown did not return")
		if !ok {
			return
		}
		assert.NoError(t, err, "both jobs finished within the grace: Shutdown must return nil")
		assert.Empty(t, rep.Abandoned, "both jobs finished within the grace: nothing is abandoned")
	})
}

func TestR3_JobsSharingAnIDAreEachReported(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const grace = time.Second
		// Two uploads of one photo and jobs submitted without an ID: distinct
		// jobs, told apart here by their payloads only.
		jobs := []Job{{"photo-7", "p1"}, {"", "p2"}, {"photo-7", "p3"}, {"", "p4"}, {"photo-7", "p5"}, {"", "p6"}}
		svc := New(h.Clk, 2, 4, func(ctx context.Context, j Job) error {
			<-ctx.Done() // runs until the hard stop
			return fmt.Errorf("resize %s: %w", j.Payload, ctx.Err())
		})
		svc.Start()
		for _, j := range jobs {
			sub := katatest.StartErr(h, func(ctx context.Context) error { return svc.Submit(ctx, j) })
			if !sub.Returns("Submit of job %+v, with a free worker or room in the queue", j) {
				return
			}
			if err := sub.Err(); err != nil {
				h.Errorf("Submit of job %+v with room in the queue returned %v; want nil", j, err)
				return
			}
		}
		sd := katatest.Start(h, func(ctx context.Context) (Report, error) { return svc.Shutdown(ctx) }, katatest.Timeout(grace))
		h.Advance(grace)
		if !sd.Returns("Shutdown, once its %v grace ran out and the running jobs returned on their cancelled ctx", grace) {
			return
		}
		rep, _, ok := sd.Finish("Shutdown")
		if !ok {
			return
		}
		var got []string
		for _, j := range append(append([]Job(nil), rep.Abandoned...), rep.Dropped...) {
			got = append(got, j.Payload)
		}
		slices.Sort(got)
		want := []string{"p1", "p2", "p3", "p4", "p5", "p6"}
		if !slices.Equal(got, want) || len(rep.Abandoned) != 2 {
			h.Errorf("6 jobs accepted (2 running, 4 queued) with IDs %q, %q, %q, %q, %q, %q, then a hard stop: the "+
				"Report must list each of them once, 2 in Abandoned and 4 in Dropped, but it lists the payloads %v "+
				"(%d abandoned). Distinct jobs may share an ID, or have none: never deduplicate or key the Report "+
				"by Job.ID; every accepted job is handled exactly once or listed", jobs[0].ID, jobs[1].ID, jobs[2].ID,
				jobs[3].ID, jobs[4].ID, jobs[5].ID, got, len(rep.Abandoned))
		}
	})
}

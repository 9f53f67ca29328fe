package shutdown

// Explored R3: a Shutdown whose ctx has already ended when it is called
// (a grace already used up elsewhere, a request cancelled before it got
// here). Its ctx ends before the drain is over, so it is a hard stop from
// the first instant: intake stops, the running jobs are cancelled, no
// queued job starts, and Shutdown returns ctx.Err() with the report once
// every worker has returned. Returning ctx.Err() at once, before any of
// that, leaves the Service running with nobody to stop it.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testLateShutdown struct {
	workers, queue int
	running        int  // jobs held in handle (at most workers)
	queued         int  // jobs waiting in the queue (at most queue)
	expired        bool // ctx past its deadline; else cancelled
}

func (s testLateShutdown) String() string {
	how := "already cancelled"
	if s.expired {
		how = "whose deadline has already passed"
	}
	return fmt.Sprintf("New(clk, %d workers, queue %d, handle), Start; %d job(s) running (each returns its ctx's "+
		"error, wrapped, once its ctx ends) and %d queued; then Shutdown(ctx) with a ctx %s", s.workers, s.queue,
		s.running, s.queued, how)
}

func testDrawLateShutdown(r *rapid.T) testLateShutdown {
	s := testLateShutdown{workers: rapid.IntRange(1, 3).Draw(r, "workers"), queue: rapid.IntRange(0, 3).Draw(r, "queue")}
	s.running = rapid.IntRange(1, s.workers).Draw(r, "jobs running") // something to drain
	if s.running == s.workers {
		s.queued = rapid.IntRange(0, s.queue).Draw(r, "jobs queued")
	}
	s.expired = rapid.Bool().Draw(r, "deadline passed (not cancelled)")
	return s
}

func (s testLateShutdown) play(h *katatest.H) {
	r := testNew(h, s.workers, s.queue)
	r.svc.Start()
	ids := testJobs(s.running + s.queued)
	gates := r.hold(false, ids...)
	if !r.accept("room for every job", ids...) || !r.wantRunning("the jobs submitted", ids[:s.running]...) {
		return
	}
	opt, want := katatest.Cancelled(), context.Canceled
	if s.expired {
		opt, want = katatest.Expired(), context.DeadlineExceeded
	}
	sd := testGo(r, r.svc.Shutdown, opt)
	if !r.settle("Shutdown with a ctx already ended") || testBroken(r, sd) {
		return
	}
	if !sd.Returns("Shutdown was called with a ctx that had already ended, and every running job returns once its " +
		"ctx ends, yet Shutdown was still waiting: its ctx ended before the drain was over, so cancel the running " +
		"jobs at once and return once the workers have") {
		return
	}
	rep, err := sd.Result() // what it did first; the leak check after
	const rule = "its ctx ended before the drain was over (before it began), so it is a hard stop from the first " +
		"instant: stop intake, cancel the running jobs, start no queued one, wait for the workers and report; " +
		"returning ctx.Err() before any of that leaves the Service running"
	cut := testNeverCancelled(ids[:s.running], gates) // running jobs whose ctx never ended
	if len(cut) > 0 {
		h.Errorf("Shutdown returned %v, called with a ctx that had already ended, but the ctx of running job(s) %v "+
			"was never cancelled: %s", err, cut, rule)
		return
	}
	if !errors.Is(err, want) {
		h.Errorf("Shutdown, called with a ctx that had already ended, returned %v; want its ctx.Err(), %v", err, want)
		return
	}
	abandoned, dropped := testIDs(rep.Abandoned), testIDs(rep.Dropped)
	if !slices.Equal(abandoned, ids[:s.running]) || !slices.Equal(dropped, ids[s.running:]) {
		h.Errorf("Shutdown, called with a ctx that had already ended, reported Abandoned %v and Dropped %v; want "+
			"Abandoned %v (running, cancelled, returned an error) and Dropped %v (queued, never started): %s",
			abandoned, dropped, ids[:s.running], ids[s.running:], rule)
		return
	}
	if started := r.startedAfterStop(); len(started) > 0 {
		h.Errorf("%v started after Shutdown was called with a ctx that had already ended: %s", started, rule)
		return
	}
	if _, _, ok := sd.Finish("Shutdown"); !ok {
		return
	}
	late := r.submit("job-late")
	if !r.settle("Submit after Shutdown returned") || testBroken(r, late) ||
		!late.Returns("a Submit after Shutdown had returned was still waiting: once Shutdown begins, Submit returns "+
			"ErrShuttingDown at once") {
		return
	}
	if _, err := late.Result(); !errors.Is(err, ErrShuttingDown) {
		h.Errorf("a Submit after Shutdown (called with a ctx that had already ended) had returned got %v; want an "+
			"error matching ErrShuttingDown: %s", err, rule)
	}
}

func TestR3_ExploreAShutdownWhoseCtxHasAlreadyEnded(t *testing.T) {
	// The fixed case first: a Shutdown that does nothing leaves workers
	// blocked for good in each scenario, and shrinking one would play many
	// (Explore does not run once the test has failed).
	katatest.Replay(t, []testLateShutdown{{workers: 2, queue: 1, running: 2, queued: 1, expired: true}},
		func(h *katatest.H, s testLateShutdown) { s.play(h) })
	katatest.Explore(t, 6, testDrawLateShutdown, func(h *katatest.H, s testLateShutdown) { s.play(h) })
}

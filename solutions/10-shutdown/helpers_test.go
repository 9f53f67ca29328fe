package shutdown

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"gokata/internal/katatest"
)

// testPlan says what handle does with one job: return nil at once, or
// wait at hold first (honouring its ctx unless deaf). A job whose ctx ends
// while it waits returns the ctx error, after waiting at cleanup if set
// (ignoring ctx: the job takes its time to stop).
type testPlan struct {
	hold    *katatest.Gate
	deaf    bool
	cleanup *katatest.Gate
	// stopped says what handle returns when its ctx ends while it waits:
	// "" the ctx error (wrapped), "plain" an error of its own that does not
	// wrap it, "nil" nil (it finished its last write anyway).
	stopped string
	// fails makes handle return testErrCorrupt once released, on its own.
	fails bool
}

// testErrCorrupt is the error of a job that fails on its own.
var testErrCorrupt = errors.New("corrupt image")

// testStart is a call of handle as it began.
type testStart struct {
	id   string
	live bool // its ctx was not done
}

// testRig is a Service under test whose handle follows the test's plans
// and records every call. Every wait of the test goes through the rig, so
// that a Service holding its mutex while it waits is reported instead of
// hanging the test.
type testRig struct {
	h      *katatest.H
	svc    *Service
	mu     sync.Mutex
	plans  map[string]testPlan
	gates  []*katatest.Gate
	starts katatest.Recorder[testStart]
	ends   katatest.Recorder[string]
	ended  katatest.Recorder[string] // jobs whose ctx ended while handle ran
	undo   []func()                  // cancel the contexts of the calls the test started
}

// testNew returns a rig around New(h.Clk, workers, queue, handle); the
// workers are not started. The test owns what the rig holds: Call.Stop
// (and so Call.Returns) unwinds the rig before it waits for its call.
func testNew(h *katatest.H, workers, queue int) *testRig {
	r := &testRig{h: h, plans: map[string]testPlan{}}
	r.svc = New(h.Clk, workers, queue, r.handle)
	h.Own(r.unwind)
	return r
}

// hold makes each job wait at a gate of its own, honouring its ctx unless
// deaf, and returns the gates.
func (r *testRig) hold(deaf bool, ids ...string) []*katatest.Gate {
	gs := make([]*katatest.Gate, len(ids))
	for i, id := range ids {
		gs[i] = r.gate()
		r.plan(id, testPlan{hold: gs[i], deaf: deaf})
	}
	return gs
}

func (r *testRig) gate() *katatest.Gate {
	g := katatest.NewGate()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gates = append(r.gates, g)
	return g
}

func (r *testRig) plan(id string, p testPlan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.plans[id] = p
}

func (r *testRig) handle(ctx context.Context, j Job) error {
	r.starts.Add(testStart{j.ID, ctx.Err() == nil})
	defer r.ends.Add(j.ID)
	defer context.AfterFunc(ctx, func() { r.ended.Add(j.ID) })()
	r.mu.Lock()
	p := r.plans[j.ID]
	r.mu.Unlock()
	if p.hold == nil {
		return nil
	}
	wait := ctx
	if p.deaf {
		wait = context.Background()
	}
	if err := p.hold.Hold(wait); err != nil {
		if p.cleanup != nil {
			p.cleanup.Hold(context.Background())
		}
		switch p.stopped {
		case "plain":
			return fmt.Errorf("job %s: render aborted, thumbnails half-written", j.ID)
		case "nil":
			return nil
		}
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	if p.fails {
		return fmt.Errorf("job %s: %w", j.ID, testErrCorrupt)
	}
	return nil
}

// ctxEnded reports whether job id's ctx ended while its handle ran.
func (r *testRig) ctxEnded(id string) bool { return slices.Contains(r.ended.All(), id) }

// startedAfterStop lists the jobs whose handle began with a ctx that was
// already cancelled.
func (r *testRig) startedAfterStop() []string {
	var ids []string
	for _, s := range r.starts.All() {
		if !s.live {
			ids = append(ids, s.id)
		}
	}
	return ids
}

// wantStarted checks, before any report is compared, that exactly the jobs
// want were ever handled: a queued job started after the hard stop is the
// cause, and a wrong report only its symptom.
func (r *testRig) wantStarted(what string, want ...string) bool {
	r.h.T.Helper()
	got := r.started()
	if late := r.startedAfterStop(); len(late) > 0 {
		r.h.T.Errorf("%s: %v started after the hard stop, with their ctx already cancelled (handled: %v; want only %v): "+
			"once Shutdown's ctx has ended no queued job may start — a worker checks the hard stop before it calls "+
			"handle, and the jobs it did not start go to Report.Dropped", what, late, got, want)
		return false
	}
	if !slices.Equal(got, want) {
		r.h.T.Errorf("%s: the jobs handled were %v; want %v", what, got, want)
		return false
	}
	return true
}

// started lists the jobs whose handle was called, in order.
func (r *testRig) started() []string {
	var ids []string
	for _, s := range r.starts.All() {
		ids = append(ids, s.id)
	}
	return ids
}

// handledYetDropped lists the jobs of dropped that a worker handled:
// Dropped is for the accepted jobs that never started.
func (r *testRig) handledYetDropped(dropped []Job) []string {
	var ids []string
	started := r.started()
	for _, j := range dropped {
		if slices.Contains(started, j.ID) {
			ids = append(ids, j.ID)
		}
	}
	return ids
}

// testHandledYetDropped says what is wrong with a Report that lists handled
// jobs in Dropped.
const testHandledYetDropped = "Dropped lists only the accepted jobs that never started"

// running lists the jobs whose handle has been called and has not returned.
func (r *testRig) running() []string {
	ids := r.started()
	for _, id := range r.ends.All() {
		if i := slices.Index(ids, id); i >= 0 {
			ids = slices.Delete(ids, i, i+1)
		}
	}
	return ids
}

// settle lets the code settle. If goroutines are stuck on a mutex because
// the Service holds one while it waits, it says so, unwinds and returns
// false.
func (r *testRig) settle(what string) bool {
	r.h.T.Helper()
	stuck := r.h.Settle()
	if stuck == nil {
		return true
	}
	r.h.T.Errorf("%s", testMutexHeld(what, stuck))
	r.unwind()
	return false
}

// testMutexHeld says what goroutines stuck on a mutex, with every other
// goroutine waiting, mean (Settle found them).
func testMutexHeld(what string, stuck []string) string {
	return fmt.Sprintf("%s: goroutines were stuck on a sync.Mutex that the Service held while it waited (for handle, "+
		"the queue or the clock): every Submit, Shutdown and worker then queues behind one slow job. Hold the lock "+
		"only to read or change the Service's fields, never across handle, a channel operation or a timer. "+
		"Stuck:\n\t%s", what, strings.Join(stuck, "\n\t"))
}

// advance moves the mock clock by d, settling before and after.
func (r *testRig) advance(d time.Duration, what string) bool {
	r.h.T.Helper()
	if !r.settle(what) {
		return false
	}
	r.h.Clk.Add(d)
	return r.settle(what)
}

// release lets every held job go on.
func (r *testRig) release() {
	r.mu.Lock()
	gates := slices.Clone(r.gates)
	r.mu.Unlock()
	for _, g := range gates {
		g.Release()
	}
}

// unwind ends what the test started, once a failure was reported: it
// releases every gate, cancels the calls' contexts, and moves the mock clock
// on while goroutines are stuck on a mutex (which synctest cannot wait for).
// Calling it again does no harm: Call.Stop calls it too (see testNew).
func (r *testRig) unwind() {
	r.mu.Lock()
	gates, undo := slices.Clone(r.gates), slices.Clone(r.undo)
	r.mu.Unlock()
	for _, g := range gates {
		g.Release()
	}
	for _, cancel := range undo {
		cancel()
	}
	for i := 0; i < 100 && r.h.Settle() != nil; i++ {
		r.h.Clk.Add(time.Hour)
	}
}

// testGo starts f on its own goroutine with a context of its own, which
// unwind cancels.
func testGo[T any](r *testRig, f func(ctx context.Context) (T, error), opts ...katatest.CtxOption) *katatest.Call[T] {
	c := katatest.Start(r.h, f, opts...)
	r.mu.Lock()
	r.undo = append(r.undo, c.Cancel)
	r.mu.Unlock()
	return c
}

// testBroken reports whether c panicked (already reported); then it
// unwinds. Call it after settle.
func testBroken[T any](r *testRig, c *katatest.Call[T]) bool {
	if c.Broken() {
		r.unwind()
		return true
	}
	return false
}

// submit starts Submit(ctx, j) with a fresh context.
func (r *testRig) submit(id string) *katatest.Call[struct{}] {
	return testGo(r, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.svc.Submit(ctx, Job{ID: id, Payload: "resize " + id})
	})
}

// shutdown starts Shutdown(ctx) with a fresh cancellable context.
func (r *testRig) shutdown() *katatest.Call[Report] {
	return testGo(r, r.svc.Shutdown)
}

// shutdownWithin starts Shutdown with a context whose deadline is grace
// from now on the mock clock.
func (r *testRig) shutdownWithin(grace time.Duration) *katatest.Call[Report] {
	return testGo(r, r.svc.Shutdown, katatest.Timeout(grace))
}

// accept submits the jobs one by one, each of which must be accepted at
// once (what says why there is room).
func (r *testRig) accept(what string, ids ...string) bool {
	r.h.T.Helper()
	for _, id := range ids {
		c := r.submit(id)
		if !r.settle(fmt.Sprintf("Submit of %s (%s)", id, what)) || testBroken(r, c) ||
			!c.Returns("Submit of %s was still waiting, though %s: with room in the queue Submit returns nil at once",
				id, what) {
			return false
		}
		if _, err := c.Result(); err != nil {
			r.h.T.Errorf("Submit of %s returned %q, though %s: with room in the queue and no shutdown, "+
				"Submit must accept the job", id, err, what)
			r.unwind()
			return false
		}
	}
	return true
}

// wantRunning checks that exactly the jobs want are in handle right now.
func (r *testRig) wantRunning(what string, want ...string) bool {
	r.h.T.Helper()
	if got := r.running(); !slices.Equal(got, want) {
		var cancelled []string
		for _, id := range r.ended.All() {
			if slices.Contains(want, id) {
				cancelled = append(cancelled, id)
			}
		}
		if len(cancelled) > 0 {
			r.h.T.Errorf("%s: the ctx of %v was cancelled while the job ran, before any hard stop, so it ended early "+
				"(in handle: %v; want %v): a job's ctx comes from a context the Service creates in New and cancels "+
				"only at the hard stop, never from Submit's ctx, which ends as soon as the request that submitted "+
				"the job is answered", what, cancelled, got, want)
			r.unwind()
			return false
		}
		r.h.T.Errorf("%s: the jobs in handle were %v; want %v (%d workers take jobs from the queue in order, "+
			"one at a time each)", what, got, want, len(want))
		r.unwind()
		return false
	}
	return true
}

// testAsk runs f (a quick method: Ready, a Submit that must not wait) on a
// goroutine of its own and returns its result once it has returned; if it
// does not return at once it reports what it should have done.
func testAsk[T any](r *testRig, what, should string, f func() (T, error)) (v T, err error, ok bool) {
	r.h.T.Helper()
	c := testGo(r, func(context.Context) (T, error) { return f() })
	if !r.settle(what) || testBroken(r, c) ||
		!c.Returns("%s: the call was still waiting, with the mock clock stopped: %s", what, should) {
		return v, nil, false
	}
	v, err = c.Result()
	return v, err, true
}

// testFinish collects a call that must have returned by now, once nothing it
// started is still running.
func testFinish[T any](r *testRig, c *katatest.Call[T], what, notReturned string) (v T, err error, ok bool) {
	r.h.T.Helper()
	if !r.settle(what) || !c.Returns("%s: %s", what, notReturned) {
		return v, nil, false
	}
	return c.Finish(what)
}

// testIDs returns the IDs of jobs, sorted.
func testIDs(jobs []Job) []string {
	ids := []string{}
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	slices.Sort(ids)
	return ids
}

// testJobs returns "job-1" … "job-n".
func testJobs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("job-%d", i+1)
	}
	return ids
}

// testNeverCancelled lists the jobs ids[i] whose gates[i] never saw its ctx
// cancelled.
func testNeverCancelled(ids []string, gates []*katatest.Gate) []string {
	var cut []string
	for i, id := range ids {
		if gates[i].Cancelled() == 0 {
			cut = append(cut, id)
		}
	}
	return cut
}

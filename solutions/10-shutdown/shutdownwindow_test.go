package shutdown

// Explored hand-over (R2): a Submit paused between its check of intake and
// its hand-off. A goroutine can be descheduled at any point, for as long as
// the others take: here some Submits, called before Shutdown, are paused at
// their first look at their ctx (ctx.Done or ctx.Err: a Submit that can
// wait looks there once it is past the check of intake, just before it
// hands its job over) while Shutdown begins and the drain runs, and each
// resumes at a drawn tick of the drain, or only once every other job has
// had time to finish. Other Submits race Shutdown unpaused. Whatever the
// schedule, a Submit that returned nil has handed its job over: without a
// deadline, the job is handled once, and finished, before Shutdown
// returns nil and an empty Report.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

type testWindowScenario struct {
	workers, queue int
	startFirst     bool  // Start before any Submit; else after the paused Submits, before Shutdown
	before         int   // jobs submitted one by one, and accepted, before anything else
	paused         []int // per paused Submit, the tick of the drain at which its pause ends
	racing         int   // Submits called at the instant of Shutdown, unpaused
	ticks          []int // per job, in order (before, paused, racing), the ticks handle takes
}

// testPausedCtx is the ctx of a paused Submit: the Submit's goroutine
// stops at its first look at the ctx (Done or Err) until resume is closed,
// as if it were descheduled there. It shows everything else of the ctx it
// wraps, so the context package still treats it as that ctx's child.
type testPausedCtx struct {
	context.Context
	resume <-chan struct{}
	looked *atomic.Bool // the Submit reached its pause
}

func (c testPausedCtx) Done() <-chan struct{} { c.pause(); return c.Context.Done() }

func (c testPausedCtx) Err() error { c.pause(); return c.Context.Err() }

func (c testPausedCtx) pause() {
	c.looked.Store(true)
	shake.Point()
	<-c.resume
	shake.Point()
}

func (s testWindowScenario) total() int {
	n := 0
	for _, t := range s.ticks {
		n += t
	}
	return n
}

// late is the tick by which every job other than a paused Submit's has had
// time to finish, whatever the schedule.
func (s testWindowScenario) late() int { return s.total() + 1 }

func (s testWindowScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle); job-N takes the ticks below in handle (a tick is %v)",
		s.workers, s.queue, testTick)
	if s.startFirst {
		b.WriteString("\nStart()")
	}
	jobs := func(from, to int) string {
		var each []string
		for i := from; i < to; i++ {
			each = append(each, fmt.Sprintf("job-%d (takes %d)", i+1, s.ticks[i]))
		}
		return strings.Join(each, ", ")
	}
	paused := s.before + len(s.paused)
	if s.before > 0 {
		fmt.Fprintf(&b, "\nsubmitted one by one, each accepted: %s", jobs(0, s.before))
	}
	fmt.Fprintf(&b, "\ngoroutines call Submit, each paused at its first look at its ctx (ctx.Done or ctx.Err): %s",
		jobs(s.before, paused))
	if !s.startFirst {
		b.WriteString("\nStart()")
	}
	b.WriteString("\nShutdown(ctx) without a deadline")
	if s.racing > 0 {
		fmt.Fprintf(&b, ", while goroutines submit at the same instant, unpaused: %s", jobs(paused, len(s.ticks)))
	}
	var ends []string
	for i, at := range s.paused {
		end := fmt.Sprintf("job-%d's at tick %d", s.before+i+1, at)
		if at == s.late() {
			end += " (once every other job has had time to finish)"
		}
		ends = append(ends, end)
	}
	fmt.Fprintf(&b, "\nthe clock moves a tick at a time from Shutdown on; the pauses end: %s", strings.Join(ends, ", "))
	return b.String()
}

func testDrawWindow(r *rapid.T) testWindowScenario {
	var s testWindowScenario
	s.workers = rapid.IntRange(1, 3).Draw(r, "workers")
	s.queue = rapid.IntRange(0, 3).Draw(r, "queue")
	s.startFirst = rapid.Bool().Draw(r, "Start first")
	room := s.queue
	if s.startFirst {
		room += s.workers
	}
	if room == 0 { // nobody takes a job before Start
		s.startFirst, room = true, s.workers
	}
	s.before = rapid.IntRange(0, min(room, 3)).Draw(r, "jobs accepted before")
	paused := rapid.IntRange(2, 5).Draw(r, "paused Submits")
	s.racing = rapid.IntRange(0, 2).Draw(r, "Submits racing Shutdown")
	for i := range s.before + paused + s.racing {
		s.ticks = append(s.ticks, rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("job %d ticks", i+1)))
	}
	for i := range paused {
		at := s.late()
		if rapid.Bool().Draw(r, fmt.Sprintf("pause %d ends during the drain", i+1)) {
			at = rapid.IntRange(0, s.total()).Draw(r, fmt.Sprintf("pause %d tick", i+1))
		}
		s.paused = append(s.paused, at)
	}
	return s
}

// testWindowEnd is what Shutdown returned, and what had been handled then.
type testWindowEnd struct {
	rep   Report
	err   error
	at    time.Duration
	ended []string // the jobs whose handle had returned
}

func testPlayWindow(h *katatest.H, s testWindowScenario) {
	var starts, ends katatest.Recorder[string]
	handle := func(ctx context.Context, j Job) error {
		starts.Add(j.ID)
		defer ends.Add(j.ID)
		var n int
		fmt.Sscanf(j.ID, "job-%d", &n)
		t := h.Clk.Timer(time.Duration(s.ticks[n-1]) * testTick)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("render %s: %w", j.ID, ctx.Err())
		}
	}
	svc := New(h.Clk, s.workers, s.queue, handle)

	type pause struct {
		resume  chan struct{}
		looked  atomic.Bool
		ended   bool
		endedAt time.Duration
	}
	pauses := make([]*pause, len(s.paused))
	for i := range pauses {
		pauses[i] = &pause{resume: make(chan struct{})}
	}
	end := func(p *pause) {
		if !p.ended {
			p.ended, p.endedAt = true, h.Elapsed()
			close(p.resume)
		}
	}
	var calls []katatest.Stopper
	defer func() {
		if h.Failed() {
			for _, p := range pauses {
				end(p)
			}
			katatest.Unwind(h, calls...)
		}
	}()
	// settle lets the code settle. A paused Submit that holds a lock other
	// goroutines wait for is a goroutine descheduled while it holds the
	// lock: its pause ends now. Any other goroutine stuck on a mutex is
	// the older tests' to report.
	settle := func() bool {
		for {
			stuck := h.Settle()
			if stuck == nil {
				return true
			}
			held := false
			for _, p := range pauses {
				held = held || !p.ended
				end(p)
			}
			if !held {
				h.Logf("stuck on a mutex: %s", strings.Join(stuck, "; "))
				return false
			}
		}
	}
	type sub struct {
		err error
		at  time.Duration
	}
	submit := func(id string, opts ...func(context.Context) context.Context) *katatest.Call[sub] {
		c := katatest.Start(h, func(ctx context.Context) (sub, error) {
			for _, o := range opts {
				ctx = o(ctx)
			}
			err := svc.Submit(ctx, Job{ID: id, Payload: "photos/" + id + ".jpg"})
			return sub{err, h.Elapsed()}, nil
		})
		calls = append(calls, c)
		return c
	}
	ids := testJobs(len(s.ticks))
	if s.startFirst {
		svc.Start()
	}
	subs := make([]*katatest.Call[sub], len(ids))
	for i, id := range ids[:s.before] {
		subs[i] = submit(id)
		if !settle() {
			return
		}
		if !subs[i].Returned() {
			h.Errorf("Submit of %s was still waiting, with room for it (%d workers, queue %d, %d job(s) accepted before): "+
				"with room in the queue Submit returns nil at once", id, s.workers, s.queue, i)
			return
		}
		if r, _ := subs[i].Result(); r.err != nil {
			h.Errorf("Submit of %s returned %q, with room for it (%d workers, queue %d, %d job(s) accepted before) and "+
				"no shutdown: Submit must accept the job", id, r.err, s.workers, s.queue, i)
			return
		}
	}
	for i, p := range pauses {
		subs[s.before+i] = submit(ids[s.before+i], func(ctx context.Context) context.Context {
			return testPausedCtx{ctx, p.resume, &p.looked}
		})
	}
	if !settle() {
		return
	}
	if !s.startFirst {
		// From a goroutine of its own: a paused Submit may hold a lock.
		start := katatest.Go(h, func() (struct{}, error) { svc.Start(); return struct{}{}, nil })
		if !settle() || !start.Returns("Start had not returned, with every other goroutine waiting: Start launches "+
			"the workers and returns") {
			return
		}
	}
	t0 := h.Elapsed()
	for i := s.before + len(pauses); i < len(ids); i++ {
		subs[i] = submit(ids[i])
	}
	shut := katatest.Start(h, func(ctx context.Context) (testWindowEnd, error) {
		rep, err := svc.Shutdown(ctx)
		return testWindowEnd{rep, err, h.Elapsed(), ends.All()}, nil
	})
	calls = append(calls, shut)
	returned := func() bool {
		return shut.Returned() && !slices.ContainsFunc(subs, func(c *katatest.Call[sub]) bool { return !c.Returned() })
	}
	// By then every pause has ended, and every job has had time to finish
	// twice over.
	horizon := 2*s.late() + 2
	for tick := 0; ; tick++ {
		if !settle() {
			return
		}
		for i, p := range pauses {
			if s.paused[i] == tick {
				end(p)
			}
		}
		if !settle() {
			return
		}
		if returned() || tick > horizon {
			break
		}
		h.Clk.Add(testTick)
	}
	for i, c := range subs {
		if c.Panicked() {
			return // reported
		}
		if !c.Returned() {
			h.Errorf("Submit of %s had not returned %v after Shutdown began, though every pause had ended and every "+
				"job had had time to finish: a Submit hands its job over or, once intake has stopped, returns "+
				"ErrShuttingDown", ids[i], h.Elapsed()-t0)
			return
		}
	}
	if shut.Panicked() {
		return
	}
	if !shut.Returned() {
		h.Errorf("Shutdown without a deadline had not returned %v after it began, though every Submit had returned "+
			"and every accepted job had had time to finish: the drain is over once every accepted job has finished "+
			"and every worker has returned", h.Elapsed()-t0)
		return
	}
	fin, _ := shut.Result()
	started := starts.All()
	ended := map[string]bool{}
	for _, id := range fin.ended {
		ended[id] = true
	}
	var lost, late []string
	for i, c := range subs {
		id := ids[i]
		r, _ := c.Result()
		switch n := testCount(started, id); {
		case r.err != nil && !errors.Is(r.err, ErrShuttingDown):
			// A Submit racing Shutdown hands its job over (nil) or refuses
			// it with ErrShuttingDown; any other error (a full queue
			// refused at once, say) is R1's, and its tests name it.
			return
		case r.err != nil && n > 0:
			h.Errorf("%s was refused (its Submit returned %q), yet handle ran for it: a refused job is never handled",
				id, r.err)
			return
		case r.err != nil:
		case n > 1:
			h.Errorf("%s was handled %d times: a job that Submit accepted is handled exactly once", id, n)
			return
		case n == 0:
			lost = append(lost, id)
		case !ended[id]:
			late = append(late, id)
		}
	}
	if len(lost) > 0 {
		id := lost[0]
		i := slices.Index(ids, id)
		r, _ := subs[i].Result()
		why := ""
		if j := i - s.before; j >= 0 && j < len(pauses) && pauses[j].looked.Load() {
			why = fmt.Sprintf(" The Submit of %s was called before Shutdown began, and paused at its first look at "+
				"its ctx (as a goroutine can be descheduled at any point) until t=%v; it returned nil at t=%v, "+
				"Shutdown at t=%v.", id, pauses[j].endedAt, r.at, fin.at)
		}
		which, it := id, "it"
		if len(lost) > 1 {
			which = strings.Join(lost[:len(lost)-1], ", ") + " and " + lost[len(lost)-1]
			it = "them"
		}
		h.Errorf("accepted jobs lost: Submit returned nil for %s, yet handle never ran for %s, and Shutdown, "+
			"without a deadline, returned %s with a Report of %d abandoned and %d dropped jobs.%s A Submit that "+
			"returned nil has handed its job over, and the drain handles it before Shutdown returns: a Submit past "+
			"its check of intake may still put its job in the queue after Shutdown began, so Shutdown must wait for "+
			"those Submits (count them under the lock of the check) before it decides that the queue is empty, and "+
			"a Submit that resumes after intake stopped must refuse its job", which, it, testErrText(fin.err),
			len(fin.rep.Abandoned), len(fin.rep.Dropped), why)
		return
	}
	if len(late) > 0 {
		h.Errorf("Shutdown, without a deadline, returned at t=%v while the accepted job(s) %v had not finished "+
			"handle: the drain is over once every accepted job has finished and every worker has returned",
			fin.at, late)
		return
	}
	if fin.err != nil || len(fin.rep.Abandoned)+len(fin.rep.Dropped) > 0 {
		h.Errorf("every accepted job was handled before Shutdown returned, and Shutdown had no deadline, yet it "+
			"returned %v with Abandoned %v and Dropped %v; want nil and an empty Report", fin.err,
			testIDs(fin.rep.Abandoned), testIDs(fin.rep.Dropped))
	}
}

// testErrText is err as a verdict quotes it: nil, or its text quoted.
func testErrText(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", err)
}

// testCount counts id in ids.
func testCount(ids []string, id string) int {
	n := 0
	for _, s := range ids {
		if s == id {
			n++
		}
	}
	return n
}

func TestR2_ExploreASubmitPausedPastItsCheckIsHandedOver(t *testing.T) {
	katatest.Explore(t, 16, testDrawWindow, testPlayWindow)
}

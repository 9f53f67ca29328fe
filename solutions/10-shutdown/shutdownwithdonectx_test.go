package shutdown

// Explored R1 and B2: Submits whose ctx has already ended when they call
// (the client hung up, the request's deadline passed), in every state for
// which the README fixes the answer. Once intake has stopped (Shutdown
// began; after the pre-drain delay if B2 set one), every later Submit
// returns an error matching ErrShuttingDown, whatever its ctx says: a
// Submit that looks at its ctx before it looks at intake answers with the
// caller's own error instead. Before intake stops (before Start, before
// Shutdown, within the pre-drain delay), a Submit with no room waits for
// room, its ctx or the shutdown, whichever comes first: its ctx came first,
// so ctx.Err(). With room and intake open the README fixes nothing (nil or
// ctx.Err()), so no Submit is made there. A Submit waiting for room whose
// ctx ends at the instant intake stops may return either error.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testDoneCtx is how a Submit's ctx ended before the call.
type testDoneCtx int

const (
	testDoneCancelled testDoneCtx = iota // context.WithCancel, cancelled
	testDoneCause                        // cancelled with a cause (context.WithCancelCause): Err is still Canceled
	testDoneExpired                      // its deadline has passed: DeadlineExceeded
)

func (k testDoneCtx) String() string {
	return [...]string{"was already cancelled", "was already cancelled with a cause (context.WithCancelCause)",
		"had already passed its deadline"}[k]
}

// err is what ctx.Err() says.
func (k testDoneCtx) err() error {
	if k == testDoneExpired {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// submit starts Submit(ctx, id) with a ctx that has ended k's way.
func (k testDoneCtx) submit(r *testRig, id string) *katatest.Call[struct{}] {
	submit := func(ctx context.Context) (struct{}, error) {
		return struct{}{}, r.svc.Submit(ctx, Job{ID: id, Payload: "resize " + id})
	}
	switch k {
	case testDoneCause: // its cause is katatest.ErrCallerLeft
		return testGo(r, submit, katatest.Cancelled())
	case testDoneExpired:
		return testGo(r, submit, katatest.Expired())
	}
	return testGo(r, func(ctx context.Context) (struct{}, error) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return submit(ctx)
	})
}

// testPhase is a moment at which the test makes Submits with a done ctx.
type testPhase int

const (
	testBeforeStart testPhase = iota // the queue full, Start not called yet: ctx.Err()
	testBusy                         // started, every worker busy, the queue full, before Shutdown: ctx.Err()
	testInDelay                      // B2: Shutdown began, within the pre-drain delay, no room: ctx.Err()
	testStopped                      // intake has stopped; the drain goes on (or no worker ever ran)
	testStopping                     // the hard stop: Shutdown waits for a job that ignores its ctx
	testOver                         // Shutdown has returned
	testPhases
)

// open says whether intake is still open then.
func (p testPhase) open() bool { return p <= testInDelay }

type testDoneSubmit struct {
	workers, queue int
	unstarted      bool          // Shutdown comes before Start, which is never called
	delay          time.Duration // B2's pre-drain delay; 0: none
	grace          time.Duration // Shutdown's ctx ends this long after it began, job-1 ignoring its ctx; 0: no deadline
	waiter         bool          // a Submit waits for room, its ctx ending at the instant intake stops
	probes         [testPhases][]testDoneCtx
}

// applies says whether the scenario makes Submits in phase p. Those of B2
// (a pre-drain delay) make none before Shutdown: that is R1's business.
func (s testDoneSubmit) applies(p testPhase) bool {
	switch p {
	case testBeforeStart:
		return s.delay == 0
	case testBusy:
		return !s.unstarted && s.delay == 0
	case testInDelay:
		return s.delay > 0
	case testStopped: // with a grace no longer than the delay, intake stops at the hard stop
		return s.grace == 0 || s.grace > s.delay
	case testStopping:
		return s.grace > 0
	}
	return true
}

// hardAtOnce says whether Shutdown's ctx ends within the pre-drain delay,
// so that intake stops at the hard stop.
func (s testDoneSubmit) hardAtOnce() bool { return s.grace > 0 && s.grace <= s.delay }

// when says what the state is in phase p, for the verdicts.
func (s testDoneSubmit) when(p testPhase) string {
	switch p {
	case testBeforeStart:
		return fmt.Sprintf("before Start, with the queue of %d full (no worker takes a job before Start)", s.queue)
	case testBusy:
		return fmt.Sprintf("before Shutdown, with every one of the %d worker(s) busy and the queue of %d full",
			s.workers, s.queue)
	case testInDelay:
		return fmt.Sprintf("Shutdown had begun, but within its %v pre-drain delay (intake still open: Submit "+
			"still takes jobs, and waits for room), with every worker busy and the queue full", s.delay)
	case testStopped:
		if s.unstarted {
			return "Shutdown had begun, before Start (which was never called)"
		}
		if s.delay > 0 {
			return fmt.Sprintf("Shutdown's %v pre-drain delay had ended, so intake had stopped; the drain was "+
				"going on", s.delay)
		}
		return "Shutdown had begun, so intake had stopped; the drain was going on"
	case testStopping:
		if s.hardAtOnce() {
			return fmt.Sprintf("Shutdown's ctx had ended %v in, within its %v pre-drain delay: intake had "+
				"stopped and the hard stop was under way, Shutdown waiting for job-1 (which ignores its ctx)",
				s.grace, s.delay)
		}
		return fmt.Sprintf("Shutdown's ctx had ended %v in: the hard stop was under way, Shutdown waiting for "+
			"job-1 (which ignores its ctx)", s.grace)
	}
	return "Shutdown had returned"
}

func (s testDoneSubmit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle)", s.workers, s.queue)
	if s.delay > 0 {
		fmt.Fprintf(&b, "; SetPreDrainDelay(%v)", s.delay)
	}
	if !s.unstarted {
		b.WriteString("; every job waits in handle until the test lets it go, or its ctx ends")
		if s.grace > 0 {
			b.WriteString(" (job-1 ignores its ctx)")
		}
	}
	seq := 0
	probe := func(p testPhase) {
		for _, k := range s.probes[p] {
			seq++
			fmt.Fprintf(&b, "; Submit(late-%d) with a ctx that %s", seq, k)
		}
	}
	ids := testJobs(s.queue + s.workers)
	if s.queue == 0 {
		b.WriteString("\nbefore Start: queue 0, so no room")
	} else {
		fmt.Fprintf(&b, "\n%s submitted before Start: the queue is full", testList(ids[:s.queue]))
	}
	probe(testBeforeStart)
	if s.unstarted {
		b.WriteString("\nShutdown(ctx) with a deadline 1 tick later on the clock, Start never called")
		probe(testStopped)
		b.WriteString("\nShutdown returns (the clock moves past its deadline if it has not)")
		probe(testOver)
		return b.String()
	}
	fmt.Fprintf(&b, "\nStart; %s submitted: every worker busy, the queue full", testList(ids[s.queue:]))
	probe(testBusy)
	if s.waiter {
		b.WriteString("\nSubmit(job-wait) waits for room")
		if s.delay > 0 {
			fmt.Fprintf(&b, ", its ctx ending %v later on the clock", s.delay)
		}
	}
	b.WriteString("\nShutdown(ctx)")
	if s.grace > 0 {
		fmt.Fprintf(&b, " with a deadline %v later on the clock", s.grace)
	} else {
		b.WriteString(" without a deadline")
	}
	if s.waiter && s.delay == 0 {
		b.WriteString(", job-wait's ctx cancelled at that same instant")
	}
	if s.delay > 0 {
		probe(testInDelay)
		if s.hardAtOnce() {
			fmt.Fprintf(&b, "\nthe clock moves %v: Shutdown's ctx ends, within the pre-drain delay", s.grace)
		} else {
			fmt.Fprintf(&b, "\nthe clock moves %v: the pre-drain delay ends", s.delay)
		}
	}
	if s.applies(testStopped) {
		probe(testStopped)
	}
	if s.grace > 0 {
		if !s.hardAtOnce() {
			fmt.Fprintf(&b, "\nthe clock moves to Shutdown's deadline, %v after it began: the hard stop", s.grace)
		}
		probe(testStopping)
	}
	b.WriteString("\nthe test lets every job go; Shutdown returns")
	probe(testOver)
	return b.String()
}

func testList(ids []string) string {
	if len(ids) == 0 {
		return "no job"
	}
	return strings.Join(ids, " ")
}

func testDrawDoneSubmit(delay bool) func(r *rapid.T) testDoneSubmit {
	return func(r *rapid.T) testDoneSubmit {
		s := testDoneSubmit{workers: rapid.IntRange(1, 2).Draw(r, "workers")}
		if delay { // queue 0 is R1's business
			s.queue = rapid.IntRange(1, 2).Draw(r, "queue")
			s.delay = time.Duration(rapid.IntRange(1, 3).Draw(r, "pre-drain delay ticks")) * testTick
		} else {
			s.queue = rapid.IntRange(0, 2).Draw(r, "queue")
			s.unstarted = rapid.IntRange(0, 3).Draw(r, "Shutdown before Start (1 in 4)") == 0
		}
		if !s.unstarted {
			if rapid.Bool().Draw(r, "a deadline (a hard stop)") {
				s.grace = time.Duration(rapid.IntRange(1, 5).Draw(r, "grace ticks")) * testTick
			}
			s.waiter = rapid.Bool().Draw(r, "a Submit waiting as intake stops")
		}
		kind := rapid.IntRange(0, int(testDoneExpired))
		var stopped []testPhase
		for p := range testPhases {
			if !s.applies(p) {
				continue
			}
			if !p.open() {
				stopped = append(stopped, p)
			}
			for i := range rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("phase %d Submits", p)) {
				s.probes[p] = append(s.probes[p], testDoneCtx(kind.Draw(r, fmt.Sprintf("phase %d ctx %d", p, i))))
			}
		}
		n := 0
		for _, p := range stopped {
			n += len(s.probes[p])
		}
		if n == 0 { // at least one Submit once intake has stopped
			p := rapid.SampledFrom(stopped).Draw(r, "the phase of the one Submit after intake stopped")
			s.probes[p] = []testDoneCtx{testDoneCtx(kind.Draw(r, "its ctx"))}
		}
		if delay && len(s.probes[testInDelay]) == 0 { // and one within the pre-drain delay
			s.probes[testInDelay] = []testDoneCtx{testDoneCtx(kind.Draw(r, "the ctx of the one Submit within the delay"))}
		}
		return s
	}
}

func (s testDoneSubmit) play(h *katatest.H) {
	r := testNew(h, s.workers, s.queue)
	if s.delay > 0 {
		r.svc.SetPreDrainDelay(s.delay)
	}
	ids := testJobs(s.queue + s.workers)
	if s.unstarted {
		ids = ids[:s.queue]
	} else {
		r.hold(s.grace > 0, ids[0])
		r.hold(false, ids[1:]...)
	}
	var late []string
	probe := func(p testPhase) bool {
		calls := make([]*katatest.Call[struct{}], len(s.probes[p]))
		first := len(late)
		for i, k := range s.probes[p] {
			late = append(late, fmt.Sprintf("late-%d", len(late)+1))
			calls[i] = k.submit(r, late[first+i])
		}
		if len(calls) == 0 {
			return true
		}
		when := s.when(p)
		if !r.settle(when) {
			return false
		}
		for i, c := range calls {
			id, k := late[first+i], s.probes[p][i]
			if testBroken(r, c) {
				return false
			}
			if p.open() {
				if !c.Returns("Submit of %s (its ctx %s when it called; %s) was still waiting: with no room, "+
					"Submit waits for room, its ctx or the shutdown, whichever comes first, and its ctx had ended "+
					"already", id, k, when) {
					return false
				}
				if _, err := c.Result(); !errors.Is(err, k.err()) {
					h.Errorf("Submit of %s (its ctx %s when it called; %s) returned %v; want its ctx.Err(), %v: "+
						"with no room and intake still open, Submit waits for room, its ctx or the shutdown, "+
						"whichever comes first, and its ctx had ended first (return ctx.Err() itself, not "+
						"context.Cause(ctx))", id, k, when, err, k.err())
					r.unwind()
					return false
				}
				continue
			}
			if !c.Returns("Submit of %s (its ctx %s when it called; %s) was still waiting: once intake has "+
				"stopped, Submit returns ErrShuttingDown at once", id, k, when) {
				return false
			}
			if _, err := c.Result(); !errors.Is(err, ErrShuttingDown) {
				got := fmt.Sprintf("%v", err)
				if err == nil {
					got = "nil (it accepted the job)"
				}
				h.Errorf("Submit of %s (its ctx %s when it called; %s) returned %s; want an error matching "+
					"ErrShuttingDown: once intake has stopped, every later Submit is refused with ErrShuttingDown "+
					"at once, whatever the state of its ctx (README, \"Shutdown begins\"), so that the caller learns "+
					"the service is leaving. Look at intake before the ctx: an early `if ctx.Err() != nil { return "+
					"ctx.Err() }` at the top of Submit answers with the caller's own error instead",
					id, k, when, got)
				r.unwind()
				return false
			}
		}
		return true
	}
	if !r.accept("room in the queue before Start", ids[:s.queue]...) || !probe(testBeforeStart) {
		return
	}
	if s.unstarted {
		sd := r.shutdownWithin(testTick)
		if !r.settle("Shutdown before Start") || testBroken(r, sd) || !probe(testStopped) {
			return
		}
		if !sd.Returned() && !r.advance(testTick, "Shutdown's deadline, before Start") {
			return
		}
		if _, _, ok := testFinish(r, sd, "Shutdown", "its ctx had ended, and no worker ever ran, but Shutdown did "+
			"not return"+s.earlyOut()); !ok || !probe(testOver) {
			return
		}
		testNeverHandled(h, r)
		return
	}
	r.svc.Start()
	if !r.accept("every worker was idle or the queue had room", ids[s.queue:]...) || !r.settle("Start") {
		return
	}
	if running := r.running(); !testSameSet(running, ids[:s.workers]) {
		h.Errorf("after Start with %d worker(s) and %v submitted, the jobs in handle were %v; want %v (Start launches "+
			"every worker, and each takes the jobs from the queue in order, one at a time)", s.workers, ids, running,
			ids[:s.workers])
		r.unwind()
		return
	}
	if !probe(testBusy) {
		return
	}
	var w *katatest.Call[struct{}]
	if s.waiter {
		submit := func(ctx context.Context) (struct{}, error) {
			return struct{}{}, r.svc.Submit(ctx, Job{ID: "job-wait", Payload: "resize job-wait"})
		}
		if s.delay > 0 {
			w = testGo(r, submit, katatest.Timeout(s.delay))
		} else {
			w = testGo(r, submit)
		}
		if !r.settle("Submit of job-wait on a full queue") || testBroken(r, w) {
			return
		}
		if !w.Waits("every worker was busy and the queue full, yet Submit of job-wait returned at once: on a full " +
			"queue Submit waits for room, its ctx or the shutdown") {
			r.unwind()
			return
		}
		if s.delay == 0 {
			w.Cancel() // nothing between this and Shutdown's start
		}
	}
	var sd *katatest.Call[Report]
	if s.grace > 0 {
		sd = r.shutdownWithin(s.grace)
	} else {
		sd = r.shutdown()
	}
	if !r.settle("Shutdown began") || testBroken(r, sd) {
		return
	}
	at := time.Duration(0) // how long ago Shutdown began
	if s.delay > 0 {
		if cut := r.ended.All(); len(cut) > 0 {
			h.Errorf("Shutdown had begun, within its %v pre-drain delay, and the ctx of %v was cancelled while the "+
				"job ran, though the whole grace remained: a job's ctx is cancelled only at the hard stop, when "+
				"Shutdown's ctx ends, never when Shutdown begins (nor when the delay ends)", s.delay, cut)
			r.unwind()
			return
		}
		if started := r.started(); !testSameSet(started, ids[:s.workers]) {
			h.Errorf("Shutdown had begun, within its %v pre-drain delay, with job(s) %v running and held in handle, "+
				"and %v queued behind them; yet the jobs handled were %v: nothing may end or start a job here",
				s.delay, ids[:s.workers], ids[s.workers:], started)
			r.unwind()
			return
		}
		if !probe(testInDelay) {
			return
		}
		at = s.delay
		if s.hardAtOnce() {
			at = s.grace
		}
		if !r.advance(at, "the end of the pre-drain delay") {
			return
		}
	}
	if w != nil {
		var why string
		var ctxErr error
		switch {
		case s.delay == 0:
			why, ctxErr = "its ctx was cancelled at the instant Shutdown began, with nothing between them", context.Canceled
		case s.grace > 0 && s.grace < s.delay:
			why = fmt.Sprintf("Shutdown's ctx ended %v in, cutting the %v pre-drain delay short, before job-wait's "+
				"ctx (%v); intake stopped first", s.grace, s.delay, s.delay)
		default:
			why, ctxErr = fmt.Sprintf("its ctx ended %v on, at the instant the pre-drain delay ended and intake "+
				"stopped", s.delay), context.DeadlineExceeded
		}
		if !r.settle("intake stopped") || testBroken(r, w) ||
			!w.Returns("Submit of job-wait was waiting for room on the full queue; %s, and it kept waiting: a "+
				"waiting Submit returns as soon as its ctx ends or intake stops", why) {
			return
		}
		_, err := w.Result()
		if !errors.Is(err, ErrShuttingDown) && (ctxErr == nil || !errors.Is(err, ctxErr)) {
			want := "an error matching ErrShuttingDown"
			if ctxErr != nil {
				want = fmt.Sprintf("ctx.Err() (%v) or an error matching ErrShuttingDown: whichever comes first, and "+
					"here they came together", ctxErr)
			}
			h.Errorf("Submit of job-wait was waiting for room on the full queue; %s. It returned %v; want %s",
				why, err, want)
			r.unwind()
			return
		}
	}
	if s.applies(testStopped) && !probe(testStopped) {
		return
	}
	if s.grace > 0 {
		if at < s.grace && !r.advance(s.grace-at, "Shutdown's deadline") {
			return
		}
		if !probe(testStopping) {
			return
		}
	}
	r.release()
	if _, _, ok := testFinish(r, sd, "Shutdown", "every job was let go, but Shutdown did not return"+s.earlyOut()); !ok ||
		!probe(testOver) {
		return
	}
	testNeverHandled(h, r)
}

// earlyOut explains a Shutdown that never returns after Submits with a done
// ctx were made while intake was open.
func (s testDoneSubmit) earlyOut() string {
	if len(s.probes[testBeforeStart])+len(s.probes[testBusy])+len(s.probes[testInDelay]) == 0 {
		return ""
	}
	return ". Submits whose ctx had already ended returned while intake was open: where a Shutdown waits on " +
		"Submits that have returned, look at every way out of Submit, also the early ones (its ctx already " +
		"ended, intake stopped): each must undo what Submit did on the way in"
}

// testSameSet says whether a and b hold the same IDs, in any order.
func testSameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// testNeverHandled checks that no Submit with a done ctx had its job handled.
func testNeverHandled(h *katatest.H, r *testRig) {
	for _, id := range r.started() {
		if strings.HasPrefix(id, "late-") {
			h.Errorf("%s was handled, though its Submit returned an error: a refused job is never handled", id)
			return
		}
	}
}

func TestR1_ExploreSubmitsWhoseCtxHasAlreadyEnded(t *testing.T) {
	katatest.Explore(t, 4, testDrawDoneSubmit(false), func(h *katatest.H, s testDoneSubmit) { s.play(h) })
}

func TestB2_ExploreSubmitsWhoseCtxHasAlreadyEndedAroundThePreDrainDelay(t *testing.T) {
	katatest.Explore(t, 3, testDrawDoneSubmit(true), func(h *katatest.H, s testDoneSubmit) { s.play(h) })
}

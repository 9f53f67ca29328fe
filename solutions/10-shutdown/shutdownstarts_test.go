package shutdown

// Explored start (R5): every method is safe for concurrent use, Start
// included. Start runs on goroutines of its own, one or two at once, with
// submitters beside it, and Shutdown comes from yet another goroutine,
// either at the same instant or once Start's goroutines are done, with
// nothing in the test ordering the two (no synctest.Wait in between, so
// that the race detector sees a Start whose work is not ordered before
// Shutdown's wait for the workers). Whichever came first, Shutdown must
// return with nothing of the Service running, and every accepted job
// handled once or listed. Some runs never call Start at all: the jobs
// submitted before it still wait in the queue when Shutdown comes, no
// worker will ever take them, and Shutdown itself must report them (or
// start workers and handle them).

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
)

type testStartRace struct {
	workers, queue int
	before         int  // jobs submitted, and queued, before anything else (before <= queue)
	starters       int  // goroutines that call Start at once; 0: Start is never called
	submitters     int  // goroutines that submit one job each, started with Start
	atOnce         bool // Shutdown is called at the same instant as Start; else once Start's goroutines are done
	deaf           bool // a held job ignores its ctx
	hardStop       bool // the grace ends while every job is held; else the test lets them finish first
	grace          time.Duration
}

func (s testStartRace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle); every job waits in handle until the test lets it go",
		s.workers, s.queue)
	if s.deaf {
		b.WriteString(" (it ignores its ctx)")
	} else {
		b.WriteString(" or its ctx ends")
	}
	if s.before > 0 {
		fmt.Fprintf(&b, "; %s submitted (queued)", testRJobs(uint8(1<<s.before-1)))
	}
	if s.starters == 0 {
		b.WriteString("\nStart is never called")
		if s.submitters > 0 {
			fmt.Fprintf(&b, "; %d goroutine(s) submit one job each", s.submitters)
		}
	} else {
		fmt.Fprintf(&b, "\nthen %d goroutine(s) call Start at once", s.starters)
		if s.submitters > 0 {
			fmt.Fprintf(&b, ", with %d more submitting one job each", s.submitters)
		}
	}
	if s.starters == 0 {
		fmt.Fprintf(&b, "; then another goroutine calls Shutdown(ctx) (a deadline %v later on the clock)", s.grace)
	} else if s.atOnce {
		fmt.Fprintf(&b, ", and another calls Shutdown(ctx) at that same instant (a deadline %v later on the clock)", s.grace)
	} else {
		fmt.Fprintf(&b, "; once they are done, another goroutine calls Shutdown(ctx) (a deadline %v later on the clock), "+
			"nothing ordering it after Start", s.grace)
	}
	if s.hardStop {
		b.WriteString("\nthe clock moves past the deadline, then the test lets every job go")
	} else {
		b.WriteString("\nthe test lets every job go, then the clock moves past the deadline if Shutdown has not returned")
	}
	return b.String()
}

func testDrawStartRace(r *rapid.T) testStartRace {
	var s testStartRace
	s.workers = rapid.IntRange(1, 3).Draw(r, "workers")
	s.queue = rapid.IntRange(0, 3).Draw(r, "queue")
	s.before = rapid.IntRange(0, s.queue).Draw(r, "jobs before Start")
	s.starters = rapid.IntRange(0, 2).Draw(r, "goroutines calling Start (0: none)")
	s.submitters = rapid.IntRange(0, 2).Draw(r, "submitters racing Start")
	s.atOnce = rapid.Bool().Draw(r, "Shutdown at the same instant")
	s.deaf = rapid.Bool().Draw(r, "jobs ignore their ctx")
	s.hardStop = rapid.IntRange(0, 2).Draw(r, "the grace ends first") == 0
	s.grace = time.Duration(rapid.IntRange(1, 4).Draw(r, "grace ticks")) * testTick
	return s
}

func testPlayStartRace(h *katatest.H, s testStartRace) {
	ids := testJobs(s.before + s.submitters)
	gates := map[string]*katatest.Gate{}
	for _, id := range ids {
		gates[id] = h.Gate()
	}
	release := func() {
		for _, g := range gates {
			g.Release()
		}
	}
	// handle synchronises with nothing the test touches before Shutdown
	// returns: its recorders are read only then.
	var starts, ends, early katatest.Recorder[string]
	var graceOver atomic.Bool // the test is moving the clock past Shutdown's deadline
	handle := func(ctx context.Context, j Job) error {
		starts.Add(j.ID)
		defer ends.Add(j.ID)
		wait := ctx
		if s.deaf {
			wait = context.Background()
		}
		if err := gates[j.ID].Hold(wait); err != nil {
			if !graceOver.Load() {
				early.Add(j.ID)
			}
			return fmt.Errorf("job %s: %w", j.ID, err)
		}
		return nil
	}
	svc := New(h.Clk, s.workers, s.queue, handle)
	for _, id := range ids[:s.before] {
		c := katatest.Start(h, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, svc.Submit(ctx, Job{ID: id, Payload: "resize " + id})
		})
		if stuck := h.Settle(); stuck != nil {
			return // the older tests say what holds the mutex
		}
		if !c.Returns("Submit of %s before Start, with room in the queue, was still waiting: with room in the queue "+
			"Submit returns nil at once", id) {
			return
		}
		if _, err := c.Result(); err != nil {
			h.Errorf("Submit of %s before Start returned %q, with room in the queue: jobs submitted before Start "+
				"wait in the queue", id, err)
			return
		}
	}
	ctx, cancel := h.Clk.WithTimeout(context.Background(), s.grace)
	defer cancel()

	var starters []*katatest.Call[struct{}]
	for range s.starters {
		starters = append(starters, katatest.Go(h, func() (struct{}, error) {
			svc.Start()
			return struct{}{}, nil
		}))
	}
	var subs []*katatest.Call[struct{}]
	for _, id := range ids[s.before:] {
		subs = append(subs, katatest.Start(h, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, svc.Submit(ctx, Job{ID: id, Payload: "resize " + id})
		}))
	}
	if !s.atOnce {
		h.WaitUnordered() // Start has returned, and nothing orders it before Shutdown
	}
	shut := katatest.Go(h, func() (Report, error) { return svc.Shutdown(ctx) })
	if !s.hardStop {
		if stuck := h.Settle(); stuck != nil {
			return
		}
		release()
	}
	for step := 0; step < 3 && !shut.Returned(); step++ {
		if stuck := h.Settle(); stuck != nil {
			return
		}
		switch {
		case shut.Returned():
		case step == 0:
			graceOver.Store(true)
			h.Clk.Add(s.grace + testTick/2) // the grace ends
		default:
			release() // the jobs that ignore their ctx
		}
	}
	if !shut.Returned() {
		h.Errorf("Shutdown never returned, though its deadline had passed and every job's handle had returned: "+
			"it must return once the drain is over or, at its deadline, once the running jobs were cancelled and every "+
			"worker has returned, however it raced Start (%d goroutine(s) called Start; handle started %v)",
			s.starters, starts.All())
		katatest.Unwind(h, shut)
		return
	}
	// Read what the jobs did right after Shutdown returned: nothing may
	// still run after that.
	handled, finished := starts.All(), ends.All()
	rep, err := shut.Result()
	if n := len(handled) - len(finished); n > 0 {
		h.Errorf("Shutdown returned while %d job(s) were still in handle (started: %v, finished: %v), after Start ran "+
			"on a goroutine of its own: Start must launch the workers and count them (wg.Add) in the same critical "+
			"section that marks the Service started, so that a Shutdown that sees it started also waits for them; "+
			"otherwise it can wait before the workers are counted and return while they run", n, handled, finished)
		katatest.Unwind(h, shut)
		return
	}
	if stuck := h.Settle(); stuck != nil {
		return
	}
	for i, c := range starters {
		if !c.Returned() {
			h.Errorf("Start (goroutine %d of %d) had not returned after Shutdown did: Start launches the workers "+
				"and returns; called again or after Shutdown has begun, it does nothing", i+1, len(starters))
			katatest.Unwind(h, append(starters, subs...)...)
			return
		}
	}
	accepted := map[string]bool{}
	for _, id := range ids[:s.before] {
		accepted[id] = true
	}
	for i, c := range subs {
		if !c.Returned() {
			h.Errorf("Submit of %s, racing Start, had not returned after Shutdown did: once Shutdown begins, a "+
				"waiting Submit returns ErrShuttingDown at once", ids[s.before+i])
			katatest.Unwind(h, subs...)
			return
		}
		if _, err := c.Result(); err == nil {
			accepted[ids[s.before+i]] = true
		}
	}
	if !h.NoLeaks("Shutdown") {
		return
	}
	dropped := testIDs(rep.Dropped)
	for _, id := range ids {
		n := 0
		for _, x := range handled {
			if x == id {
				n++
			}
		}
		listed := slices.Contains(dropped, id)
		switch {
		case n > 1:
			h.Errorf("%s was handled %d times: an accepted job is handled exactly once (Start called from %d "+
				"goroutine(s) at once)", id, n, s.starters)
		case !accepted[id] && (n > 0 || listed):
			h.Errorf("%s was refused (its Submit returned an error), yet it was handled or reported: a refused job is "+
				"never handled", id)
		case accepted[id] && n == 0 && !listed && len(handled) == 0:
			h.Errorf("%s was accepted (Submit returned nil) and no worker ever ran (Start was never called, or came "+
				"after Shutdown had begun and did nothing), so it stayed queued; Shutdown neither handled it nor "+
				"listed it in Report.Dropped (%v): an accepted job is handled exactly once, or else Report.Dropped "+
				"must list it — once the workers have returned, Shutdown must move whatever is left in the queue to "+
				"Dropped itself (all of it if the workers never started), not count on a worker to do it", id, dropped)
		case accepted[id] && n == 0 && !listed:
			h.Errorf("%s was accepted (Submit returned nil: queued, or handed to a worker) but was never handled, and "+
				"Report.Dropped (%v) does not list it: an accepted job is handled exactly once, or else Report.Dropped "+
				"must list it", id, dropped)
		case n > 0 && listed:
			h.Errorf("%s was handled and is also listed in Report.Dropped: Dropped lists only the accepted jobs that "+
				"never started", id)
		default:
			continue
		}
		return
	}
	if cut := early.All(); len(cut) > 0 {
		h.Errorf("the ctx of %v was cancelled while grace remained (Shutdown had begun, its deadline %v later had "+
			"not passed): a job's ctx is cancelled only at the hard stop, when Shutdown's ctx ends, never when "+
			"Shutdown begins", cut, s.grace)
		return
	}
	if len(handled) == 0 {
		return // Shutdown came first, or no Start: the accepted jobs are dropped
	}
	// Start came first: the workers drain the queue.
	switch {
	case !s.hardStop && (err != nil || len(rep.Abandoned)+len(rep.Dropped) > 0):
		h.Errorf("Start came first (its workers handled %v) and every job finished before the deadline, yet Shutdown "+
			"returned %v with %d abandoned and %d dropped job(s): with the workers started, Shutdown drains every accepted "+
			"job and returns nil and an empty Report", handled, err, len(rep.Abandoned), len(rep.Dropped))
	case s.hardStop && !errors.Is(err, context.DeadlineExceeded):
		h.Errorf("Start came first (its workers handled %v) and the grace ended with jobs running, yet Shutdown "+
			"returned %v; want ctx.Err(), context.DeadlineExceeded", handled, err)
	}
}

func TestR1_StartsAtOnceLaunchTheWorkersOnce(t *testing.T) {
	// Three goroutines call Start at the same instant, with more jobs
	// queued than there are workers: the workers start once, so no more
	// than two jobs ever run at once. A Start that checks and launches in
	// two critical sections launches twice only when two callers meet
	// between them, on some schedules: 4 repetitions let such a Start pass
	// once in a full verify; 12 (about 10 ms under -race) give it three
	// times as many chances to be caught.
	katatest.Repeat(t, 12, func(h *katatest.H) {
		const workers, starters = 2, 3
		ids := testJobs(workers + 2)
		gates := map[string]*katatest.Gate{}
		for _, id := range ids {
			gates[id] = h.Gate()
		}
		var peak katatest.Peak
		svc := New(h.Clk, workers, len(ids), func(ctx context.Context, j Job) error {
			leave := peak.Enter()
			defer leave()
			return gates[j.ID].Hold(ctx)
		})
		for _, id := range ids {
			if err := svc.Submit(context.Background(), Job{ID: id}); err != nil {
				h.Errorf("Submit of %s before Start returned %q, with room in the queue: jobs submitted before Start "+
					"wait in the queue", id, err)
				return
			}
		}
		var calls []*katatest.Call[struct{}]
		for range starters {
			calls = append(calls, katatest.Go(h, func() (struct{}, error) {
				svc.Start()
				return struct{}{}, nil
			}))
		}
		if stuck := h.Settle(); stuck != nil {
			return // the older tests say what holds the mutex
		}
		if n := peak.Now(); n > workers {
			h.Errorf("%d jobs ran at once with %d workers, after %d goroutines called Start at the same instant: Start "+
				"launches the workers once, however many callers race it; check and set \"started\" in one critical "+
				"section (a check in one and the launch after another lock lets two callers both launch a set)",
				n, workers, starters)
		}
		for _, g := range gates {
			g.Release()
		}
		shut := katatest.Go(h, func() (Report, error) { return svc.Shutdown(context.Background()) })
		if stuck := h.Settle(); stuck != nil {
			return
		}
		if !shut.Returns("Shutdown was still waiting after every job had finished, with Start called from %d goroutines "+
			"at once: the drain is over once every accepted job has finished and every worker has returned", starters) {
			return
		}
		for _, c := range calls {
			if !c.Returned() {
				h.Errorf("Start, called from %d goroutines at once, had not returned after Shutdown did", starters)
				katatest.Unwind(h, calls...)
				return
			}
		}
		if _, err, ok := shut.Finish("Shutdown"); ok && err != nil {
			h.Errorf("every job finished before Shutdown, yet it returned %v; want nil", err)
		}
	})
}

func TestR5_ExploreStartRacingShutdown(t *testing.T) {
	katatest.Explore(t, 10, testDrawStartRace, testPlayStartRace)
	// Every run tries a Start that has returned before a Shutdown it is not
	// ordered with, with a job running, which a draw could miss.
	katatest.Replay(t, []testStartRace{
		{workers: 2, queue: 2, before: 2, starters: 1, grace: 2 * testTick},
		{workers: 1, queue: 1, before: 1, starters: 2, hardStop: true, grace: testTick},
		{workers: 2, queue: 2, before: 2, starters: 0, submitters: 1, hardStop: true, grace: testTick},
	}, testPlayStartRace)
}

// testReadyRace is a readiness probe polling Ready from goroutines of its
// own while Start, then Shutdown, run on others.
type testReadyRace struct {
	workers, queue int
	starters       int           // goroutines that call Start at once
	probes         int           // goroutines that poll Ready, in each phase
	polls          int           // calls of Ready per probe
	delay          time.Duration // SetPreDrainDelay; 0: none
	// atOnce: Shutdown is called at the same instant as Start, and the
	// probes poll while both run; shutFirst: its goroutine is started
	// before Start's.
	atOnce, shutFirst bool
}

func (s testReadyRace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle)", s.workers, s.queue)
	if s.delay > 0 {
		fmt.Fprintf(&b, "; SetPreDrainDelay(%v)", s.delay)
	}
	if s.atOnce {
		first := "Start's goroutines are started first"
		if s.shutFirst {
			first = "Shutdown's goroutine is started first"
		}
		fmt.Fprintf(&b, "; %d goroutine(s) call Start, another calls Shutdown(ctx) and %d probe(s) call Ready %d "+
			"time(s) each, all at the same instant (%s)", s.starters, s.probes, s.polls, first)
	} else {
		fmt.Fprintf(&b, "; %d goroutine(s) call Start while %d probe(s) call Ready %d time(s) each, all at once; then "+
			"another goroutine calls Shutdown(ctx) while %d probe(s) call Ready %d time(s) each, all at once", s.starters,
			s.probes, s.polls, s.probes, s.polls)
	}
	if s.delay > 0 {
		fmt.Fprintf(&b, "; the clock moves %v", s.delay)
	}
	return b.String()
}

func testDrawReadyRace(r *rapid.T) testReadyRace {
	var s testReadyRace
	s.workers = rapid.IntRange(1, 3).Draw(r, "workers")
	s.queue = rapid.IntRange(0, 2).Draw(r, "queue")
	s.starters = rapid.IntRange(1, 2).Draw(r, "goroutines calling Start")
	s.probes = rapid.IntRange(1, 3).Draw(r, "probes")
	s.polls = rapid.IntRange(1, 3).Draw(r, "polls per probe")
	s.delay = rapid.SampledFrom([]time.Duration{0, 0, testTick}).Draw(r, "pre-drain delay")
	s.atOnce = rapid.Bool().Draw(r, "Shutdown at the same instant as Start")
	s.shutFirst = s.atOnce && rapid.Bool().Draw(r, "Shutdown's goroutine started first")
	return s
}

func testPlayReadyRace(h *katatest.H, s testReadyRace) {
	svc := New(h.Clk, s.workers, s.queue, func(context.Context, Job) error { return nil })
	if s.delay > 0 {
		svc.SetPreDrainDelay(s.delay)
	}
	probe := func() []*katatest.Call[[]bool] {
		var calls []*katatest.Call[[]bool]
		for range s.probes {
			calls = append(calls, katatest.Go(h, func() ([]bool, error) {
				seen := make([]bool, s.polls)
				for i := range seen {
					seen[i] = svc.Ready()
				}
				return seen, nil
			}))
		}
		return calls
	}
	// check reports a probe that saw Ready go back: from want to !want.
	check := func(calls []*katatest.Call[[]bool], during, rule string, want bool) bool {
		for _, c := range calls {
			seen, _ := c.Result()
			if i := slices.Index(seen, want); i >= 0 && slices.Contains(seen[i:], !want) {
				h.Errorf("a probe polling Ready while %s saw %v: Ready is true from Start until Shutdown begins, "+
					"and false from then on, so %s; read and change the flags under the Service's mutex, in one "+
					"critical section each", during, seen, rule)
				return false
			}
		}
		return true
	}
	var shut *katatest.Call[Report]
	shutdown := func() { shut = katatest.Go(h, func() (Report, error) { return svc.Shutdown(context.Background()) }) }
	var starters []*katatest.Call[struct{}]
	start := func() {
		for range s.starters {
			starters = append(starters, katatest.Go(h, func() (struct{}, error) {
				svc.Start()
				return struct{}{}, nil
			}))
		}
	}
	if s.atOnce {
		// The goroutine started last is the first to run, the others in
		// turn, when the processor is free.
		var probes []*katatest.Call[[]bool]
		if s.shutFirst {
			shutdown()
			probes = probe()
			start()
		} else {
			start()
			probes = probe()
			shutdown()
		}
		testPlayReadyAtOnce(h, s, svc, starters, shut, probes)
		return
	}
	start()
	first := probe()
	if stuck := h.Settle(); stuck != nil {
		return // the older tests say what holds the mutex
	}
	for _, c := range starters {
		if !c.Returned() {
			h.Errorf("Start, called from %d goroutine(s) while Ready was polled, had not returned: Start launches the "+
				"workers and returns", s.starters)
			katatest.Unwind(h, starters...)
			return
		}
	}
	if !check(first, "Start ran", "once it has seen true it sees true until Shutdown begins", true) {
		return
	}
	if !svc.Ready() {
		h.Errorf("Start had returned (called from %d goroutine(s) at once, while Ready was polled), yet Ready was false: "+
			"Ready is true from Start until Shutdown begins", s.starters)
		return
	}
	shutdown()
	second := probe()
	if stuck := h.Settle(); stuck != nil {
		return
	}
	if s.delay > 0 {
		h.Clk.Add(s.delay)
		if stuck := h.Settle(); stuck != nil {
			return
		}
	}
	if !shut.Returned() {
		h.Errorf("Shutdown of an idle Service had not returned (pre-drain delay %v, passed on the clock): with no job "+
			"to drain it returns once the workers have returned", s.delay)
		katatest.Unwind(h, shut)
		return
	}
	if !check(second, "Shutdown began", "once it has seen false it never sees true again", false) {
		return
	}
	if svc.Ready() {
		h.Errorf("Shutdown had returned, yet Ready was true: Ready turns false as soon as Shutdown begins")
	}
}

// testPlayReadyAtOnce plays a Shutdown called at the same instant as
// Start: whichever begins first, once Shutdown has begun Ready is false for
// good, so each probe sees false, then maybe true, then maybe false again,
// and Ready is false once both have returned.
func testPlayReadyAtOnce(h *katatest.H, s testReadyRace, svc *Service, starters []*katatest.Call[struct{}],
	shut *katatest.Call[Report], probes []*katatest.Call[[]bool]) {
	if stuck := h.Settle(); stuck != nil {
		return // the older tests say what holds the mutex
	}
	if s.delay > 0 {
		h.Clk.Add(s.delay)
		if stuck := h.Settle(); stuck != nil {
			return
		}
	}
	if !shut.Returned() {
		h.Errorf("Shutdown of an idle Service, called at the same instant as Start, had not returned (pre-drain "+
			"delay %v, passed on the clock): with no job to drain it returns once the workers have returned", s.delay)
		katatest.Unwind(h, shut)
		katatest.Unwind(h, starters...)
		return
	}
	for _, c := range starters {
		if !c.Returned() {
			h.Errorf("Start, called at the same instant as Shutdown, had not returned after Shutdown did: Start " +
				"launches the workers and returns; after Shutdown has begun it does nothing")
			katatest.Unwind(h, starters...)
			return
		}
	}
	if svc.Ready() {
		h.Errorf("Start and Shutdown were called at the same instant and both had returned, yet Ready was true: " +
			"once Shutdown has begun Ready is false for good, whichever of the two came first. Start must not set " +
			"Ready after Shutdown began: change the flags under the Service's mutex, in the critical section that " +
			"checks them (a Ready flag stored after the unlock can land after Shutdown cleared it)")
		return
	}
	for _, c := range probes {
		seen, _ := c.Result()
		if i := slices.Index(seen, true); i >= 0 {
			if j := slices.Index(seen[i:], false); j >= 0 && slices.Contains(seen[i+j:], true) {
				h.Errorf("a probe polling Ready while Start and Shutdown ran at the same instant saw %v: Ready is true "+
					"from Start until Shutdown begins and false from then on, so it goes true at most once and never "+
					"comes back; read and change the flags under the Service's mutex, in one critical section each", seen)
				return
			}
		}
	}
}

func TestB2_ExploreReadyPolledWhileStartAndShutdownRun(t *testing.T) {
	katatest.Explore(t, 6, testDrawReadyRace, testPlayReadyRace)
	// Every run tries Start and Shutdown at the same instant, shaken, each
	// started first.
	for _, shutFirst := range []bool{false, true} {
		atOnce := testReadyRace{workers: 1, starters: 1, probes: 1, polls: 2, atOnce: true, shutFirst: shutFirst}
		katatest.Repeat(t, 20, func(h *katatest.H) { testPlayReadyRace(h, atOnce) })
	}
}

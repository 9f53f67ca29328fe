package shutdown

// Explored late Start (B2): "Calling Start again, or after Shutdown has
// begun, does nothing." A Service that was never started has jobs in its
// queue when Shutdown begins; then Start is called, once or from several
// goroutines at once, at the moments the README allows: during the
// pre-drain delay (Ready is already false, intake still open), while an
// OnShutdown hook runs (every worker has returned), and after Shutdown has
// returned. Each such Start does nothing: no job starts because of it,
// Ready stays false, it returns, and nothing of the Service is left
// running. The queued jobs, never taken by a worker, are listed in
// Report.Dropped (a design whose Shutdown handles them in its drain
// instead is not ruled out here; the delay is not the drain).

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

const (
	testLateInHook  = -1 // Start while the OnShutdown hook runs
	testLateAfter   = -2 // Start after Shutdown returned
	testLateRoundsN = 3
)

type testLateStart struct {
	workers, queue int
	before         int           // jobs queued before Shutdown (before <= queue)
	during         int           // goroutines that submit one job each once Shutdown has begun
	delay          time.Duration // SetPreDrainDelay: a whole number of ticks; 0: none
	grace          time.Duration // Shutdown's deadline on the clock; 0: context.Background()
	hook           bool          // an OnShutdown hook that waits until the test lets it go
	// rounds: at[i] is the moment of round i (ticks into the delay, or
	// testLateInHook, testLateAfter), starters[i] the goroutines that call
	// Start at once then.
	at, starters []int
}

func (s testLateStart) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle); Start is not called", s.workers, s.queue)
	if s.delay > 0 {
		fmt.Fprintf(&b, "; SetPreDrainDelay(%v)", s.delay)
	}
	if s.hook {
		b.WriteString("; OnShutdown(a hook that waits until the test lets it go)")
	}
	if s.before > 0 {
		fmt.Fprintf(&b, "; %s submitted (queued)", testRJobs(uint8(1<<s.before-1)))
	}
	if s.grace > 0 {
		fmt.Fprintf(&b, "\nShutdown(ctx) on a goroutine of its own (a deadline %v later on the clock)", s.grace)
	} else {
		b.WriteString("\nShutdown(context.Background()) on a goroutine of its own")
	}
	if s.during > 0 {
		fmt.Fprintf(&b, "; then %d goroutine(s) submit one job each", s.during)
	}
	for i, at := range s.at {
		switch at {
		case testLateInHook:
			fmt.Fprintf(&b, "\nwhile the hook runs, %d goroutine(s) call Start at once", s.starters[i])
		case testLateAfter:
			fmt.Fprintf(&b, "\nonce Shutdown has returned, %d goroutine(s) call Start at once", s.starters[i])
		default:
			fmt.Fprintf(&b, "\n%v into the pre-drain delay, %d goroutine(s) call Start at once",
				time.Duration(at)*testTick, s.starters[i])
		}
	}
	if s.delay > 0 {
		fmt.Fprintf(&b, "\nthe clock moves %v, one tick at a time", s.delay)
	}
	return b.String()
}

func testDrawLateStart(r *rapid.T) testLateStart {
	var s testLateStart
	s.workers = rapid.IntRange(1, 3).Draw(r, "workers")
	s.queue = rapid.IntRange(0, 3).Draw(r, "queue")
	s.before = rapid.IntRange(0, s.queue).Draw(r, "jobs queued before Shutdown")
	s.during = rapid.IntRange(0, 2).Draw(r, "submitters once Shutdown has begun")
	ticks := rapid.IntRange(0, 3).Draw(r, "pre-drain delay ticks")
	s.delay = time.Duration(ticks) * testTick
	s.grace = time.Duration(rapid.IntRange(0, 4).Draw(r, "grace ticks (0: none)")) * testTick
	s.hook = rapid.Bool().Draw(r, "a held OnShutdown hook")
	moments := []int{testLateAfter}
	if s.hook {
		moments = append(moments, testLateInHook)
	}
	for t := range ticks {
		moments = append(moments, t)
	}
	n := rapid.IntRange(1, testLateRoundsN).Draw(r, "rounds of Start")
	for range n {
		s.at = append(s.at, rapid.SampledFrom(moments).Draw(r, "moment"))
		s.starters = append(s.starters, rapid.IntRange(1, 3).Draw(r, "goroutines calling Start"))
	}
	// Play the rounds in time order: the delay's ticks, the hook, after.
	order := func(at int) int {
		if at < 0 {
			return 100 - at
		}
		return at
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return order(s.at[a]) - order(s.at[b]) })
	at, starters := make([]int, n), make([]int, n)
	for i, j := range idx {
		at[i], starters[i] = s.at[j], s.starters[j]
	}
	s.at, s.starters = at, starters
	return s
}

func testPlayLateStart(h *katatest.H, s testLateStart) {
	ids := testJobs(s.before + s.during)
	var starts, ends katatest.Recorder[string]
	handle := func(ctx context.Context, j Job) error {
		starts.Add(j.ID)
		defer ends.Add(j.ID)
		return nil
	}
	svc := New(h.Clk, s.workers, s.queue, handle)
	if s.delay > 0 {
		svc.SetPreDrainDelay(s.delay)
	}
	hookGate := h.Gate()
	var hookIn katatest.Recorder[bool]
	if s.hook {
		svc.OnShutdown(func(context.Context) error {
			hookIn.Add(true)
			_ = hookGate.Hold(context.Background())
			return nil
		})
	}
	for _, id := range ids[:s.before] {
		if err := svc.Submit(context.Background(), Job{ID: id, Payload: "resize " + id}); err != nil {
			h.Errorf("Submit of %s before Start returned %q, with room in the queue: jobs submitted before Start "+
				"wait in the queue", id, err)
			return
		}
	}
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if s.grace > 0 {
		ctx, cancel = h.Clk.WithTimeout(context.Background(), s.grace)
	}
	defer cancel()
	shut := katatest.Go(h, func() (Report, error) { return svc.Shutdown(ctx) })
	if stuck := h.Settle(); stuck != nil {
		return // the older tests say what holds the mutex
	}
	var subs []*katatest.Call[struct{}]
	for _, id := range ids[s.before:] {
		subs = append(subs, katatest.Start(h, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, svc.Submit(ctx, Job{ID: id, Payload: "resize " + id})
		}))
	}
	var starters []*katatest.Call[struct{}]
	// round plays the Start calls of every round at moment at, and checks
	// that none of them started a job or turned Ready true.
	next := 0
	round := func(at int, when string) bool {
		for ; next < len(s.at) && s.at[next] == at; next++ {
			if stuck := h.Settle(); stuck != nil {
				return false
			}
			before := len(starts.All())
			var calls []*katatest.Call[struct{}]
			for range s.starters[next] {
				calls = append(calls, katatest.Go(h, func() (struct{}, error) {
					svc.Start()
					return struct{}{}, nil
				}))
			}
			starters = append(starters, calls...)
			if stuck := h.Settle(); stuck != nil {
				return false
			}
			for _, c := range calls {
				if !c.Returned() {
					h.Errorf("Start, called %s from %d goroutine(s) at once, had not returned: after Shutdown has "+
						"begun Start does nothing and returns", when, s.starters[next])
					katatest.Unwind(h, starters...)
					katatest.Unwind(h, subs...)
					katatest.Unwind(h, shut)
					return false
				}
			}
			if got := starts.All(); len(got) > before {
				h.Errorf("Start launched workers after Shutdown had begun: called %s from %d goroutine(s) at once, "+
					"on a Service never started, it made handle start %v; calling Start after Shutdown has begun "+
					"does nothing. Check that Shutdown has begun (the flag Shutdown sets first, the one Ready reads), "+
					"not that intake has stopped: during the pre-drain delay intake is still open, yet Shutdown has "+
					"begun", when, s.starters[next], got[before:])
				katatest.Unwind(h, subs...)
				katatest.Unwind(h, shut)
				return false
			}
			if svc.Ready() {
				h.Errorf("Ready was true after Start was called %s: Ready is false from the moment Shutdown begins, "+
					"and Start after that does nothing", when)
				katatest.Unwind(h, subs...)
				katatest.Unwind(h, shut)
				return false
			}
		}
		return true
	}
	// The delay ends early if Shutdown's ctx ends first.
	delayEnd := s.delay
	if s.grace > 0 {
		delayEnd = min(s.delay, s.grace)
	}
	ticks := int(s.delay / testTick)
	for t := range ticks {
		now := time.Duration(t) * testTick
		when := fmt.Sprintf("%v into the pre-drain delay of %v", now, s.delay)
		if now >= delayEnd {
			when = fmt.Sprintf("once Shutdown's ctx had ended, %v into the pre-drain delay of %v", now, s.delay)
		}
		if !round(t, when) {
			return
		}
		if stuck := h.Settle(); stuck != nil {
			return
		}
		if got := starts.All(); len(got) > 0 && now < delayEnd {
			h.Errorf("handle started %v while Shutdown was in its pre-drain delay (%v of %v on the clock), on a "+
				"Service whose workers were never launched before Shutdown began: Start after Shutdown has begun "+
				"does nothing, and intake has not even stopped yet", got, time.Duration(t)*testTick, s.delay)
			katatest.Unwind(h, subs...)
			katatest.Unwind(h, shut)
			return
		}
		h.Clk.Add(testTick)
	}
	if stuck := h.Settle(); stuck != nil {
		return
	}
	if s.hook {
		if len(hookIn.All()) == 0 {
			h.Errorf("Shutdown of a Service never started had not run its OnShutdown hook once its pre-drain delay "+
				"(%v) had passed on the clock: with no worker to wait for, it stops intake and runs the hooks", s.delay)
			katatest.Unwind(h, subs...)
			katatest.Unwind(h, shut)
			return
		}
		if !round(testLateInHook, "while an OnShutdown hook ran") {
			return
		}
		hookGate.Release()
	}
	if !shut.Returns("Shutdown of a Service never started was still waiting once its pre-drain delay (%v) had "+
		"passed on the clock and its hooks had returned, with Start called only after it began: no worker runs, "+
		"so there is nothing to wait for", s.delay) {
		katatest.Unwind(h, subs...)
		return
	}
	handled := starts.All()
	rep, err := shut.Result()
	for i, c := range subs {
		if !c.Returned() {
			h.Errorf("Submit of %s, made during the pre-drain delay, had not returned after Shutdown did: once "+
				"intake stops, a waiting Submit returns ErrShuttingDown at once", ids[s.before+i])
			katatest.Unwind(h, subs...)
			return
		}
	}
	if !round(testLateAfter, "after Shutdown had returned") {
		return
	}
	if stuck := h.Settle(); stuck != nil {
		return
	}
	if !h.NoLeaks("Shutdown, and Start called after it began") {
		return
	}
	if got := starts.All(); len(got) > len(handled) {
		h.Errorf("handle started %v after Shutdown had returned: nothing the Service started runs after Shutdown "+
			"returns, and Start after Shutdown has begun does nothing", got[len(handled):])
		return
	}
	accepted := map[string]bool{}
	for _, id := range ids[:s.before] {
		accepted[id] = true
	}
	for i, c := range subs {
		if _, err := c.Result(); err == nil {
			accepted[ids[s.before+i]] = true
		} else if !errors.Is(err, ErrShuttingDown) {
			h.Errorf("Submit of %s, made once Shutdown had begun, returned %v: it is accepted (nil) during the "+
				"pre-drain delay, or refused with an error matching ErrShuttingDown", ids[s.before+i], err)
			return
		}
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
			h.Errorf("%s was handled %d times, with Start called only after Shutdown had begun: an accepted job is "+
				"handled exactly once, and such a Start does nothing", id, n)
		case !accepted[id] && (n > 0 || listed):
			h.Errorf("%s was refused (its Submit returned an error), yet it was handled or reported: a refused job is "+
				"never handled", id)
		case accepted[id] && n == 0 && !listed:
			h.Errorf("%s was accepted (Submit returned nil) by a Service never started, and Start came only after "+
				"Shutdown had begun, so no worker ever took it; Shutdown neither handled it nor listed it in "+
				"Report.Dropped (%v): an accepted job that never started is listed in Dropped", id, dropped)
		case n > 0 && listed:
			h.Errorf("%s was handled and is also listed in Report.Dropped: Dropped lists only the accepted jobs that "+
				"never started", id)
		default:
			continue
		}
		return
	}
	if len(rep.Abandoned) > 0 {
		h.Errorf("Report.Abandoned listed %v, though no job was running at any time before Shutdown returned: "+
			"Abandoned lists the jobs running at the hard stop whose handle returned an error", testIDs(rep.Abandoned))
		return
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		h.Errorf("Shutdown of a Service never started returned %v: it returns nil, or ctx.Err() "+
			"(context.DeadlineExceeded) once its deadline has passed", err)
	}
}

func TestB2_ExploreStartAfterShutdownBeganDoesNothing(t *testing.T) {
	// Every run tries Start early in the pre-drain delay, with jobs queued,
	// which is where a Start that checks "intake stopped" instead of
	// "Shutdown began" launches its workers.
	katatest.Replay(t, []testLateStart{
		{workers: 2, queue: 2, before: 2, delay: 2 * testTick, at: []int{0}, starters: []int{1}},
		{workers: 1, queue: 1, before: 1, during: 1, delay: testTick, grace: 3 * testTick, hook: true,
			at: []int{0, testLateInHook, testLateAfter}, starters: []int{2, 2, 2}},
	}, testPlayLateStart)
	katatest.Explore(t, 4, testDrawLateStart, testPlayLateStart)
}

package shutdown

// Submits racing Shutdown, checked as one history (katatest.History and
// porcupine): several goroutines submit at once on a queue that fills up,
// some give up (their ctx is cancelled), one or two Shutdown calls come at a
// drawn moment, with or without a deadline, while the jobs start and end.
// Every answer must fit one order of the README's steps, each placed
// between its start and its return.

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testRaceSub struct {
	at     int  // the tick at which Submit is called
	cancel int  // the half tick at which its ctx is cancelled (odd); -1 never
	gone   bool // its ctx is cancelled before it calls Submit (the client has gone)
	dur    int  // ticks handle takes, unless cancelled
	orNil  bool
}

type testRaceScenario struct {
	workers, queue int
	subs           []testRaceSub
	shutAt         int // the tick of Shutdown #1
	grace          int // Shutdown #1's deadline, in ticks plus half a tick after its call; -1 none
	second         int // the tick of Shutdown #2, without a deadline; -1 none
}

func (s testRaceScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "New(clk, %d workers, queue %d, handle); Start(); the clock moves %v a tick", s.workers, s.queue, testTick)
	for i, sub := range s.subs {
		fmt.Fprintf(&b, "\n\tat tick %d a goroutine calls Submit(job-%d); handle(job-%d) takes %d ticks", sub.at, i+1, i+1,
			sub.dur)
		if sub.orNil {
			b.WriteString(" and returns nil if cancelled")
		} else {
			b.WriteString(" and returns ctx.Err() if cancelled")
		}
		if sub.gone {
			b.WriteString("; its Submit's ctx is already cancelled when it calls Submit")
		}
		if sub.cancel >= 0 {
			fmt.Fprintf(&b, "; its Submit's ctx is cancelled at tick %g", float64(sub.cancel)/2)
		}
	}
	if s.grace >= 0 {
		fmt.Fprintf(&b, "\n\tat tick %d Shutdown #1(ctx) with a deadline %g ticks later", s.shutAt, float64(s.grace)+0.5)
	} else {
		fmt.Fprintf(&b, "\n\tat tick %d Shutdown #1(ctx) without a deadline", s.shutAt)
	}
	if s.second >= 0 {
		fmt.Fprintf(&b, "\n\tat tick %d Shutdown #2(ctx) without a deadline", s.second)
	}
	return b.String()
}

func testDrawRace(r *rapid.T) testRaceScenario {
	s := testRaceScenario{second: -1, grace: -1}
	s.workers = rapid.IntRange(1, 3).Draw(r, "workers")
	s.queue = rapid.IntRange(0, 2).Draw(r, "queue")
	n := rapid.IntRange(2, 5).Draw(r, "submitters")
	for i := range n {
		sub := testRaceSub{cancel: -1}
		if rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("job %d later (1 in 3)", i+1)) == 0 {
			sub.at = rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("job %d tick", i+1))
		}
		if rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("job %d cancelled (1 in 3)", i+1)) == 0 {
			sub.cancel = 2*(sub.at+rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("job %d cancel ticks", i+1))) + 1
		}
		if rapid.IntRange(0, 5).Draw(r, fmt.Sprintf("job %d ctx ended before Submit (1 in 6)", i+1)) == 0 {
			sub.gone, sub.cancel = true, -1
		}
		sub.dur = rapid.IntRange(1, 3).Draw(r, fmt.Sprintf("job %d ticks", i+1))
		sub.orNil = rapid.Bool().Draw(r, fmt.Sprintf("job %d returns nil if cancelled", i+1))
		s.subs = append(s.subs, sub)
	}
	s.shutAt = rapid.IntRange(0, 3).Draw(r, "Shutdown tick")
	if rapid.Bool().Draw(r, "deadline") {
		s.grace = rapid.IntRange(0, 4).Draw(r, "grace ticks")
	}
	if rapid.Bool().Draw(r, "second Shutdown") {
		s.second = rapid.IntRange(0, 3).Draw(r, "second Shutdown tick")
	}
	return s
}

// History inputs and outputs.
type (
	testRSubmit   struct{ job int }
	testRStart    struct{ job int }
	testREnd      struct{ job int }
	testRBegin    struct{ call int } // Shutdown #call begins; #1 may have a deadline
	testRGrace    struct{}           // the clock reaches Shutdown #1's deadline
	testRReturned struct{ call int }
	testRSubOut   struct{ kind, text string } // kind: nil, shutting, ctx, other
	testRStartOut struct {
		live bool
		half int // the half tick it happened at
	}
	testREndOut struct {
		cancelled, failed bool
		half              int
	}
	testRShutOut struct{ err, abandoned, dropped string }
)

// testRaceState is the README's Service one step at a time; job i is bit
// i-1 of each set.
type testRaceState struct {
	intake    bool // intake stopped
	first     int  // the Shutdown call that began it
	graceOver bool // the clock reached Shutdown #1's deadline
	hardStop  bool
	queued    uint8 // accepted, not started
	running   uint8
	dropped   uint8 // queued at the hard stop
	abandoned uint8 // running at the hard stop, handle returned an error
	result    string
}

func testRaceModel(s testRaceScenario) porcupine.Model {
	room := s.queue + s.workers
	return porcupine.Model{
		Init: func() any { return testRaceState{} },
		Step: func(state, input, output any) (bool, any) {
			st := state.(testRaceState)
			switch in := input.(type) {
			case testRSubmit:
				switch output.(testRSubOut).kind {
				case "nil": // accepted: intake open, and room for it
					if st.intake || bits.OnesCount8(st.queued|st.running) >= room {
						return false, st
					}
					st.queued |= 1 << (in.job - 1)
					return true, st
				case "shutting":
					return st.intake, st
				case "ctx": // its ctx ended while intake was open: once intake stops, ErrShuttingDown
					return !st.intake && (s.subs[in.job-1].cancel >= 0 || s.subs[in.job-1].gone), st
				}
				return false, st
			case testRStart:
				bit := uint8(1) << (in.job - 1)
				if st.queued&bit == 0 || st.hardStop || !output.(testRStartOut).live {
					return false, st
				}
				st.queued &^= bit
				st.running |= bit
				return true, st
			case testREnd:
				bit := uint8(1) << (in.job - 1)
				out := output.(testREndOut)
				if st.running&bit == 0 || out.cancelled != st.hardStop {
					return false, st
				}
				st.running &^= bit
				if out.failed {
					st.abandoned |= bit
				}
				return true, st
			case testRBegin:
				if !st.intake {
					st.intake, st.first = true, in.call
				}
				return true, st
			case testRGrace:
				st.graceOver = true
				if st.first == 1 && st.queued|st.running != 0 {
					st.hardStop, st.dropped, st.queued = true, st.queued, 0
				}
				return true, st
			case testRReturned:
				out := output.(testRShutOut)
				if in.call == 1 && st.first == 2 && st.graceOver && out == (testRShutOut{err: "deadline"}) {
					return true, st // a later call whose own ctx ended first
				}
				if !st.intake || st.queued|st.running != 0 {
					return false, st
				}
				want := testRShutOut{err: "nil"}
				if st.hardStop {
					want = testRShutOut{"deadline", testRJobs(st.abandoned), testRJobs(st.dropped)}
				}
				if out != want {
					return false, st
				}
				st.result = fmt.Sprint(out)
				return true, st
			}
			return false, st
		},
		DescribeOperation: func(input, output any) string {
			switch in := input.(type) {
			case testRSubmit:
				out := output.(testRSubOut)
				what := map[string]string{"nil": fmt.Sprintf("nil: job-%d accepted", in.job),
					"shutting": "ErrShuttingDown", "ctx": "ctx.Err(): its ctx was cancelled"}[out.kind]
				if what == "" {
					what = fmt.Sprintf("%q", out.text)
				}
				return fmt.Sprintf("Submit(job-%d) returned %s", in.job, what)
			case testRStart:
				if !output.(testRStartOut).live {
					return fmt.Sprintf("handle(job-%d) started, with its ctx already cancelled", in.job)
				}
				return fmt.Sprintf("handle(job-%d) started", in.job)
			case testREnd:
				out := output.(testREndOut)
				how := "its job done"
				if out.cancelled {
					how = "its ctx cancelled"
				}
				ret := "nil"
				if out.failed {
					ret = "an error"
				}
				return fmt.Sprintf("handle(job-%d) returned %s, %s", in.job, ret, how)
			case testRBegin:
				return fmt.Sprintf("Shutdown #%d began (intake stops)", in.call)
			case testRGrace:
				return "the clock reached Shutdown #1's deadline (the grace is over, if #1 began the shutdown)"
			case testRReturned:
				out := output.(testRShutOut)
				return fmt.Sprintf("Shutdown #%d returned %s, Report{Abandoned: [%s], Dropped: [%s]}", in.call, out.err,
					out.abandoned, out.dropped)
			}
			return fmt.Sprint(input)
		},
	}
}

func testRJobs(set uint8) string {
	var ids []string
	for i := range 8 {
		if set&(1<<i) != 0 {
			ids = append(ids, fmt.Sprint("job-", i+1))
		}
	}
	return strings.Join(ids, " ")
}

func testPlayRace(h *katatest.H, s testRaceScenario) { testPlayRaceFor(h, s, false) }

// testPlayRaceR1 plays a scenario for R1 alone: at no moment may more
// accepted jobs be in the service than its workers and queue hold.
func testPlayRaceR1(h *katatest.H, s testRaceScenario) { testPlayRaceFor(h, s, true) }

func testPlayRaceFor(h *katatest.H, s testRaceScenario, r1 bool) {
	hi := &katatest.History{}
	client := len(s.subs) + 2 // the workers, as one client
	handle := func(ctx context.Context, j Job) error {
		var i int
		fmt.Sscanf(j.ID, "job-%d", &i)
		hi.Call(client, testRStart{i})(testRStartOut{ctx.Err() == nil, testRHalf(h)})
		sub := s.subs[i-1]
		t := h.Clk.Timer(time.Duration(sub.dur) * testTick)
		defer t.Stop()
		var out testREndOut
		var err error
		select {
		case <-t.C:
		case <-ctx.Done():
			out.cancelled = true
			if !sub.orNil {
				err = fmt.Errorf("render %s: %w", j.ID, ctx.Err())
			}
		}
		out.failed, out.half = err != nil, testRHalf(h)
		hi.Call(client, testREnd{i})(out)
		return err
	}
	svc := New(h.Clk, s.workers, s.queue, handle)
	svc.Start()

	subs := make([]*katatest.Call[struct{}], len(s.subs))
	type shut struct {
		call  *katatest.Call[Report]
		begun func(any)
		once  sync.Once
	}
	var shuts [3]*shut
	var calls []katatest.Stopper
	startShutdown := func(n int, opts ...katatest.CtxOption) {
		sh := &shut{}
		done := hi.Call(len(s.subs)+n-1, testRBegin{n})
		sh.begun = func(any) { sh.once.Do(func() { done(nil) }) }
		sh.call = katatest.Start(h, func(ctx context.Context) (Report, error) {
			rep, err := svc.Shutdown(ctx)
			sh.begun(nil)
			out := testRShutOut{err: "nil", abandoned: strings.Join(testIDs(rep.Abandoned), " "),
				dropped: strings.Join(testIDs(rep.Dropped), " ")}
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				out.err = "deadline"
			case err != nil:
				out.err = err.Error()
			}
			hi.Call(len(s.subs)+n-1, testRReturned{n})(out)
			return rep, err
		}, opts...)
		shuts[n] = sh
		calls = append(calls, sh.call)
	}
	deadline := -1 // in half ticks
	if s.grace >= 0 {
		deadline = 2*(s.shutAt+s.grace) + 1
	}
	finished := func() bool {
		for _, c := range subs {
			if c == nil || !c.Returned() {
				return false
			}
		}
		for _, sh := range shuts {
			if sh != nil && !sh.call.Returned() {
				return false
			}
		}
		return shuts[1] != nil && (s.second < 0 || shuts[2] != nil)
	}
	for step := 0; ; step++ {
		if step > 80 {
			var waiting []string
			for i, c := range subs {
				if c != nil && !c.Returned() {
					waiting = append(waiting, fmt.Sprintf("Submit(job-%d)", i+1))
				}
			}
			for n, sh := range shuts {
				if sh != nil && !sh.call.Returned() {
					waiting = append(waiting, fmt.Sprintf("Shutdown #%d", n))
				}
			}
			h.Errorf("at tick %d, long after every job could have finished, %s still waited, for ever. Where a Shutdown waits "+
				"on Submits that have returned, look at every way out of Submit, also the early ones (its ctx "+
				"already ended, intake stopped): each must undo what Submit did on the way in", step/2, strings.Join(waiting, " and "))
			katatest.Unwind(h, calls...)
			return
		}
		if step%2 == 0 {
			for i, sub := range s.subs {
				if sub.at == step/2 {
					job := Job{ID: fmt.Sprint("job-", i+1), Payload: fmt.Sprintf("photos/%d.jpg", 1000+i)}
					subs[i] = katatest.Start(h, func(ctx context.Context) (struct{}, error) {
						if sub.gone {
							var cancel context.CancelFunc
							ctx, cancel = context.WithCancel(ctx)
							cancel()
						}
						ret := hi.Call(i, testRSubmit{i + 1})
						err := svc.Submit(ctx, job)
						out := testRSubOut{kind: "other", text: fmt.Sprint(err)}
						switch {
						case err == nil:
							out.kind = "nil"
						case errors.Is(err, ErrShuttingDown):
							out.kind = "shutting"
						case err == ctx.Err():
							out.kind = "ctx"
						}
						ret(out)
						return struct{}{}, err
					})
					calls = append(calls, subs[i])
				}
			}
			if step/2 == s.shutAt {
				if s.grace >= 0 {
					startShutdown(1, katatest.Timeout(time.Duration(s.grace)*testTick+testTick/2))
				} else {
					startShutdown(1)
				}
			}
			if step/2 == s.second {
				startShutdown(2)
			}
		}
		for i, sub := range s.subs {
			if sub.cancel == step {
				subs[i].Cancel()
			}
		}
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s", testMutexHeld(fmt.Sprintf("tick %d", step/2), stuck))
			katatest.Unwind(h, calls...)
			return
		}
		for _, sh := range shuts {
			if sh != nil {
				sh.begun(nil) // Shutdown has settled: intake has stopped
			}
		}
		if finished() {
			break
		}
		grace := func(any) {}
		if step+1 == deadline {
			grace = hi.Call(client+1, testRGrace{})
		}
		h.Clk.Add(testTick / 2)
		if stuck := h.Settle(); stuck != nil {
			h.Errorf("%s", testMutexHeld(fmt.Sprintf("tick %d, half a tick on", step/2), stuck))
			katatest.Unwind(h, calls...)
			return
		}
		grace(nil)
	}
	model := testRaceModel(s)
	ops := hi.Operations()
	if r1 {
		if most, job := testRaceMostInside(ops); most > s.workers+s.queue {
			h.Errorf("%d accepted jobs were in the service at once once the Submit of job-%d returned nil (each "+
				"Submit had returned nil and its handle had not returned), but %d worker(s) and a queue of %d hold only %d: a Submit that "+
				"waited for room took a place that was not there. When one place frees, every Submit waiting on a "+
				"full queue may be woken (a Broadcast, a closed channel, a cancel): each must check for room again "+
				"before it takes one (a for loop around Cond.Wait, not an if). The scenario:\n%s", most, job,
				s.workers, s.queue, s.workers+s.queue, s)
		}
		return
	}
	if porcupine.CheckOperations(model, ops) {
		h.Linearizable(model, hi, "Submit, Shutdown and handle")
		return
	}
	if testRaceOlder(s, ops) {
		return
	}
	lines := make([]string, len(ops))
	for i, op := range ops {
		lines[i] = fmt.Sprintf("%s (started at step %d, returned at step %d)",
			model.DescribeOperation(op.Input, op.Output), op.Call, op.Return)
	}
	h.Errorf("%s.\nSubmit, Shutdown and handle, running at once, gave answers that no order of the README's steps "+
		"explains, each placed between its start and its return; the calls:\n%s",
		testRaceVerdict(model, ops), strings.Join(lines, "\n"))
}

// testRaceMostInside is the largest number of accepted jobs in the service
// at once, in the order the calls returned: a Submit that returned nil
// counts until its handle returns. A worker frees its place before a
// waiting Submit can take it, so a correct service never has more inside
// than its workers and queue hold. Only jobs whose handle started count: a
// job never started (dropped, or lost: other tests' business) would seem
// to hold its place for ever.
func testRaceMostInside(ops []porcupine.Operation) (most, job int) {
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return int(a.Return - b.Return) })
	started := map[int]bool{}
	for _, op := range ops {
		if in, ok := op.Input.(testRStart); ok {
			started[in.job] = true
		}
	}
	inside := 0
	for _, op := range ops {
		switch in := op.Input.(type) {
		case testRSubmit:
			if op.Output.(testRSubOut).kind == "nil" && started[in.job] {
				inside++
				if inside > most {
					most, job = inside, in.job
				}
			}
		case testREnd:
			inside--
		}
	}
	return most, job
}

// testFixedOverfull are scenarios every run of R1 plays besides the
// explored ones: Submits waiting on a full queue (or, with queue 0, for a
// busy worker) when one place frees, or when one of them gives up.
var testFixedOverfull = []testRaceScenario{
	{workers: 1, queue: 1, shutAt: 3, grace: -1, second: -1, subs: []testRaceSub{
		{cancel: -1, dur: 2}, {cancel: -1, dur: 2}, {cancel: -1, dur: 2}, {cancel: -1, dur: 2}}},
	{workers: 1, queue: 0, shutAt: 3, grace: -1, second: -1, subs: []testRaceSub{
		{cancel: -1, dur: 2}, {cancel: -1, dur: 2}, {cancel: -1, dur: 2}}},
	{workers: 1, queue: 1, shutAt: 3, grace: -1, second: -1, subs: []testRaceSub{
		{cancel: -1, dur: 3}, {cancel: -1, dur: 3}, {cancel: 1, dur: 1}, {cancel: -1, dur: 1}}},
}

func TestR1_ExploreSubmitsWaitingOnAFullQueueTakeOnePlaceEach(t *testing.T) {
	for _, s := range testFixedOverfull {
		katatest.Run(t, func(h *katatest.H) { testPlayRaceR1(h, s) })
	}
	katatest.Explore(t, 6, testDrawRace, testPlayRaceR1)
}

// testRHalf is the half tick the mock clock is at.
func testRHalf(h *katatest.H) int { return int(h.Elapsed() / (testTick / 2)) }

// testRaceOlder reports whether the history shows a mistake that an older
// test names in every run, with a message of its own: a Submit error of the
// wrong kind, too many jobs accepted, a Submit accepted after intake
// stopped (R1); a job's ctx cancelled with no hard stop due (R6, R4); a
// hard stop that cancels no job, starts a queued one, or reports the wrong
// jobs (R3); handle still running after Shutdown returned (R5); Shutdown
// calls that disagree (R4).
func testRaceOlder(s testRaceScenario, ops []porcupine.Operation) bool {
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return int(a.Return - b.Return) })
	var begin [3]*porcupine.Operation
	var results []testRShutOut
	for i := range ops {
		if in, ok := ops[i].Input.(testRBegin); ok {
			begin[in.call] = &ops[i]
		}
	}
	deadline := -1
	if s.grace >= 0 {
		deadline = 2*(s.shutAt+s.grace) + 1
	}
	// #1 surely began the shutdown, or surely did not.
	firstSure := begin[2] == nil || begin[1].Return < begin[2].Call
	secondSure := begin[2] != nil && begin[2].Return < begin[1].Call
	stopDue := deadline >= 0 && !secondSure
	var inSystem, room = 0, s.queue + s.workers
	started, ended := map[int]bool{}, map[int]bool{}
	accepted, abandoned := map[int]bool{}, map[int]bool{}
	var lastReturn int64 = -1
	for _, op := range ops {
		switch in := op.Input.(type) {
		case testRSubmit:
			out := op.Output.(testRSubOut)
			if out.kind == "other" {
				return true
			}
			if out.kind == "nil" {
				accepted[in.job] = true
				inSystem++
				for _, b := range begin {
					if b != nil && op.Return > b.Return {
						return true // accepted after intake stopped
					}
				}
			}
			if inSystem > room {
				return true
			}
		case testRStart:
			out := op.Output.(testRStartOut)
			started[in.job] = true
			if !out.live || stopDue && firstSure && out.half > deadline {
				return true
			}
		case testREnd:
			out := op.Output.(testREndOut)
			ended[in.job] = true
			inSystem--
			if out.cancelled && out.failed {
				abandoned[in.job] = true
			}
			if out.cancelled && (!stopDue || out.half < deadline) || !out.cancelled && stopDue && firstSure &&
				out.half > deadline {
				return true
			}
			if lastReturn >= 0 && op.Call > lastReturn {
				return true // handle ran after a Shutdown returned
			}
		case testRReturned:
			out := op.Output.(testRShutOut)
			if in.call == 1 && out == (testRShutOut{err: "deadline"}) && !firstSure {
				continue
			}
			lastReturn = op.Return
			results = append(results, out)
			if out.err == "deadline" {
				var drop, aband []string
				for j := range len(s.subs) {
					if accepted[j+1] && !started[j+1] {
						drop = append(drop, fmt.Sprint("job-", j+1))
					}
					if abandoned[j+1] {
						aband = append(aband, fmt.Sprint("job-", j+1))
					}
				}
				if out.dropped != strings.Join(drop, " ") || out.abandoned != strings.Join(aband, " ") {
					return true
				}
			}
		}
	}
	return len(results) == 2 && results[0] != results[1]
}

// testRaceVerdict names accepted jobs that were lost, else the first call
// the README cannot explain.
func testRaceVerdict(model porcupine.Model, ops []porcupine.Operation) string {
	accepted, kept := map[int]bool{}, map[string]bool{}
	for _, op := range ops {
		switch in := op.Input.(type) {
		case testRSubmit:
			accepted[in.job] = accepted[in.job] || op.Output.(testRSubOut).kind == "nil"
		case testRStart:
			kept[fmt.Sprint("job-", in.job)] = true
		case testRReturned:
			for _, id := range strings.Fields(op.Output.(testRShutOut).dropped) {
				kept[id] = true
			}
		}
	}
	var lost []string
	for j := range 8 {
		if id := fmt.Sprint("job-", j+1); accepted[j+1] && !kept[id] {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		return fmt.Sprintf("accepted jobs lost: Submit returned nil for %s, yet handle never ran for it and no "+
			"Report.Dropped listed it; a Submit that returned nil has handed its job over, and the job is handled "+
			"exactly once (the drain runs every queued job) or, after a hard stop, listed in Dropped, whatever "+
			"became of the ctx of the Submit that brought it", strings.Join(lost, ", "))
	}
	return testRaceFirstUnexplained(model, ops)
}

// testRaceFirstUnexplained replays the calls in the order they started and
// names the first one the README cannot explain there.
func testRaceFirstUnexplained(model porcupine.Model, ops []porcupine.Operation) string {
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return int(a.Call - b.Call) })
	st := model.Init()
	for _, op := range ops {
		ok, next := model.Step(st, op.Input, op.Output)
		if !ok {
			return fmt.Sprintf("taking the calls one at a time in the order they started, the first that the README "+
				"cannot explain is: %s", model.DescribeOperation(op.Input, op.Output))
		}
		st = next
	}
	return "taken one at a time in the order they started, every call is explained; the calls that overlapped " +
		"must still give answers that some order explains"
}

// testFixedRaces are scenarios every run plays besides the explored ones: a
// job queued behind a busy worker, whose submitter then gave up; and a
// Submit whose client had gone before it called, then a Shutdown.
var testFixedRaces = []testRaceScenario{
	{workers: 1, queue: 2, shutAt: 2, grace: -1, second: -1, subs: []testRaceSub{
		{cancel: -1, dur: 3}, {at: 1, cancel: 3, dur: 1}}},
	{workers: 1, queue: 1, shutAt: 1, grace: -1, second: -1, subs: []testRaceSub{
		{cancel: -1, dur: 1}, {gone: true, cancel: -1, dur: 1}}},
}

func TestR2_ExploreSubmitsRacingShutdownMatchOneAtATime(t *testing.T) {
	for _, s := range testFixedRaces {
		katatest.Run(t, func(h *katatest.H) { testPlayRace(h, s) })
	}
	katatest.Explore(t, 8, testDrawRace, testPlayRace)
}

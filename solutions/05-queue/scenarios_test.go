package queue

// Explored requirements: each test draws many scenarios (katatest.Explore)
// and checks what the README says over all of them. A scenario is a Run
// with several producer goroutines putting at once and consume calls that
// the test releases in any order, some failing, with a cancel before,
// between or right after the releases.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testStoreError is a consumer error of a type of its own, as a database
// driver's would be.
type testStoreError struct {
	item, code int
}

func (e *testStoreError) Error() string {
	return fmt.Sprintf("store: order %d: code %d", e.item, e.code)
}

// testFailures are the ways a consume call fails: each makes a fresh error,
// so that "the first consumer error" means that very value.
var testFailures = []struct {
	how  string
	make func(item int) error
}{
	{"a plain error", func(item int) error { return fmt.Errorf("insert order %d: duplicate key", item) }},
	{"a *storeError", func(item int) error { return &testStoreError{item: item, code: 507} }},
	{"an error wrapping io.ErrUnexpectedEOF", func(item int) error {
		return fmt.Errorf("insert order %d: %w", item, io.ErrUnexpectedEOF)
	}},
	{"its own timeout, wrapping context.DeadlineExceeded", func(item int) error {
		return fmt.Errorf("insert order %d: %w", item, context.DeadlineExceeded)
	}},
	{"an error wrapping context.Canceled (its connection was reset)", func(item int) error {
		return fmt.Errorf("insert order %d: %w", item, context.Canceled)
	}},
}

// testProduceErrors are what produce returns after its goroutines are done.
var testProduceErrors = []struct {
	how  string
	make func() error
}{
	{"nil", func() error { return nil }},
	{"a plain error", func() error { return errors.New("read orders: line 7: bad quantity") }},
	{"a *storeError", func() error { return &testStoreError{item: 0, code: 400} }},
	{"an error wrapping io.ErrUnexpectedEOF", func() error { return fmt.Errorf("read orders: %w", io.ErrUnexpectedEOF) }},
	// Context errors of produce's own, not Run's: its own read timeout,
	// its source closed. Nobody cancelled Run: they stop nothing either.
	{"an error wrapping context.DeadlineExceeded (its own read timeout, not a cancel of Run)",
		func() error { return fmt.Errorf("read orders: %w", context.DeadlineExceeded) }},
	{"an error wrapping context.Canceled (its source was closed, not a cancel of Run)",
		func() error { return fmt.Errorf("read orders: source closed: %w", context.Canceled) }},
}

// testRelease lets one held consume call return.
type testRelease struct {
	pick    int  // which of the held calls, by position among them (mod their number)
	fail    int  // -1: it returns nil; else it fails with testFailures[fail]
	cancels bool // the caller cancels ctx just as this call returns (from its goroutine)
}

// testStep is what the test does between two moments when everything
// settled: it releases some consume calls at once, and may cancel Run's
// ctx right before or right after them, with nothing settling in between.
type testStep struct {
	releases []testRelease
	cancel   int // 0: no cancel; 1: cancel, then release; 2: release, then cancel
}

// testFlow is one scenario.
type testFlow struct {
	req        string
	capacity   int
	consumers  int
	producers  []int // items each producer goroutine puts, all at once
	produceErr int   // index into testProduceErrors
	honours    bool  // a held consume call returns as soon as its ctx is done
	source     int   // R3, R4: what produce does once its goroutines are done (testSources)
	steps      []testStep
}

// testSources are what produce does once its goroutines have put their
// items (R3 and R4 draw them): return, or, like a reader of a stream that
// never ends on its own, wait on its ctx for the next record, and then
// return at once or only after a cleanup that the test holds.
var testSources = []string{
	"returns %s",
	"then waits on its ctx for the next record, and returns ctx.Err() once it is done",
	"then waits on its ctx for the next record and, once it is done, cleans up (the test holds the cleanup until the end) and returns ctx.Err()",
}

// Where produce is, for the checks at each step.
const (
	testProducing   = iota // its goroutines put
	testWaitsOnCtx         // it waits for its ctx to be done
	testCleaningUp         // its ctx is done: it cleans up, held by the test
	testProduceDone        // it has returned
)

func (f testFlow) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run(capacity %d, %d consumers); produce starts %d goroutines that put at once (",
		f.capacity, f.consumers, len(f.producers))
	for i, n := range f.producers {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "goroutine %d puts %d items %d…", i+1, n, testItem(i, 1))
	}
	then := testSources[f.source]
	if f.source == 0 {
		then = fmt.Sprintf(then, testProduceErrors[f.produceErr].how)
	}
	fmt.Fprintf(&b, "), waits for them and %s; each consume call waits until the test releases it", then)
	if f.honours {
		b.WriteString(" or its ctx is done")
	} else {
		b.WriteString(" (it ignores its ctx)")
	}
	for i, st := range f.steps {
		fmt.Fprintf(&b, "\n  step %d (after everything settled):", i+1)
		if st.cancel == 1 {
			b.WriteString(" cancel ctx;")
		}
		for _, r := range st.releases {
			fmt.Fprintf(&b, " release held call #%d (oldest is #0)", r.pick)
			if r.fail >= 0 {
				fmt.Fprintf(&b, ", which fails with %s", testFailures[r.fail].how)
			}
			if r.cancels {
				b.WriteString(", and the caller cancels ctx just as that call returns")
			}
			b.WriteString(";")
		}
		if st.cancel == 2 {
			b.WriteString(" cancel ctx;")
		}
	}
	if f.source > 0 {
		b.WriteString("\n  then, if nothing stopped Run yet, cancel ctx (the stream never ends on its own)")
	}
	b.WriteString("\n  then: release every call still held (and the cleanup of produce), until Run returns")
	return b.String()
}

// testItem is the item that producer p puts as its i-th (from 1).
func testItem(p, i int) int { return 100*(p+1) + i }

// testDrawFlow draws a scenario for req: R1 (capacity ≥ 1) and R6
// (capacity 0) and R2 release calls that succeed; R3 cancels once, with
// errors only after the cancel; R4 fails one or more calls, maybe cancels
// after the first failure.
func testDrawFlow(req string) func(*rapid.T) testFlow {
	return func(r *rapid.T) testFlow {
		f := testFlow{req: req}
		switch req {
		case "R6":
			f.capacity = 0
		case "R1":
			f.capacity = rapid.IntRange(1, 4).Draw(r, "capacity")
		default:
			f.capacity = rapid.IntRange(0, 4).Draw(r, "capacity")
		}
		f.consumers = rapid.IntRange(1, 4).Draw(r, "consumers")
		f.producers = rapid.SliceOfN(rapid.IntRange(0, 5), 1, 3).Draw(r, "producers")
		if req == "R2" {
			f.produceErr = rapid.IntRange(0, len(testProduceErrors)-1).Draw(r, "produce error")
		}
		f.honours = rapid.Bool().Draw(r, "consume honours ctx")
		if req == "R3" || req == "R4" {
			f.source = rapid.IntRange(0, len(testSources)-1).Draw(r, "what produce does then")
		}
		nsteps := rapid.IntRange(1, 6).Draw(r, "steps")
		stopAt := -1 // the step of the cancel (R3) or of the first failure (R4)
		if req == "R3" || req == "R4" {
			stopAt = rapid.IntRange(0, nsteps-1).Draw(r, "stop step")
		}
		for i := range nsteps {
			var st testStep
			n := rapid.IntRange(0, 3).Draw(r, "releases")
			if i == stopAt && req == "R4" {
				n = max(n, 1)
			}
			for j := range n {
				rel := testRelease{pick: rapid.IntRange(0, 7).Draw(r, "pick"), fail: -1}
				switch {
				case req == "R4" && i == stopAt && j == 0:
					rel.fail = rapid.IntRange(0, len(testFailures)-1).Draw(r, "failure")
				case (req == "R4" && i >= stopAt) || (req == "R3" && i > stopAt):
					if rapid.IntRange(0, 2).Draw(r, "fails too") == 0 {
						rel.fail = rapid.IntRange(0, len(testFailures)-1).Draw(r, "failure")
					}
				}
				st.releases = append(st.releases, rel)
			}
			switch {
			case req == "R3" && i == stopAt:
				st.cancel = 1
				if len(st.releases) > 0 {
					st.cancel = rapid.IntRange(1, 2).Draw(r, "cancel before or after the releases")
				}
				if st.cancel == 1 { // errors may follow the cancel in the same step
					for j := range st.releases {
						if rapid.IntRange(0, 2).Draw(r, "fails too") == 0 {
							st.releases[j].fail = rapid.IntRange(0, len(testFailures)-1).Draw(r, "failure")
						}
					}
				}
			case req == "R4" && i >= stopAt:
				if rapid.IntRange(0, 3).Draw(r, "cancel after the failure") == 0 {
					st.cancel = 2
				}
			}
			f.steps = append(f.steps, st)
		}
		return f
	}
}

// History inputs and outputs of the calls, for the sequential model.
type (
	testPutIn   struct{ item int }
	testTakeIn  struct{} // a consumer takes an item; output: the item
	testStopIn  struct{ why string }
	testPutOut  struct{ err error }
	testFlowOps struct{}
)

// testQueueModel is the README's queue, one call at a time: items leave in
// FIFO order, and once stopped (cancel or consumer error) nothing is taken
// and a put fails. A take is the moment a consumer got its item: between
// the end of that goroutine's previous consume call (or the start of Run)
// and the start of the call that gets it.
func testQueueModel(fifo bool) porcupine.Model {
	type state struct {
		queue   string // the items queued, "101,102,"
		stopped bool
	}
	return porcupine.Model{
		Init: func() any { return state{} },
		Step: func(s, in, out any) (bool, any) {
			st := s.(state)
			switch in := in.(type) {
			case testPutIn:
				if out.(testPutOut).err != nil {
					return st.stopped, st
				}
				if st.stopped {
					return false, st
				}
				st.queue += fmt.Sprintf("%d,", in.item)
				return true, st
			case testTakeIn:
				item := fmt.Sprintf("%v,", out)
				at := strings.Index(","+st.queue, ","+item)
				if st.stopped || at < 0 || (fifo && at > 0) {
					return false, st
				}
				st.queue = st.queue[:at] + st.queue[at+len(item):]
				return true, st
			case testStopIn:
				st.stopped = true
				return true, st
			}
			return false, st
		},
		DescribeOperation: func(in, out any) string {
			switch in := in.(type) {
			case testPutIn:
				if err := out.(testPutOut).err; err != nil {
					return fmt.Sprintf("put(%d) returned %q", in.item, err)
				}
				return fmt.Sprintf("put(%d) returned nil", in.item)
			case testTakeIn:
				return fmt.Sprintf("a consumer took item %v (its consume call started)", out)
			case testStopIn:
				return in.why
			}
			return fmt.Sprint(in)
		},
	}
}

// testHeld is a consume call the test holds.
type testHeld struct {
	item     int
	step     int // the step in which it started
	released bool
	cancels  bool // the caller cancels ctx just as it returns
	result   chan error
}

// testFlowRun plays a testFlow.
type testFlowRun struct {
	f    testFlow
	h    *katatest.H
	call *katatest.Call[Stats]
	hist katatest.History
	step int // the step being played (-1 before the first), read by consume under mu

	produceErr error          // what produce returns
	cleanup    *katatest.Gate // holds the cleanup of produce (source 2)

	mu           sync.Mutex
	producer     int         // where produce is: testProducing, …
	held         []*testHeld // started and not returned, oldest first
	started      int
	finished     int
	items        []int // handed to consume, in order
	accepted     []int // puts that returned nil
	putErrs      []error
	putting      int               // puts in flight
	cancelAt     int               // the step in which the test cancelled, or -1
	busyAtCancel bool              // a consume call was held (not released) when the test cancelled
	pending      map[int]func(any) // per consumer goroutine: its next take, opened when its call ended
	anon         []func(any)       // takes opened at the start of Run, for goroutines without a call yet
	clients      map[int]int       // goroutine id → client number in the history
	stops        []func(any)       // stop operations, closed when Run has returned
	notCancel    []string          // calls released after the stop whose ctx was not done
	failed       []testFailedCall  // consume calls that returned an error, in order
}

type testFailedCall struct {
	item   int
	step   int
	err    error
	byTest bool // the test released it with this error (not its ctx)
}

func (r *testFlowRun) produce(ctx context.Context, put func(int) error) error {
	var wg sync.WaitGroup
	for p, n := range r.f.producers {
		wg.Go(func() {
			for i := 1; i <= n; i++ {
				v := testItem(p, i)
				r.mu.Lock()
				r.putting++
				r.mu.Unlock()
				ret := r.hist.Call(1+p, testPutIn{v})
				err := put(v)
				ret(testPutOut{err})
				r.mu.Lock()
				r.putting--
				if err == nil {
					r.accepted = append(r.accepted, v)
				} else {
					r.putErrs = append(r.putErrs, err)
				}
				r.mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if r.f.source == 0 {
		r.setProducer(testProduceDone)
		return r.produceErr
	}
	r.setProducer(testWaitsOnCtx)
	<-ctx.Done() // the next record never comes: only a stop ends the stream
	if r.f.source == 2 {
		r.setProducer(testCleaningUp)
		_ = r.cleanup.Hold(context.Background())
	}
	r.setProducer(testProduceDone)
	return ctx.Err()
}

func (r *testFlowRun) setProducer(at int) {
	r.mu.Lock()
	r.producer = at
	r.mu.Unlock()
}

func (r *testFlowRun) consume(ctx context.Context, v int) error {
	gid := katatest.Goroutine()
	r.mu.Lock()
	take, ok := r.pending[gid]
	if ok {
		delete(r.pending, gid)
	} else if len(r.anon) > 0 {
		take, r.anon = r.anon[0], r.anon[1:]
	}
	client, ok := r.clients[gid]
	if !ok {
		client = 10 + len(r.clients)
		r.clients[gid] = client
	}
	hd := &testHeld{item: v, step: r.step, result: make(chan error, 1)}
	r.held = append(r.held, hd)
	r.started++
	r.items = append(r.items, v)
	r.mu.Unlock()
	if take != nil {
		take(v)
	}

	var done <-chan struct{}
	if r.f.honours {
		done = ctx.Done()
	}
	var err error
	byTest := false
	select {
	case err = <-hd.result:
		byTest = true
		if ctx.Err() == nil {
			r.mu.Lock()
			if r.stoppedBefore(hd) {
				r.notCancel = append(r.notCancel, fmt.Sprint(v))
			}
			r.mu.Unlock()
		}
	case <-done:
		if r.f.req == "R4" {
			err = fmt.Errorf("insert order %d: %w", v, ctx.Err())
		}
	}

	r.mu.Lock()
	r.finished++
	r.held = slices.DeleteFunc(r.held, func(x *testHeld) bool { return x == hd })
	if err != nil {
		r.failed = append(r.failed, testFailedCall{v, r.step, err, byTest})
	}
	r.mu.Unlock()
	if err != nil {
		stop := r.hist.Call(client, testStopIn{fmt.Sprintf("consume(%d) returned %q: Run stops", v, err)})
		r.mu.Lock()
		r.stops = append(r.stops, stop)
		r.mu.Unlock()
	}
	next := r.hist.Call(client, testTakeIn{})
	r.mu.Lock()
	r.pending[gid] = next
	r.mu.Unlock()
	if byTest && hd.cancels {
		r.cancel(r.call)
	}
	return err
}

// stoppedBefore reports whether a stop (a cancel or a failed call) settled
// before the step in which hd was released. Call it with mu held.
func (r *testFlowRun) stoppedBefore(hd *testHeld) bool {
	at := r.stopStep()
	return at >= 0 && at < r.step
}

// stopStep is the first step in which Run was stopped, or -1. Call it
// with mu held.
func (r *testFlowRun) stopStep() int {
	at := r.cancelAt
	if len(r.failed) > 0 && (at < 0 || r.failed[0].step < at) {
		at = r.failed[0].step
	}
	return at
}

// play runs the scenario and checks what f.req says about it.
func (f testFlow) play(h *katatest.H) {
	r := &testFlowRun{f: f, h: h, step: -1, cancelAt: -1, pending: map[int]func(any){}, clients: map[int]int{},
		produceErr: testProduceErrors[f.produceErr].make(), cleanup: h.Gate()}
	total := 0
	for _, n := range f.producers {
		total += n
	}
	for range total {
		r.anon = append(r.anon, r.hist.Call(0, testTakeIn{}))
	}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return Run(ctx, f.capacity, f.consumers, r.produce, r.consume)
	})
	r.call = call
	if call.Broken() {
		return
	}
	stopped := false
	for i, st := range f.steps {
		if call.Returned() {
			break
		}
		if !r.settled(call, stopped) {
			r.abandon(call, total)
			return
		}
		r.mu.Lock()
		r.step = i
		r.mu.Unlock()
		if st.cancel == 1 {
			r.cancel(call)
		}
		r.release(st.releases)
		if st.cancel == 2 {
			r.cancel(call)
		}
		synctest.Wait()
		r.mu.Lock()
		stopped = r.stopStep() >= 0
		r.mu.Unlock()
	}
	if !r.settled(call, stopped) {
		r.abandon(call, total)
		return
	}
	r.mu.Lock()
	r.step = len(f.steps)
	stopped = r.stopStep() >= 0
	r.mu.Unlock()
	if f.source > 0 && !stopped && !call.Returned() {
		r.cancel(call) // the stream never ends on its own
		synctest.Wait()
		if !r.settled(call, true) {
			r.abandon(call, total)
			return
		}
	}
	cleaned := false
	for range total + 3 {
		r.mu.Lock()
		held := len(r.held)
		r.mu.Unlock()
		if held == 0 && !cleaned {
			// Every consume call has returned: Run must still wait for
			// produce, which cleans up until the test lets it finish.
			if f.source == 2 && !r.settled(call, stopped) {
				r.abandon(call, total)
				return
			}
			r.cleanup.Release()
			cleaned = true
			synctest.Wait()
			continue
		}
		if call.Returned() && held == 0 {
			break
		}
		r.release(nil)
		synctest.Wait()
	}
	if !call.Returned() {
		if f.req == "R2" {
			h.Errorf("Run was still waiting after every consume call was released and had returned: once produce " +
				"has returned (or Run was stopped) and no consume call runs, Run must return")
		} else {
			r.mu.Lock()
			stopped = r.stopStep() >= 0
			r.mu.Unlock()
			r.settled(call, stopped)
		}
		call.Stop()
		return
	}
	stats, err, ok := call.Finish("Run")
	if !ok {
		return
	}
	for _, stop := range r.stops {
		stop(nil)
	}
	r.check(stats, err)
}

// abandon ends the scenario once a failure was reported: it cancels Run's
// ctx and lets every held consume call go until Run returns, so that the
// report is the failure and not a hang it left behind.
func (r *testFlowRun) abandon(call *katatest.Call[Stats], total int) {
	call.Cancel()
	for range total + 2 {
		if call.Returned() {
			break
		}
		r.release(nil)
		synctest.Wait()
	}
	call.Stop()
}

// cancel cancels Run's ctx, as a stop in the history.
func (r *testFlowRun) cancel(call *katatest.Call[Stats]) {
	stop := r.hist.Call(0, testStopIn{"the caller cancelled ctx: Run stops"})
	call.Cancel()
	r.mu.Lock()
	if r.cancelAt < 0 {
		r.cancelAt = r.step
		for _, hd := range r.held {
			r.busyAtCancel = r.busyAtCancel || !hd.released
		}
	}
	r.stops = append(r.stops, stop)
	r.mu.Unlock()
}

// release lets the held calls go, by position (all of them for nil), each
// with its result.
func (r *testFlowRun) release(rels []testRelease) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var free []*testHeld
	for _, hd := range r.held {
		if !hd.released {
			free = append(free, hd)
		}
	}
	if rels == nil { // newest first: not the order they came in
		for i := len(free) - 1; i >= 0; i-- {
			free[i].released = true
			free[i].result <- nil
		}
		return
	}
	for _, rel := range rels {
		if len(free) == 0 {
			return
		}
		k := rel.pick % len(free)
		hd := free[k]
		free = slices.Delete(free, k, k+1)
		hd.released, hd.cancels = true, rel.cancels
		var err error
		if rel.fail >= 0 {
			err = testFailures[rel.fail].make(hd.item)
		}
		hd.result <- err
	}
}

// settled checks, once everything settled, what must hold at that moment;
// false if the scenario cannot go on.
func (r *testFlowRun) settled(call *katatest.Call[Stats], stopped bool) bool {
	h, f := r.h, r.f
	h.Helper()
	r.mu.Lock()
	accepted, started, finished, putting := len(r.accepted), r.started, r.finished, r.putting
	deaf, producer := len(r.held), r.producer
	r.mu.Unlock()
	busy, queued := started-finished, accepted-started
	stop := (f.req == "R3" || f.req == "R4") && stopped
	switch {
	case (f.req == "R1" || f.req == "R6") && !stopped && putting > 0 && (queued != f.capacity || busy != f.consumers):
		what := fmt.Sprintf("with capacity %d and %d consumers, a put was blocked while %d consume call(s) ran "+
			"and %d item(s) were queued (%d puts had returned, %d consume calls had started)",
			f.capacity, f.consumers, busy, queued, accepted, started)
		switch {
		case f.capacity == 0:
			h.Errorf("capacity 0 is an unbuffered hand-off: a put returns only once a consumer has taken its item, "+
				"so a put may block only while every consumer is busy and nothing is queued; %s", what)
		case busy < f.consumers:
			h.Errorf("backpressure: a put may block only while every consumer is busy and the queue holds capacity "+
				"items; %s: an idle consumer must take the next item (with several producers putting at once too)", what)
		default:
			h.Errorf("backpressure: with every consumer busy, exactly capacity + consumers = %d puts return and the "+
				"next one blocks; %s", f.capacity+f.consumers, what)
		}
		return false
	case stop && call.Returned() && producer != testProduceDone:
		h.Errorf("Run returned while produce was still running (after the stop (%s) it was still cleaning up): "+
			"Run must return only after produce has returned, on a stop too: call produce on Run's own goroutine, "+
			"or wait for the goroutine that runs it, so that nothing Run started outlives it", r.why())
		return false
	case stop && deaf == 0 && !call.Returned() && producer == testWaitsOnCtx:
		h.Errorf("after the stop (%s) every consume call had returned, yet Run was still waiting for produce, which "+
			"waited on its ctx for the next record: that ctx was never cancelled. A stop must cancel the context "+
			"produce got: call produce with the context Run cancels on a cancel and on the first consumer error, "+
			"not with the caller's ctx", r.why())
		return false
	case stop && deaf == 0 && !call.Returned() && producer != testCleaningUp:
		h.Errorf("after the stop (%s) every consume call had returned, yet Run was still waiting: a stop "+
			"ends everything at once: the blocked put returns ctx.Err(), no new consume starts, and Run returns "+
			"once produce and the consumers have returned", r.why())
		return false
	case stop && putting > 0:
		h.Errorf("after the stop (%s), a put was still blocked: a stop makes the blocked put return ctx.Err() "+
			"at once (select on ctx.Done() with the send)", r.why())
		return false
	case f.req == "R2" && call.Returned() && (finished < started || started < accepted):
		h.Errorf("Run returned while %d consume call(s) still ran and %d accepted item(s) were not yet handed to "+
			"consume: when produce returns, the consumers drain the queue and Run returns after the last consume "+
			"returned%s", started-finished, accepted-started, testOwnCtxError(r.produceErr))
		return false
	}
	return true
}

// why names the stop of the scenario.
func (r *testFlowRun) why() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f.req == "R4" && len(r.failed) > 0 {
		return fmt.Sprintf("consume(%d) failed with %q", r.failed[0].item, r.failed[0].err)
	}
	return "the caller cancelled ctx"
}

// check checks Run's outcome against the README.
func (r *testFlowRun) check(stats Stats, err error) {
	h, f := r.h, r.f
	h.Helper()
	r.mu.Lock()
	accepted, items, putErrs, failed := slices.Clone(r.accepted), slices.Clone(r.items), r.putErrs, r.failed
	notCancel := r.notCancel
	r.mu.Unlock()
	model := testQueueModel(f.req == "R2")
	switch f.req {
	case "R2":
		want := r.produceErr
		switch {
		case len(putErrs) > 0:
			h.Errorf("a put failed with %q although nothing was cancelled and no consumer failed: put only waits", putErrs[0])
		case want == nil && err != nil:
			h.Errorf("produce returned nil and every item was consumed, yet Run returned %s", testDescribe(err))
		case want != nil && !errors.Is(err, want):
			h.Errorf("produce returned %s and nothing stopped Run: after the drain Run must return that error; it "+
				"returned %s", testDescribe(want), testDescribe(err))
		case !slices.Equal(testSorted(accepted), testSorted(items)):
			h.Errorf("when produce returns, every accepted item is consumed exactly once; the puts that returned nil "+
				"were %v, consume got %v%s", testSorted(accepted), testSorted(items), testOwnCtxError(want))
		case stats != Stats{Produced: len(accepted), Consumed: len(items)}:
			h.Errorf("a complete drain of %d accepted items: Stats must be %+v; Run returned %+v",
				len(accepted), Stats{Produced: len(accepted), Consumed: len(items)}, stats)
		default:
			h.Linearizable(model, &r.hist, "Items leave the queue in FIFO order: put and the consumers' takes")
		}
	case "R3", "R4":
		first := r.firstStop()
		if first.what == "" {
			return // Run returned before the stop: nothing was stopped
		}
		switch {
		case !first.match(err):
			h.Errorf("%s came first, so Run must return %s; it returned %s", first.what, first.want, testDescribe(err))
		case !first.canceled && errors.Is(err, context.Canceled):
			h.Errorf("%s came first and nobody cancelled, yet Run's error also matches context.Canceled: %s. The "+
				"consume calls that Run's own stop cut short return the cancel it caused, which is no error of "+
				"theirs: return the first consumer error alone, not joined with the errors that came after it, or "+
				"a caller that checks errors.Is(err, context.Canceled) takes the failure for a client that went "+
				"away", first.what, testDescribe(err))
		case len(notCancel) > 0:
			h.Errorf("after the stop (%s), the consume calls still running must see their ctx cancelled; "+
				"the calls for item(s) %s ended with ctx.Err() == nil: cancel the ctx they got", first.what,
				strings.Join(notCancel, ", "))
		case slices.ContainsFunc(putErrs, func(e error) bool { return !errors.Is(e, context.Canceled) }):
			h.Errorf("after the stop (%s), a put returned %s: it must return ctx.Err() of the context produce got, "+
				"context.Canceled", first.what, testDescribe(putErrs[slices.IndexFunc(putErrs,
				func(e error) bool { return !errors.Is(e, context.Canceled) })]))
		case (f.req == "R4" || len(failed) == 0) && stats.Produced == len(accepted) && stats.Consumed == len(items) &&
			stats.Dropped < len(accepted)-len(items):
			h.Errorf("Stats lost %d accepted item(s), counted neither as Consumed nor as Dropped: stopped (%s) after %d "+
				"puts returned nil and %d items were handed to consume, Run returned %+v; an item a consumer took from "+
				"the queue and then dropped because Run had stopped (its select picked the item, not ctx.Done()) is "+
				"dropped too: count it, or count Dropped as Produced - Consumed, not as what is left in the queue",
				len(accepted)-len(items)-stats.Dropped, first.what, len(accepted), len(items), stats)
		case (f.req == "R4" || len(failed) == 0) && stats != Stats{Produced: len(accepted), Consumed: len(items), Dropped: len(accepted) - len(items)}:
			h.Errorf("stopped (%s) after %d puts returned nil and %d items were handed to consume: Produced counts "+
				"the puts that returned nil, Consumed every item handed to consume (failed calls included), Dropped "+
				"the rest; Run returned %+v", first.what, len(accepted), len(items), stats)
		default:
			h.Linearizable(model, &r.hist, "After a stop no consumer starts a new consume: put, the stop and "+
				"the consumers' takes")
		}
	}
}

// testFirst is which stop came first, and the errors Run may return for it.
type testFirst struct {
	what, want string
	match      func(error) bool
	// canceled: Run's error may match context.Canceled (a cancel may
	// count as first, or a first consumer error matches it).
	canceled bool
}

// firstStop is what came first: the first failed call, or the cancel.
// Releases and a cancel in one step, with nothing settling in between,
// race: then either may count as first.
func (r *testFlowRun) firstStop() testFirst {
	r.mu.Lock()
	defer r.mu.Unlock()
	cancelAt := r.cancelAt
	var byTest []testFailedCall
	for _, c := range r.failed {
		if c.byTest {
			byTest = append(byTest, c)
		}
	}
	var errs []error // the failures that may count as the first one
	var items []string
	for _, c := range byTest {
		if c.step != byTest[0].step || (cancelAt >= 0 && c.step > cancelAt) {
			break
		}
		if r.f.req == "R3" && c.step == cancelAt && r.f.steps[cancelAt].cancel == 1 {
			break // released after the cancel
		}
		errs = append(errs, c.err)
		items = append(items, fmt.Sprint(c.item))
	}
	canceled := cancelAt >= 0 && (len(errs) == 0 || byTest[0].step == cancelAt)
	first := testFirst{match: func(err error) bool {
		if canceled && errors.Is(err, context.Canceled) {
			return true
		}
		return slices.ContainsFunc(errs, func(e error) bool { return errors.Is(err, e) })
	}, canceled: canceled || slices.ContainsFunc(errs, func(e error) bool { return errors.Is(e, context.Canceled) })}
	switch {
	case len(errs) > 0 && canceled:
		first.what = fmt.Sprintf("the consumer error of item(s) %s and the cancel, at the same moment,", strings.Join(items, ", "))
		first.want = "one of them (ctx.Err() or that very consumer error)"
	case len(errs) > 0:
		first.what = fmt.Sprintf("the consumer error of item %s (%s)", items[0], testDescribe(errs[0]))
		first.want = "that error (the first consumer error, not a later one, and not ctx.Err() of the cancel it caused)"
		if len(errs) > 1 {
			first.what = fmt.Sprintf("the consumer errors of items %s, at the same moment,", strings.Join(items, ", "))
			first.want = "one of them"
		}
	case canceled && !r.busyAtCancel:
		// Every consume call had been released: Run may have finished its
		// work before the cancel, and then returns what it would have.
		first.what = "the cancel, racing with the end of the last consume call,"
		first.want = "ctx.Err() or what Run returns without a cancel"
		perr := r.produceErr
		match := first.match
		first.match = func(err error) bool { return match(err) || err == perr || errors.Is(err, perr) }
	case canceled:
		first.what = "the cancel"
		first.want = "ctx.Err(), context.Canceled (a consumer error that came after the cancel does not count)"
	}
	return first
}

// testOwnCtxError explains a drain cut short after produce returned an
// error of its own that matches a context error: that is no cancel.
func testOwnCtxError(perr error) string {
	if !errors.Is(perr, context.Canceled) && !errors.Is(perr, context.DeadlineExceeded) {
		return ""
	}
	return fmt.Sprintf(". produce returned %q, an error of its own that matches a context error; Run's ctx was "+
		"not cancelled and no consumer failed, so it stops nothing: look at ctx.Err(), not at produce's error, "+
		"to tell a cancel", perr)
}

// testDescribe names an error for a message: its text, type and chain.
func testDescribe(err error) string {
	if err == nil {
		return "nil"
	}
	return katatest.Chain(err)
}

// testExplore checks req over drawn scenarios, then over the fixed ones
// that every run must try (a way to fail that a draw could miss).
func testExplore(t *testing.T, req string, checks int, fixed ...testFlow) {
	t.Helper()
	katatest.Explore(t, checks, testDrawFlow(req), func(h *katatest.H, f testFlow) { f.play(h) })
	for _, f := range fixed {
		if t.Failed() {
			return
		}
		f.req = req
		katatest.Run(t, func(h *katatest.H) {
			f.play(h)
			if h.Failed() {
				h.Logf("the scenario: %s", f)
			}
		})
	}
}

func TestR1_ExploreBackpressureWithProducersPuttingAtOnce(t *testing.T) {
	testExplore(t, "R1", 15)
}

func TestR2_ExploreDrainDeliversEveryItemInFIFOOrder(t *testing.T) {
	// Three items wait in the queue while the one consumer is busy: the
	// oldest must leave first.
	testExplore(t, "R2", 15, testFlow{capacity: 3, consumers: 1, producers: []int{4, 3},
		steps: []testStep{{releases: []testRelease{{pick: 0, fail: -1}}}, {releases: []testRelease{{pick: 0, fail: -1}}}}})
}

func TestR3_ExploreCancelAmongReleasesAndLateErrors(t *testing.T) {
	// The one consumer is busy when the caller cancels, and its consume
	// then fails: the cancel came first, so Run returns ctx.Err().
	// Then a producer that streams until the cancel and cleans up after it:
	// Run returns only once produce has returned.
	testExplore(t, "R3", 15, testFlow{capacity: 0, consumers: 1, producers: []int{1},
		steps: []testStep{{cancel: 1, releases: []testRelease{{pick: 0, fail: 0}}}}},
		testFlow{capacity: 1, consumers: 2, producers: []int{2, 1}, source: 2, honours: true,
			steps: []testStep{{releases: []testRelease{{pick: 1, fail: -1}}}, {cancel: 2}}})
}

func TestR4_ExploreFirstConsumerErrorStopsEverything(t *testing.T) {
	// Every kind of consumer error, each the first: one consumer fails, the
	// caller cancels afterwards, and only then does the other, which
	// ignores its ctx, return.
	// And a producer that waits on its ctx for the next record when the
	// consumer fails: the failure must wake it (then it returns at once, or
	// after a cleanup Run must wait for).
	var fixed []testFlow
	for source := 1; source < len(testSources); source++ {
		fixed = append(fixed, testFlow{capacity: 1, consumers: 2, producers: []int{2}, source: source,
			steps: []testStep{{releases: []testRelease{{pick: 1, fail: 2}}}}})
	}
	for k := range testFailures {
		fixed = append(fixed, testFlow{capacity: 1, consumers: 2, producers: []int{3, 2}, steps: []testStep{
			{releases: []testRelease{{pick: 0, fail: k}}}, {cancel: 2}, {releases: []testRelease{{pick: 0, fail: -1}}}}})
	}
	testExplore(t, "R4", 15, fixed...)
}

// testDrawTakenAtStop draws a full queue with every consumer busy; the
// test releases several busy consume calls at once, and the caller cancels
// just as one of them returns, so another consumer may take one more item
// from the queue just as Run stops.
func testDrawTakenAtStop(r *rapid.T) testFlow {
	f := testFlow{req: "R3"}
	f.capacity = rapid.IntRange(0, 2).Draw(r, "capacity")
	f.consumers = rapid.IntRange(2, 4).Draw(r, "consumers")
	total := f.capacity + f.consumers + rapid.IntRange(1, 2).Draw(r, "items beyond the queue")
	f.producers = []int{total}
	if rapid.Bool().Draw(r, "two producers") {
		a := rapid.IntRange(1, total-1).Draw(r, "items of the first producer")
		f.producers = []int{a, total - a}
	}
	f.honours = rapid.Bool().Draw(r, "consume honours ctx")
	var st testStep
	for range rapid.IntRange(2, f.consumers).Draw(r, "calls released at once") {
		st.releases = append(st.releases, testRelease{pick: rapid.IntRange(0, 3).Draw(r, "pick"), fail: -1})
	}
	st.releases[rapid.IntRange(0, len(st.releases)-1).Draw(r, "the call that returns as the caller cancels")].cancels = true
	f.steps = []testStep{st}
	return f
}

func TestR3_ExploreItemsTakenAsRunStopsAreCounted(t *testing.T) {
	katatest.Explore(t, 10, testDrawTakenAtStop, func(h *katatest.H, f testFlow) { f.play(h) })
}

func TestR6_ExploreHandOffWithProducersPuttingAtOnce(t *testing.T) {
	testExplore(t, "R6", 8)
}

func TestR4_BusyConsumersSeeTheStopAsOneFails(t *testing.T) {
	// Four consumers are busy, each with an item, and honour their ctx: one
	// fails, which stops Run, and the three others return at once with the
	// cancel that failure caused. Their errors come after it: Run returns
	// the consumer's error, however the four race to report.
	f := testFlow{req: "R4", capacity: 0, consumers: 4, producers: []int{4}, honours: true,
		steps: []testStep{{releases: []testRelease{{pick: 0, fail: 1}}}}}
	katatest.Repeat(t, 12, func(h *katatest.H) {
		f.play(h)
		if h.Failed() {
			h.Logf("the scenario: %s", f)
		}
	})
}

// testBadArgs is a call with a negative capacity or fewer than one
// consumer, of Run or of a bonus variant.
type testBadArgs struct {
	variant             string // "Run", "RunBatches" or "RunDrainTimeout"
	capacity, consumers int
}

func (a testBadArgs) String() string {
	return fmt.Sprintf("%s(capacity %d, %d consumers), produce puts up to 10 items", a.variant, a.capacity, a.consumers)
}

// testDrawBadArgs draws bad arguments for variant: a capacity below 0 or
// fewer than one consumer, each from -1 down to math.MinInt, the other
// good or bad too.
func testDrawBadArgs(variant string) func(*rapid.T) testBadArgs {
	bad := func(r *rapid.T, label string, top int) int {
		return rapid.OneOf(rapid.SampledFrom([]int{top, top - 1, math.MinInt}), rapid.IntRange(math.MinInt, top)).Draw(r, label)
	}
	return func(r *rapid.T) testBadArgs {
		a := testBadArgs{variant: variant}
		switch rapid.IntRange(0, 2).Draw(r, "which is bad") {
		case 0:
			a.capacity, a.consumers = bad(r, "capacity", -1), rapid.IntRange(1, 3).Draw(r, "consumers")
		case 1:
			a.capacity, a.consumers = rapid.IntRange(0, 3).Draw(r, "capacity"), bad(r, "consumers", 0)
		default:
			a.capacity, a.consumers = bad(r, "capacity", -1), bad(r, "consumers", 0)
		}
		return a
	}
}

// play calls the variant with bad arguments: it must return an error at
// once, without calling produce.
func (a testBadArgs) play(h *katatest.H) {
	p := &testProducer{limit: 10}
	var called atomic.Bool
	produce := func(ctx context.Context, put func(int) error) error {
		called.Store(true)
		return p.produce(ctx, put)
	}
	c := &testConsumer{}
	consumeBatch := func(ctx context.Context, vs []int) error {
		for _, v := range vs {
			c.got.Add(v)
		}
		return nil
	}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		switch a.variant {
		case "RunBatches":
			return RunBatches(ctx, h.Clk, a.capacity, a.consumers, Batch{Size: 2}, produce, consumeBatch)
		case "RunDrainTimeout":
			return RunDrainTimeout(ctx, h.Clk, time.Second, a.capacity, a.consumers, produce, c.consume)
		}
		return Run(ctx, a.capacity, a.consumers, produce, c.consume)
	})
	if call.Broken() {
		return
	}
	what := fmt.Sprintf("%s with capacity %d and %d consumers", a.variant, a.capacity, a.consumers)
	accepted, _, _ := p.state()
	if !call.Returns("%s was still waiting (produce called: %v, puts that returned: %d): a negative capacity or "+
		"fewer than one consumer, negative counts included, is an error returned at once; check consumers < 1, "+
		"not consumers == 0 (`for range consumers` starts no goroutine for a negative count, and then nobody "+
		"ever takes an item)", what, called.Load(), accepted) {
		return
	}
	_, err, ok := call.Finish(a.variant)
	if !ok {
		return
	}
	accepted, _, _ = p.state()
	switch {
	case err == nil:
		h.Errorf("%s returned nil (produce called: %v, puts that returned: %d): a negative capacity or fewer than "+
			"one consumer, negative counts included, is an error; check capacity < 0 and consumers < 1",
			what, called.Load(), accepted)
	case called.Load():
		h.Errorf("%s returned %q but called produce first (%d puts returned): check the arguments before "+
			"anything else, and return the error without calling produce", what, err, accepted)
	}
}

// testExploreBadArgs plays, for variant, a negative consumer count with
// capacity 0 and with room, then drawn bad arguments.
func testExploreBadArgs(t *testing.T, variant string, checks int) {
	for _, a := range []testBadArgs{{variant, 0, -1}, {variant, 3, math.MinInt}} {
		katatest.Run(t, func(h *katatest.H) {
			a.play(h)
			if h.Failed() {
				h.Logf("the scenario: %s", a)
			}
		})
		if t.Failed() {
			return
		}
	}
	katatest.Explore(t, checks, testDrawBadArgs(variant), func(h *katatest.H, a testBadArgs) { a.play(h) })
}

func TestR6_ExploreBadArgumentsOfAnySignAreAnError(t *testing.T) {
	testExploreBadArgs(t, "Run", 10)
}

func TestB1_ExploreBadArgumentsOfAnySignAreAnError(t *testing.T) {
	testExploreBadArgs(t, "RunBatches", 4)
}

func TestB2_ExploreBadArgumentsOfAnySignAreAnError(t *testing.T) {
	testExploreBadArgs(t, "RunDrainTimeout", 4)
}

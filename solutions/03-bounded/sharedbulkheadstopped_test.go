package bounded

// Bonus B2, over many scenarios: a request is stopped (its caller cancels,
// its deadline passes, one of its calls fails, or it sheds an item) while
// some of its calls ignore their ctx and run on. "A call holds its slot
// until it returns": a cancelled call that still runs still holds its slot
// of the Bulkhead, so a second request made then finds only the other
// slots free, and the Bulkhead never has more than its limit of calls in
// flight. A slot given back when the call's ctx ends (context.AfterFunc)
// instead of when fn returns lets the second request run beside calls that
// are still at work on the dependency.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How request A is stopped.
const (
	testHeldCancel   = iota // its caller cancels ctx
	testHeldCause           // its caller cancels ctx with a cause (context.WithCancelCause)
	testHeldDeadline        // its ctx's deadline passes
	testHeldFail            // one of its calls, which honours its ctx, fails
	testHeldShed            // its last item finds every slot busy: shed
)

var testHeldHow = [...]string{"its caller cancels ctx", "its caller cancels ctx with a cause",
	"its ctx's deadline passes", "item %d fails", "its item %d finds every slot busy and is shed"}

// testHeldDeadlineAfter is when request A's deadline passes, in the
// scenarios where it does.
const testHeldDeadlineAfter = time.Second

var testHeldErr = errors.New("thumbnail: 403 access denied")

type testHeldScenario struct {
	limit   int    // the Bulkhead's slots
	deaf    []bool // per call of request A that starts: it ignores its ctx
	stop    int    // testHeld…
	failing int    // testHeldFail: the item of A that fails (it honours its ctx)
	b       int    // request B's items
}

// items is request A's length: one more than its calls for a shed.
func (s testHeldScenario) items() int {
	if s.stop == testHeldShed {
		return len(s.deaf) + 1
	}
	return len(s.deaf)
}

// held is how many of A's calls still run once A was stopped.
func (s testHeldScenario) held() int {
	n := 0
	for _, d := range s.deaf {
		if d {
			n++
		}
	}
	return n
}

func (s testHeldScenario) how() string {
	switch s.stop {
	case testHeldFail:
		return fmt.Sprintf(testHeldHow[s.stop], s.failing)
	case testHeldShed:
		return fmt.Sprintf(testHeldHow[s.stop], len(s.deaf))
	}
	return testHeldHow[s.stop]
}

func (s testHeldScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "a Bulkhead of %d slots; request A (TryForEach over %d items) starts %d call(s)", s.limit,
		s.items(), len(s.deaf))
	var deaf, honour []int
	for i, d := range s.deaf {
		if d {
			deaf = append(deaf, i)
		} else {
			honour = append(honour, i)
		}
	}
	fmt.Fprintf(&b, "; items %v ignore their ctx and run until the test releases them", deaf)
	if len(honour) > 0 {
		fmt.Fprintf(&b, ", items %v return when their ctx ends", honour)
	}
	fmt.Fprintf(&b, "; A is stopped: %s; then, while A's calls %v still run, request B asks for %d item(s) on the "+
		"same Bulkhead (it may start %d); then every call is released, and a request C asks for all %d slots",
		s.how(), deaf, s.b, s.limit-s.held(), s.limit)
	return b.String()
}

func testDrawHeld(r *rapid.T) testHeldScenario {
	s := testHeldScenario{limit: rapid.IntRange(1, 4).Draw(r, "limit")}
	s.stop = rapid.IntRange(0, len(testHeldHow)-1).Draw(r, "stop")
	if s.stop == testHeldFail && s.limit < 2 {
		s.stop = testHeldCancel // a failing call and a call that runs on need two slots
	}
	run := s.limit
	switch s.stop {
	case testHeldShed: // every slot taken, then the shed
	case testHeldFail:
		run = rapid.IntRange(2, s.limit).Draw(r, "calls")
	default:
		run = rapid.IntRange(1, s.limit).Draw(r, "calls")
	}
	s.deaf = rapid.SliceOfN(rapid.Bool(), run, run).Draw(r, "deaf")
	if s.stop == testHeldFail {
		s.failing = rapid.IntRange(0, run-1).Draw(r, "failing")
		s.deaf[s.failing] = false
	}
	if s.held() == 0 { // at least one call runs on
		i := rapid.IntRange(0, run-1).Draw(r, "runs on")
		if s.stop == testHeldFail && i == s.failing {
			i = (i + 1) % run
		}
		s.deaf[i] = true
	}
	s.b = rapid.IntRange(1, s.limit+1).Draw(r, "B's items")
	return s
}

func (s testHeldScenario) play(h *katatest.H) {
	b, err := NewBulkhead(s.limit)
	if err != nil {
		h.Errorf("NewBulkhead(%d) returned %v", s.limit, err)
		return
	}
	var peak katatest.Peak // calls of fn at once, over every request
	shared := func(w *testWork) func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			leave := peak.Enter()
			defer leave()
			return w.call(ctx, i)
		}
	}
	wA := testNewWork(s.items())
	for i, d := range s.deaf {
		wA.deaf[i] = d
	}
	if s.stop == testHeldFail {
		wA.errs[s.failing] = testHeldErr
	}
	causes := make(chan context.CancelCauseFunc, 1)
	var opts []katatest.CtxOption
	if s.stop == testHeldDeadline {
		opts = append(opts, katatest.Timeout(testHeldDeadlineAfter))
	}
	a := katatest.StartErr(h, func(ctx context.Context) error {
		if s.stop == testHeldCause {
			cctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			causes <- cancel
			ctx = cctx
		}
		return TryForEach(ctx, b, testItems(s.items()), shared(wA))
	}, opts...)
	if a.Broken() {
		return
	}
	synctest.Wait()
	if s.stop != testHeldShed && len(wA.running()) != len(s.deaf) {
		h.Errorf("precondition failed: request A of %d items on a free Bulkhead of %d slots had %d call(s) "+
			"running, want %d (items %v)", s.items(), s.limit, len(wA.running()), len(s.deaf), wA.running())
		wA.openAll()
		katatest.Unwind(h, a)
		return
	}
	switch s.stop {
	case testHeldCancel:
		a.Cancel()
	case testHeldCause:
		(<-causes)(errors.New("the operator stopped the job"))
	case testHeldDeadline:
		h.Advance(testHeldDeadlineAfter)
	case testHeldFail:
		wA.open(s.failing)
	}
	synctest.Wait()
	if a.Returned() {
		if !a.Panicked() {
			h.Errorf("B2: request A was stopped (%s) while %d of its calls, which ignore their ctx, still ran, "+
				"and TryForEach returned at once (%v): it must wait for every call it started", s.how(), s.held(),
				a.Err())
		}
		wA.openAll()
		return
	}
	free := s.limit - s.held()
	wB := testNewWork(s.b)
	bc := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(s.b), shared(wB)) })
	if bc.Broken() {
		wA.openAll()
		katatest.Unwind(h, a)
		return
	}
	synctest.Wait()
	if got := wB.started(); got > free || peak.Max() > s.limit {
		h.Errorf("B2: a cancelled call gave its slot back before it returned: request A was stopped (%s) while "+
			"%d of its calls, which ignore their ctx, still ran, and request B then started %d call(s) beside "+
			"them on the same Bulkhead of %d slots (%d calls of fn at once): a call holds its slot until fn "+
			"returns, even after its ctx is cancelled, so that the requests together never have more than the "+
			"limit of calls in flight on the dependency; give the slot back when the call returns, not when its "+
			"ctx ends", s.how(), s.held(), got, s.limit, peak.Max())
		wA.openAll()
		wB.openAll()
		katatest.Unwind(h, a, bc)
		return
	} else if want := min(s.b, free); got < want {
		h.Errorf("B2: request A was stopped (%s) while %d of its calls, which ignore their ctx, still ran, so "+
			"%d of the %d slots were free, and request B of %d item(s) started only %d call(s): an item is shed "+
			"only when it finds every slot busy", s.how(), s.held(), free, s.limit, s.b, got)
		wA.openAll()
		wB.openAll()
		katatest.Unwind(h, a, bc)
		return
	}
	if s.b > free {
		if !bc.Returns("B2: request B's item %d found every slot busy (%d held by A's calls that still ran, %d "+
			"by its own) and was shed, and its calls honour their ctx, but its TryForEach did not return",
			free, s.held(), free) {
			wA.openAll()
			katatest.Unwind(h, a)
			return
		}
		if err, ok := testResult(bc); ok && !errors.Is(err, ErrBusy) {
			h.Errorf("B2: request B's item %d found every slot busy and was shed, but TryForEach returned %v; "+
				"want an error matching ErrBusy", free, err)
		}
	} else {
		wB.openAll()
		if !bc.Returns("B2: request B's %d call(s) had slots and returned nil, but its TryForEach did not return", s.b) {
			wA.openAll()
			katatest.Unwind(h, a)
			return
		}
		if err, ok := testResult(bc); ok && err != nil {
			h.Errorf("B2: request B's %d item(s) found %d free slot(s) and every call returned nil, but "+
				"TryForEach returned %v; want nil", s.b, free, err)
		}
	}
	wA.openAll()
	if !a.Returns("B2: request A's calls were all released, but its TryForEach did not return") {
		return
	}
	// Every call has returned: every slot is free again.
	wC := testNewWork(s.limit)
	wC.openAll()
	cc := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(s.limit), wC.call) })
	if !cc.Returns("B2: request C asked for all %d slots after every call had returned, but TryForEach did not "+
		"return", s.limit) {
		return
	}
	if err, ok := testResult(cc); ok && err != nil {
		h.Errorf("B2: once requests A and B had returned, request C asked for all %d slots of the Bulkhead and "+
			"got %v; want nil: every call gives its slot back when it returns, once", s.limit, err)
	}
}

func TestB2_ExploreACancelledCallHoldsItsSlotUntilItReturns(t *testing.T) {
	katatest.Explore(t, 16, testDrawHeld, func(h *katatest.H, s testHeldScenario) { s.play(h) })
}

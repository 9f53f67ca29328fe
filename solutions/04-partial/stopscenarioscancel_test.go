package partial

// A caller's cancel against the stop of GatherWith. With FailFast or
// MaxFailures n, the caller cancels while more calls are in flight than the
// gather tolerates failures; the calls then return ctx.Err() (bare or
// wrapped) at the instant of the cancel or later, in any order, some of them
// at the same instant, beside calls that fail on their own or succeed
// anyway. Every call the caller's cancel cut short keeps an error matching
// context.Canceled, never ErrSkipped, even once those cancelled calls count
// past the limit: the gather had not stopped when the caller cancelled, and
// a stop after that cancels nothing that was not cancelled already. The
// mirror case: the gather's own failures stop it first and the caller
// cancels later; then the calls cut short return after the stop, and they
// are skipped (ErrSkipped, not context.Canceled), whenever they return.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// What the call for one input does.
const (
	testQFailFirst     = iota // ignores its ctx, fails with an error of its own when released before the cancel
	testQOkFirst              // ignores its ctx, succeeds when released before the cancel
	testQAtOnce               // returns ctx.Err() as soon as its ctx ends
	testQAtOnceWrapped        // returns fmt.Errorf("…: %w", ctx.Err()) as soon as its ctx ends
	testQLate                 // ignores its ctx until released, then returns ctx.Err() if it has ended
	testQLateWrapped          // ignores its ctx until released, then returns fmt.Errorf("…: %w", ctx.Err()) if it has ended
	testQOwnLate              // ignores its ctx, fails with an error of its own when released after the cancel
	testQOkLate               // ignores its ctx, succeeds when released after the cancel
)

var testQNames = []string{
	"ignores its ctx and fails with an error of its own, released before the cancel",
	"ignores its ctx and succeeds, released before the cancel",
	"returns ctx.Err() as soon as its ctx ends",
	"returns fmt.Errorf(\"…: %w\", ctx.Err()) as soon as its ctx ends",
	"ignores its ctx until released, then returns ctx.Err()",
	"ignores its ctx until released, then returns fmt.Errorf(\"…: %w\", ctx.Err())",
	"ignores its ctx and fails with an error of its own when released",
	"ignores its ctx and succeeds when released",
}

type testQScenario struct {
	req   string
	opt   Options
	calls []int   // what the call for sku-(i+1) does
	after [][]int // after the cancel, each step releases these inputs (indexes) at once; step 0 is the cancel's own
}

// tolerates is how many failures the gather tolerates.
func (s testQScenario) tolerates() int {
	if s.opt.FailFast {
		return 0
	}
	return s.opt.MaxFailures
}

// failsFirst is how many inputs fail on their own before the cancel.
func (s testQScenario) failsFirst() int {
	n := 0
	for _, c := range s.calls {
		if c == testQFailFirst {
			n++
		}
	}
	return n
}

// stopFirst says whether those failures stop the gather before the cancel.
func (s testQScenario) stopFirst() bool { return s.failsFirst() > s.tolerates() }

func (s testQScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "GatherWith(Options{FailFast: %v, MaxFailures: %d}) on %d inputs:", s.opt.FailFast,
		s.opt.MaxFailures, len(s.calls))
	for i, c := range s.calls {
		fmt.Fprintf(&b, "\n  the call for \"sku-%d\" %s", i+1, testQNames[c])
	}
	first := "every call is in flight"
	if s.hasFirst() {
		first = "the calls released before the cancel return, all at once"
		if s.stopFirst() {
			first += fmt.Sprintf(" (%d failure(s), more than the %d tolerated: the gather stops)", s.failsFirst(),
				s.tolerates())
		}
	}
	fmt.Fprintf(&b, "\n  step 1: %s", first)
	for n, st := range s.after {
		var parts []string
		if n == 0 {
			parts = append(parts, "the caller cancels its ctx")
		}
		for _, i := range st {
			parts = append(parts, fmt.Sprintf("the call for \"sku-%d\" is released", i+1))
		}
		fmt.Fprintf(&b, "\n  step %d, all at once: %s", n+2, strings.Join(parts, ", then "))
	}
	return b.String()
}

func (s testQScenario) hasFirst() bool {
	for _, c := range s.calls {
		if c == testQFailFirst || c == testQOkFirst {
			return true
		}
	}
	return false
}

// testDrawQ draws a scenario of req: "B1" (FailFast, with MaxFailures set
// too now and then) or "B2" (MaxFailures 1 to 3).
func testDrawQ(req string) func(*rapid.T) testQScenario {
	return func(r *rapid.T) testQScenario {
		s := testQScenario{req: req}
		if req == "B1" {
			s.opt.FailFast = true
			if rapid.IntRange(0, 2).Draw(r, "max failures too?") == 0 {
				s.opt.MaxFailures = rapid.SampledFrom([]int{-1, 1, 2, 3}).Draw(r, "max failures")
			}
		} else {
			s.opt.MaxFailures = rapid.IntRange(1, 3).Draw(r, "max failures")
		}
		n := s.tolerates()
		// Before the cancel: up to n failures (no stop), or n+1 (the
		// gather stops first: the mirror case), and some successes.
		fails := rapid.IntRange(0, n).Draw(r, "failures before the cancel")
		if rapid.IntRange(0, 3).Draw(r, "stop first?") == 0 {
			fails = n + 1
		}
		for range fails {
			s.calls = append(s.calls, testQFailFirst)
		}
		for range rapid.IntRange(0, 1).Draw(r, "successes before the cancel") {
			s.calls = append(s.calls, testQOkFirst)
		}
		// In flight at the cancel: more calls that return ctx.Err() than
		// the failures still tolerated, so that they count past the limit.
		for range max(n-fails, 0) + 2 + rapid.IntRange(0, 2).Draw(r, "more cancelled calls") {
			s.calls = append(s.calls, rapid.IntRange(testQAtOnce, testQLateWrapped).Draw(r, "cancelled call"))
		}
		for range rapid.IntRange(0, 2).Draw(r, "calls that finish anyway") {
			s.calls = append(s.calls, rapid.IntRange(testQOwnLate, testQOkLate).Draw(r, "call that finishes anyway"))
		}
		// Shuffle the inputs, then release the late calls in any order,
		// several per step, the first step being the cancel's own.
		s.calls = rapid.Permutation(s.calls).Draw(r, "inputs")
		var late []int
		for i, c := range s.calls {
			if c >= testQLate {
				late = append(late, i)
			}
		}
		late = rapid.Permutation(late).Draw(r, "release order")
		s.after = [][]int{nil}
		for k, i := range late {
			// A call that fails on its own is never released at the
			// cancel's instant: its failure comes after the cancel.
			own := s.calls[i] == testQOwnLate && len(s.after) == 1
			if own || rapid.Bool().Draw(r, fmt.Sprintf("next step %d", k)) {
				s.after = append(s.after, nil)
			}
			s.after[len(s.after)-1] = append(s.after[len(s.after)-1], i)
		}
		return s
	}
}

// testQDone is what one call returned.
type testQDone struct {
	viaCtx bool  // it returned its ctx's error
	err    error // what it returned
	step   int
}

func (s testQScenario) play(h *katatest.H) {
	n := len(s.calls)
	skus := testSKUs(n)
	gates := make([]chan struct{}, n)
	opened := make([]bool, n)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	release := func(i int) {
		if !opened[i] {
			opened[i] = true
			close(gates[i])
		}
	}
	h.Own(func() {
		for i := range gates {
			release(i)
		}
	})
	var mu sync.Mutex
	now, started := 0, 0
	done := map[int]testQDone{}
	fn := func(ctx context.Context, sku string) (int, error) {
		i := -1
		fmt.Sscanf(sku, "sku-%d", &i)
		i--
		mu.Lock()
		started++
		mu.Unlock()
		var d testQDone
		defer func() {
			mu.Lock()
			d.step = now
			done[i] = d
			mu.Unlock()
		}()
		kind := s.calls[i]
		ended := false
		switch kind {
		case testQAtOnce, testQAtOnceWrapped:
			select {
			case <-ctx.Done():
				ended = true
			case <-gates[i]: // only when the test ends it
			}
		default:
			<-gates[i]
			ended = (kind == testQLate || kind == testQLateWrapped) && ctx.Err() != nil
		}
		switch {
		case ended:
			d.viaCtx, d.err = true, ctx.Err()
			if kind == testQAtOnceWrapped || kind == testQLateWrapped {
				d.err = fmt.Errorf("%s: %w", sku, ctx.Err())
			}
		case kind == testQFailFirst || kind == testQOwnLate:
			d.err = fmt.Errorf("%s: %w", sku, &testStatusError{502})
		}
		return testPrice(sku), d.err
	}
	c := testStart(h, skus, fn, &s.opt)
	if c.Broken() {
		return
	}
	synctest.Wait()
	mu.Lock()
	all := started == n
	mu.Unlock()
	if !all {
		c.Stop() // the calls are not all at once: other tests say so
		return
	}
	for i, k := range s.calls {
		if k == testQFailFirst || k == testQOkFirst {
			release(i)
		}
	}
	synctest.Wait()
	// running lists the calls that return as soon as their ctx ends and
	// have not returned.
	running := func() (n int) {
		mu.Lock()
		defer mu.Unlock()
		for i, k := range s.calls {
			if _, ok := done[i]; !ok && (k == testQAtOnce || k == testQAtOnceWrapped) {
				n++
			}
		}
		return n
	}
	atOnce := 0
	for _, k := range s.calls {
		if k == testQAtOnce || k == testQAtOnceWrapped {
			atOnce++
		}
	}
	if r := running(); s.stopFirst() && r > 0 {
		h.Errorf("%s: stopping cancels the calls still running, but %d input(s) failed, more than the %d tolerated, "+
			"and %d of the %d calls waiting on their ctx still ran: give every call a ctx derived from one "+
			"context the stop cancels", s.req, s.failsFirst(), s.tolerates(), r, atOnce)
		c.Stop()
		return
	}
	for step, st := range s.after {
		mu.Lock()
		now = step + 1
		mu.Unlock()
		if step == 0 {
			c.Cancel()
		}
		for _, i := range st {
			release(i)
		}
		synctest.Wait()
		if r := running(); step == 0 && r > 0 {
			h.Errorf("%s: after the caller cancelled, only %d of the %d calls waiting on their ctx saw it: derive "+
				"the calls' ctx from the caller's ctx, never from context.Background()", s.req, atOnce-r, atOnce)
			c.Stop()
			return
		}
	}
	if !c.Returns("every call had returned, but GatherWith had not: return as soon as the last call has returned") {
		return
	}
	out, _, ok := c.Finish("GatherWith")
	if !ok {
		return
	}
	if len(out) != n {
		return // one outcome per input: graded by R1
	}
	mu.Lock()
	defer mu.Unlock()
	inFlight := 0
	for _, k := range s.calls {
		if k >= testQAtOnce {
			inFlight++
		}
	}
	for i, o := range out {
		d, ok := done[i]
		if !ok || !d.viaCtx || o.Input != skus[i] {
			continue // what other outcomes hold is graded elsewhere
		}
		when := "as soon as its ctx ended, at the caller's cancel"
		if d.step > 1 {
			when = fmt.Sprintf("when released at step %d, after the caller's cancel at step 2", d.step+1)
		} else if s.calls[i] >= testQLate {
			when = "when released at the same instant as the caller's cancel"
		}
		if s.stopFirst() {
			if s.calls[i] < testQLate {
				when = "as soon as its ctx ended, at the stop in step 1"
			}
			if !errors.Is(o.Err, ErrSkipped) || errors.Is(o.Err, context.Canceled) {
				h.Errorf("%s: a call cut short by the stop stays skipped when the caller's ctx ends later: "+
					"%d input(s) failed on their own in step 1, more than the %d tolerated, so the gather stopped, "+
					"and the caller cancelled only in step 2; the call for %q returned %q %s, so its outcome's error "+
					"must match ErrSkipped and not context.Canceled, but it is %s", s.req, s.failsFirst(),
					s.tolerates(), skus[i], d.err, when, testYDescribe(o.Err))
				return
			}
			continue
		}
		if errors.Is(o.Err, ErrSkipped) || !errors.Is(o.Err, context.Canceled) {
			h.Errorf("%s: ErrSkipped is for a stop of GatherWith's own, not for the caller's cancel, even once "+
				"the calls it cut short count past the limit: the caller cancelled at step 2 with %d calls in flight, before any stop (%d "+
				"input(s) had failed on their own, %d tolerated), and the call for %q returned %q %s, but its "+
				"outcome's error is %s, not context.Canceled. The cancelled calls count as failures, but once they "+
				"pass the limit a stop cancels nothing the caller had not cancelled already, so it skips nothing: "+
				"do not raise a stopped flag whenever the failures pass the limit; tell your stop from the caller's "+
				"cancel by what cancelled the calls' ctx first (context.Cause(inner) is your stop's cause)", s.req,
				inFlight, s.failsFirst(), s.tolerates(), skus[i], d.err, when, testYDescribe(o.Err))
			return
		}
	}
}

// testQFixed builds a fixed scenario: calls[i] for sku-(i+1), then the
// releases of each step after the cancel (the first being the cancel's own).
func testQFixed(req string, opt Options, calls []int, after ...[]int) testQScenario {
	return testQScenario{req: req, opt: opt, calls: calls, after: after}
}

func TestB1_ExploreACallerCancelIsNotAStop(t *testing.T) {
	ff := Options{FailFast: true}
	katatest.Replay(t, []testQScenario{
		// One call cancelled is one failure, FailFast's limit passed:
		// the calls released later still keep context.Canceled.
		testQFixed("B1", ff, []int{testQOkFirst, testQAtOnce, testQLate, testQLateWrapped}, nil, []int{2}, []int{3}),
		testQFixed("B1", Options{FailFast: true, MaxFailures: 2}, []int{testQAtOnceWrapped, testQOwnLate, testQLate,
			testQAtOnce}, nil, []int{1}, []int{2}),
		// The mirror case: the gather stopped first.
		testQFixed("B1", ff, []int{testQFailFirst, testQAtOnce, testQLate}, nil, []int{2}),
	}, func(h *katatest.H, s testQScenario) { s.play(h) })
	katatest.Explore(t, 20, testDrawQ("B1"), func(h *katatest.H, s testQScenario) { s.play(h) })
}

func TestB2_ExploreACallerCancelIsNotAStop(t *testing.T) {
	m := func(n int) Options { return Options{MaxFailures: n} }
	katatest.Replay(t, []testQScenario{
		// Two calls cancelled at once pass MaxFailures 1: the calls
		// released later still keep context.Canceled.
		testQFixed("B2", m(1), []int{testQAtOnce, testQAtOnceWrapped, testQLate, testQLateWrapped}, nil, []int{2}, []int{3}),
		testQFixed("B2", m(2), []int{testQFailFirst, testQLate, testQAtOnce, testQOwnLate, testQLateWrapped, testQAtOnce},
			[]int{1}, []int{3, 4}),
		// The mirror case: the gather stopped first.
		testQFixed("B2", m(2), []int{testQFailFirst, testQAtOnce, testQFailFirst, testQLate, testQFailFirst}, nil, []int{3}),
	}, func(h *katatest.H, s testQScenario) { s.play(h) })
	katatest.Explore(t, 20, testDrawQ("B2"), func(h *katatest.H, s testQScenario) { s.play(h) })
}

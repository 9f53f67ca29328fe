package breaker

// A probe that is let through, then held before its fn starts, while other
// calls move the breaker on. The call that makes the lazy move to half-open
// calls OnStateChange before it returns; a slow hook holds it there. If the
// breaker let it through in the same step (it holds one of the probe
// places: a third call is turned away with ErrTooManyRequests), it is a
// probe of that half-open period, whatever the breaker does while the hook
// runs: when the other probes have closed the breaker, or reopened it and
// a new half-open period has begun, its result counts for nothing and it
// holds no place. (A breaker that lets it through only after the hook
// returned turns no third call away, and the scenario does not apply.)

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"gokata/internal/katatest"
)

// testHookedProbe is the rig of these scenarios: HalfOpenMaxRequests 2,
// MaxFailures 1, and an OnStateChange that holds the first call of
// open→half-open until hook is released.
type testHookedProbe struct {
	r     *testRig
	hook  *katatest.Gate
	probe *testHeld // the call that makes the move to half-open, held in the hook
	other *testHeld // the second probe
}

const testHookedTimeout = 10 * time.Second

// testStartHooked trips a breaker, lets its open period end, and starts the
// probe (which makes the move and is held in the hook) and a second probe;
// then it checks, with a third call, that the probe holds a place. ok is
// false if the scenario cannot go on (a failure was reported, or it does not
// apply).
func testStartHooked(h *katatest.H) (s *testHookedProbe, ok bool) {
	s = &testHookedProbe{hook: h.Gate()}
	var first atomic.Bool
	s.r = testNew(h, Settings{MaxFailures: 1, OpenTimeout: testHookedTimeout, HalfOpenMaxRequests: 2,
		OnStateChange: func(from, to State) {
			if from == Open && to == HalfOpen && first.CompareAndSwap(false, true) {
				s.hook.Hold(context.Background())
			}
		}})
	r := s.r
	r.hookHeld = s.hook
	if !r.fails(1, "the failure that trips the breaker") {
		return s, false
	}
	h.Advance(testHookedTimeout)
	s.probe = r.start(nil)
	if !r.settle("the first call after the open period, held in OnStateChange(open, half-open)") || s.probe.c.Broken() {
		return s, false
	}
	s.other = r.start(nil)
	if !r.settle("a second call while the first is held in OnStateChange") || s.other.c.Broken() {
		return s, false
	}
	if s.probe.running() && s.hook.Waiting() == 0 {
		return s, false // the hook of its move to half-open did not come before fn: R6 says more
	}
	if s.probe.c.Returned() || !s.other.running() {
		h.T.Errorf("half-open with HalfOpenMaxRequests 2: the call that made the move to half-open %s, and a second "+
			"call %s; want both let through as probes (R3)", testHeldSaw(s.probe), testHeldSaw(s.other))
		return s, false
	}
	got, ran, ok := r.call(nil, "a third call while 2 probes are let through")
	switch {
	case !ok:
		return s, false
	case ran, !errors.Is(got, ErrTooManyRequests):
		// The probe takes its place only after its hook returns (or R3 is
		// broken, which other tests report): not this scenario.
		return s, false
	}
	return s, true
}

// testHeldSaw says where a held call stands, for the messages.
func testHeldSaw(p *testHeld) string {
	switch {
	case p.running():
		return "ran fn"
	case p.c.Returned():
		return "returned " + testDescribeErr(p.c.Err()) + " without running fn"
	}
	return "was still in Do (held in OnStateChange)"
}

// end lets the fn of p (a call started while the hook is held) return err,
// and waits for Do to return. It settles before it looks, so that a call
// stuck behind the held hook ends the scenario rather than the test.
func (s *testHookedProbe) end(h *katatest.H, p *testHeld, err error, step string) bool {
	h.T.Helper()
	p.result = err
	p.gate.Release()
	if !s.r.settle(step) {
		return false
	}
	_, ok := p.collect(h, step, fmt.Sprintf("fn returned %v", err))
	return ok
}

// releaseProbe releases the hook the probe is held in, and checks that the
// probe's fn then runs: it was let through as a probe. move names the
// move to half-open it made.
func (s *testHookedProbe) releaseProbe(h *katatest.H, move string) bool {
	h.T.Helper()
	s.hook.Release()
	if !s.r.settle("OnStateChange(open, half-open) returned") {
		return false
	}
	if !s.probe.running() {
		h.Errorf("after OnStateChange returned, the call that made %s to half-open %s; want its fn to run: it was "+
			"let through as a probe", move, testHeldSaw(s.probe))
		return false
	}
	return true
}

// finish releases the hook and ends what still runs, so nothing leaks.
func (s *testHookedProbe) finish(h *katatest.H) {
	s.hook.Release()
	for _, p := range s.r.held {
		p.c.Cancel()
	}
	s.r.settle("the end of the scenario")
}

func TestR5_AProbeHeldInTheHookStaysInItsHalfOpenPeriod(t *testing.T) {
	// The other probes close the breaker while the probe is held; then it
	// fails.
	katatest.Run(t, func(h *katatest.H) {
		s, ok := testStartHooked(h)
		defer s.finish(h)
		if !ok {
			return
		}
		r := s.r
		if !s.end(h, s.other, nil, "the second probe") || !r.run(nil, "a third probe, once the second ended") {
			return
		}
		if !r.wantState(Closed, "2 probes succeeded, with HalfOpenMaxRequests 2", "2 successful probes close the breaker (R4)") {
			return
		}
		if !s.releaseProbe(h, "the move") {
			return
		}
		if _, ok := s.probe.end(h, testErrDown, "the probe held in OnStateChange"); !ok {
			return
		}
		if got := r.b.State(); got != Closed {
			t.Errorf("a probe's failure reopened the breaker after 2 other probes had closed it (State() was %v; want "+
				"closed): the probe was let through while half-open (it held one of the 2 places: a third call got "+
				"ErrTooManyRequests), then held in OnStateChange while the others closed the breaker. Its result counts "+
				"only in the half-open period that let it through, so here it counts for nothing. Take a call's "+
				"generation in the same critical section that lets it through, not in a later one: in between, other "+
				"calls can change the state", got)
		}
	})

	// Another probe reopens the breaker while the probe is held; a new
	// half-open period begins, then the probe runs and succeeds.
	katatest.Run(t, func(h *katatest.H) {
		s, ok := testStartHooked(h)
		defer s.finish(h)
		if !ok {
			return
		}
		r := s.r
		if !s.end(h, s.other, testErrDown, "the second probe, which fails") {
			return
		}
		if !r.wantState(Open, "a probe failed", "one failed probe reopens the breaker (R4)") {
			return
		}
		h.Advance(testHookedTimeout)
		if !r.wantState(HalfOpen, "the open period after the failed probe ended", "half-open when the open period is over (R3)") {
			return
		}
		if !s.releaseProbe(h, "the first move") {
			return
		}
		fresh := r.startN(2, nil)
		if !r.settle("2 calls in the new half-open period") || fresh[0].c.Broken() || fresh[1].c.Broken() {
			return
		}
		if running, _, other := testCount(fresh, ErrTooManyRequests); running != 2 {
			t.Errorf("in a new half-open period with HalfOpenMaxRequests 2, while a probe of the previous one ran, %d of 2 "+
				"new calls ran fn%s; want both let through: the old probe holds no place in the new period", running, other)
			return
		}
		if _, ok := s.probe.end(h, nil, "the probe of the previous half-open period"); !ok {
			return
		}
		extra := r.start(nil)
		if !r.settle("a call while 2 probes of the new period run") || extra.c.Broken() {
			return
		}
		if extra.running() {
			t.Errorf("a probe let through in one half-open period (it held one of its 2 places: a third call got " +
				"ErrTooManyRequests) was held in OnStateChange while another probe reopened the breaker and a new " +
				"half-open period began; then it succeeded, and a new call ran although 2 probes of the new period were " +
				"running and HalfOpenMaxRequests is 2: the old probe freed a place it did not hold in the new period. " +
				"Its result counts only in the period that let it through. Take a call's generation in the same critical " +
				"section that lets it through, not in a later one: in between, other calls can change the state")
			return
		}
		if _, ok := fresh[0].end(h, nil, "new probe 1"); !ok {
			return
		}
		r.wantState(HalfOpen, "a probe of an earlier half-open period succeeded, then 1 probe of this one, with "+
			"HalfOpenMaxRequests 2", "the old probe's success must not count towards closing: its result counts only "+
			"in the period that let it through; take a call's generation in the same critical section that lets it through")
	})
}

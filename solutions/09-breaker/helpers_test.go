package breaker

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing/synctest"

	"gokata/internal/katatest"
)

// testErrDown is the failure of the dependency in most scenarios.
var testErrDown = errors.New("503 service unavailable")

// testChange is one call of OnStateChange.
type testChange struct{ from, to State }

func (c testChange) String() string { return fmt.Sprintf("%v→%v", c.from, c.to) }

// testRig is a breaker under test whose OnStateChange is recorded.
type testRig struct {
	h       *katatest.H
	b       *Breaker
	changes katatest.Recorder[testChange]
}

// testNew creates a breaker on the test's mock clock. Unless s has its own
// OnStateChange, the rig records every transition.
func testNew(h *katatest.H, s Settings) *testRig {
	r := &testRig{h: h}
	if s.OnStateChange == nil {
		s.OnStateChange = func(from, to State) { r.changes.Add(testChange{from, to}) }
	}
	r.b = New(h.Clk, s)
	return r
}

// call runs Do once with an fn that returns err at once, and reports Do's
// error and whether fn ran. ok is false if Do panicked or did not return
// (already reported).
func (r *testRig) call(err error) (got error, ran bool, ok bool) {
	h := r.h
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := katatest.Go(h, func() (struct{}, error) {
		return struct{}{}, r.b.Do(ctx, func(context.Context) error {
			calls.Add(1)
			return err
		})
	})
	if c.Broken() {
		return nil, false, false
	}
	if !c.Returned() {
		h.T.Errorf("Do did not return, although the fn it was given returns %v at once: Do never waits for anything "+
			"— it lets the call through or rejects it, runs fn, records the result and returns", err)
		c.Stop(cancel)
		return nil, false, false
	}
	if c.Panicked() {
		return nil, false, false
	}
	_, got = c.Result()
	return got, calls.Load() > 0, true
}

// run makes one call that the breaker must let through; fn returns err.
// step names the call in the messages.
func (r *testRig) run(err error, step string) bool {
	r.h.T.Helper()
	got, ran, ok := r.call(err)
	switch {
	case !ok:
		return false
	case !ran:
		r.h.T.Errorf("%s: Do did not call fn and returned %v; want fn to run (the breaker should let the call through)", step, got)
		return false
	case !errors.Is(got, err) || (err == nil && got != nil):
		r.h.T.Errorf("%s: fn returned %v but Do returned %v; when fn runs, Do returns its error as it is", step, err, got)
		return false
	}
	return true
}

// fails makes n calls that the breaker must let through, each failing with
// testErrDown.
func (r *testRig) fails(n int, step string) bool {
	r.h.T.Helper()
	for i := 1; i <= n; i++ {
		if !r.run(testErrDown, fmt.Sprintf("%s (failure %d of %d)", step, i, n)) {
			return false
		}
	}
	return true
}

// rejects makes one call that the breaker must reject at once with an error
// matching want, without calling fn.
func (r *testRig) rejects(want error, step, hint string) bool {
	r.h.T.Helper()
	got, ran, ok := r.call(nil)
	switch {
	case !ok:
		return false
	case ran:
		r.h.T.Errorf("%s: Do called fn; want it rejected at once with %s, without running fn — %s", step, testName(want), hint)
		return false
	case !errors.Is(got, want):
		r.h.T.Errorf("%s: Do returned %v; want an error matching %s — %s", step, got, testName(want), hint)
		return false
	}
	return true
}

// testName names the package's errors in the messages.
func testName(err error) string {
	switch err {
	case ErrOpen:
		return "ErrOpen"
	case ErrTooManyRequests:
		return "ErrTooManyRequests"
	}
	return fmt.Sprint(err)
}

// wantState checks State() now. situation says what has happened so far,
// hint what a wrong state usually means.
func (r *testRig) wantState(want State, situation, hint string) bool {
	r.h.T.Helper()
	if got := r.b.State(); got != want {
		r.h.T.Errorf("%s: State() was %v; want %v — %s", situation, got, want, hint)
		return false
	}
	return true
}

// wantChanges checks every transition OnStateChange has seen so far.
func (r *testRig) wantChanges(situation, hint string, want ...testChange) bool {
	r.h.T.Helper()
	synctest.Wait()
	if got := r.changes.All(); !slices.Equal(got, want) {
		r.h.T.Errorf("%s: OnStateChange saw %v; want %v — %s", situation, got, want, hint)
		return false
	}
	return true
}

// at is the mock time since the test began, for the messages.
func (r *testRig) at() string { return "t=" + r.h.Elapsed().String() }

// testHeld is a call of Do whose fn, once it runs, waits until the test
// ends it (or the call's ctx is cancelled).
type testHeld struct {
	c      *katatest.Call[struct{}]
	gate   *katatest.Gate
	result error
	cancel context.CancelFunc
}

// start begins a held call. The call's ctx is cancelled when the test
// ends, so a call the test forgets does not stay blocked.
func (r *testRig) start(peak *katatest.Peak) *testHeld {
	p := &testHeld{gate: katatest.NewGate()}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	r.h.T.Cleanup(cancel)
	p.c = katatest.Go(r.h, func() (struct{}, error) {
		return struct{}{}, r.b.Do(ctx, func(ctx context.Context) error {
			if peak != nil {
				defer peak.Enter()()
			}
			if err := p.gate.Hold(ctx); err != nil {
				return fmt.Errorf("probe: %w", err)
			}
			return p.result
		})
	})
	return p
}

// startN begins n held calls.
func (r *testRig) startN(n int, peak *katatest.Peak) []*testHeld {
	ps := make([]*testHeld, n)
	for i := range ps {
		ps[i] = r.start(peak)
	}
	return ps
}

// running reports whether the call's fn is running; call it after the code
// settled.
func (p *testHeld) running() bool { return p.gate.Waiting() == 1 }

// rejectedWith reports whether the call returned without running fn, and
// its error; call it after the code settled.
func (p *testHeld) rejectedWith() (error, bool) {
	if !p.c.Returned() || p.gate.Entered() > 0 || p.c.Panicked() {
		return nil, false
	}
	_, err := p.c.Result()
	return err, true
}

// end lets the call's fn return err and waits for Do to return; step names
// the call in the messages. ok is false if Do panicked or did not return
// (reported).
func (p *testHeld) end(h *katatest.H, err error, step string) (got error, ok bool) {
	h.T.Helper()
	p.result = err
	p.gate.Release()
	return p.collect(h, step, fmt.Sprintf("fn returned %v", err))
}

// stop cancels the call's ctx, so that fn returns "probe: context canceled",
// and waits for Do to return.
func (p *testHeld) stop(h *katatest.H, step string) (got error, ok bool) {
	h.T.Helper()
	p.cancel()
	return p.collect(h, step, "the caller cancelled and fn returned the context error")
}

func (p *testHeld) collect(h *katatest.H, step, what string) (error, bool) {
	h.T.Helper()
	synctest.Wait()
	if !p.c.Returned() {
		h.T.Errorf("%s: %s, but Do did not return: after fn returns, Do only records the result and returns", step, what)
		return nil, false
	}
	if p.c.Panicked() {
		return nil, false
	}
	_, err := p.c.Result()
	return err, true
}

// testCount counts the calls that are running and those rejected with an
// error matching want; other describes the rest, if any, for the messages.
func testCount(ps []*testHeld, want error) (running, rejected int, other string) {
	var others []string
	defer func() {
		if len(others) > 0 {
			other = " (" + strings.Join(others, "; ") + ")"
		}
	}()
	for i, p := range ps {
		if p.running() {
			running++
		} else if err, ok := p.rejectedWith(); ok && errors.Is(err, want) {
			rejected++
		} else if ok {
			others = append(others, fmt.Sprintf("call %d was rejected with %v", i+1, err))
		} else {
			others = append(others, fmt.Sprintf("call %d neither ran fn nor returned", i+1))
		}
	}
	return running, rejected, other
}

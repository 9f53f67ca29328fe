package breaker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

func TestR1_TripsExactlyOnTheNthConsecutiveFailure(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{MaxFailures: 3, OpenTimeout: 10 * time.Second})
		if !r.wantState(Closed, "a new breaker", "a breaker starts closed") {
			return
		}
		for i := 1; i <= 2; i++ {
			if !r.fails(1, fmt.Sprintf("failure %d", i)) ||
				!r.wantState(Closed, fmt.Sprintf("after %d consecutive failures with MaxFailures 3", i),
					"only the 3rd failure in a row opens the breaker: compare the count with >= MaxFailures after counting") {
				return
			}
		}
		if !r.fails(1, "failure 3") {
			return
		}
		r.wantState(Open, "after 3 consecutive failures with MaxFailures 3",
			"the MaxFailures-th failure in a row must open the breaker")
	})
}

func TestR1_ASuccessResetsTheCount(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{MaxFailures: 3, OpenTimeout: 10 * time.Second})
		if !r.fails(2, "two failures") || !r.run(nil, "a success") {
			return
		}
		hint := "a success resets the count: MaxFailures counts failures in a row, not in total"
		if !r.fails(1, "a failure after the success") ||
			!r.wantState(Closed, "after fail, fail, success, fail with MaxFailures 3", hint) ||
			!r.fails(1, "a second failure after the success") ||
			!r.wantState(Closed, "after fail, fail, success, fail, fail with MaxFailures 3", hint) {
			return
		}
		if !r.fails(1, "a third failure in a row") {
			return
		}
		r.wantState(Open, "after fail, fail, success, fail, fail, fail with MaxFailures 3",
			"the 3rd failure in a row must open the breaker")
	})
}

func TestR1_IsFailureDecidesWhichErrorsCount(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errNotFound := errors.New("404 not found")
		r := testNew(h, Settings{MaxFailures: 2, OpenTimeout: 10 * time.Second,
			IsFailure: func(err error) bool { return !errors.Is(err, errNotFound) }})
		for i := 1; i <= 3; i++ {
			if !r.run(errNotFound, fmt.Sprintf("404 number %d", i)) {
				return
			}
		}
		if !r.wantState(Closed, "after three errors that IsFailure rejects, with MaxFailures 2",
			"an error for which IsFailure returns false is not a failure (the dependency did answer)") {
			return
		}
		if !r.fails(1, "a failure") || !r.run(errNotFound, "a 404") || !r.fails(1, "another failure") {
			return
		}
		r.wantState(Closed, "after a failure, a 404 that IsFailure rejects and a failure, with MaxFailures 2",
			"an error that IsFailure rejects counts as a success, so it resets the count")
	})
}

func TestR1_MaxFailuresBelowOneMeansFive(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{})
		if !r.fails(4, "four failures") ||
			!r.wantState(Closed, "with the zero Settings, after 4 consecutive failures",
				"MaxFailures 0 means 5: the 5th failure in a row opens the breaker, not an earlier one") {
			return
		}
		if !r.fails(1, "a fifth failure") {
			return
		}
		if !r.wantState(Open, "with the zero Settings, after 5 consecutive failures", "MaxFailures 0 means 5") {
			return
		}

		// Below 1, not only 0.
		r = testNew(h, Settings{MaxFailures: -3})
		if !r.fails(1, "a failure with MaxFailures -3") ||
			!r.wantState(Closed, "MaxFailures -3, after 1 failure",
				"values below 1 mean 5, negative ones too: apply the default with MaxFailures < 1, not == 0") ||
			!r.fails(4, "four more failures") {
			return
		}
		r.wantState(Open, "MaxFailures -3, after 5 consecutive failures", "values below 1 mean 5")
	})
}

func TestR1_APanicInFnIsAFailure(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{MaxFailures: 2, OpenTimeout: 10 * time.Second})
		if !r.fails(1, "a failure") {
			return
		}
		v, err := testPanicked(r.b, func(context.Context) error { panic("index out of range in the client") })
		if v != "index out of range in the client" {
			t.Errorf("fn panicked with \"index out of range in the client\", and Do %s; want Do to panic on with the "+
				"same value (record the failure in a defer; if you recover, panic again with the same value)", testWhatDid(v, err))
			return
		}
		r.wantState(Open, "MaxFailures 2: a failure, then a call whose fn panicked",
			"a panic in fn is a failure: record the result in a defer, which runs even when fn panics")
	})
}

func TestR2_OpenRejectsAtOnceWithoutCallingFn(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second})
		if !r.fails(1, "the failure that trips the breaker") {
			return
		}
		require.Equal(t, Open, r.b.State(), "precondition (R1): MaxFailures 1, so one failure opens the breaker")
		hint := "while open, Do returns ErrOpen without calling fn: the point of the breaker is to stop calling a dependency that is down"
		for _, wait := range []time.Duration{0, 5 * time.Second, 5*time.Second - 1} {
			h.Advance(wait)
			if !r.rejects(ErrOpen, fmt.Sprintf("a call at %s, the breaker open since t=0s with OpenTimeout 10s", r.at()), hint) {
				return
			}
		}
	})
}

func TestR3_HalfOpenExactlyWhenTheOpenTimeoutEnds(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		h.Advance(2 * time.Second)
		r := testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout})
		if !r.fails(1, "the failure at t=2s that trips the breaker") {
			return
		}
		h.Advance(timeout - 1)
		if !r.wantState(Open, fmt.Sprintf("opened at t=2s with OpenTimeout 10s, asked at %s", r.at()),
			"1ns before the open period ends the breaker is still open") ||
			!r.rejects(ErrOpen, "a call 1ns before the open period ends", "the breaker is still open") {
			return
		}
		h.Advance(1)
		if !r.wantState(HalfOpen, fmt.Sprintf("opened at t=2s with OpenTimeout 10s, asked at %s", r.at()),
			"the breaker is half-open once clk.Now() reaches the end of the open period (compare with !Before, not After), "+
				"measured on the injected clock from the failure that opened it") {
			return
		}

		// Do, not only State, makes the lazy move to half-open.
		r = testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout})
		if !r.fails(1, "the failure that trips a second breaker") {
			return
		}
		h.Advance(timeout)
		got, ran, ok := r.call(nil, "the first Do after the open period ended")
		if !ok {
			return
		}
		if !ran {
			t.Errorf("the first Do after the open period ended returned %v without calling fn; want it let through as a probe: "+
				"Do must check the end of the open period against clk.Now() too, not only State", got)
			return
		}

		// The open period counts from the moment the failure was recorded,
		// not from the moment the failing call began.
		r = testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout})
		slow := r.start(nil)
		if slow.c.Broken() {
			return
		}
		require.True(t, slow.running(), "precondition (R1): a closed breaker lets the call through")
		began := r.at()
		h.Advance(4 * time.Second)
		if _, ok := slow.end(h, testErrDown, "a call that fails 4s after it began"); !ok {
			return
		}
		slowHint := "the open period starts when the failure is recorded (read clk.Now() once fn has returned), " +
			"not when the failing call began"
		h.Advance(timeout - 1)
		if !r.wantState(Open, fmt.Sprintf("OpenTimeout 10s; a call began at %s and failed 4s later, tripping the breaker; "+
			"now %s", began, r.at()), slowHint) {
			return
		}
		h.Advance(1)
		if !r.wantState(HalfOpen, fmt.Sprintf("OpenTimeout 10s; a call failed 4s after it began, tripping the breaker; "+
			"now %s, 10s after the failure", r.at()), slowHint) {
			return
		}

		// OpenTimeout 0 or below means 60s; HalfOpenMaxRequests below 1 means 1.
		for _, s := range []Settings{{MaxFailures: 1}, {MaxFailures: 1, OpenTimeout: -time.Second, HalfOpenMaxRequests: -1}} {
			r = testNew(h, s)
			what := fmt.Sprintf("OpenTimeout %v", s.OpenTimeout)
			hint := what + " means 60 seconds: values of 0 or below take the default (check <= 0, not == 0)"
			if !r.fails(1, "the failure that trips a breaker with "+what) {
				return
			}
			h.Advance(time.Minute - 1)
			if !r.wantState(Open, what+", 1ns less than 60s after it opened", hint) {
				return
			}
			h.Advance(1)
			if !r.wantState(HalfOpen, what+", 60s after it opened", hint) {
				return
			}
			if s.HalfOpenMaxRequests == 0 {
				continue
			}
			probes := r.startN(2, nil)
			if !r.settle("2 calls at once at a half-open breaker with HalfOpenMaxRequests -1") || probes[0].c.Broken() {
				return
			}
			if running, rejected, other := testCount(probes, ErrTooManyRequests); running != 1 || rejected != 1 {
				t.Errorf("2 calls arrived at once at a half-open breaker with HalfOpenMaxRequests -1: %d ran fn and %d were "+
					"rejected%s; want 1 probe and 1 rejected — values below 1 mean 1 (check < 1, not == 0)",
					running, rejected, other)
				return
			}
		}
	})
}

func TestR3_HalfOpenRunsAtMostMaxRequestsProbes(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 3})
		if !r.fails(1, "the failure that trips the breaker") {
			return
		}
		h.Advance(10 * time.Second)
		peak := &katatest.Peak{}
		calls := r.startN(5, peak)
		if !r.settle("5 calls at once at a half-open breaker with HalfOpenMaxRequests 3") || calls[0].c.Broken() {
			return
		}
		running, rejected, other := testCount(calls, ErrTooManyRequests)
		if running > 3 {
			t.Errorf("5 calls arrived at once at a half-open breaker with HalfOpenMaxRequests 3, and %d of them ran fn at once "+
				"(peak %d); want at most 3 probes: count the probes running and reject the others with ErrTooManyRequests",
				running, peak.Max())
			return
		}
		if running < 3 || rejected != 2 {
			t.Errorf("5 calls arrived at once at a half-open breaker with HalfOpenMaxRequests 3: %d ran fn and %d were rejected "+
				"with ErrTooManyRequests%s; want 3 probes running and the 2 others rejected at once, without waiting",
				running, rejected, other)
			return
		}
		var probes []*testHeld
		for _, p := range calls {
			if p.running() {
				probes = append(probes, p)
			}
		}
		if !r.wantState(HalfOpen, "while 3 probes run", "the breaker stays half-open until the probes end") {
			return
		}

		// A probe that ends frees its place.
		if _, ok := probes[0].end(h, nil, "probe 1"); !ok {
			return
		}
		if !r.wantState(HalfOpen, "after 1 successful probe of the 3 that HalfOpenMaxRequests 3 asks for",
			"it takes HalfOpenMaxRequests successful probes to close") {
			return
		}
		more := r.startN(2, peak)
		if !r.settle("2 more calls while 2 probes run") || more[0].c.Broken() {
			return
		}
		running, rejected, other = testCount(more, ErrTooManyRequests)
		if running != 1 || rejected != 1 {
			t.Errorf("with 2 probes still running after one had succeeded, 2 more calls arrived: %d ran fn and %d were "+
				"rejected%s; want 1 let through (the finished probe freed its place) and 1 rejected: "+
				"HalfOpenMaxRequests limits the probes running at once", running, rejected, other)
			return
		}
		assert.Equal(t, 3, peak.Max(), "at most HalfOpenMaxRequests 3 probes may run at once")
		for i, p := range probes[1:] {
			if _, ok := p.end(h, nil, fmt.Sprintf("probe %d", i+2)); !ok {
				return
			}
		}
		r.wantState(Closed, "after 3 successful probes with HalfOpenMaxRequests 3",
			"HalfOpenMaxRequests successful probes close the breaker")
	})
}

func TestR4_SuccessesCloseAndAFailureReopens(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		r := testNew(h, Settings{MaxFailures: 3, OpenTimeout: timeout, HalfOpenMaxRequests: 2})
		if !r.fails(3, "the failures that trip the breaker") {
			return
		}
		h.Advance(timeout)
		require.Equal(t, HalfOpen, r.b.State(), "precondition (R3): half-open when the open period has ended")
		if !r.run(nil, "probe 1") ||
			!r.wantState(HalfOpen, "after 1 successful probe with HalfOpenMaxRequests 2", "it takes 2 successful probes to close") ||
			!r.run(nil, "probe 2") ||
			!r.wantState(Closed, "after 2 successful probes with HalfOpenMaxRequests 2", "HalfOpenMaxRequests successful probes close the breaker") {
			return
		}
		for i := 1; i <= 2; i++ {
			if !r.fails(1, fmt.Sprintf("failure %d after closing", i)) ||
				!r.wantState(Closed, fmt.Sprintf("closed again, then %d failures with MaxFailures 3", i),
					"closing starts a fresh count of failures: failures from before the breaker opened do not count") {
				return
			}
		}
		if !r.fails(1, "a third failure") {
			return
		}
		require.Equal(t, Open, r.b.State(), "precondition (R1): the 3rd consecutive failure opens the breaker")

		// t=10s: open until t=20s. A probe succeeds; at t=21s another probe
		// begins, and it fails at t=23s.
		h.Advance(timeout)
		if !r.run(nil, "a probe at t=20s") {
			return
		}
		h.Advance(time.Second)
		slow := r.start(nil)
		if slow.c.Broken() {
			return
		}
		require.True(t, slow.running(), "precondition (R3): a half-open breaker lets a probe through")
		h.Advance(2 * time.Second)
		if _, ok := slow.end(h, testErrDown, "a probe that began at t=21s and fails at t=23s"); !ok {
			return
		}
		hint := "a failed probe reopens the breaker at once (not after MaxFailures failures), " +
			"for a fresh OpenTimeout counted from that failure (t=23s): not from when the probe began (t=21s), " +
			"nor from the end of the previous open period (t=20s)"
		if !r.wantState(Open, "right after a probe failed at t=23s", hint) {
			return
		}
		h.Advance(timeout - 1)
		if !r.wantState(Open, "a probe failed at t=23s with OpenTimeout 10s; now "+r.at(), hint) {
			return
		}
		h.Advance(1)
		if !r.wantState(HalfOpen, "a probe failed at t=23s with OpenTimeout 10s; now "+r.at(), hint) {
			return
		}
		if !r.run(nil, "a probe at t=33s") {
			return
		}
		r.wantState(HalfOpen, "reopened, half-open again, then 1 successful probe with HalfOpenMaxRequests 2",
			"each half-open period counts its own successes from zero: the success before the breaker reopened does not count")
	})
}

// testPanicked calls Do with fn on the test goroutine and returns what
// Do panicked with, or nil and Do's error.
func testPanicked(b *Breaker, fn func(context.Context) error) (v any, err error) {
	defer func() { v = recover() }()
	return nil, b.Do(context.Background(), fn)
}

func TestR4_APanickingProbeReopens(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		r := testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout})
		if !r.fails(1, "the failure that trips the breaker") {
			return
		}
		h.Advance(timeout)
		require.Equal(t, HalfOpen, r.b.State(), "precondition (R3): half-open when the open period has ended")
		v, err := testPanicked(r.b, func(context.Context) error { panic("nil map in the probe") })
		if v != "nil map in the probe" {
			t.Errorf("fn panicked with \"nil map in the probe\", and Do %s; want Do to panic on with the same value "+
				"(record the failure in a defer; if you recover, panic again with the same value)", testWhatDid(v, err))
			return
		}
		if !r.wantState(Open, "after the probe panicked",
			"a panic in fn counts as a failure, so the probe reopens the breaker: record the result in a defer, "+
				"which runs even when fn panics (otherwise the probe also keeps its place for ever)") {
			return
		}
		h.Advance(timeout)
		r.run(nil, "a probe after the next open period")
	})
}

func testWhatDid(v any, err error) string {
	if v != nil {
		return fmt.Sprintf("panicked with %v", v)
	}
	return fmt.Sprintf("returned %v", err)
}

func TestR5_ResultsFromAnEarlierGenerationChangeNothing(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		hint := "remember the generation that let a call through, and when fn returns ignore the result " +
			"if the breaker has changed state since"

		// A call that started closed fails after the breaker opened.
		r := testNew(h, Settings{MaxFailures: 2, OpenTimeout: timeout})
		slow := r.start(nil)
		if slow.c.Broken() {
			return
		}
		if !slow.running() {
			t.Errorf("a call to a new, closed breaker did not run fn")
			return
		}
		if !r.fails(2, "two failures while a slow call runs") {
			return
		}
		require.Equal(t, Open, r.b.State(), "precondition (R1): MaxFailures 2 consecutive failures open the breaker")
		h.Advance(5 * time.Second)
		if _, ok := slow.end(h, testErrDown, "the slow call"); !ok {
			return
		}
		h.Advance(timeout - 5*time.Second)
		if !r.wantHalfOpenAtEnd("opened at t=0s with OpenTimeout 10s; a call let through while it was closed "+
			"failed at t=5s; now t=10s", "that old call must not reopen the breaker or restart its open period: "+hint) {
			return
		}

		// A probe of an earlier half-open period succeeds in the next one.
		r = testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout, HalfOpenMaxRequests: 2})
		if !r.fails(1, "the failure that trips the breaker") {
			return
		}
		h.Advance(timeout)
		old := r.start(nil)
		if old.c.Broken() {
			return
		}
		require.True(t, old.running(), "precondition (R3): a half-open breaker lets a probe through")
		if !r.run(testErrDown, "a second probe, which fails") {
			return
		}
		require.Equal(t, Open, r.b.State(), "precondition (R4): a failed probe reopens the breaker")
		h.Advance(timeout)
		require.Equal(t, HalfOpen, r.b.State(), "precondition (R3): half-open when the open period has ended")

		// The old probe does not hold a place in the new half-open period.
		fresh := r.startN(2, nil)
		if !r.settle("2 new calls while a probe of the previous half-open period runs") || fresh[0].c.Broken() {
			return
		}
		if running, _, other := testCount(fresh, ErrTooManyRequests); running != 2 {
			t.Errorf("half-open again with HalfOpenMaxRequests 2, while a probe of the previous half-open period still runs: "+
				"of 2 new calls %d ran fn%s; want both let through — the old probe holds no place in the new period: %s",
				running, other, hint)
			return
		}
		if _, ok := old.end(h, nil, "the old probe"); !ok {
			return
		}
		extra := r.start(nil)
		if !r.settle("a call while 2 probes run") || extra.c.Broken() {
			return
		}
		if extra.running() {
			t.Errorf("after a probe of the previous half-open period ended, a new call ran although 2 probes of this period "+
				"were running and HalfOpenMaxRequests is 2: either the old probe freed a place it did not hold — %s — "+
				"or probes are not limited at all (R3)", hint)
			return
		}
		if _, ok := fresh[0].end(h, nil, "new probe 1"); !ok {
			return
		}
		if !r.wantState(HalfOpen, "a probe of the previous half-open period succeeded, then 1 probe of this one, with HalfOpenMaxRequests 2",
			"the old probe's success must not count towards closing: "+hint) {
			return
		}
		if _, ok := fresh[1].end(h, nil, "new probe 2"); !ok {
			return
		}
		if !r.wantState(Closed, "after 2 successful probes of this half-open period", "HalfOpenMaxRequests successes close it") {
			return
		}

		// A probe that fails after the breaker closed.
		r = testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout, HalfOpenMaxRequests: 2})
		if !r.fails(1, "the failure that trips the breaker") {
			return
		}
		h.Advance(timeout)
		late := r.start(nil)
		if late.c.Broken() {
			return
		}
		require.True(t, late.running(), "precondition (R3): a half-open breaker lets a probe through")
		if !r.run(nil, "probe 2") || !r.run(nil, "probe 3") {
			return
		}
		require.Equal(t, Closed, r.b.State(), "precondition (R4): 2 successful probes close the breaker")
		if _, ok := late.end(h, testErrDown, "the late probe"); !ok {
			return
		}
		r.wantState(Closed, "closed by 2 successful probes; then a probe of the half-open period failed, with MaxFailures 1",
			"that probe's failure must not reopen the breaker nor count as a failure of the closed state: "+hint)
	})
}

func TestR6_CallerCancellationIsNotAFailure(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		hint := "an error matching context.Canceled means the caller gave up, which says nothing about the dependency: " +
			"count it as nothing (check errors.Is(err, context.Canceled) before counting a failure)"
		r := testNew(h, Settings{MaxFailures: 2, OpenTimeout: timeout})
		if !r.fails(1, "a failure") {
			return
		}
		c := r.start(nil)
		if c.c.Broken() {
			return
		}
		got, ok := c.stop(h, "a cancelled call")
		if !ok {
			return
		}
		if !assert.ErrorIs(t, got, context.Canceled, "fn returned the context error, and Do must return it as it is") {
			return
		}
		if !r.wantState(Closed, "after a failure and a cancelled call, with MaxFailures 2", hint) {
			return
		}
		if !r.fails(1, "a second failure") {
			return
		}
		if !r.wantState(Open, "after fail, cancelled call, fail with MaxFailures 2",
			"a cancellation is not a success either: it must not reset the count of failures") {
			return
		}

		// A cancelled probe frees its place without reopening the breaker.
		h.Advance(timeout)
		probe := r.start(nil)
		if probe.c.Broken() {
			return
		}
		require.True(t, probe.running(), "precondition (R3): a half-open breaker lets a probe through")
		if _, ok := probe.stop(h, "a cancelled probe"); !ok {
			return
		}
		if !r.wantState(HalfOpen, "after the only probe was cancelled", hint) {
			return
		}
		if !r.run(nil, "the probe after the cancelled one") {
			return
		}
		if !r.wantState(Closed, "after a cancelled probe and a successful one, with HalfOpenMaxRequests 1",
			"the cancelled probe must free its place, and one success closes the breaker") {
			return
		}

		// A deadline is the dependency's fault.
		if !r.run(fmt.Errorf("query: %w", context.DeadlineExceeded), "a call that timed out") ||
			!r.run(context.DeadlineExceeded, "another call that timed out") {
			return
		}
		if !r.wantState(Open, "after 2 calls failed with context.DeadlineExceeded, with MaxFailures 2",
			"only cancellation is ignored: a dependency that makes its callers time out is failing") {
			return
		}

		// With IsFailure set, a cancellation is still nothing: IsFailure is
		// not asked about it.
		r = testNew(h, Settings{MaxFailures: 2, OpenTimeout: timeout,
			IsFailure: func(err error) bool { return errors.Is(err, testErrDown) }})
		if !r.fails(1, "a 503, which IsFailure counts as a failure") {
			return
		}
		c = r.start(nil)
		if c.c.Broken() {
			return
		}
		if _, ok := c.stop(h, "a cancelled call"); !ok || !r.fails(1, "a second 503") {
			return
		}
		if !r.wantState(Open, "MaxFailures 2 and an IsFailure that counts only 503s: a 503, a cancelled call, a 503",
			"a cancellation counts as nothing even when IsFailure is set: check errors.Is(err, context.Canceled) "+
				"first and ask IsFailure only about the other errors (here IsFailure said false, which made the "+
				"cancellation a success that reset the count)") {
			return
		}

		// What counts is fn's error, not the caller's ctx: a dependency that
		// fails after the caller gave up has still failed.
		r = testNew(h, Settings{MaxFailures: 2, OpenTimeout: timeout})
		if !r.fails(1, "a failure") {
			return
		}
		late := r.startDeaf()
		if late.c.Broken() {
			return
		}
		late.c.Cancel()
		if got, ok := late.end(h, testErrDown, "a call whose caller cancelled while fn ran, and fn then failed"); !ok {
			return
		} else if !assert.ErrorIs(t, got, testErrDown, "fn returned 503 after its caller cancelled: Do returns fn's error as it is") {
			return
		}
		r.wantState(Open, "MaxFailures 2: a failure, then a call whose caller cancelled but whose fn returned a 503 anyway",
			"only an error matching context.Canceled counts as nothing; judge fn's error, not ctx.Err(): "+
				"the dependency failed, whatever the caller did meanwhile")
	})
}

func TestR6_OnStateChangeFiresOncePerTransition(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		// The hook runs on the goroutine of the call that made the
		// transition, before that call returns.
		inHook, leave := make(chan testChange, 1), make(chan struct{})
		b := New(h.Clk, Settings{MaxFailures: 1, OpenTimeout: timeout, OnStateChange: func(from, to State) {
			inHook <- testChange{from, to}
			<-leave
		}})
		trip := katatest.StartErr(h, func(ctx context.Context) error {
			return b.Do(ctx, func(context.Context) error { return testErrDown })
		})
		if trip.Broken() {
			close(leave)
			return
		}
		entered := len(inHook) == 1
		returned := trip.Returned()
		close(leave)
		if entered {
			if c := <-inHook; c != (testChange{Closed, Open}) {
				t.Errorf("the failure that tripped a breaker with MaxFailures 1 called OnStateChange(%v, %v): call the "+
					"hook only for a transition, with the state before and after it (closed, open here)", c.from, c.to)
			}
		}
		switch {
		case !entered && returned:
			t.Errorf("the failure that tripped a breaker with MaxFailures 1 returned, and OnStateChange had not been " +
				"called: call the hook on the goroutine of the Do that made the transition, before Do returns")
		case returned:
			t.Errorf("Do tripped the breaker and returned while OnStateChange(closed, open) was still running: call the " +
				"hook directly on the goroutine of the Do or State that made the transition (not with go), so that " +
				"it has run when that call returns")
		}
		if _, ok := trip.Finish("Do"); !ok || t.Failed() {
			return
		}

		type seen struct {
			from, to, state State
		}
		var rec katatest.Recorder[seen]
		// The hook runs outside the lock, so it may ask for the state.
		r := testNewAsking(h, Settings{MaxFailures: 1, OpenTimeout: timeout}, func(from, to, state State) {
			rec.Add(seen{from, to, state})
		})
		state := func(step string) bool { _, ok := r.state(step); return ok }
		check := func(situation string, want ...testChange) bool {
			t.Helper()
			var got []testChange
			for _, s := range rec.All() {
				got = append(got, testChange{s.from, s.to})
				if s.state != s.to && s.state != s.from {
					t.Errorf("%s: inside OnStateChange(%v, %v), State() returned %v: the breaker had already moved on, "+
						"so the hook came late. Call it as soon as the lock is released after the change, not later in "+
						"Do (after fn ran, or deferred to the end)", situation, s.from, s.to, s.state)
					return false
				}
				if s.state != s.to {
					t.Errorf("%s: inside OnStateChange(%v, %v), State() returned %v; call the hook after the change is made",
						situation, s.from, s.to, s.state)
					return false
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: OnStateChange saw %v; want %v — call it once for every transition, and only then",
					situation, got, want)
				return false
			}
			return true
		}
		steps := []struct {
			do   func() bool
			what string
			want []testChange
		}{
			{func() bool { return r.fails(1, "a failure with MaxFailures 1") }, "after the failure that tripped it",
				[]testChange{{Closed, Open}}},
			{func() bool {
				return state("State while open") && r.rejects(ErrOpen, "a call while open", "the breaker is open")
			},
				"after State and a rejected call while open", []testChange{{Closed, Open}}},
			{func() bool {
				h.Advance(timeout)
				return state("State after the open period ended") && state("State again")
			},
				"after the open period ended and State was called twice", []testChange{{Closed, Open}, {Open, HalfOpen}}},
			{func() bool { return r.run(testErrDown, "a failing probe") }, "after a probe failed",
				[]testChange{{Closed, Open}, {Open, HalfOpen}, {HalfOpen, Open}}},
			{func() bool {
				h.Advance(timeout)
				return r.run(nil, "a successful probe, the first call after the open period")
			},
				"after the open period ended and the next call, a probe, succeeded",
				[]testChange{{Closed, Open}, {Open, HalfOpen}, {HalfOpen, Open}, {Open, HalfOpen}, {HalfOpen, Closed}}},
			{func() bool { return r.run(nil, "a success while closed") }, "after a success while closed",
				[]testChange{{Closed, Open}, {Open, HalfOpen}, {HalfOpen, Open}, {Open, HalfOpen}, {HalfOpen, Closed}}},
		}
		for _, s := range steps {
			if !s.do() || !check(s.what, s.want...) {
				return
			}
		}

		// OnStateChange is optional.
		b = New(h.Clk, Settings{MaxFailures: 1, OpenTimeout: timeout})
		testNoHook(t, b, func() {
			b.Do(context.Background(), func(context.Context) error { return testErrDown })
			h.Advance(timeout)
			b.State()
			b.Do(context.Background(), func(context.Context) error { return nil })
		})
	})
}

func TestR6_GoroutinesThatFindTheOpenPeriodOverMakeOneMove(t *testing.T) {
	// 20 goroutines find the open period over at the same moment, half of
	// them calling State, half Do with an fn that runs until the test ends
	// it: one of them makes the move to half-open, once. Repeated, with the
	// schedule shaken: a check under one lock and a move under the next
	// shows only when another caller slips in between.
	katatest.Repeat(t, 10, func(h *katatest.H) {
		const timeout = 10 * time.Second
		r := testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout, HalfOpenMaxRequests: 3})
		if !r.fails(1, "the failure that trips the breaker") {
			return
		}
		h.Advance(timeout)
		start, end := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				<-start
				if i%2 == 0 {
					r.b.State()
					return
				}
				r.b.Do(context.Background(), func(ctx context.Context) error {
					select {
					case <-end:
					case <-ctx.Done():
					}
					return nil
				})
			})
		}
		close(start)
		r.wantChanges("10 goroutines called State and 10 called Do at once after the open period ended",
			"exactly one of them makes the move to half-open: check and change the state under one lock",
			testChange{Closed, Open}, testChange{Open, HalfOpen})
		close(end)
		wg.Wait()
	})
}

// testNoHook runs steps on a breaker with no OnStateChange and reports a
// panic as a call of the nil hook.
func testNoHook(t *testing.T, b *Breaker, steps func()) {
	t.Helper()
	defer func() {
		if v := recover(); v != nil {
			t.Errorf("a breaker created without OnStateChange panicked at a state change (%v): the hook is optional "+
				"— call it only if it is not nil", v)
		}
	}()
	steps()
}

func TestR6_RaceFreeWith100Goroutines(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		r := testNew(h, Settings{MaxFailures: 50, OpenTimeout: timeout, HalfOpenMaxRequests: 5})
		// wave releases calls of Do (each fn returns err) and calls of State,
		// 100 in all, together, with no synchronisation between them but the
		// breaker's, and returns the errors of the calls of Do.
		wave := func(calls int, err error) []error {
			start := make(chan struct{})
			errs := make([]error, calls)
			var wg sync.WaitGroup
			for i := range 100 {
				wg.Go(func() {
					<-start
					if i < calls {
						errs[i] = r.b.Do(context.Background(), func(context.Context) error { return err })
					} else {
						r.b.State()
					}
				})
			}
			close(start)
			wg.Wait()
			return errs
		}

		// 49 failures at once, with 51 calls of State; then one more failure,
		// with 99 calls of State racing against the change it makes:
		// MaxFailures 50 opens the breaker on that last failure.
		for _, w := range []struct {
			calls int
			state State
			what  string
		}{
			{49, Closed, "49 calls failed at once with MaxFailures 50"},
			{1, Open, "49 calls failed at once with MaxFailures 50, then one more"},
		} {
			for _, err := range wave(w.calls, testErrDown) {
				if !errors.Is(err, testErrDown) {
					t.Errorf("%s: a call returned %v; the breaker was closed and let each call through, "+
						"so each must return fn's error", w.what, err)
					return
				}
			}
			if !r.wantState(w.state, w.what,
				"every failure must be counted: update the count under the breaker's lock") {
				return
			}
		}
		if !r.wantChanges("50 failures with MaxFailures 50", "the breaker opens exactly once", testChange{Closed, Open}) {
			return
		}

		// 50 successful calls at once on a half-open breaker, with 50 calls of
		// State: some calls are probes, the others are rejected or come after
		// the breaker closed.
		h.Advance(timeout)
		for _, err := range wave(50, nil) {
			if err != nil && !errors.Is(err, ErrTooManyRequests) {
				t.Errorf("50 successful calls arrived at once at a half-open breaker; one returned %v; want nil "+
					"or ErrTooManyRequests", err)
				return
			}
		}
		if !r.wantState(Closed, "50 successful calls arrived at once at a half-open breaker with HalfOpenMaxRequests 5",
			"5 of them were let through and succeeded, so the breaker must be closed") {
			return
		}
		got := r.changes.All()
		if len(got) < 2 {
			t.Errorf("50 calls at once turned the breaker half-open, then closed; OnStateChange saw only %v", got)
			return
		}
		slices.SortFunc(got[1:], func(a, b testChange) int { return int(a.from) - int(b.from) })
		assert.Equal(t, []testChange{{Closed, Open}, {Open, HalfOpen}, {HalfOpen, Closed}}, got,
			"50 calls at once turned the breaker half-open, then closed: OnStateChange must see each transition exactly once "+
				"(in either order: different goroutines made them)")
	})
}

func TestR6_TheHookRunsOnTheGoroutineOfTheCallThatMadeTheTransition(t *testing.T) {
	// A half-open breaker's one probe succeeds, and closes the breaker, while
	// other goroutines call State at that very moment. The hook for
	// (half-open, closed) runs on the probe's goroutine, before its Do
	// returns: not on whichever caller takes the lock next. Which caller
	// does depends on the schedule: repeated, with callers at once.
	const timeout = 10 * time.Second
	katatest.Repeat(t, 12, func(h *katatest.H) {
		var hooks katatest.Recorder[testHookCall]
		b := New(h.Clk, Settings{MaxFailures: 1, OpenTimeout: timeout, HalfOpenMaxRequests: 1,
			OnStateChange: func(from, to State) { hooks.Add(testHookCall{testChange{from, to}, testGoroutine()}) }})
		if err := b.Do(context.Background(), func(context.Context) error { return testErrDown }); !errors.Is(err, testErrDown) {
			t.Errorf("Do returned %v for a fn that returned %v: Do returns fn's error as it is", err, testErrDown)
			return
		}
		h.Advance(timeout)
		gate := h.Gate()
		type probed struct {
			g     string
			err   error
			hooks []testHookCall // the hooks seen when Do returned
		}
		probe := katatest.Go(h, func() (probed, error) {
			p := probed{g: testGoroutine()}
			p.err = b.Do(context.Background(), func(ctx context.Context) error { return gate.Hold(ctx) })
			p.hooks = hooks.All()
			return p, nil
		})
		if probe.Broken() {
			gate.Release()
			return
		}
		others := make([]*katatest.Call[struct{}], 3)
		for i := range others {
			others[i] = katatest.Go(h, func() (struct{}, error) {
				for range 8 {
					b.State() // makes no transition: the breaker is half-open or closed
				}
				return struct{}{}, nil
			})
		}
		gate.Release()
		p, _, ok := probe.Finish("Do of the probe")
		for _, o := range others {
			o.Finish("State of the other callers")
		}
		if !ok || t.Failed() {
			return
		}
		closed := testChange{HalfOpen, Closed}
		for _, c := range hooks.All() {
			if c.testChange == closed && c.g != p.g {
				t.Errorf("OnStateChange(%v, %v) ran on goroutine %s, while the probe that closed the breaker ran on "+
					"goroutine %s: the hook runs on the goroutine of the call that made the transition, before "+
					"that call returns, not on whichever caller takes the lock next", c.from, c.to, c.g, p.g)
				return
			}
		}
		if !slices.ContainsFunc(p.hooks, func(c testHookCall) bool { return c.testChange == closed }) {
			t.Errorf("the probe's success closed the breaker, and its Do returned before OnStateChange(%v, %v) was "+
				"called (other callers were calling State at that moment): call the hook on the goroutine of "+
				"the call that made the transition, before that call returns", closed.from, closed.to)
		}
	})
}

func TestR6_IsFailureRunsOutsideTheLock(t *testing.T) {
	// IsFailure is called without the breaker's lock held: an IsFailure that
	// asks for the state, or one that takes a while to decide, holds up
	// nobody. Closed and half-open, for an error it counts as a failure and
	// one it rejects.
	katatest.Run(t, func(h *katatest.H) {
		const timeout = 10 * time.Second
		for _, probe := range []bool{false, true} {
			for _, fnErr := range []error{&testHTTPError{503}, &testHTTPError{404}} {
				where, verdict := "closed", "rejects"
				if probe {
					where = "half-open, a probe"
				}
				if testIsFailure(fnErr) {
					verdict = "counts as a failure"
				}
				situation := fmt.Sprintf("MaxFailures 1, %s: fn returned %v, which IsFailure %s", where, fnErr, verdict)

				// IsFailure asks for the state.
				var armed atomic.Bool
				var r *testRig
				r = testNew(h, Settings{MaxFailures: 1, OpenTimeout: timeout, IsFailure: func(err error) bool {
					if armed.Load() {
						r.askState()
					}
					return testIsFailure(err)
				}})
				r.asks, r.asker = true, "IsFailure"
				if probe {
					if !r.fails(1, "the failure that trips the breaker") {
						return
					}
					h.Advance(timeout)
				}
				armed.Store(true)
				if !r.run(fnErr, situation+", and IsFailure calls State") {
					return
				}

				// IsFailure takes a while; meanwhile others call State and Do.
				gate := h.Gate()
				var hold atomic.Bool
				b := New(h.Clk, Settings{MaxFailures: 1, OpenTimeout: timeout, IsFailure: func(err error) bool {
					if hold.CompareAndSwap(true, false) {
						_ = gate.Hold(context.Background())
					}
					return testIsFailure(err)
				}})
				if probe {
					b.Do(context.Background(), func(context.Context) error { return testErrDown })
					h.Advance(timeout)
				}
				hold.Store(true)
				slow := katatest.StartErr(h, func(ctx context.Context) error {
					return b.Do(ctx, func(context.Context) error { return fnErr })
				})
				synctest.Wait()
				if gate.Waiting() != 1 {
					gate.Release()
					t.Errorf("precondition (R1): %s, and IsFailure was not asked about it", situation)
					return
				}
				state := katatest.Go(h, func() (State, error) { return b.State(), nil })
				other := katatest.StartErr(h, func(ctx context.Context) error {
					return b.Do(ctx, func(context.Context) error { return nil })
				})
				if stuck := h.Settle(); stuck != nil {
					t.Errorf("%s; while IsFailure was still deciding, State and Do were stuck on the breaker's mutex: "+
						"your breaker calls IsFailure with its lock held, so a slow IsFailure holds up every caller "+
						"(and one that calls State or Do waits for ever). Judge fn's error before you lock to record "+
						"the result. Stuck:\n\t%s", situation, strings.Join(stuck, "\n\t"))
					gate.Release()
					for i := 0; i < 100 && h.Settle() != nil; i++ {
					}
					return
				}
				if !state.Returned() || !other.Returned() {
					gate.Release()
					t.Errorf("%s; while IsFailure was still deciding, a call of State or Do did not return: neither "+
						"waits for anything, and IsFailure runs without the breaker's lock", situation)
					return
				}
				gate.Release()
				synctest.Wait()
				if !slow.Returned() {
					t.Errorf("%s: IsFailure returned, but Do did not", situation)
					return
				}
				if err := slow.Err(); err != fnErr {
					t.Errorf("%s: Do returned %v; want fn's error as it is", situation, err)
					return
				}
			}
		}
	})
}

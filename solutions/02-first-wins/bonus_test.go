package firstwins

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

// testStarted is a replica of Hedge starting: its index and the mock time.
type testStarted struct {
	replica int
	at      time.Duration
}

func (s testStarted) String() string { return fmt.Sprintf("replica %d at %v", s.replica, s.at) }

// testHedgeReplicas returns n replicas that record when they start and then
// behave as do(i, ctx) says.
func testHedgeReplicas(h *katatest.H, n int, do func(i int, ctx context.Context) (string, error)) ([]testCall, *katatest.Recorder[testStarted]) {
	starts := &katatest.Recorder[testStarted]{}
	calls := make([]testCall, n)
	for i := range calls {
		calls[i] = func(ctx context.Context) (string, error) {
			starts.Add(testStarted{i, h.Elapsed()})
			return do(i, ctx)
		}
	}
	return calls, starts
}

// testStartedAt checks that exactly the replicas in want have started, at
// the mock times in want; why explains the schedule.
func testStartedAt(h *katatest.H, starts *katatest.Recorder[testStarted], want []testStarted, why string) bool {
	h.T.Helper()
	got := starts.All()
	if len(got) != len(want) {
		h.T.Errorf("after %v of mock time the replicas started were %v; want %v: %s", h.Elapsed(), got, want, why)
		return false
	}
	for i := range want {
		if got[i] != want[i] {
			h.T.Errorf("the replicas started were %v; want %v: %s", got, want, why)
			return false
		}
	}
	return true
}

func TestB1_HedgesStartOneDelayApart(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		gates := []*katatest.Gate{katatest.NewGate(), katatest.NewGate(), katatest.NewGate()}
		calls, starts := testHedgeReplicas(h, 3, func(i int, ctx context.Context) (string, error) {
			return testHeld(gates[i], fmt.Sprintf("replica %d", i))(ctx)
		})
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return Hedge(ctx, h.Clk, time.Hour, 100*ms, calls...)
		})
		if r.Broken() {
			return
		}
		steps := []struct {
			advance time.Duration
			want    []testStarted
			why     string
		}{
			{0, []testStarted{{0, 0}}, "replica 0 starts at once, the next one only after the 100ms delay"},
			{100*ms - 1, []testStarted{{0, 0}}, "replica 1 is due 100ms after replica 0 started, not before"},
			{1, []testStarted{{0, 0}, {1, 100 * ms}}, "replica 1 starts when 100ms have passed on clk since replica 0 started"},
			{100*ms - 1, []testStarted{{0, 0}, {1, 100 * ms}}, "replica 2 is due 100ms after replica 1 started, not before"},
			{1, []testStarted{{0, 0}, {1, 100 * ms}, {2, 200 * ms}}, "replica 2 starts 100ms after replica 1"},
		}
		for _, s := range steps {
			h.Advance(s.advance)
			if !testStartedAt(h, starts, s.want, s.why) {
				testStop(h, r)
				return
			}
		}
		gates[1].Release()
		synctest.Wait()
		if !r.Returned() {
			t.Errorf("replica 1 succeeded, but Hedge was still waiting: return the first success at once")
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("Hedge")
		if !ok {
			return
		}
		assert.NoError(t, err, "replica 1 succeeded")
		assert.Equal(t, "replica 1", v, "Hedge must return the value of the replica that succeeded")
		assert.Equal(t, 1, gates[0].Cancelled(), "replica 1 won: the ctx of replica 0 must be cancelled")
		assert.Equal(t, 1, gates[2].Cancelled(), "replica 1 won: the ctx of replica 2 must be cancelled")
		testNoTimerLeft(h, "Hedge", "a replica succeeded")
	})
}

func TestB1_AFailureStartsTheNextReplicaAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errRefused := errors.New("connection refused")
		gates := []*katatest.Gate{katatest.NewGate(), katatest.NewGate(), katatest.NewGate()}
		calls, starts := testHedgeReplicas(h, 3, func(i int, ctx context.Context) (string, error) {
			if i == 0 {
				return testAfter(h, 30*ms, "", errRefused)(ctx)
			}
			return testHeld(gates[i], fmt.Sprintf("replica %d", i))(ctx)
		})
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return Hedge(ctx, h.Clk, time.Hour, 100*ms, calls...)
		})
		if r.Broken() {
			return
		}
		steps := []struct {
			advance time.Duration
			want    []testStarted
			why     string
		}{
			{30 * ms, []testStarted{{0, 0}, {1, 30 * ms}}, "replica 0 failed at 30ms, so replica 1 must start at once, " +
				"without waiting for the rest of the 100ms delay"},
			{100*ms - 1, []testStarted{{0, 0}, {1, 30 * ms}}, "replica 2 is due 100ms after replica 1 started (at 130ms), not before"},
			{1, []testStarted{{0, 0}, {1, 30 * ms}, {2, 130 * ms}}, "replica 2 is due 100ms after replica 1 started: " +
				"after a failure the delay counts from the replica it started"},
		}
		for _, s := range steps {
			h.Advance(s.advance)
			if !testStartedAt(h, starts, s.want, s.why) {
				testStop(h, r)
				return
			}
		}
		gates[2].Release()
		synctest.Wait()
		if !r.Returned() {
			t.Errorf("replica 2 succeeded, but Hedge was still waiting: return the first success at once")
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("Hedge")
		if !ok {
			return
		}
		assert.NoError(t, err, "replica 2 succeeded")
		assert.Equal(t, "replica 2", v, "Hedge must return the value of the replica that succeeded")
		testNoTimerLeft(h, "Hedge", "a replica succeeded")
	})
}

func TestB1_NoReplicaStartsAfterAWinner(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		calls, starts := testHedgeReplicas(h, 3, func(i int, ctx context.Context) (string, error) {
			return testAfter(h, 50*ms, fmt.Sprintf("replica %d", i), nil)(ctx)
		})
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return Hedge(ctx, h.Clk, time.Hour, 100*ms, calls...)
		})
		if r.Broken() {
			return
		}
		h.Advance(50 * ms)
		if !r.Returned() {
			t.Errorf("replica 0 succeeded at 50ms, before any hedge was due, but Hedge was still waiting")
			testStop(h, r)
			return
		}
		v, err, ok := r.Finish("Hedge")
		if !ok {
			return
		}
		assert.NoError(t, err, "replica 0 succeeded at 50ms")
		assert.Equal(t, "replica 0", v, "Hedge must return the value of the replica that succeeded")
		if !testNoTimerLeft(h, "Hedge", "replica 0 succeeded before the first hedge was due") {
			return
		}
		testStartedAt(h, starts, []testStarted{{0, 0}}, "replica 0 succeeded before any hedge was due: "+
			"a replica not started when Hedge returns is never called")
	})
}

func TestB1_TheTimeoutCountsFromTheStartOfHedge(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		gates := []*katatest.Gate{katatest.NewGate(), katatest.NewGate(), katatest.NewGate()}
		calls, _ := testHedgeReplicas(h, 3, func(i int, ctx context.Context) (string, error) {
			return testHeld(gates[i], fmt.Sprintf("replica %d", i))(ctx)
		})
		r := katatest.Start(h, func(ctx context.Context) (string, error) {
			return Hedge(ctx, h.Clk, 100*ms, 60*ms, calls...)
		})
		if r.Broken() {
			return
		}
		h.Advance(100*ms - 1) // replica 1 started at 60ms; replica 2 is due at 120ms
		if r.Returned() {
			_, err := r.Result()
			t.Errorf("Hedge with timeout 100ms returned (error %v) after 100ms-1ns, while replicas 0 and 1 were "+
				"still running: it may give up only when the timeout has passed", err)
			testStop(h, r)
			return
		}
		h.Advance(1)
		if !r.Returned() {
			t.Errorf("Hedge with timeout 100ms and delay 60ms: 100ms after Hedge started, with no replica " +
				"answered, it was still waiting: one timeout for the whole call, counted from the start of Hedge, " +
				"not from the start of the latest replica — arm it once, before the first replica starts")
			testStop(h, r)
			return
		}
		_, err, ok := r.Finish("Hedge")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, ErrTimeout, "Hedge timed out after 100ms: its error must match ErrTimeout")
	})
}

func TestB2_CollectReturnsWhatArrivedByTheDeadline(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		errBusy := errors.New("503 busy")
		g := katatest.NewGate()
		var at time.Duration
		r := katatest.Start(h, testTimed(h, &at, func(ctx context.Context) ([]Reply[string], error) {
			return Collect(ctx, h.Clk, 100*ms,
				testAfter(h, 20*ms, "a", nil),
				testAfter(h, 10*ms, "", errBusy),
				testHeld(g, "c")), nil
		}))
		if r.Broken() {
			return
		}
		h.Advance(100*ms - 1)
		if r.Returned() {
			got, _ := r.Result()
			t.Errorf("Collect returned %v after %v, before its 100ms deadline, while replica 2 was still running: "+
				"wait until every replica has answered or the deadline has passed", got, at)
			testStop(h, r)
			return
		}
		h.Advance(1)
		if !r.Returned() {
			t.Errorf("the 100ms deadline had passed on the mock clock, but Collect was still waiting for replica 2: " +
				"stop waiting at the deadline (a clk.Timer in the select)")
			testStop(h, r)
			return
		}
		got, _, ok := r.Finish("Collect")
		if !ok {
			return
		}
		if !assert.Len(t, got, 3, "Collect must return one Reply per call") {
			return
		}
		assert.Equal(t, Reply[string]{"a", nil}, got[0], "replica 0 succeeded at 20ms: its Reply must hold its answer")
		assert.Equal(t, Reply[string]{"", errBusy}, got[1], "replica 1 failed at 10ms: its Reply must hold "+
			"what it returned (replies are in the order of calls, not of arrival)")
		if late := got[2].Err; late != nil && !errors.Is(late, ErrTimeout) && strings.HasPrefix(late.Error(), "held: ") {
			t.Errorf("replica 2 returned %q when Collect cancelled it at the deadline, after Collect had returned, "+
				"and that late answer was written into the slice Collect returned: once Collect returns, the "+
				"replies belong to the caller; collect the answers on Collect's goroutine (a channel) and drop "+
				"the late ones", late)
			return
		}
		assert.Empty(t, got[2].Value, "replica 2 had not answered by the deadline: its Value must be the zero value")
		assert.ErrorIs(t, got[2].Err, ErrTimeout, "replica 2 had not answered by the deadline: its Err must match ErrTimeout")
		assert.ErrorIs(t, got[2].Err, context.DeadlineExceeded, "replica 2 had not answered by the deadline: "+
			"its Err must also match context.DeadlineExceeded")
		assert.Equal(t, 1, g.Cancelled(), "at the deadline Collect must cancel the ctx of the replicas still running")
	})
}

func TestB2_CollectReturnsWhenEveryReplicaAnswered(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		r := katatest.Start(h, func(ctx context.Context) ([]Reply[string], error) {
			return Collect(ctx, h.Clk, time.Hour,
				testAfter(h, 30*ms, "a", nil),
				testAfter(h, 10*ms, "b", nil)), nil
		})
		if r.Broken() {
			return
		}
		h.Advance(30 * ms)
		if !r.Returned() {
			t.Errorf("both replicas had answered by 30ms, but Collect was still waiting: " +
				"once every replica has answered there is nothing left to wait for; don't wait for the deadline")
			testStop(h, r)
			return
		}
		got, _, ok := r.Finish("Collect")
		if !ok {
			return
		}
		assert.Equal(t, []Reply[string]{{"a", nil}, {"b", nil}}, got, "Collect must return every answer, "+
			"in the order of calls (replica 1 answered first)")
		if !testNoTimerLeft(h, "Collect", "every replica answered") {
			return
		}
		e := katatest.Start(h, func(ctx context.Context) ([]Reply[string], error) {
			return Collect[string](ctx, h.Clk, time.Hour), nil
		})
		if e.Broken() || !e.Returns("Collect with no calls was still waiting at 0s (timeout 1h): with no replica to "+
			"wait for, every replica has answered already, so it returns an empty slice at once (do not wait for "+
			"an answer to arrive before you check whether any is missing)") {
			return
		}
		if empty, _, ok := e.Finish("Collect"); ok {
			assert.Empty(t, empty, "Collect with no calls must return an empty slice at once")
		}
	})
}

func TestB1_NegativeDelayStartsEveryReplicaAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		for _, delay := range []time.Duration{0, -1, -time.Second} {
			gates := []*katatest.Gate{katatest.NewGate(), katatest.NewGate(), katatest.NewGate()}
			calls, starts := testHedgeReplicas(h, 3, func(i int, ctx context.Context) (string, error) {
				return testHeld(gates[i], fmt.Sprintf("replica %d", i))(ctx)
			})
			r := katatest.Start(h, func(ctx context.Context) (string, error) {
				return Hedge(ctx, h.Clk, time.Hour, delay, calls...)
			})
			if r.Broken() {
				return
			}
			// Started together, the replicas may enter in any order.
			got := starts.All()
			slices.SortFunc(got, func(a, b testStarted) int { return a.replica - b.replica })
			if want := []testStarted{{0, 0}, {1, 0}, {2, 0}}; !slices.Equal(got, want) {
				t.Errorf("with delay %v, the replicas started were %v; want %v: delay <= 0 starts every replica "+
					"at once, like First (test delay <= 0, not delay == 0)", delay, got, want)
				testStop(h, r)
				return
			}
			gates[2].Release()
			synctest.Wait()
			if !r.Returned() {
				t.Errorf("with delay %v, replica 2 succeeded, but Hedge was still waiting", delay)
				testStop(h, r)
				return
			}
			if _, _, ok := r.Finish("Hedge"); !ok {
				return
			}
		}
	})
}

func TestB2_CollectStopsWhenTheCallerCancels(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		g := katatest.NewGate()
		r := katatest.Start(h, func(ctx context.Context) ([]Reply[string], error) {
			return Collect(ctx, h.Clk, time.Hour, testAfter(h, 0, "a", nil), testHeld(g, "b")), nil
		})
		if r.Broken() {
			return
		}
		if r.Returned() {
			got, _ := r.Result()
			t.Errorf("Collect returned %v while replica 1 was still running, before the deadline and before "+
				"any cancel: wait until every replica has answered, the deadline passes or ctx is done", got)
			testStop(h, r)
			return
		}
		r.Cancel()
		if instant, took := r.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("the caller cancelled ctx, but Collect was still waiting %v later: select on ctx.Done() too", took)
			testStop(h, r)
			return
		}
		got, _, ok := r.Finish("Collect")
		if !ok || !assert.Len(t, got, 2, "Collect must return one Reply per call") {
			return
		}
		assert.Equal(t, Reply[string]{"a", nil}, got[0], "replica 0 answered before the cancel: its Reply must hold its answer")
		if assert.ErrorIs(t, got[1].Err, context.Canceled, "the caller cancelled before replica 1 answered: its "+
			"Err must match ctx.Err() (context.Canceled)") {
			assert.NotErrorIs(t, got[1].Err, ErrTimeout, "the caller cancelled long before the deadline: "+
				"replica 1's Err must be ctx.Err(), not a timeout")
		}
	})
}

func TestB2_LateAnswersDoNotChangeTheReplies(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		r := katatest.Start(h, func(ctx context.Context) ([]Reply[string], error) {
			return Collect(ctx, h.Clk, 100*ms, testAfter(h, 10*ms, "a", nil), testAfter(h, 200*ms, "late", nil)), nil
		})
		if r.Broken() {
			return
		}
		h.Advance(100 * ms)
		if !r.Returned() {
			t.Errorf("the 100ms deadline had passed on the mock clock, but Collect was still waiting for replica 1")
			testStop(h, r)
			return
		}
		if r.Panicked() {
			return
		}
		got, _ := r.Result()
		if !assert.Len(t, got, 2, "Collect must return one Reply per call") {
			testStop(h, r)
			return
		}
		before := got[1]
		h.Advance(100 * ms) // replica 1 ignores its ctx and answers at 200ms, after Collect returned
		if !h.NoLeaks("Collect and its late replica") {
			return
		}
		assert.Equal(t, before, got[1], "replica 1 answered at 200ms, after Collect had returned at its 100ms "+
			"deadline, and the slice Collect returned changed: once Collect returns, the replies belong to the "+
			"caller; a late answer must be dropped, not written into them")
		assert.ErrorIs(t, got[1].Err, ErrTimeout, "replica 1 had not answered by the deadline: its Err must match ErrTimeout")
	})
}

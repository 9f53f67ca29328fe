package firstwins

// Explored B2: Collect over drawn scenarios. Each replica answers at a
// drawn instant, or not before Collect returns, with a success, a failure
// with the zero value, a failure with a value along with it, a wrapped
// error, or an error of its own that matches context.DeadlineExceeded or
// context.Canceled; the caller's timeout and cancel are drawn too. The
// model: Collect returns at the first of the last answer, the timeout and
// the cancel, and each Reply is exactly what its replica returned, or the
// zero value and the error of what ended Collect. An answer at the instant
// of the timeout or the cancel is moved 1ms later (the README does not
// order them).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

// What a replica answers.
const (
	testCollectOK        = iota // a value and a nil error
	testCollectFail             // the zero value and an error
	testCollectStale            // a value along with an error
	testCollectWrapped          // a value along with a wrapped error
	testCollectOwnExpiry        // its own per-call timeout: matches context.DeadlineExceeded
	testCollectOwnCancel        // its own cancellation: matches context.Canceled
	testCollectKinds
)

// testCollectReplica is what one replica of Collect does.
type testCollectReplica struct {
	answers bool          // answers at at; otherwise only after Collect returned
	at      time.Duration // when it answers
	kind    int
	honours bool // gives up when its ctx is done
	// races: it answers at the very instant the timeout or the cancel ends
	// Collect (collectscenariosrace_test.go), its answer already on its way
	// (it ignores its ctx); the README does not order the two.
	races bool
}

type testCollectScenario struct {
	timeout time.Duration // <= 0: none
	cancel  time.Duration // when the caller cancels; 0: never
	reps    []testCollectReplica
	// With racing replicas: cancelBy is i+1 when replica i cancels the
	// caller's ctx as it answers, 0 when the test does; answersFirst
	// releases the racing answers just before the end, not just after.
	cancelBy     int
	answersFirst bool
}

// What ends Collect.
const (
	testCollectAll = iota
	testCollectTimedOut
	testCollectCancelled
)

// end is when Collect returns, and why.
func (s testCollectScenario) end() (at time.Duration, why int) {
	at, why = 0, testCollectAll
	for _, r := range s.reps {
		if !r.answers || r.races { // a racing answer comes with the timeout or the cancel
			at = -1
			break
		}
		at = max(at, r.at)
	}
	if s.timeout > 0 && (at < 0 || s.timeout < at) {
		at, why = s.timeout, testCollectTimedOut
	}
	if s.cancel > 0 && (at < 0 || s.cancel < at) {
		at, why = s.cancel, testCollectCancelled
	}
	return at, why
}

func (s testCollectScenario) endText() string {
	at, why := s.end()
	switch why {
	case testCollectTimedOut:
		return fmt.Sprintf("the %v timeout passes", s.timeout)
	case testCollectCancelled:
		return fmt.Sprintf("the caller cancels at %v", s.cancel)
	}
	if len(s.reps) == 0 {
		return "there is no replica to wait for"
	}
	return fmt.Sprintf("the last replica answers at %v", at)
}

// answered: replica i answered before Collect returned. A racing replica
// did not: it answers as Collect returns, and may be missing.
func (s testCollectScenario) answered(i int) bool {
	at, _ := s.end()
	r := s.reps[i]
	return r.answers && !r.races && (at < 0 || r.at <= at)
}

func (s testCollectScenario) value(i int) string {
	return fmt.Sprintf("%d.99 from %s", 10+i, testHedgeRegions[i])
}

// reply is what replica i returns when it answers, a distinct error value
// per replica.
func (s testCollectScenario) reply(i int) Reply[string] {
	busy := &testHedgeErr{testHedgeRegions[i]}
	switch s.reps[i].kind {
	case testCollectFail:
		return Reply[string]{"", busy}
	case testCollectStale:
		return Reply[string]{"stale " + s.value(i), busy}
	case testCollectWrapped:
		return Reply[string]{"partial " + s.value(i), fmt.Errorf("quote from %s: %w", testHedgeRegions[i], busy)}
	case testCollectOwnExpiry:
		return Reply[string]{"cached " + s.value(i), fmt.Errorf("%s: own 50ms per-call timeout: %w",
			testHedgeRegions[i], context.DeadlineExceeded)}
	case testCollectOwnCancel:
		return Reply[string]{"", fmt.Errorf("%s: connection pool closed: %w", testHedgeRegions[i], context.Canceled)}
	}
	return Reply[string]{s.value(i), nil}
}

func (s testCollectScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Collect with %d replica(s), timeout %v", len(s.reps), s.timeout)
	if s.timeout <= 0 {
		b.WriteString(" (no timeout)")
	}
	if s.cancel > 0 {
		fmt.Fprintf(&b, ", the caller cancels at %v", s.cancel)
	}
	b.WriteString(";")
	for i, r := range s.reps {
		when := "answers only after Collect returned"
		if r.races {
			rp := s.reply(i)
			when = fmt.Sprintf("answers (%q, %v) at the very instant %s, its answer already on its way", rp.Value, rp.Err, s.endText())
			if s.cancelBy == i+1 {
				when += " (the caller cancels as this answer comes back)"
			}
		} else if r.answers {
			rp := s.reply(i)
			when = fmt.Sprintf("answers (%q, %v) at %v", rp.Value, rp.Err, r.at)
		}
		ctx := "ignores its ctx"
		if r.honours && !r.races {
			ctx = "honours its ctx"
		}
		fmt.Fprintf(&b, "\n  replica %d: %s; %s", i, when, ctx)
	}
	at, _ := s.end()
	fmt.Fprintf(&b, "\n  by the README: Collect returns at %v, when %s", at, s.endText())
	if slices.ContainsFunc(s.reps, func(r testCollectReplica) bool { return r.races }) {
		first := "just after"
		switch {
		case s.cancelBy > 0:
			first = "as"
		case s.answersFirst:
			first = "just before"
		}
		fmt.Fprintf(&b, "; the racing answers come %s it, in the same instant: each of their Replies may be "+
			"the answer or a missing one, but once Collect has returned the slice must not change", first)
	}
	return b.String()
}

func testDrawCollect(r *rapid.T) testCollectScenario {
	const unit = 10 * time.Millisecond
	var s testCollectScenario
	n := rapid.IntRange(0, 4).Draw(r, "replicas")
	for i := range n {
		s.reps = append(s.reps, testCollectReplica{
			answers: rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("replica %d answers in time (not 0)", i)) != 0,
			at:      time.Duration(rapid.IntRange(0, 10).Draw(r, fmt.Sprintf("replica %d answers at (x10ms)", i))) * unit,
			kind:    rapid.IntRange(0, testCollectKinds-1).Draw(r, fmt.Sprintf("replica %d answers with", i)),
			honours: rapid.Bool().Draw(r, fmt.Sprintf("replica %d honours ctx", i)),
		})
	}
	if rapid.IntRange(0, 3).Draw(r, "a timeout (not 0)") != 0 {
		s.timeout = time.Duration(rapid.IntRange(1, 12).Draw(r, "timeout (x10ms)")) * unit
	} else {
		s.timeout = rapid.SampledFrom([]time.Duration{0, -1, -time.Second}).Draw(r, "no timeout")
	}
	if rapid.IntRange(0, 2).Draw(r, "the caller cancels") == 0 {
		s.cancel = time.Duration(rapid.IntRange(1, 12).Draw(r, "cancel at (x10ms)")) * unit
	}
	if at, _ := s.end(); at < 0 {
		s.cancel = 13 * unit // something must end Collect: here the caller gives up
	}
	// Events the README does not order are moved apart.
	if s.timeout > 0 && s.cancel == s.timeout {
		s.cancel += time.Millisecond
	}
	for i := range s.reps {
		for s.reps[i].at == s.timeout || s.reps[i].at == s.cancel {
			s.reps[i].at += time.Millisecond
		}
	}
	return s
}

// testCollectFakes are a scenario's replicas: each holds at its gate until
// the test releases it (on its ctx if it honours it), then answers its
// reply, or "too late" if it never answers; a racing one (rep.races)
// answers whatever its ctx says once released, after cancelling the
// caller if it is the one that does (cancel).
type testCollectFakes struct {
	gates   []*katatest.Gate
	calls   []testCall
	replies []Reply[string] // made once: a Reply's Err must be the very value its replica returned
	mu      sync.Mutex
	ctxs    []context.Context // the ctx each replica got
}

func (s testCollectScenario) fakes(h *katatest.H, cancel func()) *testCollectFakes {
	n := len(s.reps)
	f := &testCollectFakes{gates: make([]*katatest.Gate, n), calls: make([]testCall, n),
		replies: make([]Reply[string], n), ctxs: make([]context.Context, n)}
	for i := range s.reps {
		f.replies[i] = s.reply(i)
	}
	for i, rep := range s.reps {
		f.gates[i] = h.Gate()
		f.calls[i] = func(ctx context.Context) (string, error) {
			// Yield on the way in and out (when the schedule is shaken), so
			// an answer lands anywhere in what Collect does meanwhile.
			shake.Point()
			defer shake.Point()
			f.mu.Lock()
			f.ctxs[i] = ctx
			f.mu.Unlock()
			if rep.races {
				_ = f.gates[i].Hold(context.Background()) // its answer is on its way: it comes whatever ctx says
				if s.cancelBy == i+1 {
					cancel() // the caller gives up as this answer comes back
				}
				return f.replies[i].Value, f.replies[i].Err
			}
			if !rep.answers || rep.at > 0 {
				hold := context.Background()
				if rep.honours {
					hold = ctx
				}
				if err := f.gates[i].Hold(hold); err != nil {
					return "", fmt.Errorf("gave up: %w", err)
				}
			}
			if !rep.answers {
				return "late " + s.value(i), errors.New("too late")
			}
			return f.replies[i].Value, f.replies[i].Err
		}
	}
	return f
}

// live is the ctx each replica got, nil for one not called.
func (f *testCollectFakes) live() []context.Context {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ctxs)
}

func (s testCollectScenario) play(h *katatest.H) {
	f := s.fakes(h, nil)
	gates, calls, replies := f.gates, f.calls, f.replies
	c := katatest.Start(h, func(ctx context.Context) ([]Reply[string], error) {
		return Collect(ctx, h.Clk, s.timeout, calls...), nil
	})
	if c.Broken() {
		return
	}
	// The scenario's instants count from when Collect was called (a test may
	// play several rounds in one bubble).
	base := h.Elapsed()
	endAt, why := s.end()
	instants := []time.Duration{0, endAt}
	for _, r := range s.reps {
		if r.answers && r.at <= endAt {
			instants = append(instants, r.at)
		}
	}
	slices.Sort(instants)
	for _, t := range slices.Compact(instants) {
		if now := h.Elapsed() - base; t > now {
			h.Advance(t - now)
		}
		for i, r := range s.reps {
			if r.answers && r.at == t && t > 0 {
				gates[i].Release()
			}
		}
		if why == testCollectCancelled && t == endAt {
			c.Cancel()
		}
		synctest.Wait()
		if t < endAt && c.Returned() {
			got, _ := c.Result()
			h.Errorf("Collect returned %v at %v, before anything ended it (it returns at %v, when %s): wait until "+
				"every replica has answered, the timeout passes (timeout <= 0 means no timeout) or ctx is done",
				got, t, endAt, s.endText())
			katatest.Unwind(h, c)
			return
		}
		if t == endAt && !c.Returned() {
			lost := ""
			if why == testCollectAll {
				lost = "; if Collect does return once the answers are all in, the last one's wake-up was lost: " +
					"an answer that lands between Collect's check of what is missing and its wait must still wake " +
					"it (a non-blocking send to a Collect not yet waiting, or a signal sent before the wait, is " +
					"lost). Receive the answers themselves from a channel buffered for all of them, in one select " +
					"with the timeout and ctx.Done()"
			}
			h.Errorf("Collect was still waiting at %v, when %s: return as soon as every replica has answered, "+
				"the timeout passes on clk or ctx is done, whichever comes first, and drop the answers that come "+
				"later%s%s", t, s.endText(), lost, h.Waiting())
			katatest.Unwind(h, c)
			return
		}
	}
	got, _ := c.Result()
	if !s.checkReplies(h, replies, got) {
		katatest.Unwind(h, c)
		return
	}
	for i, ctx := range f.live() {
		if ctx != nil && !s.answered(i) && ctx.Err() == nil {
			how := "honours"
			if !s.reps[i].honours {
				how = "ignores"
			}
			h.Errorf("Collect returned at %v (%s), but the ctx of replica %d, still running (it %s its ctx), was "+
				"never cancelled: when Collect returns it cancels the replicas still running, whether they honour "+
				"their ctx or not; derive their ctx with context.WithCancel(ctx) and defer cancel()", endAt,
				s.endText(), i, how)
			katatest.Unwind(h, c)
			return
		}
	}
	before := slices.Clone(got)
	if moved := h.PendingTimer(); moved != 0 {
		h.Errorf("Collect returned at %v (%s) and left a timer pending on clk (WaitForAllTimers moved the "+
			"mock clock %v further): stop the timeout's timer on every way out (defer t.Stop(); clk.After "+
			"cannot be stopped)", endAt, s.endText(), moved)
		katatest.Unwind(h, c)
		return
	}
	for _, g := range gates {
		g.Release() // the replicas that had not answered answer now, after Collect returned
	}
	if _, _, ok := c.Finish("Collect"); !ok {
		return
	}
	for i := range got {
		if got[i] != before[i] {
			h.Errorf("replica %d answered after Collect had returned at %v (%s), and the slice Collect returned "+
				"changed from %v to %v: once Collect returns, the replies belong to the caller; drop a late answer",
				i, endAt, s.endText(), before[i], got[i])
			return
		}
	}
}

// checkReplies: one Reply per call, in the order of calls, each what its
// replica returned, or the zero value and the error of what ended Collect.
func (s testCollectScenario) checkReplies(h *katatest.H, replies, got []Reply[string]) bool {
	h.T.Helper()
	endAt, why := s.end()
	if len(got) != len(s.reps) {
		h.Errorf("Collect returned %d replies for %d calls: return one Reply per call, in the order of calls "+
			"(no calls gives an empty slice)", len(got), len(s.reps))
		return false
	}
	for i, r := range s.reps {
		g := got[i]
		if s.answered(i) {
			want := replies[i]
			if g.Value != want.Value || g.Err != want.Err {
				msg := fmt.Sprintf("Collect returned Reply{%q, %v} for replica %d, which answered (%q, %v) at %v, "+
					"before Collect returned at %v (%s): a Reply holds exactly what the replica returned, in the "+
					"order of calls", g.Value, g.Err, i, want.Value, want.Err, r.at, endAt, s.endText())
				switch {
				case want.Err != nil && g.Err == want.Err && g.Value == "":
					msg += "; keep the value a replica returned along with its error (the zero value on failure " +
						"is First's rule for its own result, not Collect's: a Reply is the replica's answer as it is)"
				case want.Err != nil && g.Err != want.Err && errors.Is(g.Err, want.Err):
					msg += "; don't wrap or replace the replica's error"
				case want.Err != nil && (errors.Is(g.Err, ErrTimeout) || errors.Is(g.Err, context.Canceled)):
					msg += "; the replica answered in time, so its Reply is its answer, even when its own error " +
						"matches context.DeadlineExceeded or context.Canceled: tell an answer from a missing " +
						"one by whether it arrived, not by its error"
				}
				h.Errorf("%s", msg)
				return false
			}
			continue
		}
		what := fmt.Sprintf("replica %d had not answered when Collect returned at %v (%s)", i, endAt, s.endText())
		if r.races {
			want := replies[i]
			if g.Value == want.Value && g.Err == want.Err {
				continue // its answer made it in: as good as missing
			}
			what = fmt.Sprintf("replica %d answered (%q, %v) at the very instant Collect returned at %v (%s), "+
				"and its Reply is not exactly that answer, so it must be a missing one", i, want.Value, want.Err, endAt, s.endText())
		}
		if g.Value != "" {
			h.Errorf("Collect returned Reply{%q, %v}: %s, so its Value must be the zero value", g.Value, g.Err, what)
			return false
		}
		switch why {
		case testCollectTimedOut:
			if !errors.Is(g.Err, ErrTimeout) || !errors.Is(g.Err, context.DeadlineExceeded) {
				h.Errorf("Collect returned Reply{%q, %v}: %s, so its Err must match ErrTimeout and "+
					"context.DeadlineExceeded (chain %s); cancel the replicas only after the replies are taken, "+
					"a replica's answer to that cancel is not an answer", g.Value, g.Err, what, katatest.Chain(g.Err))
				return false
			}
		case testCollectCancelled:
			if !errors.Is(g.Err, context.Canceled) || errors.Is(g.Err, ErrTimeout) {
				h.Errorf("Collect returned Reply{%q, %v}: %s, so its Err must match ctx.Err() "+
					"(context.Canceled), and not ErrTimeout (chain %s)", g.Value, g.Err, what, katatest.Chain(g.Err))
				return false
			}
		}
		for j, want := range replies {
			if s.answered(j) && want.Err != nil && errors.Is(g.Err, want.Err) {
				h.Errorf("Collect returned Reply{%q, %v}: %s, and its Err carries the error of replica %d (%v): it "+
					"reports a failure replica %d never had. A missing reply's Err is what ended Collect (the "+
					"timeout or ctx.Err()), nothing another replica returned", g.Value, g.Err, what, j, want.Err, i)
				return false
			}
		}
		if g.Err != nil && strings.Contains(g.Err.Error(), "%!") {
			h.Errorf("Collect returned Reply{%q, %v}: %s, and its Err's text holds a fmt verb given a nil or "+
				"wrong operand: build a missing reply's Err from what ended Collect (the timeout or ctx.Err()) "+
				"alone", g.Value, g.Err, what)
			return false
		}
	}
	return true
}

func TestB2_ExploreEveryReplyIsWhatTheReplicaReturned(t *testing.T) {
	// Always: replicas that fail in time with a value along with their
	// error, which the drawn scenarios hold only now and then.
	const unit = 10 * time.Millisecond
	fixed := testCollectScenario{timeout: 5 * unit, reps: []testCollectReplica{
		{answers: true, at: unit, kind: testCollectStale, honours: true},
		{answers: true, at: 2 * unit, kind: testCollectWrapped},
		{answers: true, at: 3 * unit, kind: testCollectOK, honours: true},
	}}
	katatest.Run(t, func(h *katatest.H) { fixed.play(h) })
	// Always: a failure in time, then the timeout with a replica still
	// silent, whose Reply reports only the timeout, not that failure.
	silent := testCollectScenario{timeout: 3 * unit, reps: []testCollectReplica{
		{answers: true, at: unit, kind: testCollectFail},
		{answers: false, honours: true},
		{answers: true, at: 2 * unit, kind: testCollectWrapped},
	}}
	katatest.Run(t, func(h *katatest.H) { silent.play(h) })
	katatest.Explore(t, 16, testDrawCollect, func(h *katatest.H, s testCollectScenario) { s.play(h) })
}

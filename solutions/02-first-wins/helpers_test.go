package firstwins

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"gokata/internal/katatest"
)

// testCall is one replica of a service that answers with a string.
type testCall = func(context.Context) (string, error)

// testAfter is a replica that ignores its ctx and answers (v, err) once d
// has passed on the mock clock (at once when d is 0).
func testAfter(h *katatest.H, d time.Duration, v string, err error) testCall {
	return func(context.Context) (string, error) {
		if d > 0 {
			h.Clk.Sleep(d)
		}
		return v, err
	}
}

// testHeld is a replica that honours its ctx: it answers (v, nil) when the
// gate is released, or fails with its ctx's error when that ends first.
func testHeld(g *katatest.Gate, v string) testCall {
	return func(ctx context.Context) (string, error) {
		if err := g.Hold(ctx); err != nil {
			return "", fmt.Errorf("held: %w", err)
		}
		return v, nil
	}
}

// testLatch holds replicas that ignore their ctx until the test opens it.
type testLatch struct {
	once sync.Once
	ch   chan struct{}
}

func testNewLatch() *testLatch { return &testLatch{ch: make(chan struct{})} }

func (l *testLatch) open() { l.once.Do(func() { close(l.ch) }) }

// replica ignores its ctx and answers (v, err) once the latch opens.
func (l *testLatch) replica(v string, err error) testCall {
	return func(context.Context) (string, error) {
		<-l.ch
		return v, err
	}
}

// testTimed returns f, recording in *at how far the mock clock had moved
// when f returned, for a message that says when a call returned too early.
// Read *at once the call has returned.
func testTimed[T any](h *katatest.H, at *time.Duration, f func(context.Context) (T, error)) func(context.Context) (T, error) {
	return func(ctx context.Context) (T, error) {
		defer func() { *at = h.Elapsed() }()
		return f(ctx)
	}
}

// testStop ends a call that went wrong, once the failure is reported: it
// cancels ctx, opens the latches and lets a day of mock time pass, so that
// every replica finishes, even one that ignores its ctx; then it waits for
// the call and checks that nothing is left running.
func testStop[T any](h *katatest.H, r *katatest.Call[T], latches ...*testLatch) {
	h.T.Helper()
	r.Cancel()
	for _, l := range latches {
		l.open()
	}
	h.Advance(24 * time.Hour)
	r.Stop()
}

// testNoTimerLeft fails the test if a timer is still registered on the mock
// clock after what returned (when says in which case), once the test's own
// replicas are all done: WaitForAllTimers then moves the clock to its end.
func testNoTimerLeft(h *katatest.H, what, when string) bool {
	h.T.Helper()
	if moved := h.PendingTimer(); moved != 0 {
		h.T.Errorf("%s: %s returned but left a timer pending on clk (WaitForAllTimers moved the mock clock "+
			"%v further): stop every timer on the way out (t := clk.Timer(d); defer t.Stop()); "+
			"clk.After cannot be stopped", when, what, moved)
		return false
	}
	return true
}

// testReplicaTag is the tag the README puts on each replica's error.
var testReplicaTag = regexp.MustCompile(`replica (\d+): `)

// testPhantomFailure says how the error text msg, returned by fn (First or
// Hedge), reports a failure that never happened, or "" when it reports
// none: each "replica i: " tag must be followed by the text of the error
// replica i returned (failed[i]; "" when it returned none: still running,
// never started, or it succeeded), and no fmt verb may have been given a
// nil or wrong operand.
func testPhantomFailure(fn, msg string, failed []string) string {
	for _, m := range testReplicaTag.FindAllStringSubmatchIndex(msg, -1) {
		i, _ := strconv.Atoi(msg[m[2]:m[3]])
		rest, _, _ := strings.Cut(msg[m[1]:], "\n")
		if i < len(failed) && failed[i] != "" && strings.HasPrefix(rest, failed[i]) {
			continue
		}
		did := "it had returned no error: still running, not started, or it succeeded"
		if i < len(failed) && failed[i] != "" {
			did = fmt.Sprintf("it returned %q", failed[i])
		}
		return fmt.Sprintf("it reports a failure that never happened: %q is not what replica %d returned (%s). Put "+
			"in the error only the errors the replicas returned before %s did, each tagged with its replica's index "+
			"as it arrives (fmt.Errorf(\"replica %%d: %%w\", i, err)); never tag the slot of a replica that has not "+
			"failed (a nil error prints as %%!w(<nil>))", msg[m[0]:m[1]]+rest, i, did, fn)
	}
	if k := strings.Index(msg, "%!"); k >= 0 {
		bad, _, _ := strings.Cut(msg[k:], "\n")
		return fmt.Sprintf("its text holds %q, a fmt verb given a nil or wrong operand: it reports a failure that "+
			"never happened; join only the errors the replicas returned", bad)
	}
	return ""
}

// Package katatest is the harness every hidden test runs in.
//
// [Run] executes a test body inside a testing/synctest bubble with a fresh
// mock clock ([H.Clk]) to inject into the code under test. Mock time moves
// only when the test says so ([H.Advance]); everything else in the bubble is
// fake time too, so nothing really sleeps and every schedule is exact.
//
// The call under test runs on its own goroutine, started with [Start] (or
// [StartErr] for a function that returns only an error), which gives it a
// context of its own:
//
//	c := katatest.Start(h, func(ctx context.Context) (string, error) { return Do(ctx, h.Clk, p, op) })
//	h.Advance(100 * time.Millisecond)
//	c.Cancel()
//	if instant, _ := c.ReturnsAtOnce(time.Second); !instant {
//		t.Errorf("cancel must interrupt the pause ...")
//		c.Stop() // cancel, run the clock out, report a call that never returns or leaks
//		return
//	}
//	v, err, ok := c.Finish("Do") // its results, once nothing it started still runs
//
// [Go] starts a call that takes no context from the test.
//
// Run turns the ways learner code goes wrong into tagged failures (see
// package failure) instead of a crashed or hung test binary: a panic in the
// body or in a started call, synctest's deadlock panic (naming the stuck
// goroutines and the learner's lines), and goroutines still running when the
// test ends. [H.NoLeaks] checks for leaks right after the call under test
// returned, [H.StandsStill] catches waits on the real clock, and
// [Call.ReturnsAtOnce] measures how promptly a call returns. [Repeat] runs a
// scenario whose outcome depends on scheduling in many fresh bubbles, and
// shakes the schedule in each (package shake).
//
// Rules for hidden tests: only the test goroutine calls Advance; no real
// sleeps, runtime.Gosched, t.Parallel or polling; contexts and channels are
// created inside the body.
package katatest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"gokata/internal/failure"
	"gokata/internal/katatest/shake"
)

// H is what a test body gets: the bubble's T and the mock clock.
type H struct {
	T   *testing.T
	Clk *Clock

	dir      string        // directory of the package under test
	ignore   goleak.Option // goroutines that existed when the bubble started
	blind    bool          // goleak could not read the dump then: ignore is empty, and leaks are read from the runtime's dump
	root     int           // the goroutine running the test body, as dumps name it
	bubble   int           // the bubble's id in goroutine dumps
	base     map[int]bool  // the bubble's goroutines then (synctest's own, the test's)
	leaked   bool          // a leak was already reported
	lockHang bool          // a lock deadlock was already reported
	rep      reporter      // where failures go: the bubble's T, or an exploration's record
	fakes    []func()      // release the fakes the test owns (H.Gate), for Call.Stop
}

// Run runs body inside a synctest bubble with a fresh mock clock.
func Run(t *testing.T, body func(h *H)) {
	t.Helper()
	run(t, callerDir(), nil, body)
}

// Repeat runs body n times, each in a fresh bubble with a fresh mock clock.
// Use it for a scenario whose outcome depends on scheduling (a select with
// two ready cases, a prefilled queue, goroutines racing for a lock): only
// time is fake, so a wrong design may pass one run by luck but not n of
// them, while a correct one passes every run.
//
// Each repetition also shakes the schedule, with a seed of its own (package
// shake): the graded code yields a few times after its synchronization
// points (the grader builds it so), and so do the harness's fakes, so
// windows a few instructions wide open on some interleavings. It stops at
// the first repetition that fails and names it and its seed.
func Repeat(t *testing.T, n int, body func(h *H)) {
	t.Helper()
	if t.Failed() {
		return // as Explore and Replay: the first failure stands
	}
	dir := callerDir()
	for i := 1; i <= n; i++ {
		seed := repeatSeed(i)
		func() {
			shake.On(seed)
			defer shake.Off()
			run(t, dir, nil, body)
		}()
		if t.Failed() {
			t.Logf("(this failure came in repetition %d of %d of the same scenario, shaken with seed %d)", i, n, seed)
			return
		}
	}
}

// repeatSeed is the seed that shakes repetition i of a Repeat.
func repeatSeed(int) uint64 { return rand.Uint64() }

// callerDir is the directory of the hidden test that called into the
// harness: the package under test, whose non-test files are the learner's.
func callerDir() string {
	_, file, _, _ := runtime.Caller(2)
	return filepath.Dir(file)
}

// run runs body in a fresh bubble. Failures go to t, or to rec when the
// bubble is one scenario of an exploration (see [Explore]).
func run(t *testing.T, dir string, rec *record, body func(h *H)) {
	t.Helper()
	expectReceipt(t)
	bubble := 0
	var out reporter = t
	if rec != nil {
		out = rec
	}
	if notRunAgain(t, out) {
		return
	}
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		msg := fmt.Sprint(r)
		if !strings.HasPrefix(msg, "deadlock:") {
			panic(r)
		}
		if out.Failed() {
			// A failure was already reported; goroutines it left blocked are not news.
			out.Logf("(then synctest reported: %s)", msg)
			return
		}
		out.Errorf("%s%s", failure.Tag(failure.Deadlock), explainDeadlock(msg, bubble, dir))
	}()
	shake.Forget()
	synctest.Test(t, func(t *testing.T) {
		h := &H{T: t, Clk: NewClock(), dir: dir, rep: t}
		h.ignore, h.blind = ignoreCurrent()
		if rec != nil {
			h.rep = rec
		}
		h.root, bubble = ownGoroutine()
		h.bubble, h.base = bubble, bubbleGoroutines(bubble)
		t.Cleanup(func() { // registered first, so it runs after the test's own cleanups
			if h.leaked {
				return
			}
			// Goroutines queued on a mutex whose holder waits would make
			// the synctest.Wait of NoLeaks, and the bubble's end, wait for
			// ever: say so (unless the test said what went wrong), then
			// release the fakes and move the clock until they can go.
			if stuck := h.Settle(); stuck != nil {
				h.leaked = true
				if !h.Failed() {
					h.Errorf("%sthe test finished, but goroutines were still stuck on a mutex that a goroutine of yours "+
						"holds while it waits (for a channel, the clock or a call): hold a lock only while you read or "+
						"change what it guards. Stuck:\n\t%s", failure.Tag(failure.Deadlock), strings.Join(stuck, "\n\t"))
				}
				h.releaseFakes()
				for i := 0; i < 100 && h.Settle() != nil; i++ {
					h.Clk.Add(min(time.Hour, h.Clk.RunOut()))
				}
				return
			}
			h.NoLeaks("the test")
		})
		defer h.recoverPanic()
		body(h)
	})
}

func explainDeadlock(msg string, bubble int, dir string) string {
	var stuck []failure.Goroutine
	for _, g := range failure.Parse(allStacks()) {
		if g.Bubble == bubble {
			stuck = append(stuck, g)
		}
	}
	lines := failure.Describe(stuck, dir, 5)
	what := "every goroutine is blocked and no timer can wake them: something waits for an event that never comes"
	if strings.Contains(msg, "main bubble goroutine has exited") {
		what = "the test finished but goroutines are still blocked"
	}
	if s := neverWoken(stuck, dir); s != "" {
		what = s + " (" + what + ")"
	}
	if len(lines) == 0 {
		return what + " (the test waited for your code, which never answered)"
	}
	return what + "; stuck:\n\t" + strings.Join(lines, "\n\t")
}

// reporter is where the harness and a test report failures.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
}

// Errorf reports a failure of the test, or of the scenario under
// exploration. It makes H an assert.TestingT: assert.Equal(h, want, got).
func (h *H) Errorf(format string, args ...any) { h.rep.Helper(); h.rep.Errorf(format, args...) }

// Logf adds a line to the test's output.
func (h *H) Logf(format string, args ...any) { h.rep.Helper(); h.rep.Logf(format, args...) }

// IfItHangs says, before a step that a wrong design may never finish (a
// loop in proportion to a huge limit), what a hang there means. The
// checker shows it only if the test hangs after it, and then instead of
// the bare hang; a test that fails otherwise is explained by its own
// message.
func (h *H) IfItHangs(format string, args ...any) {
	h.rep.Helper()
	h.rep.Logf("%s%s", failure.HangHint, fmt.Sprintf(format, args...))
}

// Helper is here for testify, which calls it. It cannot mark its caller
// as a helper (testing marks the function that calls T.Helper itself): a
// hidden test's own helper calls h.T.Helper().
func (h *H) Helper() { h.rep.Helper() }

// Failed reports whether the test, or the scenario under exploration, has
// failed so far.
func (h *H) Failed() bool { return h.rep.Failed() }

// FailNow ends the test body after a failure (for require). It must be
// called from the test body's goroutine.
func (h *H) FailNow() {
	if _, ok := h.rep.(*record); ok {
		panic(stopBody{})
	}
	h.T.FailNow()
}

// stopBody ends an exploration's test body after a failure; the harness
// recovers it silently.
type stopBody struct{}

// Advance moves mock time by d once the code under test has settled, and
// returns after it has reacted: synctest.Wait, Clk.Add(d), synctest.Wait.
func (h *H) Advance(d time.Duration) {
	synctest.Wait()
	h.Clk.Add(d)
	synctest.Wait()
}

// PendingTimer reports how far the mock clock moves once every timer still
// registered on it has fired (0: none is left). Call it when the code under
// test has returned and the test's own timers are done: a timer the code
// did not stop is one more pending timer per call in a long-lived service.
// It moves the clock. A ticker still running counts as a timer pending a
// period away; it is stopped first, so that the clock can finish.
func (h *H) PendingTimer() time.Duration {
	synctest.Wait()
	_, period := h.Clk.Ticking()
	before := h.Clk.Now()
	h.Clk.WaitForAllTimers()
	synctest.Wait()
	return max(period, h.Clk.Now().Sub(before))
}

// Ticking settles every goroutine, then stops the tickers the code made
// and did not stop, and returns how many there were.
func (h *H) Ticking() int {
	synctest.Wait()
	n, _ := h.Clk.Ticking()
	return n
}

// Elapsed is how far the mock clock has moved since the test began.
func (h *H) Elapsed() time.Duration { return h.Clk.Now().Sub(time.Unix(0, 0)) }

// NoLeaks fails the test if goroutines started during the test are still
// running once every goroutine has settled. Call it right after the call
// under test returned; after names that call in the message.
func (h *H) NoLeaks(after string) bool {
	h.rep.Helper()
	synctest.Wait()
	where, leaked := h.running()
	if !leaked {
		return true
	}
	h.leaked = true
	h.Errorf("%sgoroutines still running after %s returned%s", failure.Tag(failure.Leak), after, where)
	return false
}

// Waiting says where the graded code waits now, to end a verdict with:
// "; your code was waiting: " and the places, one line each, the innermost line
// of the learner's code on each goroutine of the bubble that runs through
// it ("chan receive at …/firstwins.go:97 stop", with a count when several
// wait there); "" when no goroutine is inside the learner's code. Call it
// when a call is late, before ending the call, so the verdict names the
// line it waits on, not only the fact.
func (h *H) Waiting() string {
	if h.bubble == 0 {
		return ""
	}
	var places []string
	count := map[string]int{}
	for _, g := range failure.Parse(allStacks()) {
		if g.Bubble != h.bubble || g.ID() == h.root {
			continue
		}
		for _, f := range g.LearnerFrames(h.dir) {
			if !f.Creator {
				p := fmt.Sprintf("%s at %s", g.State, f)
				if count[p] == 0 {
					places = append(places, p)
				}
				count[p]++
				break
			}
		}
	}
	if len(places) == 0 {
		return ""
	}
	lines := make([]string, 0, 4)
	for i, p := range places {
		if i == 3 {
			lines = append(lines, "…")
			break
		}
		if n := count[p]; n > 1 {
			p = fmt.Sprintf("%s (%d goroutines)", p, n)
		}
		lines = append(lines, p)
	}
	// The first place on the verdict's line, which a scorecard shows alone.
	return "; your code was waiting: " + strings.Join(lines, "\n\t")
}

// running reports whether goroutines started during the test are still
// running and, as ":\n\t"-joined lines, where the learner's code holds them.
//
// Every goroutine started during the test belongs to the bubble, so a look
// at the goroutine headers settles the common case: the bubble holds what
// it held at the start and nothing more, no leak. Otherwise goleak decides
// (it gives a goroutine on its way out time to finish) and names the rest.
func (h *H) running() (where string, any bool) {
	if now := bubbleGoroutines(h.bubble); len(now) > 0 && maps.Equal(now, h.base) {
		return "", false
	}
	var gs []failure.Goroutine
	err, parsed := error(nil), false
	if !h.blind {
		err, parsed = findLeaks(h.ignore)
		if err == nil {
			return "", false
		}
		gs = failure.Parse(err.Error())
	}
	if !parsed {
		// goleak could not read the dump (a very deep stack, with frames
		// elided), now or when the bubble started: name what runs in the
		// bubble beyond what it started with, from the runtime's own dump.
		gs = slices.DeleteFunc(failure.Parse(allStacks()), func(g failure.Goroutine) bool {
			return g.Bubble != h.bubble || h.base[g.ID()]
		})
		if len(gs) == 0 {
			return "", false
		}
	}
	if lines := failure.Describe(gs, h.dir, 5); len(lines) > 0 {
		where = ":\n\t" + strings.Join(lines, "\n\t")
	}
	if s := neverWoken(gs, h.dir); s != "" {
		where = ": " + s + where
	}
	return where, true
}

// ignoreCurrent is goleak.IgnoreCurrent, which panics on a goroutine dump it
// cannot parse (a stack over 100 frames deep has frames elided, say in a
// goroutine an earlier test left behind); blind is true when it did.
func ignoreCurrent() (opt goleak.Option, blind bool) {
	defer func() {
		if r := recover(); r != nil {
			opt, blind = nil, true
		}
	}()
	return goleak.IgnoreCurrent(), false
}

// findLeaks is goleak.Find, which panics on a goroutine dump it cannot
// parse; parsed is false when it did.
func findLeaks(opt goleak.Option) (err error, parsed bool) {
	defer func() {
		if r := recover(); r != nil {
			err, parsed = fmt.Errorf("%v", r), false
		}
	}()
	return goleak.Find(opt), true
}

// StandsStill lets up to window of bubble time pass without touching the
// mock clock and fails if progressed reports progress meanwhile: code that
// moves on its own is waiting on the real clock (time.Sleep, time.After,
// time.NewTimer...), not on the injected one. what names the progress.
func (h *H) StandsStill(window time.Duration, what string, progressed func() bool) bool {
	h.rep.Helper()
	const steps = 10
	for i := 1; i <= steps; i++ {
		time.Sleep(window / steps) // bubble time: instant in real time
		synctest.Wait()
		if progressed() {
			h.Errorf("%s%s after %v of real time while the injected clock stood still: "+
				"the code waits on package time, not on clk (use clk.Timer, clk.Ticker, clk.Now)",
				failure.Tag(failure.RealClock), what, window*time.Duration(i)/steps)
			return false
		}
	}
	return true
}

// ReturnsAtOnce reports whether done is closed without any time passing,
// mock or real. If not, it waits up to guard of bubble time and reports how
// long it took (guard if it did not return at all). The mock clock never
// moves here.
func (h *H) ReturnsAtOnce(done <-chan struct{}, guard time.Duration) (instant bool, took time.Duration) {
	synctest.Wait()
	select {
	case <-done:
		return true, 0
	default:
	}
	start := time.Now()
	select {
	case <-done:
		return false, time.Since(start)
	case <-time.After(guard):
		return false, guard
	}
}

// recoverPanic turns a panic in the test body into a tagged failure.
func (h *H) recoverPanic() {
	if r := recover(); r != nil {
		if _, ok := r.(stopBody); ok {
			return
		}
		h.Errorf("%s", h.describePanic(r))
	}
}

// describePanic describes a panic recovered in h's test, and remembers a
// panic("TODO...") for the test's later runs (see [notRunAgain]).
func (h *H) describePanic(r any) string {
	msg := describePanic(r, h.dir)
	if strings.HasPrefix(msg, failure.Tag(failure.NotImplemented)) {
		unwritten.LoadOrStore(h.T.Name(), msg)
	}
	return msg
}

// unwritten holds, by test name, the first "not implemented" finding of a
// test in this process: the code it calls panicked TODO.
var unwritten sync.Map

// notRunAgain fails a run of test t at once, with the finding of an earlier
// run, when that run met code still panicking TODO. A check with repeats
// runs each test many times in one process (-test.count, -test.cpu); a
// stub's panics would otherwise be met, described and shrunk in every run,
// which made a repeated check of unfinished code take a minute and more.
// The verdict cannot change: a test that reached a TODO fails.
func notRunAgain(t *testing.T, out reporter) bool {
	msg, ok := unwritten.Load(t.Name())
	if !ok {
		return false
	}
	out.Errorf("%s", msg)
	out.Logf("(this run did not call your code: an earlier run of this test met the panic above, so this one would too)")
	return true
}

// describePanic names a recovered panic and the learner's lines on the
// panicking goroutine. A panic("TODO...") is the stub's "not implemented".
func describePanic(r any, dir string) string {
	var gs []failure.Goroutine
	if parsed := failure.Parse(ownStack()); len(parsed) > 0 {
		gs = parsed[:1]
	}
	where := ""
	if lines := failure.Describe(gs, dir, 1); len(lines) > 0 {
		where = " (" + strings.TrimPrefix(lines[0], "running at ") + ")"
	}
	if s, ok := r.(string); ok && strings.HasPrefix(s, "TODO") {
		return failure.Tag(failure.NotImplemented) + s + where
	}
	return fmt.Sprintf("%spanic: %v%s", failure.Tag(failure.Panic), r, where)
}

func ownStack() string  { return stack(false) }
func allStacks() string { return stack(true) }

func stack(all bool) string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, all)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

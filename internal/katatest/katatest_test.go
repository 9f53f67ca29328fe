package katatest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixtures below are small pieces of deliberately wrong code run inside
// the harness. They fail on purpose, so TestHarnessCatches runs each in a
// child process and reads what the harness reported.

const fixtureEnv = "KATATEST_FIXTURE"

func fixture(t *testing.T) {
	if os.Getenv(fixtureEnv) != t.Name() {
		t.Skip("run by TestHarnessCatches")
	}
}

// pause waits for d on clk or until ctx ends: the right way.
func pause(ctx context.Context, clk clock.Clock, d time.Duration) error {
	t := clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestFixtureLeak(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		block := make(chan struct{})
		go func() { <-block }() // never released
		h.NoLeaks("leaky")
	})
}

// deep blocks on block under n nested calls: its stack, over 100 frames,
// has frames elided in a dump, which goleak cannot parse.
func deep(n int, block chan struct{}) {
	if n == 0 {
		<-block
		return
	}
	deep(n-1, block)
}

// A goroutine with a very deep stack, left by something before the test,
// must not break the leak check: the leak is still found and named.
func TestFixtureLeakBesideADeepStack(t *testing.T) {
	fixture(t)
	block := make(chan struct{})
	defer close(block)
	go deep(150, block)
	Run(t, func(h *H) {
		h.NoLeaks("clean") // nothing of the bubble's own is running
		never := make(chan struct{})
		go func() { <-never }()
		h.NoLeaks("leaky")
	})
}

func TestFixtureDeadlock(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		never := make(chan int)
		<-never
	})
}

func TestFixtureRealSleep(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		done := make(chan struct{})
		go func() { time.Sleep(time.Second); close(done) }()
		h.StandsStill(10*time.Second, "the worker finished", func() bool {
			select {
			case <-done:
				return true
			default:
				return false
			}
		})
	})
}

func TestFixtureRealAfter(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		c := Go(h, func() (int, error) { <-time.After(time.Second); return 1, nil })
		h.StandsStill(10*time.Second, "the call returned", c.Returned)
	})
}

func TestFixtureTodo(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) { panic("TODO: implement Do") })
}

// todoCalls counts the calls of the stub below, over the runs of one process.
var todoCalls int

// Run three times (-test.count=3): the first run meets the stub's TODO; the
// others fail with that finding, without calling the stub again.
func TestFixtureTodoNotRunAgain(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		todoCalls++
		h.Logf("stub call %d", todoCalls)
		panic("TODO: implement Do")
	})
}

func TestFixturePanicInCall(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		c := Go(h, func() (int, error) { var m map[string]int; m["x"] = 1; return 0, nil })
		_, _, ok := c.Finish("the call")
		assert.False(t, ok, "Finish reports a panicked call as not ok")
	})
}

// pick returns whichever of two ready answers the select chooses: right
// only by luck, half the time.
func pick() string {
	a, b := make(chan string, 1), make(chan string, 1)
	a <- "right"
	b <- "wrong"
	select {
	case v := <-a:
		return v
	case v := <-b:
		return v
	}
}

func TestFixtureLucky(t *testing.T) {
	fixture(t)
	Repeat(t, 60, func(h *H) { // passes by luck once in 2⁶⁰
		assert.Equal(t, "right", pick(), "a select with two ready cases picks at random")
	})
}

func TestFixtureRepeatAfterAFailure(t *testing.T) {
	fixture(t)
	t.Errorf("the first failure")
	Repeat(t, 5, func(h *H) { t.Logf("REPEAT RAN") })
}

func TestRepeatPassesCorrectCode(t *testing.T) {
	runs := 0
	Repeat(t, 20, func(h *H) {
		runs++
		assert.Zero(t, h.Elapsed(), "every repetition gets a fresh mock clock")
		h.Advance(time.Second)
	})
	assert.Equal(t, 20, runs)
}

func TestFixtureStopHang(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		never := make(chan struct{})
		c := Start(h, func(context.Context) (int, error) { <-never; return 0, nil }) // ignores its ctx
		c.Stop()
	})
}

func TestFixtureStopLeak(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		never := make(chan struct{})
		c := StartErr(h, func(ctx context.Context) error {
			go func() { <-never }() // outlives the call
			<-ctx.Done()
			return ctx.Err()
		})
		c.Stop()
	})
}

func TestFixtureMutexHeldAtTheEnd(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		var mu sync.Mutex
		mu.Lock()
		go func() { // holds the lock while it waits for the clock
			<-h.Clk.After(time.Minute)
			mu.Unlock()
		}()
		go func() { mu.Lock(); mu.Unlock() }() // queued behind it
	})
}

func TestFixturePanicInStart(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		c := StartErr(h, func(context.Context) error { panic("boom") })
		_, ok := c.Finish("the call")
		assert.False(t, ok, "Finish reports a panicked call as not ok")
		assert.True(t, c.Stop(), "Stop on a call that already ended (by its panic) has nothing left to do")
	})
}

func TestFixtureCorrect(t *testing.T) {
	fixture(t)
	Run(t, func(h *H) {
		c := Start(h, func(ctx context.Context) (int, error) { return 7, pause(ctx, h.Clk, time.Second) })
		h.StandsStill(10*time.Second, "the pause ended", c.Returned)
		h.Advance(time.Second)
		v, err, ok := c.Finish("pause")
		assert.True(t, ok, "no panic, no leak")
		assert.Equal(t, 7, v)
		assert.NoError(t, err)
	})
}

func TestHarnessCatches(t *testing.T) {
	cases := []struct {
		fixture string
		want    string // regexp over the child's output
		pass    bool
		not     string // if set, a text the output must not contain
	}{
		{"TestFixtureLeak", `\[leak\] goroutines still running after leaky returned:\s+chan receive \(durable\), started by \S+katatest_test\.go:\d+`, false, ""},
		{"TestFixtureLeakBesideADeepStack", `\[leak\] goroutines still running after leaky returned:\s+chan receive \(durable\), started by \S+katatest_test\.go:\d+`, false, "after clean returned"},
		{"TestFixtureDeadlock", `\[deadlock\] every goroutine is blocked`, false, ""},
		{"TestFixtureRealSleep", `\[real-clock\] the worker finished after 1s of real time`, false, ""},
		{"TestFixtureRealAfter", `\[real-clock\] the call returned after 1s of real time`, false, ""},
		{"TestFixtureTodo", `\[not-implemented\] TODO: implement Do`, false, ""},
		{"TestFixtureTodoNotRunAgain", `stub call 1[\s\S]*--- FAIL[\s\S]*\[not-implemented\] TODO: implement Do[\s\S]*this run did not call your code[\s\S]*--- FAIL[\s\S]*this run did not call your code[\s\S]*--- FAIL`, false, "stub call 2"},
		{"TestFixturePanicInCall", `\[panic\] panic: assignment to entry in nil map`, false, ""},
		{"TestFixtureStopHang", `\[deadlock\] the call never returned, even after its ctx was cancelled and the mock clock moved on`, false, ""},
		{"TestFixtureStopLeak", `\[leak\] goroutines still running after the call returned:\s+chan receive \(durable\), started by \S+katatest_test\.go:\d+`, false, ""},
		// Goroutines queued on a held mutex at the end would hang the
		// leak check: said, then the clock frees them.
		{"TestFixtureMutexHeldAtTheEnd", `\[deadlock\] the test finished, but goroutines were still stuck on a mutex[\s\S]*sync\.Mutex\.Lock`, false, "panic: test timed out"},
		{"TestFixturePanicInStart", `\[panic\] panic: boom \(`, false, ""},
		{"TestFixtureLucky", `a select with two ready cases picks at random[\s\S]*failure came in repetition \d+ of 60`, false, ""},
		// The first failure stands: a Repeat after it neither runs nor
		// names a repetition as the failing one.
		{"TestFixtureRepeatAfterAFailure", `the first failure\n--- FAIL`, false, "REPEAT RAN"},
		{"TestFixtureCheckThenAct", `4 callers at once on a limit of 2[\s\S]*failure came in repetition \d+ of 20 of the same scenario, shaken with seed \d+`, false, ""},
		{"TestFixtureRaceAcrossPoints", `WARNING: DATA RACE`, false, ""},
		{"TestFixtureCorrect", `--- PASS: TestFixtureCorrect`, true, ""},
		// Stop releases the test's own gate: the held call ends, and the
		// failure is the message, not a deadlock.
		// … and says where the graded code was waiting (here the gate's
		// own file counts as the graded code's: it is outside the tests).
		{"TestFixtureReturnsStopsAHeldCall", `call_test.go:\d+: the call must return at once; it was held at the gate; your code was waiting:[\s\S]*select \(durable\) at \S+fakes\.go:\d+ \(\*Gate\)\.Hold\n--- FAIL`, false, "[deadlock]"},
		{"TestFixtureOwnReleasesAtStop", `call_test.go:\d+: the call must return at once; it was held in the latch[;\n][\s\S]*--- FAIL`, false, "[deadlock]"},
		{"TestFixtureReturnsNamesACallStuckForGood", `\[deadlock\] the call must return at once; it was still waiting; the call never returned, even after its ctx was cancelled and the mock clock moved on: it waits for something that never comes`, false, ""},
		{"TestFixtureReturnsIsFalseAfterAPanic", `\[panic\] panic: boom \(`, false, "RETURNS TRUE"},
		{"TestFixtureWaitsReportsAnEarlyReturn", `the call must wait for the gate \(it returned the error gave up\)\n--- FAIL`, false, ""},
		// A small failing scenario comes first: four numbers (the fixture
		// lifts the bound on shrinking time, so it always gets there).
		{"TestFixtureExploreShrinks", `the sum of 4 numbers[\s\S]*the scenario: add \[\d \d \d \d\]\s+seed \d+: check again with --seed`, false, ""},
		{"TestFixtureLinearizableCatchesALostUpdate", `Inc called from 3 goroutines at once gave answers that no order of the calls explains[\s\S]*goroutine \d: Inc\(\) = 1 \(started at step 1`, false, ""},
		{"TestFixtureReplayStopsAtTheFirstFailure", `the sum of 4 numbers[\s\S]*the scenario: add \[1 2 3 4\]`, false, "add [5 5 5 5 5]"},
		{"TestFixtureExplorePanics", `\[panic\] panic: too many \([\s\S]*the scenario: add \[[\d ]+\]`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			if c.fixture == "TestFixtureRaceAcrossPoints" && !raceEnabled {
				t.Skip("needs the race detector (go test -race)")
			}
			args := []string{"-test.run=^" + c.fixture + "$", "-test.v"}
			if c.fixture == "TestFixtureTodoNotRunAgain" {
				args = append(args, "-test.count=3")
			}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), fixtureEnv+"="+c.fixture)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if c.pass {
				require.NoError(t, err, "%s", out)
			} else {
				require.True(t, errors.As(err, &ee) && ee.ExitCode() == 1, "the fixture must fail cleanly (exit 1), got %v:\n%s", err, out)
				assert.NotContains(t, string(out), "goroutine 1 [", "a failure must not dump goroutines")
			}
			assert.Regexp(t, regexp.MustCompile(c.want), string(out))
			if c.not != "" {
				assert.NotContains(t, string(out), c.not)
			}
		})
	}
}

func TestReturnsAtOnce(t *testing.T) {
	Run(t, func(h *H) {
		ctx, cancel := context.WithCancel(context.Background())
		good := Go(h, func() (int, error) { return 0, pause(ctx, h.Clk, time.Hour) })
		slow := Go(h, func() (int, error) { h.Clk.Sleep(time.Minute); return 0, ctx.Err() })
		timer := Go(h, func() (int, error) { <-time.After(time.Second); return 0, nil })
		cancel()
		instant, took := h.ReturnsAtOnce(good.Done(), time.Minute)
		assert.True(t, instant, "a select on ctx.Done() returns at once")
		assert.Zero(t, took)
		instant, took = h.ReturnsAtOnce(timer.Done(), time.Minute)
		assert.False(t, instant, "a real timer is not instant")
		assert.Equal(t, time.Second, took)
		instant, took = h.ReturnsAtOnce(slow.Done(), time.Minute)
		assert.False(t, instant, "clk.Sleep ignores the cancel")
		assert.Equal(t, time.Minute, took, "it never returned within the guard")
		assert.Zero(t, h.Elapsed(), "ReturnsAtOnce never moves the mock clock")
		h.Advance(time.Minute)
		slow.Result()
	})
}

func TestGateAndPeak(t *testing.T) {
	Run(t, func(h *H) {
		g := NewGate()
		var p Peak
		ctx, cancel := context.WithCancel(context.Background())
		var calls []*Call[int]
		for range 3 {
			calls = append(calls, Go(h, func() (int, error) {
				defer p.Enter()()
				return 0, g.Hold(ctx)
			}))
		}
		h.Advance(0)
		assert.Equal(t, 3, g.Entered())
		assert.Equal(t, 3, g.Waiting())
		assert.Equal(t, 3, p.Now())
		cancel()
		for _, c := range calls {
			_, err := c.Result()
			assert.ErrorIs(t, err, context.Canceled)
		}
		assert.Equal(t, 3, g.Cancelled())
		assert.Equal(t, 3, p.Max())
		assert.Zero(t, p.Now())
		g.Release()
		assert.NoError(t, g.Hold(context.Background()), "a released gate lets calls through")
	})
}

package katatest

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest/shake"
)

// testLimiter lets at most limit calls of take succeed. Its points are
// where the grader puts them: after each synchronization statement.
type testLimiter struct {
	mu       sync.Mutex
	n, limit int
}

// takeSplit checks and acts in two critical sections: between them
// another caller can pass the same check, and both count.
func (l *testLimiter) takeSplit() bool {
	l.mu.Lock()
	shake.Point()
	ok := l.n < l.limit
	l.mu.Unlock()
	shake.Point()
	l.mu.Lock()
	shake.Point()
	if ok {
		l.n++
	}
	l.mu.Unlock()
	shake.Point()
	return ok
}

// take checks and acts in one critical section: right on every schedule.
func (l *testLimiter) take() bool {
	l.mu.Lock()
	shake.Point()
	defer l.mu.Unlock()
	if l.n >= l.limit {
		return false
	}
	l.n++
	return true
}

const (
	testCallers = 4
	testLimit   = 2
)

// testOverTaken starts testCallers calls of take at once, on a limiter
// of testLimit, and reports whether more calls succeeded than the limit
// allows.
func testOverTaken(t *testing.T, take func(*testLimiter) bool) (over bool) {
	synctest.Test(t, func(t *testing.T) {
		l := &testLimiter{limit: testLimit}
		start := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		taken := 0
		for range testCallers {
			wg.Go(func() {
				<-start
				shake.Point()
				if take(l) {
					mu.Lock()
					taken++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		over = taken > testLimit
	})
	return over
}

// testCatches runs the scenario runs times, shaken with a fresh seed
// each time (as Repeat does) or not at all, and reports for each run
// whether more calls succeeded than the limit allows.
func testCatches(t *testing.T, runs int, shaken bool, take func(*testLimiter) bool) []bool {
	caught := make([]bool, runs)
	for i := range caught {
		if shaken {
			shake.On(repeatSeed(i))
		}
		caught[i] = testOverTaken(t, take)
		shake.Off()
	}
	return caught
}

// testCount counts the runs, and the groups of n runs in a row (a test
// that repeats the scenario n times), in which the window showed.
func testCount(caught []bool, n int) (runs, tests int) {
	for i, c := range caught {
		if c {
			runs++
		}
		if i%n == 0 && slices.Contains(caught[i:min(i+n, len(caught))], true) {
			tests++
		}
	}
	return runs, tests
}

// A check and an act in two critical sections: the window between them
// is a few instructions wide, and without shaking the scheduler almost
// never puts another caller inside it. Measured with go test -race on 2
// cores, 4 callers on a limit of 2, seven times 600 runs (200 tests of 3
// repetitions, as Repeat(t, 3, …) runs them) at each GOMAXPROCS:
//
//	GOMAXPROCS   shaken: runs of 600   tests of 200   not shaken: runs   tests
//	1            534–546 (89–91%)      199–200        0                  0
//	2            529–549 (88–92%)      200            0–31 (0–5%)        0–30
//	4            518–539 (86–90%)      199–200        0–3                0–3
//
// A correct limiter (one critical section) passes every shaken run.
func TestShakeOpensACheckThenActWindow(t *testing.T) {
	const runs, reps = 600, 3
	shaken, shakenTests := testCount(testCatches(t, runs, true, (*testLimiter).takeSplit), reps)
	plain, plainTests := testCount(testCatches(t, runs, false, (*testLimiter).takeSplit), reps)
	t.Logf("check-then-act at GOMAXPROCS %d: shaken, caught in %d of %d runs and %d of %d tests of %d; not shaken, in %d runs and %d tests",
		runtime.GOMAXPROCS(0), shaken, runs, shakenTests, runs/reps, reps, plain, plainTests)
	assert.GreaterOrEqual(t, shaken, runs*3/4, "shaken, the window must show in most runs")
	assert.GreaterOrEqual(t, shakenTests, runs/reps*95/100, "shaken, a test of 3 repetitions must nearly always catch it")
	correct, _ := testCount(testCatches(t, runs/reps, true, (*testLimiter).take), reps)
	assert.Zero(t, correct, "a correct limiter must pass every seed")
}

// Repeat turns the yields on for each repetition, and off after it.
func TestRepeatShakes(t *testing.T) {
	assert.False(t, shake.Enabled(), "off outside Repeat")
	Repeat(t, 3, func(h *H) {
		assert.True(t, shake.Enabled(), "on in every repetition")
	})
	assert.False(t, shake.Enabled(), "off again after Repeat")
	Run(t, func(h *H) {
		assert.False(t, shake.Enabled(), "Run does not shake")
	})
}

func TestFixtureCheckThenAct(t *testing.T) {
	fixture(t)
	Repeat(t, 20, func(h *H) {
		l := &testLimiter{limit: testLimit}
		start := make(chan struct{})
		calls := make([]*Call[bool], testCallers)
		for i := range calls {
			calls[i] = Go(h, func() (bool, error) { <-start; shake.Point(); return l.takeSplit(), nil })
		}
		close(start)
		taken := 0
		for _, c := range calls {
			if ok, _ := c.Result(); ok {
				taken++
			}
		}
		assert.LessOrEqual(t, taken, testLimit, fmt.Sprintf("%d callers at once on a limit of %d", testCallers, testLimit))
	})
}

// Point orders nothing: two writes with only points between them are
// still a race the detector reports. The second writer wakes from a
// sleep on the bubble's clock, which orders nothing either, after the
// first has finished: a point that locked a mutex or did an atomic
// read-modify-write would order the writes and hide the race.
func TestFixtureRaceAcrossPoints(t *testing.T) {
	fixture(t)
	Repeat(t, 1, func(h *H) {
		x := new(int)
		done := make(chan struct{}, 2)
		go func() {
			*x = 1
			shake.Point()
			done <- struct{}{}
		}()
		go func() {
			time.Sleep(time.Nanosecond)
			shake.Point()
			*x = 2
			done <- struct{}{}
		}()
		<-done
		<-done
	})
}

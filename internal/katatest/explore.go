package katatest

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest/shake"
)

// Explore checks a requirement over many scenarios instead of one: draw
// picks a scenario (sizes, limits, which calls fail and how, orders, how
// many callers at once, when the clock moves) and body plays it in a fresh
// bubble and checks what the README says must hold for it.
//
//	katatest.Explore(t, 30, drawPlan, func(h *katatest.H, p plan) {
//		... play p, then: assert.Equal(h, p.want(), got, "…")
//	})
//
// Every scenario also shakes the schedule, as each repetition of [Repeat]
// does. The scenarios come from pgregory.net/rapid: each check draws fresh ones
// (the check's seed, which `check NN --seed S` passes back as
// -rapid.seed=S to replay), checks runs of them, and the first that fails
// is shrunk to a small one. The test then fails once, with the failure of
// the smallest scenario first, the scenario itself (its String method
// should read as the steps a learner can follow), and the seed.
//
// The body reports through h (h.Errorf, assert.X(h, …), require.X(h, …)),
// never through the test's t: a failing scenario must not fail the test
// until it has been shrunk. Draw everything in draw, outside the bubble;
// the body must not draw. The harness's own findings (a panic, a leak, a
// deadlock, the real clock) count as the scenario's failure like any other.
func Explore[S any](t *testing.T, checks int, draw func(r *rapid.T) S, body func(h *H, s S)) {
	t.Helper()
	if t.Failed() || notRunAgain(t, t) {
		return // as Replay: the first failure stands, and shrinking another would only cost time
	}
	dir := callerDir()
	seed := setRapid(checks)
	var (
		found bool
		worst struct {
			msg      string
			scenario S
		}
	)
	x := &explorer{name: t.Name()}
	played := 0
	began := time.Now()
	defer func() {
		if found || x.failed {
			shrinkBudget.spend(time.Since(began))
		}
	}()
	rapid.Check(x, func(r *rapid.T) {
		played++
		s := draw(r)
		rec := &record{}
		// Each scenario shakes the schedule (package shake) with a seed
		// of its own, drawn like the rest, so a replay shakes alike.
		shake.On(rapid.Uint64().Draw(r, "schedule"))
		run(t, dir, rec, func(h *H) { body(h, s) })
		shake.Off()
		if msg, failed := rec.first(); failed {
			// The last failing scenario is the smallest: rapid replays
			// the shrunk one last.
			found, worst.msg, worst.scenario = true, msg, s
			r.Fatalf("%s", msg)
		}
	})
	switch {
	case found:
		t.Errorf("%s\nthe scenario: %s\nseed %d: check again with --seed %d (make: SEED=%d) to replay these scenarios",
			worst.msg, fmt.Sprint(worst.scenario), seed, seed, seed)
	case x.failed:
		t.Errorf("exploring the scenarios failed: %s", strings.Join(x.errs, "; "))
	case os.Getenv(CountEnv) != "":
		t.Logf("explored %d scenarios from seed %d", played, seed)
	}
}

// CountEnv, when set, makes every exploration that passes log how many
// scenarios it played and from which seed (make bench counts them).
const CountEnv = "KATATEST_COUNT"

// setRapid sets rapid's flags for one exploration: checks scenarios, no
// fail files (they would be written into the learner's directory), a bound
// on the time spent shrinking, which counts against the run's timeout, and
// the seed: the one given on the command line (-rapid.seed, a replay), or
// a fresh one, which it returns.
func setRapid(checks int) (seed uint64) {
	shrink := min(shrinkEach, shrinkBudget.left())
	replay.once.Do(func() { replay.seed = flag.Lookup("rapid.seed").Value.(flag.Getter).Get().(uint64) })
	if seed = replay.seed; seed == 0 {
		seed = rand.Uint64() | 1
	}
	for name, v := range map[string]string{
		"rapid.seed":       fmt.Sprint(seed),
		"rapid.checks":     fmt.Sprint(checks),
		"rapid.nofailfile": "true",
		"rapid.shrinktime": shrink.String(),
	} {
		if err := flag.Set(name, v); err != nil {
			panic(fmt.Sprintf("katatest: set %s: %v", name, err))
		}
	}
	return seed
}

// shrinkBudget bounds the time all the explorations of one test binary
// spend on failing: a wrong design can fail many of them, and every one
// shrinks its failure, all within the one timeout of the run. The first
// failures get up to 400ms of shrinking each; once the budget is spent,
// a failure is shown as found (still a failure, with its seed), unshrunk.
var (
	shrinkBudget = budget{total: 1200 * time.Millisecond}
	shrinkEach   = 400 * time.Millisecond
)

type budget struct {
	mu    sync.Mutex
	total time.Duration
	spent time.Duration
}

// left is what remains, at least 1ms (rapid takes 0 as no bound).
func (b *budget) left() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return max(b.total-b.spent, time.Millisecond)
}

func (b *budget) spend(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.spent += d
}

// replay is the seed given on the command line, if any, read before the
// first exploration sets the flag to its own seeds.
var replay struct {
	once sync.Once
	seed uint64
}

// record collects a scenario's failures instead of failing the test.
type record struct {
	mu   sync.Mutex
	msgs []string
}

func (r *record) Helper() {}

func (r *record) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// Logf drops the line: only a scenario's failures reach the verdict.
func (r *record) Logf(format string, args ...any) {}

func (r *record) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.msgs) > 0
}

// first is the scenario's failure: the first reported, unless that was a
// precondition not met and a call was then found stuck for good (it never
// returned, even cancelled and with the clock run out): that deadlock is
// the mistake, the precondition only its symptom.
func (r *record) first() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.msgs) == 0 {
		return "", false
	}
	if preconditionRE.MatchString(r.msgs[0]) {
		for _, m := range r.msgs[1:] {
			if strings.HasPrefix(m, stuckPrefix) {
				return m, true
			}
		}
	}
	return r.msgs[0], true
}

// preconditionRE matches a scenario's report that what it needed before
// its check did not happen ("precondition (R1): …", "run 2: precondition: …").
var preconditionRE = regexp.MustCompile(`^(run \d+: )?precondition\b`)

// explorer is the rapid.TB that rapid reports to: it keeps what rapid says
// so that Explore can say it in the learner's terms.
type explorer struct {
	name   string
	errs   []string
	failed bool
}

func (x *explorer) Helper()                           {}
func (x *explorer) Name() string                      { return x.name }
func (x *explorer) Logf(format string, args ...any)   {}
func (x *explorer) Log(args ...any)                   {}
func (x *explorer) Skipf(format string, args ...any)  { x.fail(fmt.Sprintf(format, args...)) }
func (x *explorer) Skip(args ...any)                  { x.fail(fmt.Sprint(args...)) }
func (x *explorer) SkipNow()                          { x.fail("skipped") }
func (x *explorer) Errorf(format string, args ...any) { x.fail(fmt.Sprintf(format, args...)) }
func (x *explorer) Error(args ...any)                 { x.fail(fmt.Sprint(args...)) }
func (x *explorer) Fatalf(format string, args ...any) { x.fail(fmt.Sprintf(format, args...)) }
func (x *explorer) Fatal(args ...any)                 { x.fail(fmt.Sprint(args...)) }
func (x *explorer) FailNow()                          { x.failed = true }
func (x *explorer) Fail()                             { x.failed = true }
func (x *explorer) Failed() bool                      { return x.failed }

func (x *explorer) fail(msg string) { x.errs, x.failed = append(x.errs, msg), true }

// Replay plays each of the fixed scenarios in a bubble of its own (Run),
// every run: the cases a draw could miss, beside an exploration of the
// same play. It stops at the first scenario that fails, or at once when t
// has failed already, and logs that scenario (its %s) after the failure.
func Replay[S any](t *testing.T, scenarios []S, play func(h *H, s S)) {
	t.Helper()
	for _, s := range scenarios {
		if t.Failed() {
			return
		}
		Run(t, func(h *H) {
			play(h, s)
			if h.Failed() {
				h.Logf("the scenario: %s", s)
			}
		})
	}
}

package firstwins

// R3, B1 and B2 at the very instant of the timeout: the step that moves
// the mock clock onto the deadline (or past it, in one Add) is also the
// step in which some replicas fail, their failures ready together with
// the timeout. The rest are held (ignoring their ctx or honouring it), so
// nothing but the timeout can end the call. Whatever the call takes first
// at that instant, the timeout must still end it: a design that arms a
// fresh timer per wait for the time left until the deadline, and takes a
// wait of 0 or less as "no timer", handles such a failure at the deadline
// and then waits with no timeout at all. The README's "failed before it"
// leaves the failures at that same instant open: they may be among the
// joined errors or not; every earlier failure must be.
//
// How the failures at the deadline are released:
//   - by a timer of the test's, made before the call, so that it fires
//     first at that instant and the call handles the failures before its
//     own timer fires;
//   - by each replica's own clk timer, made when it is called;
//   - by the test, right before its Add, with no settle in between (on one
//     processor or several), so that the failures and the timer are ready
//     together.

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

const testInstantUnit = 10 * time.Millisecond

// What a replica does.
const (
	testInstantEarly = iota // answers (fails, for First and Hedge) at at units after it starts, before the deadline
	testInstantAt           // fails at the deadline (at once if called then or later)
	testInstantHeld         // answers only after the call returned
)

// How the failures at the deadline are released.
const (
	testInstantByTestTimer = iota
	testInstantByOwnTimer
	testInstantByRelease
	testInstantHows
)

var testInstantHowText = [...]string{
	"released by a timer the test made before the call, so it fires first at that instant",
	"each released by its own clk timer, made when it was called",
	"released by the test right before it moved the clock, with no pause in between",
}

type testInstantRep struct {
	role    int
	at      int  // testInstantEarly: units after its start (Hedge: 0, at once)
	ok      bool // Collect: succeeds rather than fails
	honours bool // testInstantHeld: gives up with its ctx's error once ctx is done
}

type testInstantScenario struct {
	fn      string // First, Hedge or Collect
	timeout int    // units
	delay   int    // Hedge: units; 0 or below starts every replica at once
	past    time.Duration
	how     int
	procs   int // GOMAXPROCS while it plays; 0 leaves it
	reps    []testInstantRep
}

func (s testInstantScenario) deadline() time.Duration {
	return time.Duration(s.timeout) * testInstantUnit
}

func (s testInstantScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s with %d replicas, timeout %v", s.fn, len(s.reps), s.deadline())
	if s.fn == "Hedge" {
		if s.delay <= 0 {
			fmt.Fprintf(&b, ", delay %v (every replica at once)", time.Duration(s.delay)*testInstantUnit)
		} else {
			fmt.Fprintf(&b, ", delay %v", time.Duration(s.delay)*testInstantUnit)
		}
	}
	fmt.Fprintf(&b, "; the clock moves %v at a time, then in one step ", testInstantUnit)
	if s.past == 0 {
		fmt.Fprintf(&b, "onto the deadline (%v)", s.deadline())
	} else {
		fmt.Fprintf(&b, "%v past the deadline (to %v)", s.past, s.deadline()+s.past)
	}
	fmt.Fprintf(&b, "; the failures at the deadline are %s", testInstantHowText[s.how])
	if s.procs > 0 {
		fmt.Fprintf(&b, ", on GOMAXPROCS %d", s.procs)
	}
	b.WriteString(";")
	for i, r := range s.reps {
		fmt.Fprintf(&b, "\n  replica %d: ", i)
		switch r.role {
		case testInstantEarly:
			what := "fails"
			if r.ok {
				what = "succeeds"
			}
			if s.fn == "Hedge" {
				fmt.Fprintf(&b, "%s at once when called", what)
			} else {
				fmt.Fprintf(&b, "%s at %v", what, time.Duration(r.at)*testInstantUnit)
			}
		case testInstantAt:
			what := "fails"
			if r.ok {
				what = "succeeds"
			}
			fmt.Fprintf(&b, "%s at the deadline, %v (at once if called then)", what, s.deadline())
		default:
			if r.honours {
				b.WriteString("held until the call returned; honours its ctx")
			} else {
				b.WriteString("held until the call returned; ignores its ctx")
			}
		}
	}
	return b.String()
}

func testDrawInstant(fn string) func(r *rapid.T) testInstantScenario {
	return func(r *rapid.T) testInstantScenario {
		s := testInstantScenario{fn: fn}
		s.timeout = rapid.IntRange(1, 6).Draw(r, "timeout (units)")
		n := rapid.IntRange(2, 6).Draw(r, "replicas")
		atDeadline := rapid.IntRange(1, n-1).Draw(r, "failing at the deadline")
		early := rapid.IntRange(0, n-1-atDeadline).Draw(r, "answering before")
		roles := make([]int, n)
		for i := range roles {
			switch {
			case i < atDeadline:
				roles[i] = testInstantAt
			case i < atDeadline+early:
				roles[i] = testInstantEarly
			default:
				roles[i] = testInstantHeld
			}
		}
		roles = rapid.Permutation(roles).Draw(r, "roles")
		for i, role := range roles {
			rep := testInstantRep{role: role}
			switch role {
			case testInstantEarly:
				if fn != "Hedge" {
					rep.at = rapid.IntRange(0, s.timeout-1).Draw(r, fmt.Sprintf("replica %d answers at (units)", i))
				}
				rep.ok = fn == "Collect" && rapid.Bool().Draw(r, fmt.Sprintf("replica %d succeeds", i))
			case testInstantAt:
				rep.ok = fn == "Collect" && rapid.IntRange(0, 3).Draw(r, fmt.Sprintf("replica %d succeeds", i)) == 0
			default:
				rep.honours = rapid.Bool().Draw(r, fmt.Sprintf("replica %d honours ctx", i))
			}
			s.reps = append(s.reps, rep)
		}
		if fn == "Hedge" {
			// Delays that divide the timeout put a hedge start at the
			// deadline too.
			var delays []int
			for d := 1; d <= s.timeout; d++ {
				if s.timeout%d == 0 {
					delays = append(delays, d, d)
				}
			}
			delays = append(delays, 0, -1, s.timeout+1, rapid.IntRange(1, s.timeout).Draw(r, "any delay (units)"))
			s.delay = rapid.SampledFrom(delays).Draw(r, "delay (units)")
		}
		s.past = rapid.SampledFrom([]time.Duration{0, 0, time.Nanosecond, testInstantUnit / 2, 3 * testInstantUnit}).
			Draw(r, "past the deadline")
		s.how = rapid.IntRange(0, testInstantHows-1).Draw(r, "how the failures at the deadline are released")
		if s.how == testInstantByRelease {
			s.procs = rapid.SampledFrom([]int{0, 1, 2}).Draw(r, "GOMAXPROCS")
		}
		return s
	}
}

// testInstantErr is replica i's own error: a distinct value per replica.
type testInstantErr struct{ replica int }

func (e *testInstantErr) Error() string { return fmt.Sprintf("503 busy (region %d)", e.replica) }

// testInstantRun is one play of a scenario: the replicas and what they did.
type testInstantRun struct {
	s       testInstantScenario
	h       *katatest.H
	release *katatest.Gate // the failures at the deadline (testInstantByTestTimer, testInstantByRelease)
	end     *katatest.Gate // the held replicas
	errs    []error

	mu       sync.Mutex
	final    bool  // the test has begun the step onto the deadline
	answered []int // 0: not yet; 1: in an earlier step; 2: in the step onto the deadline
	values   []string
}

func (x *testInstantRun) call(i int, ctx context.Context) (string, error) {
	r := x.s.reps[i]
	switch r.role {
	case testInstantEarly:
		if r.at > 0 {
			x.h.Clk.Sleep(time.Duration(r.at) * testInstantUnit)
		}
	case testInstantAt:
		if x.s.how == testInstantByOwnTimer {
			if left := x.s.deadline() - x.h.Elapsed(); left > 0 {
				x.h.Clk.Sleep(left)
			}
		} else {
			_ = x.release.Hold(context.Background())
		}
	default:
		hold := context.Background()
		if r.honours {
			hold = ctx
		}
		if err := x.end.Hold(hold); err != nil {
			return "", fmt.Errorf("held: %w", err)
		}
		return "", fmt.Errorf("late: %w", x.errs[i])
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.answered[i] = 1
	if x.final {
		x.answered[i] = 2
	}
	if r.ok {
		return x.values[i], nil
	}
	return x.values[i], x.errs[i] // a value along with the error, which First and Hedge must not return
}

func (x *testInstantRun) snapshot() []int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]int(nil), x.answered...)
}

// atTheInstant names the replicas that failed in the step onto the
// deadline, "" when none did.
func (x *testInstantRun) atTheInstant(answered []int) string {
	var names []string
	for i, a := range answered {
		if a == 2 {
			names = append(names, fmt.Sprint(i))
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return "replica " + names[0]
	}
	return "replicas " + strings.Join(names, ", ")
}

func (s testInstantScenario) play(h *katatest.H) {
	if s.procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(s.procs))
	}
	n := len(s.reps)
	x := &testInstantRun{s: s, h: h, release: h.Gate(), end: h.Gate(), answered: make([]int, n),
		values: make([]string, n)}
	for i := range s.reps {
		x.errs = append(x.errs, &testInstantErr{i})
		x.values[i] = fmt.Sprintf("%d.99", 10+i)
	}
	if s.how == testInstantByTestTimer {
		// Made before the call: at the deadline it fires before any timer
		// of the call's.
		h.Clk.AfterFunc(s.deadline(), x.release.Release)
	}
	calls := make([]testCall, n)
	for i := range calls {
		calls[i] = func(ctx context.Context) (string, error) { return x.call(i, ctx) }
	}
	timeout := s.deadline()
	var c *katatest.Call[string]
	var collected *katatest.Call[[]Reply[string]]
	switch s.fn {
	case "First":
		c = katatest.Start(h, func(ctx context.Context) (string, error) { return First(ctx, h.Clk, timeout, calls...) })
	case "Hedge":
		delay := time.Duration(s.delay) * testInstantUnit
		c = katatest.Start(h, func(ctx context.Context) (string, error) {
			return Hedge(ctx, h.Clk, timeout, delay, calls...)
		})
	default:
		collected = katatest.Start(h, func(ctx context.Context) ([]Reply[string], error) {
			return Collect(ctx, h.Clk, timeout, calls...), nil
		})
	}
	waits := func(format string, args ...any) bool {
		if c != nil {
			return c.Waits(format, args...)
		}
		return collected.Waits(format, args...)
	}
	returned := func() bool {
		if c != nil {
			return c.Returned()
		}
		return collected.Returned()
	}
	returns := func(format string, args ...any) bool {
		if c != nil {
			return c.Returns(format, args...)
		}
		return collected.Returns(format, args...)
	}
	for k := 0; k < s.timeout; k++ {
		if k > 0 {
			h.Advance(testInstantUnit)
		}
		if !waits("%s returned at %v, before its %v timeout, while a replica was still held and none had "+
			"succeeded (%s waits for a success, every failure, the timeout or the caller)", s.fn, h.Elapsed(),
			s.deadline(), s.fn) {
			return
		}
	}
	// The step onto the deadline, or past it, in one Add.
	synctest.Wait()
	x.mu.Lock()
	x.final = true
	x.mu.Unlock()
	if s.how == testInstantByRelease {
		x.release.Release() // no settle before the Add: the failures race the clock
	}
	h.Clk.Add(s.deadline() - h.Elapsed() + s.past)
	synctest.Wait()
	if s.how == testInstantByRelease && !returned() {
		// A design that arms a timer for the time left may have read the
		// clock just before the test moved it, with no settle in between:
		// its timer is then late by at most the step before the deadline.
		h.Advance(testInstantUnit)
	}
	answered := x.snapshot()
	who := x.atTheInstant(answered)
	hang := fmt.Sprintf("the clock moved onto the %v deadline and %s was still waiting: ", s.deadline(), s.fn)
	if s.past > 0 {
		hang = fmt.Sprintf("the clock moved past the %v deadline (to %v) and %s was still waiting: ", s.deadline(),
			s.deadline()+s.past, s.fn)
	}
	if who != "" {
		hang = fmt.Sprintf("a failure handled at the deadline left %s waiting with no timeout: %s failed at the "+
			"very instant the clock reached the %v deadline, and %s never returned", s.fn, who, s.deadline(), s.fn)
		if s.past > 0 {
			hang += fmt.Sprintf(" (the clock had moved on to %v)", s.deadline()+s.past)
		}
		hang += ": "
	}
	if !returns("%sthe timeout must stay armed for the whole call, one clk.Timer from the start of %s in every "+
		"select, or a wait computed as the time left must fire at once when nothing is left (a timer helper that "+
		"takes a wait of 0 or less as no timer turns the deadline into no timeout)", hang, s.fn) {
		return
	}
	if collected != nil {
		replies, _ := collected.Result()
		if collected.Panicked() || !s.checkCollect(h, x, answered, replies) {
			katatest.Unwind(h, collected)
			return
		}
		x.end.Release()
		collected.Finish("Collect")
		return
	}
	v, err := c.Result()
	if c.Panicked() || !s.checkTimeout(h, x, answered, v, err) {
		katatest.Unwind(h, c)
		return
	}
	x.end.Release()
	c.Finish(s.fn)
}

// checkTimeout: First or Hedge timed out, with every earlier failure.
func (s testInstantScenario) checkTimeout(h *katatest.H, x *testInstantRun, answered []int, v string, err error) bool {
	who := x.atTheInstant(answered)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		got := "nil"
		if err != nil {
			got = fmt.Sprintf("%q", err)
		}
		h.Errorf("at the %v timeout, with a replica still held and none succeeded, %s returned (%q, %s); want an "+
			"error matching ErrTimeout and context.DeadlineExceeded (and the failures so far): failures that "+
			"come at the instant of the deadline (%s) do not end the call by themselves while a replica is still "+
			"running; the timeout does", s.deadline(), s.fn, v, got, s.orNone(who))
		return false
	}
	if v != "" {
		h.Errorf("%s timed out and returned the value %q: every failure returns the zero value of T", s.fn, v)
		return false
	}
	for i, a := range answered {
		if a != 1 || errors.Is(err, x.errs[i]) {
			continue
		}
		if msg := katatest.LostWrap(err, x.errs[i], `fmt.Errorf("replica %d: %w", i, err)`); msg != "" {
			h.Errorf("%s timed out and returned %q: %s", s.fn, err, msg)
			return false
		}
		h.Errorf("%s timed out and returned %q, without the error of replica %d (%q), which failed before the "+
			"deadline: the timeout error carries every failure so far (errors.Join keeps them all); only a "+
			"failure at the very instant of the deadline may be left out", s.fn, err, i, x.errs[i])
		return false
	}
	return true
}

func (s testInstantScenario) orNone(who string) string {
	if who == "" {
		return "none here"
	}
	return who
}

// checkCollect: one Reply per call; an answer from an earlier step is
// what the replica returned, a replica still held is a timeout, and an
// answer at the instant of the deadline may be either.
func (s testInstantScenario) checkCollect(h *katatest.H, x *testInstantRun, answered []int, replies []Reply[string]) bool {
	if len(replies) != len(s.reps) {
		h.Errorf("Collect returned %d replies for %d calls: one Reply per call, in the order of calls",
			len(replies), len(s.reps))
		return false
	}
	for i, r := range replies {
		timedOut := r.Value == "" && errors.Is(r.Err, ErrTimeout) && errors.Is(r.Err, context.DeadlineExceeded)
		own := r.Value == x.values[i] && (s.reps[i].ok && r.Err == nil || !s.reps[i].ok && errors.Is(r.Err, x.errs[i]))
		switch answered[i] {
		case 1:
			if !own {
				h.Errorf("Collect timed out at %v; reply %d is (%q, %v), but replica %d had answered before the "+
					"deadline: want what it returned, its value and its error, whatever comes at the deadline",
					s.deadline(), i, r.Value, r.Err, i)
				return false
			}
		case 2:
			if !own && !timedOut {
				h.Errorf("Collect timed out at %v, as replica %d answered; its reply is (%q, %v): want either what "+
					"it returned or the zero value and an error matching ErrTimeout and context.DeadlineExceeded",
					s.deadline(), i, r.Value, r.Err)
				return false
			}
		default:
			if !timedOut {
				h.Errorf("Collect timed out at %v; reply %d is (%q, %v), but replica %d had not answered: want the "+
					"zero value and an error matching ErrTimeout and context.DeadlineExceeded", s.deadline(), i,
					r.Value, r.Err, i)
				return false
			}
		}
	}
	return true
}

// Fixed cases first: a failure released by a timer made before the call
// is handled at the deadline before the call's own timer fires, on every
// schedule.
var testInstantFixed = map[string][]testInstantScenario{
	"First": {
		{fn: "First", timeout: 3, how: testInstantByTestTimer, reps: []testInstantRep{
			{role: testInstantEarly, at: 1}, {role: testInstantAt}, {role: testInstantHeld}}},
		{fn: "First", timeout: 2, past: testInstantUnit / 2, how: testInstantByTestTimer, reps: []testInstantRep{
			{role: testInstantAt}, {role: testInstantHeld, honours: true}, {role: testInstantAt}}},
	},
	"Hedge": {
		{fn: "Hedge", timeout: 3, delay: 1, how: testInstantByTestTimer, reps: []testInstantRep{
			{role: testInstantAt}, {role: testInstantAt}, {role: testInstantHeld}}},
		{fn: "Hedge", timeout: 2, delay: 2, past: testInstantUnit, how: testInstantByTestTimer, reps: []testInstantRep{
			{role: testInstantEarly}, {role: testInstantAt}, {role: testInstantHeld}, {role: testInstantAt}}},
	},
	"Collect": {
		{fn: "Collect", timeout: 3, how: testInstantByTestTimer, reps: []testInstantRep{
			{role: testInstantEarly, at: 1, ok: true}, {role: testInstantAt}, {role: testInstantHeld}}},
	},
}

func testExploreInstant(t *testing.T, fn string, n int) {
	katatest.Replay(t, testInstantFixed[fn], func(h *katatest.H, s testInstantScenario) { s.play(h) })
	katatest.Explore(t, n, testDrawInstant(fn), func(h *katatest.H, s testInstantScenario) { s.play(h) })
}

func TestR3_ExploreFailuresAtTheInstantOfTheTimeout(t *testing.T) {
	testExploreInstant(t, "First", 8)
}

func TestB1_ExploreFailuresAtTheInstantOfTheTimeout(t *testing.T) {
	testExploreInstant(t, "Hedge", 8)
}

func TestB2_ExploreAnswersAtTheInstantOfTheTimeout(t *testing.T) {
	testExploreInstant(t, "Collect", 6)
}

package blockingloop

// B2, explored: when Run's ctx ends, the running lookups (none, or some)
// stop in every way a backend can (at once, some time within Grace, or not
// before Grace runs out), in any order, with misses queued behind them. Run
// returns nil once the last one returns, or, when Grace runs out first, an
// error that matches ErrAbandoned and counts the lookups still running
// then; whichever way it returns, it leaves no timer on the clock.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// How a running lookup behaves once Run's ctx has ended.
const (
	testStopsAtOnce   = iota // honours its ctx
	testStopsInGrace         // ignores its ctx, returns some time within Grace
	testStopsLate            // ignores its ctx, returns only after Grace has run out
	testStopsAtExpiry        // ignores its ctx, returns at the instant Grace runs out
)

// testGraceScenario is one stop with lookups running.
type testGraceScenario struct {
	maxInFlight int
	grace       time.Duration
	before      time.Duration   // the clock moves this much before Run's ctx ends
	stops       []int           // how each running lookup stops (testStopsAtOnce, …)
	after       []time.Duration // testStopsInGrace: when it returns, after Run's ctx ended (0 < after < Grace)
	queued      int             // misses waiting for a slot when Run's ctx ends
}

func (s testGraceScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d, Grace %v; %d lookup(s) running", s.maxInFlight, s.grace, len(s.stops))
	if s.queued > 0 {
		fmt.Fprintf(&b, " and %d miss(es) queued", s.queued)
	}
	fmt.Fprintf(&b, "; the clock moves %v, then Run's ctx ends:", s.before)
	for i, st := range s.stops {
		switch st {
		case testStopsAtOnce:
			fmt.Fprintf(&b, "\n  lookup %d honours its ctx and returns at once", i+1)
		case testStopsInGrace:
			fmt.Fprintf(&b, "\n  lookup %d ignores its ctx and returns %v after Run's ctx ended", i+1, s.after[i])
		case testStopsLate:
			fmt.Fprintf(&b, "\n  lookup %d ignores its ctx and returns only after Grace has run out", i+1)
		case testStopsAtExpiry:
			fmt.Fprintf(&b, "\n  lookup %d ignores its ctx and returns at the instant Grace runs out", i+1)
		}
	}
	return b.String()
}

func testDrawGrace(r *rapid.T) testGraceScenario {
	s := testGraceScenario{maxInFlight: rapid.IntRange(-1, 4).Draw(r, "MaxInFlight")}
	// Whole seconds: the count in Run's error must not be confused with the
	// digits of a duration such as 1.5s.
	s.grace = time.Duration(rapid.SampledFrom([]int{1, 3, 5, 30, 120}).Draw(r, "Grace s")) * time.Second
	s.before = time.Duration(rapid.IntRange(0, 3000).Draw(r, "ms before the stop")) * time.Millisecond
	running := rapid.IntRange(0, max(s.maxInFlight, 1)).Draw(r, "running")
	for i := range running {
		st := rapid.IntRange(testStopsAtOnce, testStopsAtExpiry).Draw(r, fmt.Sprintf("lookup %d stops", i+1))
		var after time.Duration
		if st == testStopsInGrace {
			after = time.Duration(rapid.Int64Range(1, int64(s.grace)-1).Draw(r, fmt.Sprintf("lookup %d returns after", i+1)))
			if rapid.Bool().Draw(r, "whole ms") {
				after = min(after.Truncate(time.Millisecond)+time.Millisecond, s.grace-time.Millisecond)
			}
		}
		s.stops = append(s.stops, st)
		s.after = append(s.after, after)
	}
	if running == max(s.maxInFlight, 1) {
		s.queued = rapid.IntRange(0, 2).Draw(r, "queued")
	}
	return s
}

// testGraceFixed has lookups that stop in each way: one at once, one within
// Grace and two not before Grace runs out, so Run abandons 2 of the 4 that
// were running when its ctx ended.
var testGraceFixed = testGraceScenario{
	maxInFlight: 4, grace: 5 * time.Second, before: time.Second,
	stops:  []int{testStopsLate, testStopsAtOnce, testStopsInGrace, testStopsLate},
	after:  []time.Duration{0, 0, 2 * time.Second, 0},
	queued: 1,
}

// testGraceAtExpiry has a lookup that returns at the very instant Grace
// runs out, with nothing settled between its return and the Grace timer's
// firing: Run may count it as abandoned or not, but whatever counts the
// running lookups must be touched by the loop alone, also then.
var testGraceAtExpiry = testGraceScenario{
	maxInFlight: 3, grace: 5 * time.Second, before: time.Second,
	stops: []int{testStopsLate, testStopsAtExpiry, testStopsInGrace},
	after: []time.Duration{0, 0, 2 * time.Second},
}

// testGraceKept are the two ways Run returns nil with Grace set: no lookup
// running when its ctx ends, and every running one returning within Grace,
// with misses queued. Either way no Grace timer is left behind.
var testGraceKept = []testGraceScenario{
	{maxInFlight: 2, grace: 5 * time.Second, before: time.Second},
	{
		maxInFlight: 3, grace: 3 * time.Second, before: 500 * time.Millisecond,
		stops:  []int{testStopsInGrace, testStopsAtOnce, testStopsInGrace},
		after:  []time.Duration{time.Second, 0, 3*time.Second - time.Millisecond},
		queued: 2,
	},
}

// pendingAfter checks that Run, which returned as how says, left no timer
// on the clock.
func (s testGraceScenario) pendingAfter(h *katatest.H, how string) bool {
	if moved := h.PendingTimer(); moved != 0 {
		h.Errorf("Run %s, but left a timer pending on clk: it would fire %v later, into a channel nobody reads "+
			"(one more pending timer per stop of a long-lived service). The Grace wait is a fresh clk.Timer(Grace), "+
			"stopped on every way out of the drain (defer t.Stop()), also when the lookups return in time; "+
			"clk.After cannot be stopped", how, moved)
		return false
	}
	return true
}

func (s testGraceScenario) play(h *katatest.H) {
	type lookup struct {
		gate *katatest.Gate
		deaf bool
	}
	lookups := map[string]*lookup{}
	var running katatest.Peak
	var keys []string
	for i, st := range s.stops {
		k := fmt.Sprintf("key%d", i+1)
		keys = append(keys, k)
		lookups[k] = &lookup{gate: h.Gate(), deaf: st != testStopsAtOnce}
	}
	queuedKeys := make([]string, s.queued)
	for i := range queuedKeys {
		queuedKeys[i] = fmt.Sprintf("queued%d", i+1)
		lookups[queuedKeys[i]] = &lookup{gate: h.Gate()}
	}
	started := &katatest.Recorder[string]{}
	cache := New(h.Clk, func(ctx context.Context, key string) (string, error) {
		leave := running.Enter()
		defer leave()
		started.Add(key)
		l := lookups[key]
		wait := ctx
		if l.deaf {
			wait = context.Background()
		}
		if err := l.gate.Hold(wait); err != nil {
			return "", fmt.Errorf("provider: %w", err)
		}
		return "v:" + key, nil
	}, Config{MaxInFlight: s.maxInFlight, Grace: s.grace})
	run := katatest.StartErr(h, cache.Run)
	var gets []*katatest.Call[string]
	for _, k := range append(slices.Clone(keys), queuedKeys...) {
		gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, k) }))
		synctest.Wait() // one after the other: the queue's order is the test's
	}
	release := func() {
		for _, l := range lookups {
			l.gate.Release()
		}
	}
	defer release()
	if running.Now() != len(keys) {
		return // the limit is broken: R1 and R4 say more
	}
	h.Advance(s.before)
	run.Cancel()
	synctest.Wait()
	for i, st := range s.stops {
		if st == testStopsAtOnce && lookups[keys[i]].gate.Cancelled() == 0 {
			h.Errorf("when Run's ctx ended, the running lookup of %q did not see its ctx cancelled: every lookup runs "+
				"with Run's ctx, so stopping Run cancels it", keys[i])
			return
		}
	}

	// The lookups that stop within Grace return one instant after the
	// other, in the scenario's order; Run must wait for the others.
	left := len(keys)
	for _, st := range s.stops {
		if st == testStopsAtOnce {
			left--
		}
	}
	type ret struct {
		at   time.Duration
		keys []string
	}
	var rets []ret
	for i, st := range s.stops {
		if st != testStopsInGrace {
			continue
		}
		j := slices.IndexFunc(rets, func(r ret) bool { return r.at == s.after[i] })
		if j < 0 {
			rets = append(rets, ret{at: s.after[i]})
			j = len(rets) - 1
		}
		rets[j].keys = append(rets[j].keys, keys[i])
	}
	slices.SortFunc(rets, func(a, b ret) int { return int(a.at - b.at) })
	elapsed := time.Duration(0)
	for _, r := range rets {
		if left > 0 && run.Returned() {
			break
		}
		h.Advance(r.at - elapsed)
		elapsed = r.at
		for _, k := range r.keys {
			lookups[k].gate.Release()
		}
		left -= len(r.keys)
		synctest.Wait()
	}
	if left > 0 && run.Returned() {
		err := run.Err()
		h.Errorf("Run returned %v %v after its ctx ended, with %d lookup(s) that ignore their ctx still running and "+
			"Grace %v: Run waits for the running lookups until Grace has run out on the clock, counted from the "+
			"moment its ctx ended, even when some of them return meanwhile", err, elapsed, left, s.grace)
		return
	}
	if left == 0 && len(keys) == 0 {
		if !run.Returned() {
			h.Errorf("Run did not return when its ctx ended with no lookup running (Grace %v, the clock standing "+
				"still): it waited on the Grace timer for lookups that were not there. Grace only bounds the wait for "+
				"lookups still running; with none left, Run returns nil at once, so check that some are running "+
				"before the first wait, not only after a result arrives", s.grace)
			h.Advance(s.grace)
			return
		}
		if err := run.Err(); err != nil {
			h.Errorf("Run returned %v when its ctx ended with no lookup running (Grace %v); want nil: nothing was "+
				"abandoned", err, s.grace)
			return
		}
		s.pendingAfter(h, fmt.Sprintf("returned nil when its ctx ended with no lookup running (Grace %v)", s.grace))
		return
	}
	if left == 0 {
		if !run.Returned() {
			h.Errorf("Run did not return once the last running lookup had returned, %v after its ctx ended (Grace "+
				"%v, the clock standing still): with no lookup left running, Run returns nil at once, without "+
				"waiting for Grace to run out", elapsed, s.grace)
			h.Advance(s.grace)
			return
		}
		if err := run.Err(); err != nil {
			h.Errorf("Run returned %v once every running lookup had returned within Grace %v; want nil: nothing was "+
				"abandoned", err, s.grace)
			return
		}
		s.pendingAfter(h, fmt.Sprintf("returned nil once the %d running lookup(s) had returned, %v after its ctx "+
			"ended (Grace %v)", len(keys), elapsed, s.grace))
		return
	}
	// A lookup that returns as Grace runs out is released with the clock's
	// move and nothing settled between: Run may see either first.
	var atExpiry []string
	for i, st := range s.stops {
		if st == testStopsAtExpiry {
			atExpiry = append(atExpiry, keys[i])
		}
	}
	h.Advance(s.grace - elapsed - 1)
	if run.Returned() {
		h.Errorf("Run returned %v, 1ns before Grace (%v) ran out, with %d lookup(s) that ignore their ctx still "+
			"running: Run waits for them up to Grace on the clock, from the moment its ctx ended",
			run.Err(), s.grace, left)
		return
	}
	for _, k := range atExpiry {
		lookups[k].gate.Release()
	}
	h.Clk.Add(1)
	synctest.Wait()
	if !run.Returned() {
		h.Errorf("Run had not returned when Grace (%v) ran out, with %d lookup(s) that ignore their ctx still "+
			"running: stop waiting when a clk.Timer(Grace), started when Run's ctx ended, fires", s.grace, left)
		return
	}
	err := run.Err()
	if err == nil && left == len(atExpiry) {
		// The last ones returned as Grace ran out, and Run saw them first.
		s.pendingAfter(h, fmt.Sprintf("returned nil as Grace (%v) ran out and the last running lookup(s) returned", s.grace))
		return
	}
	if !errors.Is(err, ErrAbandoned) {
		h.Errorf("Run returned %v when Grace ran out with %d lookup(s) still running; want an error matching "+
			"ErrAbandoned", err, left)
		return
	}
	if !testSaysCount(err, left-len(atExpiry), left) {
		still := fmt.Sprint(left)
		switch {
		case len(atExpiry) == left:
			still = fmt.Sprintf("%d (or none, if Run saw the %d that returned as it ran out first: then it returns nil, "+
				"since it abandoned nothing)", left, left)
		case len(atExpiry) > 0:
			still = fmt.Sprintf("%d (or %d, counting none of the %d that returned as it ran out)", left, left-len(atExpiry), len(atExpiry))
		}
		h.Errorf("Run's error %q does not say how many lookups it abandoned: %s were still running when Grace ran "+
			"out (%d were running when its ctx ended, and %d returned meanwhile). Count the lookups still running "+
			"when the Grace timer fires, not those running when the drain began", err, still, len(keys),
			len(keys)-left)
		return
	}
	release()
	synctest.Wait()
	if !h.NoLeaks("the abandoned lookups, once they returned") ||
		!s.pendingAfter(h, fmt.Sprintf("returned ErrAbandoned when Grace (%v) ran out", s.grace)) {
		return
	}
	for _, k := range queuedKeys {
		if slices.Contains(started.All(), k) {
			h.Errorf("the queued lookup of %q started after Run's ctx ended: queued lookups never start once the "+
				"cache stops", k)
			return
		}
	}
	for i, g := range gets {
		if !g.Returned() {
			h.Errorf("Get(%q), waiting when Run's ctx ended, had not returned when Run did: once the cache stops, "+
				"waiting callers return ErrStopped at once", append(keys, queuedKeys...)[i])
			return
		}
	}
}

// testSaysCount reports whether err's text has a whole number from lo to hi
// (at least 1: an ErrAbandoned that abandoned none is wrong).
func testSaysCount(err error, lo, hi int) bool {
	for n := max(lo, 1); n <= hi; n++ {
		if regexp.MustCompile(fmt.Sprintf(`\b%d\b`, n)).MatchString(err.Error()) {
			return true
		}
	}
	return false
}

func TestB2_ExploreGraceCountsTheLookupsStillRunningWhenItRunsOut(t *testing.T) {
	katatest.Run(t, testGraceFixed.play)
	katatest.Repeat(t, 4, testGraceAtExpiry.play)
	for _, s := range testGraceKept {
		katatest.Run(t, s.play)
	}
	katatest.Explore(t, 10, testDrawGrace, func(h *katatest.H, s testGraceScenario) { s.play(h) })
}

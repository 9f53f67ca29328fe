package retry

// Calls of Do with different policies at once: a service retries its stock
// lookups with one Policy and its price lookups with another. Each call
// pauses as its own Policy says (R1), whatever the other calls are doing.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testMixed is calls of Do started at the same instant, each with a policy
// of its own (no jitter, no hook) and an op that fails some times and then
// returns 42.
type testMixed []testBackoff

func (s testMixed) String() string {
	parts := make([]string, len(s))
	for i, b := range s {
		parts[i] = fmt.Sprintf("call %d: %s", i+1, b)
	}
	return fmt.Sprintf("%d calls of Do start at the same instant; %s", len(s), strings.Join(parts, "; "))
}

func testDrawMixed(r *rapid.T) testMixed {
	s := make(testMixed, rapid.IntRange(2, 3).Draw(r, "calls"))
	for i := range s {
		name := func(what string) string { return fmt.Sprintf("call %d: %s", i+1, what) }
		b := testBackoff{req: "R1"}
		b.attempts = rapid.IntRange(2, 4).Draw(r, name("MaxAttempts"))
		b.base = rapid.SampledFrom([]time.Duration{time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond,
			250 * time.Millisecond, time.Second}).Draw(r, name("BaseDelay"))
		b.mult = rapid.SampledFrom([]float64{1, 1.5, 2, 3}).Draw(r, name("Multiplier"))
		// The cap is R6's; R1 checks the growth alone.
		fails := rapid.IntRange(1, b.limit()-1).Draw(r, name("failures"))
		b.kinds = rapid.SliceOfN(rapid.IntRange(0, len(testFailureKinds)-1), fails, fails).Draw(r, name("failure kinds"))
		s[i] = b
	}
	return s
}

// due is when, after the start, call i's attempts are due: attempt 1 at
// once, each next one its own Policy's pause after the last.
func (s testMixed) due(i int) []time.Duration {
	at := []time.Duration{0}
	for n := 1; n <= len(s[i].kinds); n++ {
		at = append(at, at[n-1]+s[i].pause(n))
	}
	return at
}

// play starts the calls together and moves the clock from one due attempt
// to the next, 2ns before it and 1ns after (the README allows 1ns of
// rounding), checking each time how many attempts each call has made. It
// returns what went wrong, or "" when every call kept to its own Policy,
// and the call it was about.
func (s testMixed) play(h *katatest.H) (wrong string, call int) {
	ops := make([]*testAttempts, len(s))
	calls := make([]*katatest.Call[int], len(s))
	var instants []time.Duration
	start := h.Clk.Now()
	for i, b := range s {
		op := &testAttempts{s: b, clk: h.Clk}
		ops[i] = op
		p := Policy{MaxAttempts: b.attempts, BaseDelay: b.base, Multiplier: b.mult, MaxDelay: b.maxDelay}
		calls[i] = katatest.Start(h, func(ctx context.Context) (int, error) { return Do(ctx, h.Clk, p, op.call) })
		instants = append(instants, s.due(i)[1:]...)
	}
	// end cancels the calls and runs the clock on until they have returned,
	// also a call that ignores its ctx while it pauses.
	end := func() {
		katatest.Unwind(h, calls...)
		for i := 0; i < 100 && slices.ContainsFunc(calls, func(c *katatest.Call[int]) bool { return !c.Returned() }); i++ {
			h.Advance(time.Hour)
		}
	}
	if h.Settle() != nil {
		// A call waits for a lock another holds while it pauses: R1's crowd
		// test says more. Past this point no call waits for another, and
		// synctest.Wait settles.
		end()
		return "", -1
	}
	slices.Sort(instants)
	for _, at := range slices.Compact(instants) {
		for _, now := range []time.Duration{at - 2, at + 1} {
			if d := start.Add(now).Sub(h.Clk.Now()); d > 0 {
				h.Clk.Add(d)
			}
			synctest.Wait()
			for i := range s {
				want := 0 // attempts due by now
				for _, d := range s.due(i) {
					if d <= now {
						want++
					}
				}
				got := ops[i].calls()
				if got == want {
					continue
				}
				wrong = s.report(i, ops[i], got, want)
				end()
				return wrong, i
			}
		}
	}
	for i, c := range calls {
		if !c.Returned() {
			end()
			return "", -1 // a success that does not end Do is the other R1 tests' business
		}
		if v, err := c.Result(); v != 42 || err != nil {
			return fmt.Sprintf("%d calls of Do ran at once, each with its own Policy; call %d's attempt %d succeeded "+
				"with 42, but Do returned (%d, %s)", len(s), i+1, len(s[i].kinds)+1, v, testDescribe(err)), i
		}
	}
	return "", -1
}

// report names the call whose pause after an attempt was not its own
// Policy's: got attempts had been made when want were due.
func (s testMixed) report(i int, op *testAttempts, got, want int) string {
	b := s[i]
	lead := fmt.Sprintf("Calls of Do with different policies changed each other's pauses: %d calls ran at once "+
		"(the scenario below), and ", len(s))
	if got > want {
		n := want // attempt n+1 came early
		return fmt.Sprintf("%scall %d's pause after attempt %d was %v, where its own Policy gives %v (%s)%s", lead,
			i+1, n, op.at(n+1).Sub(op.at(n)), b.pause(n), b.why(n), testMixedWhy)
	}
	n := got // attempt n+1 is late
	return fmt.Sprintf("%scall %d's pause after attempt %d must be %v (%s), as its own Policy gives; when it had "+
		"passed on the mock clock, attempt %d had not started%s", lead, i+1, n, b.pause(n), b.why(n), n+1, testMixedWhy)
}

// testMixedWhy ends the report: the same call, run alone, was right.
const testMixedWhy = ". That call, run alone, paused as its Policy says: a call's pauses come from its own Policy " +
	"only, so nothing one call of Do computes or keeps (a cached schedule, a shared slice or field) may change another's"

// testMixedPlay plays s and reports what went wrong, once it has played
// the call it was about alone, quietly: a call wrong on its own is the
// other R1 tests' business.
func testMixedPlay(h *katatest.H, s testMixed) {
	wrong, i := s.play(h)
	if wrong == "" || len(s) == 1 {
		return
	}
	if alone, _ := (testMixed{s[i]}).play(h); alone == "" {
		h.Errorf("%s", wrong)
	}
}

func TestR1_ExploreCallsWithDifferentPoliciesPauseTheirOwnPauses(t *testing.T) {
	katatest.Explore(t, 8, testDrawMixed, testMixedPlay)
	// Every run: two calls whose policies differ in every field R1 reads, each
	// pausing more than once.
	const ms = time.Millisecond
	s := testMixed{
		{req: "R1", attempts: 4, base: 10 * ms, mult: 2, kinds: []int{0, 1, 2}},
		{req: "R1", attempts: 5, base: time.Second, mult: 3, kinds: []int{2, 3, 4, 0}},
	}
	if !t.Failed() {
		katatest.Run(t, func(h *katatest.H) {
			testMixedPlay(h, s)
			if h.Failed() {
				h.Logf("the scenario: %s", s)
			}
		})
	}
}

package breaker

// Explored R2: callers that ask State before they call Do. While the
// clock stands still, an open breaker stays open, so a Do called after
// State has returned Open must be rejected with ErrOpen without running
// fn, however the failure that opened it raced the callers. The pollers
// call State again and again while the failures that trip the breaker
// (or the probe that reopens it) are recorded, and once everything has
// settled one more Do must still be rejected.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

type testPollScenario struct {
	maxFailures int
	failing     int  // calls whose fn fails at once, all at once
	reopen      bool // the breaker was opened and its open period is over: the failing calls are probes
	pollers     int  // goroutines that call State, then Do when State said Open
	polls       int  // times each poller asks State
	cycles      int  // times the whole is played on one breaker, 10s apart (0 means 1)
}

func (s testPollScenario) String() string {
	start := "a new breaker"
	if s.reopen {
		start = fmt.Sprintf("a breaker tripped by %d failure(s), then 10s later (its open period over)", s.maxFailures)
	}
	again := ""
	if s.cycles > 1 {
		again = fmt.Sprintf("; %d times over: 10s later a probe that succeeds closes it (or, reopened, its open "+
			"period is over again), and the same", s.cycles)
	}
	return fmt.Sprintf("New(clk, Settings{MaxFailures: %d, OpenTimeout: 10s, HalfOpenMaxRequests: 1}); %s: %d "+
		"call(s) whose fn fails at once and %d goroutine(s) that each ask State() up to %d times, and call Do right "+
		"after State() said Open, all at once, the clock standing still%s", s.maxFailures, start, s.failing, s.pollers,
		s.polls, again)
}

func testDrawPoll(r *rapid.T) testPollScenario {
	s := testPollScenario{maxFailures: rapid.IntRange(1, 3).Draw(r, "MaxFailures")}
	s.reopen = rapid.Bool().Draw(r, "reopen after an open period")
	if s.reopen {
		s.failing = rapid.IntRange(1, 3).Draw(r, "calls at once (one is the probe)")
	} else {
		s.failing = s.maxFailures + rapid.IntRange(0, 2).Draw(r, "failures beyond MaxFailures")
	}
	s.pollers = rapid.IntRange(1, 3).Draw(r, "pollers")
	s.polls = rapid.IntRange(3, 12).Draw(r, "polls each")
	return s
}

// testPollSeen is what a poller saw: the first Do it called after State
// said Open that was not rejected with ErrOpen, if any.
type testPollSeen struct {
	bad  bool
	ran  bool  // fn ran
	err  error // what Do returned
	poll int   // which poll, from 1
}

func (s testPollScenario) play(h *katatest.H) {
	b := New(h.Clk, Settings{MaxFailures: s.maxFailures, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 1})
	down := func(context.Context) error { return testErrDown }
	if s.reopen {
		for range s.maxFailures {
			_ = b.Do(context.Background(), down)
		}
	}
	for i := range max(s.cycles, 1) {
		if s.reopen || i > 0 {
			h.Advance(10 * time.Second)
		}
		if i > 0 && !s.reopen {
			_ = b.Do(context.Background(), func(context.Context) error { return nil }) // the probe closes it
		}
		if !s.round(h, b, down) {
			return
		}
	}
}

// round plays the failing calls and the pollers at once, and checks what
// the pollers saw and that the breaker is open once all is settled.
func (s testPollScenario) round(h *katatest.H, b *Breaker, down func(context.Context) error) bool {
	var failing []*katatest.Call[struct{}]
	for range s.failing {
		failing = append(failing, katatest.Go(h, func() (struct{}, error) {
			return struct{}{}, b.Do(context.Background(), down)
		}))
	}
	var pollers []*katatest.Call[testPollSeen]
	for range s.pollers {
		pollers = append(pollers, katatest.Go(h, func() (testPollSeen, error) {
			for i := range s.polls {
				if b.State() != Open {
					continue
				}
				ran := false
				err := b.Do(context.Background(), func(context.Context) error { ran = true; return nil })
				if ran || !errors.Is(err, ErrOpen) {
					return testPollSeen{bad: true, ran: ran, err: err, poll: i + 1}, nil
				}
			}
			return testPollSeen{}, nil
		}))
	}
	if stuck := h.Settle(); stuck != nil {
		return false // the older tests say what holds the mutex
	}
	for _, c := range failing {
		if !c.Returned() {
			h.Errorf("a Do whose fn had returned an error had not returned itself, with nothing else to wait for")
			katatest.Unwind(h, failing...)
			katatest.Unwind(h, pollers...)
			return false
		}
	}
	const rule = "while open, Do returns ErrOpen at once without calling fn. Do must decide on the state that " +
		"State reports: a copy of the state kept for a lock-free fast path, or published after the unlock, lags " +
		"behind it"
	for _, c := range pollers {
		if !c.Returned() {
			h.Errorf("a caller asking State and calling Do had not returned, with nothing to wait for")
			katatest.Unwind(h, pollers...)
			return false
		}
		seen, _ := c.Result()
		if seen.bad && s.stateStaysOpen(h) {
			return false
		}
		if seen.bad {
			h.Errorf("a Do called right after State() returned Open (poll %d), with the clock standing still, %s: %s",
				seen.poll, testPollDid(seen.ran, seen.err), rule)
			return false
		}
	}
	if st := b.State(); st != Open {
		h.Errorf("once the calls had returned, State() was %v; want Open, after %s", st, s)
		return false
	}
	ran := false
	err := b.Do(context.Background(), func(context.Context) error { ran = true; return nil })
	if ran || !errors.Is(err, ErrOpen) {
		if s.stateStaysOpen(h) {
			return false
		}
		h.Errorf("once everything had settled, State() said Open, and the next Do %s: %s", testPollDid(ran, err), rule)
		return false
	}
	return true
}

// stateStaysOpen looks, once a Do after State said Open was let through,
// for the likelier cause: a State that never makes the move to half-open
// itself. A fresh breaker is tripped, the clock moves on by OpenTimeout,
// and State alone is asked; if it says Open, that is the mistake, and it
// is reported. The clock moves: call it only when the round has failed.
func (s testPollScenario) stateStaysOpen(h *katatest.H) bool {
	fresh := New(h.Clk, Settings{MaxFailures: s.maxFailures, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 1})
	for range s.maxFailures {
		_ = fresh.Do(context.Background(), func(context.Context) error { return testErrDown })
	}
	h.Advance(10 * time.Second)
	if st := fresh.State(); st == Open {
		h.Errorf("a breaker tripped by %d failure(s), OpenTimeout 10s: 10s later, with no call in between, State() "+
			"returned Open; its open period is over, so State itself must move it to half-open, as the next Do "+
			"would (\"the next Do or State finds it half-open\"): callers who ask State before they call Do "+
			"otherwise see Open, and their Do then finds it half-open with no place left for a probe", s.maxFailures)
		return true
	}
	return false
}

func testPollDid(ran bool, err error) string {
	if ran {
		return fmt.Sprintf("ran fn (and returned %v)", err)
	}
	return fmt.Sprintf("returned %v without calling fn, not an error matching ErrOpen", err)
}

func TestR2_ExploreADoAfterStateSaidOpenIsRejected(t *testing.T) {
	katatest.Explore(t, 8, testDrawPoll, func(h *katatest.H, s testPollScenario) { s.play(h) })
	// And always, shaken: the trip and the reopening, with two pollers.
	for _, s := range []testPollScenario{
		{maxFailures: 1, failing: 1, pollers: 6, polls: 3, cycles: 10},
		{maxFailures: 1, failing: 1, reopen: true, pollers: 6, polls: 3, cycles: 10},
	} {
		katatest.Repeat(t, 10, func(h *katatest.H) { s.play(h) })
	}
}

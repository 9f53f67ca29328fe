package blockingloop

// R2 when a Tick passes while OnTick runs. OnTick runs on the loop and may
// take a while (publishing metrics); if the clock passes the next beat's
// time meanwhile, that beat still gets its OnTick, right after the slow
// one returns: the README's heartbeat calls OnTick once per Tick on the
// injected clock, never fewer and never while the clock stands still. A
// clk.Ticker's channel holds exactly that one tick for the loop.
//
// The exploration draws the Tick (odd, from 1ns to 2s) and a run of beats.
// Every OnTick is held at a gate the test owns. While it is held, the
// clock may move by less than what is left to the next beat, or past
// exactly one more beat; between beats it moves by less or by more than a
// Tick; sometimes a lookup is held, and Gets (hits, or misses that wait
// for it) or Stats come from several goroutines while OnTick is held.
// Never two beats pass in one hold: the
// ticker's channel holds one tick, and the mock ticker drops a tick that
// fires while one waits, so any Ticker-based design would lose the second.
// After each step the test settles and counts: OnTick ran once per Tick
// boundary passed since Run started, less the one beat that may wait
// while an OnTick is held.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// What a step of a testHeldBeats scenario does.
const (
	testHBMove    = iota // the clock moves, no OnTick held
	testHBHeld           // the clock moves while an OnTick is held
	testHBCalls          // Gets and Stats come while an OnTick is held
	testHBRelease        // the held OnTick returns
)

// testHBStep is one step of a scenario: its kind, how far the clock moves
// (testHBMove, testHBHeld) or the calls made (testHBCalls, each on its own
// goroutine: "Stats" or a key to Get).
type testHBStep struct {
	kind  int
	d     time.Duration
	calls []string
}

// testHeldBeats is one scenario.
type testHeldBeats struct {
	tick        time.Duration
	maxInFlight int
	heldLookup  bool // a Get whose lookup stays held runs from the start
	steps       []testHBStep
}

// beats is the number of beats passed at elapsed e.
func (s testHeldBeats) beats(e time.Duration) int { return int(e / s.tick) }

func (s testHeldBeats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Tick %v, MaxInFlight %d; every OnTick waits until the test lets it return", s.tick, s.maxInFlight)
	b.WriteString("\n  Run starts at 0; Get(\"EUR\") is answered and stored")
	if s.heldLookup {
		b.WriteString("\n  Get(\"USD\") starts a lookup that the backend holds to the end")
	}
	var e time.Duration
	pending := false // a beat waits for the held OnTick to return
	for _, st := range s.steps {
		switch st.kind {
		case testHBMove, testHBHeld:
			from := e
			e += st.d
			what := "the clock moves"
			if st.kind == testHBHeld {
				what = "while OnTick is held, the clock moves"
			}
			if n := s.beats(e) - s.beats(from); n > 1 || (n > 0 && st.kind == testHBHeld) {
				pending = true
			}
			fmt.Fprintf(&b, "\n  %s %v, from %v to %v (%d beat(s) passed since Run started)",
				what, st.d, from, e, s.beats(e))
		case testHBCalls:
			fmt.Fprintf(&b, "\n  while OnTick is held, %s called, each on its own goroutine", testHBCalled(st.calls, "is", "are"))
		case testHBRelease:
			b.WriteString("\n  the held OnTick returns")
			if pending {
				b.WriteString("; the beat that passed meanwhile is due its OnTick at once (held in turn)")
			}
			pending = false
		}
	}
	return b.String()
}

// testHBCalled names the calls, then one or many (the verb).
func testHBCalled(calls []string, one, many string) string {
	verb := many
	if len(calls) == 1 {
		verb = one
	}
	return strings.Join(testHBCallNames(calls), ", ") + " " + verb
}

func testHBCallNames(calls []string) []string {
	var names []string
	for _, c := range calls {
		if c == "" {
			names = append(names, "Stats")
		} else {
			names = append(names, fmt.Sprintf("Get(%q)", c))
		}
	}
	return names
}

// testHBModel is what a correct heartbeat does, as the draw plays it: how
// far the clock is, whether an OnTick is held, and whether a beat waits
// for it (at most one: the ticker's channel holds one tick).
type testHBModel struct {
	e       time.Duration
	held    bool
	pending bool
}

// next is how far the clock is from the next beat (a Tick when it stands
// on one).
func (m testHBModel) next(tick time.Duration) time.Duration { return tick - m.e%tick }

func testDrawHeldBeats(r *rapid.T) testHeldBeats {
	s := testHeldBeats{
		tick:        time.Duration(2*rapid.Int64Range(0, int64(time.Second)-1).Draw(r, "Tick/2") + 1),
		maxInFlight: rapid.IntRange(1, 3).Draw(r, "MaxInFlight"),
		heldLookup:  rapid.Bool().Draw(r, "a lookup is held"),
	}
	t := s.tick
	var m testHBModel
	rng := func(lo, hi time.Duration, label string) time.Duration {
		return time.Duration(rapid.Int64Range(int64(lo), int64(hi)).Draw(r, label))
	}
	// The callers of a scenario call Stats, or Get: never both; the Gets
	// are hits ("EUR") or misses that wait for the held lookup ("USD"). So
	// no lookup ends while the loop serves them, and the mistakes of R6 (a
	// Stats that reads the loop's state off the loop, lookups that write
	// the map) race with nothing here: R6 grades them.
	keys := []string{"EUR", "USD"}
	if rapid.Bool().Draw(r, "callers call Stats") {
		keys = []string{""}
	}
	releases := rapid.IntRange(2, 6).Draw(r, "beats")
	for releases > 0 {
		if !m.held {
			// Between beats: sometimes less than what is left to the next
			// beat, then past one beat or past two (more than a Tick).
			dist := m.next(t)
			if dist > 1 && rapid.Bool().Draw(r, "short move between beats") {
				d := rng(1, dist-1, "short move")
				s.steps = append(s.steps, testHBStep{kind: testHBMove, d: d})
				m.e += d
				dist -= d
			}
			var d time.Duration
			if rapid.IntRange(0, 2).Draw(r, "two beats pass") == 0 {
				d = rng(dist+t, dist+2*t-1, "move past two beats")
				m.pending = true
			} else {
				d = rng(dist, dist+t-1, "move past one beat")
			}
			s.steps = append(s.steps, testHBStep{kind: testHBMove, d: d})
			m.e += d
			m.held = true
			continue
		}
		// An OnTick is held.
		if rapid.IntRange(0, 2).Draw(r, "calls while held") == 0 {
			var calls []string
			for i := range rapid.IntRange(1, 4).Draw(r, "callers") {
				calls = append(calls, rapid.SampledFrom(keys).Draw(r, fmt.Sprintf("caller %d", i+1)))
			}
			s.steps = append(s.steps, testHBStep{kind: testHBCalls, calls: calls})
		}
		dist := m.next(t)
		switch k := rapid.IntRange(0, 2).Draw(r, "move while held"); {
		case k == 1 && dist > 1:
			d := rng(1, dist-1, "held move within the beat")
			s.steps = append(s.steps, testHBStep{kind: testHBHeld, d: d})
			m.e += d
		case k == 2 && !m.pending:
			d := rng(dist, dist+t-1, "held move past one beat")
			s.steps = append(s.steps, testHBStep{kind: testHBHeld, d: d})
			m.e += d
			m.pending = true
		}
		s.steps = append(s.steps, testHBStep{kind: testHBRelease})
		releases--
		m.held, m.pending = m.pending, false
	}
	return s
}

// testHeldBeatsFixed: a Tick of 1s where the second beat passes while the
// first OnTick is held (a lookup held, calls waiting), then two beats pass
// in one move between beats.
var testHeldBeatsFixed = []testHeldBeats{{
	tick: time.Second, maxInFlight: 1, heldLookup: true,
	steps: []testHBStep{
		{kind: testHBMove, d: time.Second},
		{kind: testHBCalls, calls: []string{"EUR", "USD", "EUR"}},
		{kind: testHBHeld, d: 1500 * time.Millisecond},
		{kind: testHBRelease},
		{kind: testHBRelease},
		{kind: testHBMove, d: 1700 * time.Millisecond},
		{kind: testHBRelease},
		{kind: testHBRelease},
	},
}}

func (s testHeldBeats) play(h *katatest.H) {
	be := testNewBackend()
	h.Own(be.releaseAll)
	be.hold("USD")
	var mu sync.Mutex
	var gates []*katatest.Gate
	holding, calls := true, 0
	releaseAll := func() {
		mu.Lock()
		holding = false
		gs := append([]*katatest.Gate(nil), gates...)
		mu.Unlock()
		for _, g := range gs {
			g.Release()
		}
	}
	h.Own(releaseAll)
	onTick := func(Stats) {
		mu.Lock()
		calls++
		if !holding {
			mu.Unlock()
			return
		}
		g := katatest.NewGate()
		gates = append(gates, g)
		mu.Unlock()
		_ = g.Hold(context.Background())
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return calls
	}
	cache := New(h.Clk, be.lookup, Config{MaxInFlight: s.maxInFlight, Tick: s.tick, OnTick: onTick})
	run := katatest.StartErr(h, cache.Run)
	var started []func()
	defer func() {
		// Every OnTick and lookup returns before Run's ctx ends: the stop
		// is R5's to grade.
		releaseAll()
		synctest.Wait()
		be.releaseAll()
		synctest.Wait()
		run.Cancel()
		for _, cancel := range started {
			cancel()
		}
		synctest.Wait()
	}()
	get := func(key string) {
		c := katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, key) })
		started = append(started, c.Cancel)
	}
	synctest.Wait()
	get("EUR")
	synctest.Wait()
	if s.heldLookup {
		get("USD")
		synctest.Wait()
	}
	var story []string // what happened so far, for a verdict
	pending := false   // a beat passed while an OnTick was held, and waits for it
	held := false
	for _, st := range s.steps {
		switch st.kind {
		case testHBMove, testHBHeld:
			from := h.Elapsed()
			h.Advance(st.d)
			passed := s.beats(h.Elapsed()) - s.beats(from)
			if st.kind == testHBHeld {
				story = append(story, fmt.Sprintf("while an OnTick was held, the clock moved from %v to %v", from, h.Elapsed()))
				if passed > 0 {
					pending = true
				}
			} else {
				story = append(story, fmt.Sprintf("the clock moved from %v to %v", from, h.Elapsed()))
				if passed > 0 {
					held = true
				}
				if passed > 1 {
					pending = true
				}
			}
		case testHBCalls:
			for _, c := range st.calls {
				if c == "" {
					c := katatest.Start(h, cache.Stats)
					started = append(started, c.Cancel)
				} else {
					get(c)
				}
			}
			synctest.Wait()
			story = append(story, fmt.Sprintf("while an OnTick was held, %s called", testHBCalled(st.calls, "was", "were")))
		case testHBRelease:
			mu.Lock()
			gs := append([]*katatest.Gate(nil), gates...)
			mu.Unlock()
			for _, g := range gs {
				g.Release()
			}
			synctest.Wait()
			story = append(story, fmt.Sprintf("at %v the held OnTick returned", h.Elapsed()))
			held, pending = pending, false
		}
		if !s.check(h, count(), pending, held, story) {
			return
		}
	}
}

// check compares the OnTick calls so far with the beats passed: one each,
// less the one that waits while an OnTick is held.
func (s testHeldBeats) check(h *katatest.H, n int, pending, held bool, story []string) bool {
	beats := s.beats(h.Elapsed())
	want := beats
	if pending {
		want--
	}
	if n == want {
		return true
	}
	what := strings.Join(story, "; ")
	if n < want {
		h.Errorf("a tick that passed while OnTick ran got no OnTick: OnTick ran %d time(s) by %v on the clock, and "+
			"%d beat(s) of Tick %v had passed since Run started (%s). The README: every Tick on the injected clock "+
			"the loop calls OnTick, once per Tick, also when the beat's time passes while the last OnTick still "+
			"runs: the clk.Ticker's channel holds that tick, and the loop's select takes it as soon as OnTick "+
			"returns. Likely mistake: after OnTick, the loop throws away a tick already waiting in the ticker's "+
			"channel (a non-blocking receive from t.C, to keep two beats from coming back to back), or makes the "+
			"ticker afresh", n, h.Elapsed(), beats, s.tick, what)
		return false
	}
	moment := "once the clock had stopped"
	if held {
		moment = "while an OnTick was still held"
	}
	h.Errorf("OnTick ran while the clock stood still: OnTick ran %d time(s) by %v on the clock, %s, but only %d "+
		"beat(s) of Tick %v had passed since Run started (%s); want %d. The README: OnTick once per Tick, never "+
		"while the clock stands still. Likely mistake: after a slow OnTick, the loop makes up the beat whose time "+
		"passed meanwhile by calling OnTick at once, but that beat's tick still waits in the clk.Ticker's channel, "+
		"so the select takes it and calls OnTick for it a second time: let the ticker's channel be the only "+
		"source of beats", n, h.Elapsed(), moment, beats, s.tick, what, want)
	return false
}

func TestR2_ExploreATickThatPassesWhileOnTickRunsGetsItsOnTick(t *testing.T) {
	play := func(h *katatest.H, s testHeldBeats) { s.play(h) }
	katatest.Replay(t, testHeldBeatsFixed, play)
	katatest.Explore(t, 12, testDrawHeldBeats, play)
}

package blockingloop

// R4, explored over the queue's order when keys have different numbers of
// callers. "A miss beyond that waits in a FIFO queue the loop owns and
// starts, oldest first, when a running lookup reports back." The scenarios
// draw the limit, keys first missed one after the other in a drawn order
// (their names sort in no particular way), more Gets of keys already
// waiting (several at once, some right after the first miss, some long
// after other keys queued behind it, some while the key's lookup runs), and
// running lookups that report back in a drawn order. Whatever the numbers
// of callers, the first lookups of the keys start in the order of the keys'
// first misses: a key's place is set by its first miss, and Gets that join
// it later do not move it. So neither the key with the most callers, nor
// the newest, nor the first by name, nor the last one joined, nor a map's
// order goes first. Only that order is checked: a design without sharing
// (B1), whose every miss queues on its own, starts the keys in that order
// too.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testTurnLookup is one call of the backend of a turns scenario.
type testTurnLookup struct {
	key      string
	release  chan struct{}
	released bool
}

// testTurnBackend holds every lookup until the test lets it answer, ctx or
// not, and records the order lookups start in.
type testTurnBackend struct {
	mu      sync.Mutex
	lookups []*testTurnLookup // in the order they started
	over    bool              // the scenario is over: lookups no longer wait
}

func (b *testTurnBackend) lookup(_ context.Context, key string) (string, error) {
	b.mu.Lock()
	l := &testTurnLookup{key: key, release: make(chan struct{}), released: b.over}
	b.lookups = append(b.lookups, l)
	b.mu.Unlock()
	if !l.released {
		<-l.release
	}
	return "v:" + key, nil
}

// running returns the lookups that started and have not been let answer,
// oldest first.
func (b *testTurnBackend) running() []*testTurnLookup {
	b.mu.Lock()
	defer b.mu.Unlock()
	var running []*testTurnLookup
	for _, l := range b.lookups {
		if !l.released {
			running = append(running, l)
		}
	}
	return running
}

// firstStarts returns the keys in the order their first lookup started.
func (b *testTurnBackend) firstStarts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var keys []string
	seen := map[string]bool{}
	for _, l := range b.lookups {
		if !seen[l.key] {
			seen[l.key] = true
			keys = append(keys, l.key)
		}
	}
	return keys
}

// answered reports whether a lookup of key has been let answer.
func (b *testTurnBackend) answered(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lookups {
		if l.key == key && l.released {
			return true
		}
	}
	return false
}

func (b *testTurnBackend) answer(l *testTurnLookup) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !l.released {
		l.released = true
		close(l.release)
	}
}

// releaseAll lets every lookup return, and those that start later too.
func (b *testTurnBackend) releaseAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.over = true
	for _, l := range b.lookups {
		if !l.released {
			l.released = true
			close(l.release)
		}
	}
}

const (
	testTurnNew    = iota // the first Gets of the next key, at once
	testTurnJoin          // more Gets of a key whose first lookup has not answered, at once
	testTurnAnswer        // a running lookup answers
)

type testTurnStep struct {
	kind int
	gets int // testTurnNew, testTurnJoin: how many Gets, at once
	pick int // testTurnJoin: among the keys waiting (first missed first); testTurnAnswer: among the running lookups, oldest first
}

type testTurns struct {
	maxInFlight int
	keys        []string // in the order of their first miss
	steps       []testTurnStep
	drain       []int // once the steps are over: which running lookup answers (oldest first), one at a time
}

func (s testTurns) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d; the backend holds every lookup until the test lets it answer (ctx or not); "+
		"every Get is from its own goroutine, and each step settles before the next", s.maxInFlight)
	next := 0
	for i, st := range s.steps {
		fmt.Fprintf(&b, "\n  step %d: ", i+1)
		switch st.kind {
		case testTurnNew:
			fmt.Fprintf(&b, "%d Get(s) of %q, nobody asked for it yet, at once", st.gets, s.keys[next])
			next++
		case testTurnJoin:
			fmt.Fprintf(&b, "%d more Get(s), at once, of the key number %d (modulo their count) among those whose "+
				"lookup has not answered yet, in the order they were first missed", st.gets, st.pick)
		case testTurnAnswer:
			fmt.Fprintf(&b, "running lookup number %d (oldest first, modulo those running) answers", st.pick)
		}
	}
	fmt.Fprintf(&b, "\n  then the running lookups answer one at a time, by number (oldest first, modulo those "+
		"running): %v, then oldest first", s.drain)
	return b.String()
}

var testTurnNames = []string{"EUR", "GBP", "JPY", "CHF", "USD", "CAD"}

func testDrawTurns(r *rapid.T) testTurns {
	s := testTurns{maxInFlight: rapid.IntRange(1, 3).Draw(r, "MaxInFlight")}
	names := rapid.Permutation(testTurnNames).Draw(r, "key order")
	n := rapid.IntRange(2, len(names)).Draw(r, "keys")
	s.keys = names[:n]
	gets := rapid.IntRange(1, 3)
	s.steps = []testTurnStep{{kind: testTurnNew, gets: gets.Draw(r, "gets")}}
	for next := 1; next < n; {
		st := testTurnStep{kind: rapid.SampledFrom([]int{testTurnNew, testTurnNew, testTurnJoin, testTurnJoin,
			testTurnAnswer}).Draw(r, "step")}
		switch st.kind {
		case testTurnNew:
			st.gets = gets.Draw(r, "gets")
			next++
		case testTurnJoin:
			st.gets = gets.Draw(r, "gets")
			st.pick = rapid.IntRange(0, 5).Draw(r, "pick")
		case testTurnAnswer:
			st.pick = rapid.IntRange(0, 2).Draw(r, "pick")
		}
		s.steps = append(s.steps, st)
	}
	// After the last key's first miss: joins and answers in any order.
	for range rapid.IntRange(0, 4).Draw(r, "later steps") {
		st := testTurnStep{kind: rapid.SampledFrom([]int{testTurnJoin, testTurnAnswer}).Draw(r, "later step")}
		if st.kind == testTurnJoin {
			st.gets = gets.Draw(r, "gets")
			st.pick = rapid.IntRange(0, 5).Draw(r, "pick")
		} else {
			st.pick = rapid.IntRange(0, 2).Draw(r, "pick")
		}
		s.steps = append(s.steps, st)
	}
	s.drain = rapid.SliceOfN(rapid.IntRange(0, 2), 0, 8).Draw(r, "drain")
	return s
}

// testTurnsFixed are the cases every run plays. One lookup at a time: GBP
// runs, then JPY, EUR and USD queue in that order; one more Get joins JPY
// and two join EUR, after USD queued. JPY, with two callers, is neither the
// busiest key (EUR has three), nor the newest, nor the last joined, nor the
// first or last by name, yet it goes first. Then two slots: CAD, joined
// after JPY and CHF queued behind it, keeps its place ahead of them, and
// CHF, three callers at its first miss and two more later, waits its turn
// behind JPY, whichever running lookup answers.
var testTurnsFixed = []testTurns{
	{
		maxInFlight: 1,
		keys:        []string{"GBP", "JPY", "EUR", "USD"},
		steps: []testTurnStep{
			{kind: testTurnNew, gets: 1},
			{kind: testTurnNew, gets: 1},
			{kind: testTurnNew, gets: 1},
			{kind: testTurnNew, gets: 1},
			{kind: testTurnJoin, gets: 1, pick: 1},
			{kind: testTurnJoin, gets: 2, pick: 2},
		},
	},
	{
		maxInFlight: 2,
		keys:        []string{"USD", "EUR", "CAD", "JPY", "CHF", "GBP"},
		steps: []testTurnStep{
			{kind: testTurnNew, gets: 1},
			{kind: testTurnNew, gets: 2},
			{kind: testTurnNew, gets: 1},
			{kind: testTurnNew, gets: 1},
			{kind: testTurnNew, gets: 3},
			{kind: testTurnJoin, gets: 1, pick: 2},
			{kind: testTurnNew, gets: 2},
			{kind: testTurnAnswer, pick: 1},
			{kind: testTurnJoin, gets: 2, pick: 3},
		},
		drain: []int{1, 0},
	},
}

// testTurnPlay is a turns scenario being played.
type testTurnPlay struct {
	h       *katatest.H
	s       testTurns
	be      *testTurnBackend
	cache   *Cache
	missed  []string       // keys first missed, in order
	callers map[string]int // Gets of each key so far
}

func (s testTurns) play(h *katatest.H) {
	p := &testTurnPlay{h: h, s: s, be: &testTurnBackend{}, callers: map[string]int{}}
	h.Own(p.be.releaseAll)
	defer p.be.releaseAll()
	p.cache = New(h.Clk, p.be.lookup, Config{MaxInFlight: s.maxInFlight})
	run := katatest.StartErr(h, p.cache.Run)
	var gets []*katatest.Call[string]
	defer func() {
		run.Cancel()
		for _, g := range gets {
			g.Cancel()
		}
		p.be.releaseAll()
		synctest.Wait() // a Run that does not return is R5's
	}()
	getAll := func(key string, n int) {
		for range n {
			gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) { return p.cache.Get(ctx, key) }))
		}
		p.callers[key] += n
		synctest.Wait()
	}
	for i, st := range s.steps {
		switch st.kind {
		case testTurnNew:
			key := s.keys[len(p.missed)]
			p.missed = append(p.missed, key)
			getAll(key, st.gets)
		case testTurnJoin:
			var waiting []string
			for _, k := range p.missed {
				if !p.be.answered(k) {
					waiting = append(waiting, k)
				}
			}
			if len(waiting) == 0 {
				continue
			}
			getAll(waiting[st.pick%len(waiting)], st.gets)
		case testTurnAnswer:
			if !p.answer(st.pick) {
				continue
			}
		}
		if !p.check(fmt.Sprintf("at step %d", i+1)) {
			return
		}
	}
	for i := range 4 * len(s.keys) * max(s.maxInFlight, 1) {
		pick := 0
		if i < len(s.drain) {
			pick = s.drain[i]
		}
		if !p.answer(pick) {
			break
		}
		if !p.check(fmt.Sprintf("once the steps were over, as running lookups answered (%d)", i+1)) {
			return
		}
	}
}

// answer lets running lookup number pick (oldest first, modulo those
// running) answer, and reports whether one ran.
func (p *testTurnPlay) answer(pick int) bool {
	running := p.be.running()
	if len(running) == 0 {
		return false
	}
	p.be.answer(running[pick%len(running)])
	synctest.Wait()
	return true
}

// check compares the order the keys' first lookups started in with the
// order of their first misses: the keys started so far must be the first
// ones missed, in that order.
func (p *testTurnPlay) check(when string) bool {
	started := p.be.firstStarts()
	for i, k := range started {
		if i < len(p.missed) && p.missed[i] == k {
			continue
		}
		if i >= len(p.missed) || !p.missedBefore(k) {
			return true // a lookup of a key nobody asked for: R3 and R4's other tests say more
		}
		skipped := p.missed[i]
		how := fmt.Sprintf("while %q, first missed before it, still waited", skipped)
		for _, s := range started[i+1:] {
			if s == skipped {
				how = fmt.Sprintf("ahead of %q, first missed before it", skipped)
			}
		}
		p.h.Errorf("a queued key jumped the FIFO queue: the loop started the lookup of %q %s (%s; MaxInFlight %d). "+
			"The misses beyond MaxInFlight wait in a FIFO queue the loop owns, and the oldest starts when a running "+
			"lookup reports back. A key's place is set by its first miss: Gets that join it later do not move it, "+
			"and neither its name nor how many callers wait for it (%q: %d, %q: %d) puts it ahead. Keys in the "+
			"order of their first miss: %s; first lookups started, in order: %s. Keep the queue a slice the loop "+
			"appends a key to on its first miss and takes from the front",
			k, how, when, p.s.maxInFlight, skipped, p.callers[skipped], k, p.callers[k],
			strings.Join(p.missed, ", "), strings.Join(started, ", "))
		return false
	}
	return true
}

func (p *testTurnPlay) missedBefore(key string) bool {
	for _, k := range p.missed {
		if k == key {
			return true
		}
	}
	return false
}

func TestR4_ExploreQueuedKeysStartInTheOrderOfTheirFirstMiss(t *testing.T) {
	play := func(h *katatest.H, s testTurns) { s.play(h) }
	katatest.Replay(t, testTurnsFixed, play)
	katatest.Explore(t, 6, testDrawTurns, play)
}

package blockingloop

// R4, explored over the length of the queue. The README puts no bound on
// the misses that wait for a slot: "A miss beyond that waits in a FIFO queue
// the loop owns … The loop itself never waits: not for the backend, not for
// a free slot". So a cold start with every slot held and hundreds of
// distinct keys missing (a shop with every currency of the world) must
// queue all of them, keep the loop answering, and start them as the slots
// free. A queue with a fixed capacity (a buffered channel the loop sends
// to, say) freezes the loop once it is full; one that turns misses away
// when full fails callers the README says must wait their turn. The
// scenarios draw the limit, waves of misses that arrive at once (each from
// its own goroutine, with Gets of a cached key among them), and rounds of
// lookups that answer; one fixed scenario queues more than a thousand keys
// every run.

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

// testQueueWarm is the key that is cached before the waves arrive: its
// lookup answers at once.
const testQueueWarm = "EUR"

// testQueueWave is a crowd of Gets that arrive at once.
type testQueueWave struct {
	misses int // Gets of distinct keys nobody asked for yet
	hits   int // Gets of the cached key among them
}

type testLongQueue struct {
	maxInFlight int
	waves       []testQueueWave
	rounds      [][]int // each round lets these running lookups answer (picks among them, oldest first), at once
}

func (s testLongQueue) slots() int { return max(s.maxInFlight, 1) }

func (s testLongQueue) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d; the backend holds every lookup until released, except that of %s, which "+
		"answers at once", s.maxInFlight, testQueueWarm)
	fmt.Fprintf(&b, "\n  Get %s (stored from now on)", testQueueWarm)
	n := 0
	for i, w := range s.waves {
		fmt.Fprintf(&b, "\n  wave %d, at once, each from its own goroutine: Gets of %d keys nobody asked for yet "+
			"(%s), and %d Gets of %s", i+1, w.misses, testQueueKeyRange(n, w.misses), w.hits, testQueueWarm)
		n += w.misses
	}
	for _, r := range s.rounds {
		fmt.Fprintf(&b, "\n  the held lookups at %v among those running (oldest first; past the last, counting "+
			"starts over) answer at once", r)
	}
	b.WriteString("\n  from now on the backend answers every lookup at once, and the held ones answer")
	return b.String()
}

// testQueueKey is the i-th key the scenario misses: all distinct.
func testQueueKey(i int) string { return fmt.Sprintf("X%04d", i+1) }

func testQueueKeyRange(from, n int) string {
	switch n {
	case 0:
		return "none"
	case 1:
		return testQueueKey(from)
	}
	return testQueueKey(from) + " to " + testQueueKey(from+n-1)
}

func testDrawLongQueue(r *rapid.T) testLongQueue {
	s := testLongQueue{maxInFlight: rapid.IntRange(-1, 4).Draw(r, "MaxInFlight")}
	waves := rapid.IntRange(1, 3).Draw(r, "waves")
	for i := range waves {
		s.waves = append(s.waves, testQueueWave{
			misses: rapid.IntRange(0, 150).Draw(r, fmt.Sprintf("misses in wave %d", i+1)),
			hits:   rapid.IntRange(0, 2).Draw(r, fmt.Sprintf("hits in wave %d", i+1)),
		})
	}
	s.rounds = rapid.SliceOfN(rapid.SliceOfN(rapid.IntRange(0, 4), 1, 3), 0, 3).Draw(r, "rounds")
	return s
}

// testLongQueueFixed is played every run: more misses queued than any
// buffer a hurried design would size (1024 and below).
var testLongQueueFixed = []testLongQueue{{
	maxInFlight: 3,
	waves:       []testQueueWave{{misses: 2}, {misses: 600, hits: 1}, {misses: 500, hits: 2}},
	rounds:      [][]int{{1}, {0, 1}},
}}

// testQueueLookup is one call of the backend.
type testQueueLookup struct {
	key      string
	release  chan struct{}
	answered bool // released by the test
}

// testQueueBackend holds every lookup (but the warm key's) until the test
// lets it answer, or answers at once once it is open.
type testQueueBackend struct {
	mu      sync.Mutex
	open    bool
	lookups []*testQueueLookup // in the order they started
	running katatest.Peak
}

func (b *testQueueBackend) lookup(ctx context.Context, key string) (string, error) {
	leave := b.running.Enter()
	defer leave()
	b.mu.Lock()
	l := &testQueueLookup{key: key, release: make(chan struct{})}
	b.lookups = append(b.lookups, l)
	hold := !b.open && key != testQueueWarm
	b.mu.Unlock()
	if hold {
		select {
		case <-l.release:
		case <-ctx.Done():
			return "", fmt.Errorf("provider: rate %s: %w", key, ctx.Err())
		}
	}
	return "v:" + key, nil
}

// held returns the lookups that are waiting for the test, oldest first.
func (b *testQueueBackend) held() []*testQueueLookup {
	b.mu.Lock()
	defer b.mu.Unlock()
	var held []*testQueueLookup
	for _, l := range b.lookups {
		if l.key != testQueueWarm && !l.answered {
			held = append(held, l)
		}
	}
	return held
}

// started returns the keys whose lookups have started, by key, and how many.
func (b *testQueueBackend) started() (map[string]int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := map[string]int{}
	for _, l := range b.lookups {
		m[l.key]++
	}
	return m, len(b.lookups)
}

func (b *testQueueBackend) answer(l *testQueueLookup) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !l.answered {
		l.answered = true
		close(l.release)
	}
}

// openAll makes every lookup answer at once, from now on too.
func (b *testQueueBackend) openAll() {
	b.mu.Lock()
	b.open = true
	held := b.lookups
	b.mu.Unlock()
	for _, l := range held {
		b.answer(l)
	}
}

// testQueueGet is a Get the scenario made.
type testQueueGet struct {
	key  string
	wave int // 1, 2, …: the keys of an earlier wave arrived first
	call *katatest.Call[string]
}

type testQueuePlay struct {
	h        *katatest.H
	s        testLongQueue
	be       *testQueueBackend
	cache    *Cache
	run      katatest.ErrCall
	misses   []*testQueueGet // in the order they were made
	hits     []*katatest.Call[string]
	stats    []*katatest.Call[Stats]
	answered map[string]bool // keys whose lookup the test let answer
}

func (s testLongQueue) play(h *katatest.H) {
	p := &testQueuePlay{h: h, s: s, be: &testQueueBackend{}, answered: map[string]bool{}}
	h.Own(p.be.openAll) // a stop of a call lets every held lookup go
	p.cache = New(h.Clk, p.be.lookup, Config{MaxInFlight: s.maxInFlight})
	p.run = katatest.StartErr(h, p.cache.Run)
	defer p.unwind()
	if !p.warm() || !p.waves() || !p.rounds() || !p.drain() {
		return
	}
	p.run.Cancel()
	if !p.run.Returns("Run did not return once its ctx had ended, with no lookup running") {
		return
	}
	if err, ok := p.run.Finish("Run"); ok && err != nil {
		h.Errorf("Run returned %v once its ctx ended with no lookup running; want nil", err)
	}
}

func (p *testQueuePlay) get(key string) *katatest.Call[string] {
	return katatest.Start(p.h, func(ctx context.Context) (string, error) { return p.cache.Get(ctx, key) })
}

// warm stores the warm key.
func (p *testQueuePlay) warm() bool {
	c := p.get(testQueueWarm)
	if !c.Returns("Get(%q) did not return, with no other request and a backend that answers at once: is Run "+
		"serving the requests Get sends?", testQueueWarm) {
		return false
	}
	if v, err := c.Result(); err != nil || v != "v:"+testQueueWarm {
		p.h.Errorf("Get(%q) returned (%q, %v); want the backend's value %q", testQueueWarm, v, err, "v:"+testQueueWarm)
		return false
	}
	return true
}

// want is what Stats must say once the test let `answered` lookups answer.
func (p *testQueuePlay) want() Stats {
	missed := len(p.misses)
	running := min(p.s.slots(), missed-len(p.answered))
	return Stats{Entries: 1 + len(p.answered), Hits: len(p.hits), Misses: 1 + missed, InFlight: running,
		Queued: missed - len(p.answered) - running}
}

func (p *testQueuePlay) waves() bool {
	h := p.h
	for i, w := range p.s.waves {
		before := p.want()
		var wave []*katatest.Call[string]
		// The cached Gets arrive among the misses, spread over the wave.
		hitAt := map[int]bool{}
		for k := range w.hits {
			hitAt[(k+1)*(w.misses+w.hits)/(w.hits+1)] = true
		}
		for j := range w.misses + w.hits {
			if hitAt[j] && len(wave) < w.hits {
				c := p.get(testQueueWarm)
				wave = append(wave, c)
				p.hits = append(p.hits, c)
				continue
			}
			key := testQueueKey(len(p.misses))
			p.misses = append(p.misses, &testQueueGet{key: key, wave: i + 1, call: p.get(key)})
		}
		for len(wave) < w.hits {
			c := p.get(testQueueWarm)
			wave = append(wave, c)
			p.hits = append(p.hits, c)
		}
		synctest.Wait()
		if !p.noEarlyReturn(fmt.Sprintf("after wave %d", i+1)) {
			return false
		}
		froze := fmt.Sprintf("the loop froze once many misses waited for a slot: with MaxInFlight %d and every "+
			"running lookup held, %d misses were queued and %d more arrived at once (wave %d), and then ",
			p.s.maxInFlight, before.Queued, w.misses, i+1)
		for _, c := range wave {
			if !p.returned(c, froze+"Get(%q), a cached key, got no answer. The README puts no bound on the queue: "+
				"keep the misses waiting for a slot in a slice the loop owns (append to the back, take from the "+
				"front), never in a buffered channel the loop itself sends to, which blocks the loop once it is full",
				testQueueWarm) {
				return false
			}
			if v, err := c.Result(); err != nil || v != "v:"+testQueueWarm {
				h.Errorf("Get(%q), a cached key, returned (%q, %v) with misses queued; want %q", testQueueWarm, v, err,
					"v:"+testQueueWarm)
				return false
			}
		}
		if !p.checkStats(froze+"Stats got no answer. The README puts no bound on the queue: keep the misses "+
			"waiting for a slot in a slice the loop owns (append to the back, take from the front), never in a "+
			"buffered channel the loop itself sends to, which blocks the loop once it is full",
			fmt.Sprintf("after wave %d (every running lookup held)", i+1)) {
			return false
		}
	}
	return true
}

// noEarlyReturn checks that no miss whose lookup has not answered returned.
func (p *testQueuePlay) noEarlyReturn(when string) bool {
	for _, g := range p.misses {
		if p.answered[g.key] || !g.call.Returned() {
			continue
		}
		v, err := g.call.Result()
		p.h.Errorf("a miss was turned away instead of waiting its turn: Get(%q) returned (%q, %v) before its lookup "+
			"answered, with MaxInFlight %d and %d misses not answered yet (%s). A miss beyond MaxInFlight "+
			"waits in the loop's FIFO queue however long that queue is: the README sets no bound on it, and no "+
			"miss fails fast or is dropped", g.key, v, err, p.s.maxInFlight, len(p.misses)-len(p.answered), when)
		return false
	}
	return true
}

// checkStats checks the Stats the loop answers, and the lookups running.
func (p *testQueuePlay) checkStats(froze, when string) bool {
	h := p.h
	st := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
	p.stats = append(p.stats, st)
	synctest.Wait()
	if !p.returned(st, "%s", froze) {
		return false
	}
	got, err := st.Result()
	want := p.want()
	if err != nil {
		h.Errorf("Stats %s returned %v; want %+v", when, err, want)
		return false
	}
	if peak := p.be.running.Max(); peak > p.s.slots() {
		h.Errorf("%d lookups ran at once with MaxInFlight %d (%s): a miss must not start a lookup while "+
			"MaxInFlight are running, however many wait; queue it and start it when a running one reports back",
			peak, p.s.maxInFlight, when)
		return false
	}
	if now := p.be.running.Now(); now != want.InFlight {
		h.Errorf("%d lookups were running %s, with %d misses not answered yet and MaxInFlight %d; want %d: when a "+
			"lookup reports back, give its slot to the oldest queued miss, whatever the length of the queue",
			now, when, len(p.misses)-len(p.answered), p.s.maxInFlight, want.InFlight)
		return false
	}
	if got != want {
		h.Errorf("Stats %s: %+v; want %+v (Entries: %s and the keys whose lookup answered; Hits: the Gets of %s; "+
			"Misses: every other Get; InFlight: lookups running; Queued: the misses waiting for a slot, all of them)",
			when, got, want, testQueueWarm, testQueueWarm)
		return false
	}
	// Oldest first: no key of a later wave runs while one of an earlier wave waits.
	started, _ := p.be.started()
	waiting := 0
	for _, g := range p.misses {
		switch {
		case started[g.key] > 1:
			h.Errorf("the lookup of %q started %d times (%s); each miss of a key nobody else asked for starts "+
				"one lookup", g.key, started[g.key], when)
			return false
		case started[g.key] == 0 && waiting == 0:
			waiting = g.wave
		case started[g.key] == 1 && waiting != 0 && g.wave > waiting:
			h.Errorf("%q, which arrived in wave %d, started while misses of wave %d still waited in the queue "+
				"(%s): queued misses start oldest first (a FIFO queue: take from the front)", g.key, g.wave,
				waiting, when)
			return false
		}
	}
	return true
}

// rounds lets held lookups answer, a few at once, and checks that the
// freed slots go to the queue.
func (p *testQueuePlay) rounds() bool {
	for i, picks := range p.s.rounds {
		held := p.be.held()
		if len(held) == 0 {
			continue
		}
		var let []*testQueueLookup
		for _, k := range picks {
			l := held[k%len(held)]
			if !p.answered[l.key] {
				p.answered[l.key] = true
				let = append(let, l)
			}
		}
		for _, l := range let {
			p.be.answer(l)
		}
		synctest.Wait()
		if !p.repliesFor(let) || !p.noEarlyReturn(fmt.Sprintf("after round %d of lookups that answered", i+1)) {
			return false
		}
		if !p.checkStats(fmt.Sprintf("the loop stopped answering once %d held lookups answered with %d misses "+
			"queued behind them: Stats got no answer. Give each freed slot to the oldest queued miss and go "+
			"back to the select; the loop never waits for a free slot", len(let), p.want().Queued+len(let)),
			fmt.Sprintf("after round %d of lookups that answered", i+1)) {
			return false
		}
	}
	return true
}

// repliesFor checks that the callers of the lookups that answered got
// their values.
func (p *testQueuePlay) repliesFor(let []*testQueueLookup) bool {
	by := map[string]*testQueueGet{}
	for _, g := range p.misses {
		by[g.key] = g
	}
	for _, l := range let {
		g := by[l.key]
		if !p.returned(g.call, "Get(%q) did not return once its lookup had answered, with %d misses queued: "+
			"answer the callers waiting for the key as soon as its result reaches the loop", g.key, p.want().Queued) {
			return false
		}
		if v, err := g.call.Result(); err != nil || v != "v:"+g.key {
			p.h.Errorf("Get(%q) returned (%q, %v) once its lookup answered; want %q", g.key, v, err, "v:"+g.key)
			return false
		}
	}
	return true
}

// drain lets every lookup answer, and checks that every queued miss ran.
func (p *testQueuePlay) drain() bool {
	queued := p.want().Queued
	p.be.openAll()
	synctest.Wait()
	for _, g := range p.misses {
		if !p.returned(g.call, "Get(%q) never returned once the backend answered every lookup at once, with %d "+
			"misses queued: each lookup that reports back frees a slot for the oldest queued miss, until the "+
			"queue is empty, however long it was", g.key, queued) {
			return false
		}
		if v, err := g.call.Result(); err != nil || v != "v:"+g.key {
			p.h.Errorf("Get(%q), queued behind %d held lookups, returned (%q, %v); want the value its lookup "+
				"found, %q", g.key, p.s.slots(), v, err, "v:"+g.key)
			return false
		}
		p.answered[g.key] = true
	}
	return p.checkStats("the loop stopped answering once every queued miss had been looked up: Stats got no answer",
		"once every lookup had answered")
}

// returned is c.Returns for a call checked right after the code settled,
// among a crowd of calls: one settle for all of them, and a failure that
// leaves the crowd to unwind, which cancels every call at once.
func (p *testQueuePlay) returned(c interface {
	Returned() bool
	Panicked() bool
}, format string, args ...any) bool {
	if c.Returned() {
		return !c.Panicked()
	}
	p.h.Errorf(format, args...)
	return false
}

// unwind ends what a failed scenario left running, all at once: every
// Get and Stats call gives up, Run's ctx ends and every held lookup
// answers. Whatever still runs then is the harness's to report.
func (p *testQueuePlay) unwind() {
	if !p.h.Failed() {
		return
	}
	for _, g := range p.misses {
		g.call.Cancel()
	}
	for _, c := range p.hits {
		c.Cancel()
	}
	for _, c := range p.stats {
		c.Cancel()
	}
	p.run.Cancel()
	p.be.openAll()
	synctest.Wait()
}

func TestR4_ExploreAnyNumberOfMissesWaitInTheQueue(t *testing.T) {
	katatest.Replay(t, testLongQueueFixed, func(h *katatest.H, s testLongQueue) { s.play(h) })
	katatest.Explore(t, 3, testDrawLongQueue, func(h *katatest.H, s testLongQueue) { s.play(h) })
}

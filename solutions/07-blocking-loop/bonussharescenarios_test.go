package blockingloop

// B1, explored: misses for one key share one lookup whatever that lookup
// returns (a value, or an error of any kind), whether they arrive together,
// while it runs or while it waits in the queue, whoever of its callers gives
// up meanwhile, at any MaxInFlight and whichever running lookup answers
// first. Every caller still waiting gets that lookup's result, as it is; a
// failed lookup is not stored, so the next Get asks again; and Stats counts
// one slot, or one place in the queue, per shared lookup.

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

// testShareLookup is one call of the backend of a sharing scenario.
type testShareLookup struct {
	key      string
	n        int // the n-th lookup of key, from 1
	release  chan struct{}
	released bool
	value    string
	err      error
}

// testShareBackend holds every lookup until the test lets it answer, ctx or
// not, so that only the test decides when a result reaches the loop.
type testShareBackend struct {
	mu      sync.Mutex
	spec    map[string]testKeySpec // fails and kind; every lookup is held
	lookups []*testShareLookup
	count   map[string]int
}

func (b *testShareBackend) lookup(_ context.Context, key string) (string, error) {
	b.mu.Lock()
	b.count[key]++
	sp := b.spec[key]
	l := &testShareLookup{key: key, n: b.count[key], release: make(chan struct{})}
	if sp.fails == 2 || sp.fails == 1 && l.n == 1 {
		l.err = testErrKinds[sp.kind].make(key, l.n)
	} else {
		l.value = fmt.Sprintf("v:%s#%d", key, l.n)
	}
	b.lookups = append(b.lookups, l)
	b.mu.Unlock()
	<-l.release
	return l.value, l.err
}

func (b *testShareBackend) calls(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count[key]
}

// answer lets the n-th lookup of key return, and returns it (nil if it
// never started).
func (b *testShareBackend) answer(key string, n int) *testShareLookup {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lookups {
		if l.key == key && l.n == n {
			if !l.released {
				l.released = true
				close(l.release)
			}
			return l
		}
	}
	return nil
}

func (b *testShareBackend) releaseAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lookups {
		if !l.released {
			l.released = true
			close(l.release)
		}
	}
}

const (
	testShareGets   = iota // Gets, those of one key at once
	testShareAnswer        // a running lookup answers
	testShareLeave         // a waiting caller gives up
)

type testShareStep struct {
	kind int
	keys []string // testShareGets
	pick int      // testShareAnswer: among the running lookups, oldest first; testShareLeave: among the waiting callers
}

type testShareScenario struct {
	maxInFlight int
	spec        map[string]testKeySpec
	steps       []testShareStep
}

var testShareKeys = []string{"EUR", "GBP", "JPY"}

func (s testShareScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d; the backend holds every lookup until the test lets it answer (ctx or not):", s.maxInFlight)
	for _, k := range testShareKeys {
		switch sp := s.spec[k]; sp.fails {
		case 0:
			fmt.Fprintf(&b, " %s finds a value;", k)
		case 1:
			fmt.Fprintf(&b, " %s's first lookup fails (%s), the next ones find a value;", k, testErrKinds[sp.kind].name)
		default:
			fmt.Fprintf(&b, " every lookup of %s fails (%s);", k, testErrKinds[sp.kind].name)
		}
	}
	b.WriteString("\n  Run starts")
	for i, st := range s.steps {
		fmt.Fprintf(&b, "\n  step %d: ", i+1)
		switch st.kind {
		case testShareGets:
			fmt.Fprintf(&b, "Get %s, each from its own goroutine (those of one key at once)", strings.Join(st.keys, ", "))
		case testShareAnswer:
			fmt.Fprintf(&b, "running lookup number %d (oldest first, modulo those running) answers", st.pick)
		case testShareLeave:
			fmt.Fprintf(&b, "the caller of waiting Get number %d (oldest first, modulo those waiting) gives up", st.pick)
		}
	}
	b.WriteString("\n  every lookup left answers, oldest first")
	return b.String()
}

func testDrawShare(r *rapid.T) testShareScenario {
	s := testShareScenario{maxInFlight: rapid.IntRange(-1, 3).Draw(r, "MaxInFlight"), spec: map[string]testKeySpec{}}
	for _, k := range testShareKeys {
		s.spec[k] = testKeySpec{
			fails: rapid.SampledFrom([]int{0, 1, 1, 2}).Draw(r, "fails "+k),
			kind:  rapid.IntRange(0, len(testErrKinds)-1).Draw(r, "error kind "+k),
		}
	}
	key := rapid.SampledFrom(testShareKeys)
	n := rapid.IntRange(2, 9).Draw(r, "steps")
	for range n {
		st := testShareStep{kind: rapid.SampledFrom([]int{testShareGets, testShareGets, testShareAnswer, testShareAnswer,
			testShareLeave}).Draw(r, "step")}
		switch st.kind {
		case testShareGets:
			st.keys = rapid.SliceOfN(key, 1, 5).Draw(r, "keys")
		default:
			st.pick = rapid.IntRange(0, 5).Draw(r, "pick")
		}
		s.steps = append(s.steps, st)
	}
	return s
}

// testShareFixed runs one lookup at a time: two Gets of EUR share its
// lookup, and one of them gives up; three Gets of GBP join its lookup, two
// while it waits in the queue and one while it runs, and it fails; the
// next Get of GBP asks again.
var testShareFixed = testShareScenario{
	maxInFlight: 1,
	spec:        map[string]testKeySpec{"GBP": {fails: 1, kind: 2}},
	steps: []testShareStep{
		{kind: testShareGets, keys: []string{"EUR", "EUR"}},
		{kind: testShareGets, keys: []string{"GBP", "GBP"}},
		{kind: testShareLeave, pick: 0},
		{kind: testShareGets, keys: []string{"GBP"}},
		{kind: testShareAnswer},
		{kind: testShareGets, keys: []string{"GBP", "JPY"}},
		{kind: testShareAnswer},
		{kind: testShareGets, keys: []string{"GBP", "EUR"}},
	},
}

// testShareFlight is a lookup of the model: the callers who share it.
type testShareFlight struct {
	key     string
	n       int // which lookup of key, once started
	callers []*testShareGet
}

type testShareGet struct {
	key    string
	call   *katatest.Call[string]
	hit    bool
	stored string           // a hit: the value stored when it arrived
	flight *testShareFlight // a miss: the lookup it shares
	left   bool
	over   bool // its answer was checked
}

// testSharePlay is a sharing scenario being played, with a model of the
// README's cache.
type testSharePlay struct {
	h       *katatest.H
	be      *testShareBackend
	cache   *Cache
	limit   int
	stored  map[string]string
	pending map[string]*testShareFlight // keys whose lookup runs or waits
	running []*testShareFlight          // oldest first
	queue   []*testShareFlight          // oldest first
	lookups map[string]int              // lookups of each key started so far
	gets    []*testShareGet
	hits    int
	misses  int
}

func (s testShareScenario) play(h *katatest.H) {
	p := &testSharePlay{h: h, be: &testShareBackend{spec: s.spec, count: map[string]int{}},
		limit: max(s.maxInFlight, 1), stored: map[string]string{}, pending: map[string]*testShareFlight{},
		lookups: map[string]int{}}
	h.Own(p.be.releaseAll)
	defer p.be.releaseAll()
	p.cache = New(h.Clk, p.be.lookup, Config{MaxInFlight: s.maxInFlight})
	run := katatest.StartErr(h, p.cache.Run)
	for i, st := range s.steps {
		when := fmt.Sprintf("at step %d", i+1)
		switch st.kind {
		case testShareGets:
			p.getAll(st.keys)
		case testShareAnswer:
			if len(p.running) == 0 {
				continue
			}
			if !p.answer(p.running[st.pick%len(p.running)], when) {
				return
			}
		case testShareLeave:
			var waiting []*testShareGet
			for _, g := range p.gets {
				if !g.hit && !g.left && !g.over {
					waiting = append(waiting, g)
				}
			}
			if len(waiting) == 0 {
				continue
			}
			g := waiting[st.pick%len(waiting)]
			g.left = true
			g.call.Cancel()
			synctest.Wait() // what the caller gets is R3's
		}
		if !p.check(when) {
			return
		}
	}
	for i := 0; len(p.running) > 0; i++ {
		when := fmt.Sprintf("once the steps were over, as lookup %d of those left answered", i+1)
		if !p.answer(p.running[0], when) || !p.check(when) {
			return
		}
	}
	run.Cancel()
	if !run.Returns("Run did not return once its ctx had ended with no lookup running: once every lookup has " +
		"returned, Run returns nil at once") {
		return
	}
	if err, ok := run.Finish("Run"); ok && err != nil {
		h.Errorf("Run returned %v once its ctx ended with no lookup running; want nil", err)
	}
}

// getAll starts the Gets of one key at once, then those of the next key.
func (p *testSharePlay) getAll(keys []string) {
	var order []string
	byKey := map[string]int{}
	for _, k := range keys {
		if byKey[k] == 0 {
			order = append(order, k)
		}
		byKey[k]++
	}
	for _, k := range order {
		var fl *testShareFlight
		v, stored := p.stored[k]
		if !stored {
			p.misses += byKey[k]
			if fl = p.pending[k]; fl == nil {
				fl = &testShareFlight{key: k}
				p.pending[k] = fl
				if len(p.running) < p.limit {
					p.start(fl)
				} else {
					p.queue = append(p.queue, fl)
				}
			}
		} else {
			p.hits += byKey[k]
		}
		for range byKey[k] {
			g := &testShareGet{key: k, hit: stored, stored: v, flight: fl}
			if fl != nil {
				fl.callers = append(fl.callers, g)
			}
			g.call = katatest.Start(p.h, func(ctx context.Context) (string, error) { return p.cache.Get(ctx, k) })
			p.gets = append(p.gets, g)
		}
		synctest.Wait()
	}
}

func (p *testSharePlay) start(fl *testShareFlight) {
	p.lookups[fl.key]++
	fl.n = p.lookups[fl.key]
	p.running = append(p.running, fl)
}

// answer lets fl's lookup return and checks that every caller still
// waiting for it got its result, as it is.
func (p *testSharePlay) answer(fl *testShareFlight, when string) bool {
	h := p.h
	l := p.be.answer(fl.key, fl.n)
	if l == nil {
		return false // never started: check reported it, or R3 and R4 say more
	}
	synctest.Wait()
	for i, r := range p.running {
		if r == fl {
			p.running = append(p.running[:i:i], p.running[i+1:]...)
			break
		}
	}
	delete(p.pending, fl.key)
	if l.err == nil {
		p.stored[fl.key] = l.value
	}
	if len(p.queue) > 0 {
		p.start(p.queue[0])
		p.queue = p.queue[1:]
	}
	waiting := 0
	for _, g := range fl.callers {
		if !g.left {
			waiting++
		}
	}
	nth := 0
	for _, g := range fl.callers {
		if g.left {
			continue
		}
		nth++
		g.over = true
		if !g.call.Returned() {
			if l.err != nil {
				h.Errorf("Get(%q), caller %d of the %d still waiting for one shared lookup of %q, kept waiting after "+
					"that lookup failed with %q (%s): a failed lookup's error goes to every caller waiting for the "+
					"key, those who joined it included, as it is; don't keep the joiners waiting, nor start another "+
					"lookup for them (the next Get asks the backend again)", fl.key, nth, waiting, fl.key, l.err,
					when)
			} else {
				h.Errorf("Get(%q), caller %d of the %d still waiting for one shared lookup of %q, kept waiting after "+
					"that lookup found %q (%s): answer every caller waiting for the key when its result arrives",
					fl.key, nth, waiting, fl.key, l.value, when)
			}
			return false
		}
		if g.call.Panicked() {
			return false
		}
		v, err := g.call.Result()
		if err != l.err || l.err == nil && v != l.value {
			h.Errorf("Get(%q), caller %d of the %d still waiting for one shared lookup of %q, returned (%q, %v) "+
				"%s; that lookup returned (%q, %v): every caller sharing a lookup gets its result, as it is (the "+
				"very error lookup returned, not wrapped, not rebuilt, not another lookup's)", fl.key, nth,
				waiting, fl.key, v, err, when, l.value, l.err)
			return false
		}
	}
	return true
}

// check compares the cache with the model once everything settled: the
// callers answered, the lookups started and Stats.
func (p *testSharePlay) check(when string) bool {
	h := p.h
	for _, g := range p.gets {
		if g.over || g.left {
			continue
		}
		if g.hit {
			g.over = true
			if !g.call.Returned() {
				h.Errorf("Get(%q), a stored key, did not answer %s: the loop answers a stored key at once", g.key, when)
				return false
			}
			if v, err := g.call.Result(); err != nil || v != g.stored {
				h.Errorf("Get(%q), a stored key, returned (%q, %v) %s; want the stored value %q", g.key, v, err, when,
					g.stored)
				return false
			}
			continue
		}
		if g.call.Returned() {
			v, err := g.call.Result()
			h.Errorf("Get(%q) returned (%q, %v) %s, while the lookup it waits for (running or queued) had not "+
				"answered yet: a miss for a key whose lookup is running or queued joins it and waits for its result",
				g.key, v, err, when)
			return false
		}
	}
	for _, k := range testShareKeys {
		got, want := p.be.calls(k), p.lookups[k]
		if got > want {
			joined := 0
			if fl := p.pending[k]; fl != nil {
				joined = len(fl.callers)
			}
			h.Errorf("%d lookup(s) of %q started by %s; want %d: misses for a key whose lookup is running or queued "+
				"must share it, whatever it returns (%d Get(s) wait for %q now). Keep the callers waiting for each "+
				"key in the loop, answer them all with the one result, and start a new lookup only for a Get that "+
				"arrives once it is over", got, k, when, want, joined, k)
			return false
		}
		if got < want {
			fl := p.pending[k]
			if fl == nil {
				return false
			}
			for _, g := range fl.callers {
				if !g.left {
					h.Errorf("the lookup of %q, which %d caller(s) share, had not started %s, with %d of "+
						"max(MaxInFlight, 1) = %d lookups running: a shared lookup takes one slot, and one place in the "+
						"queue, whatever number of callers share it", k, len(fl.callers), when, len(p.running), p.limit)
					return false
				}
			}
			return false // every caller left: R3 says more
		}
	}
	st := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
	if !st.Returns("Stats did not answer %s, with %d lookup(s) running", when, len(p.running)) {
		return false
	}
	got, err := st.Result()
	want := Stats{Entries: len(p.stored), Hits: p.hits, Misses: p.misses, InFlight: len(p.running), Queued: len(p.queue)}
	if err != nil || got != want {
		h.Errorf("Stats returned (%+v, %v) %s; want %+v: a shared lookup takes one slot (InFlight) or one place "+
			"in the queue (Queued), however many callers share it, and each of them counts as a miss", got, err,
			when, want)
		return false
	}
	return true
}

func TestB1_ExploreSharedLookupsAnswerEveryCallerWhateverTheyReturn(t *testing.T) {
	katatest.Run(t, testShareFixed.play)
	katatest.Explore(t, 12, testDrawShare, func(h *katatest.H, s testShareScenario) { s.play(h) })
}

package blockingloop

// B1, explored: misses for one key share one lookup whatever that lookup
// returns (a value, the empty string included, or an error of any kind,
// with a partial value beside it or not), whether they arrive together,
// while it runs or while it waits in the queue, whoever of its callers gives
// up meanwhile, at any MaxInFlight and whichever running lookup answers
// first. Every caller still waiting gets that lookup's one result, the same
// for all of them, and a key gets a new lookup only for a Get that arrives
// once the last one is over (a failed lookup is not stored). A lookup whose
// callers all gave up goes on, running or queued: it is still the key's
// lookup, and the next misses for the key join it.

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
	over    bool // the scenario is over: lookups no longer wait
}

func (b *testShareBackend) lookup(_ context.Context, key string) (string, error) {
	b.mu.Lock()
	b.count[key]++
	sp := b.spec[key]
	l := &testShareLookup{key: key, n: b.count[key], release: make(chan struct{})}
	l.value, l.err = sp.result(key, l.n)
	b.lookups = append(b.lookups, l)
	l.released = b.over
	b.mu.Unlock()
	if !l.released {
		<-l.release
	}
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

// releaseAll lets every lookup return, and those that start later too
// (a loop that starts one as it stops is R5's failure, not a leak here).
func (b *testShareBackend) releaseAll() {
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
	testShareGets    = iota // Gets, those of one key at once
	testShareAnswer         // a running lookup answers
	testShareLeave          // a waiting caller gives up
	testShareAbandon        // every caller of one lookup gives up, then new Gets of its key arrive
)

type testShareStep struct {
	kind int
	keys []string // testShareGets
	pick int      // testShareAnswer: among the running lookups, oldest first; testShareLeave: among the waiting callers; testShareAbandon: among the keys whose lookup runs or waits
	gets int      // testShareAbandon: how many new Gets of the key arrive
}

type testShareScenario struct {
	maxInFlight int
	spec        map[string]testKeySpec
	steps       []testShareStep
}

var testShareKeys = []string{"EUR", "GBP", ""}

func (s testShareScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d; the backend holds every lookup until the test lets it answer (ctx or not):", s.maxInFlight)
	for _, k := range testShareKeys {
		sp := s.spec[k]
		switch sp.fails {
		case 0:
			fmt.Fprintf(&b, " %s finds a value", testKeyName(k))
		case 1:
			fmt.Fprintf(&b, " %s's first lookup fails (%s), the next ones find a value", testKeyName(k),
				testErrKinds[sp.kind].name)
		default:
			fmt.Fprintf(&b, " every lookup of %s fails (%s)", testKeyName(k), testErrKinds[sp.kind].name)
		}
		if sp.fails != 0 && sp.partial {
			b.WriteString(", a failed one with a partial value beside its error")
		}
		if sp.fails != 2 && sp.empty {
			b.WriteString(`, the value found is ""`)
		}
		b.WriteString(";")
	}
	b.WriteString("\n  Run starts")
	for i, st := range s.steps {
		fmt.Fprintf(&b, "\n  step %d: ", i+1)
		switch st.kind {
		case testShareGets:
			fmt.Fprintf(&b, "Get %s, each from its own goroutine (those of one key at once)", testKeyNames(st.keys))
		case testShareAnswer:
			fmt.Fprintf(&b, "running lookup number %d (oldest first, modulo those running) answers", st.pick)
		case testShareLeave:
			fmt.Fprintf(&b, "the caller of waiting Get number %d (oldest first, modulo those waiting) gives up", st.pick)
		case testShareAbandon:
			fmt.Fprintf(&b, "among the keys whose lookup runs or waits in the queue (EUR, GBP, \"\" in that order), "+
				"number %d (modulo their count): every caller still waiting for it gives up, then %d new Get(s) of "+
				"that key arrive, each from its own goroutine, at once", st.pick, st.gets)
		}
	}
	b.WriteString("\n  every lookup left answers, oldest first")
	return b.String()
}

func testDrawShare(r *rapid.T) testShareScenario {
	s := testShareScenario{maxInFlight: rapid.IntRange(-1, 3).Draw(r, "MaxInFlight"), spec: map[string]testKeySpec{}}
	for _, k := range testShareKeys {
		sp := testKeySpec{
			fails: rapid.SampledFrom([]int{0, 1, 1, 2}).Draw(r, "fails "+k),
			kind:  rapid.IntRange(0, len(testErrKinds)-1).Draw(r, "error kind "+k),
		}
		sp.drawValues(r, k)
		s.spec[k] = sp
	}
	key := rapid.SampledFrom(testShareKeys)
	n := rapid.IntRange(2, 9).Draw(r, "steps")
	for range n {
		st := testShareStep{kind: rapid.SampledFrom([]int{testShareGets, testShareGets, testShareAnswer, testShareAnswer,
			testShareLeave, testShareAbandon}).Draw(r, "step")}
		switch st.kind {
		case testShareGets:
			st.keys = rapid.SliceOfN(key, 1, 5).Draw(r, "keys")
		case testShareAbandon:
			st.pick = rapid.IntRange(0, 2).Draw(r, "pick")
			st.gets = rapid.IntRange(1, 3).Draw(r, "gets")
		default:
			st.pick = rapid.IntRange(0, 5).Draw(r, "pick")
		}
		s.steps = append(s.steps, st)
	}
	return s
}

// testShareFixed runs one lookup at a time: two Gets of EUR share its
// lookup, which finds "", and one of them gives up; three Gets of GBP join
// its lookup, two while it waits in the queue and one while it runs, and it
// fails with a partial value; the next Get of GBP asks again, and the last
// Get of EUR is a hit.
var testShareFixed = testShareScenario{
	maxInFlight: 1,
	spec:        map[string]testKeySpec{"EUR": {empty: true}, "GBP": {fails: 1, kind: 2, partial: true}},
	steps: []testShareStep{
		{kind: testShareGets, keys: []string{"EUR", "EUR"}},
		{kind: testShareGets, keys: []string{"GBP", "GBP"}},
		{kind: testShareLeave, pick: 0},
		{kind: testShareGets, keys: []string{"GBP"}},
		{kind: testShareAnswer},
		{kind: testShareGets, keys: []string{"GBP", ""}},
		{kind: testShareAnswer},
		{kind: testShareGets, keys: []string{"GBP", "EUR"}},
	},
}

// testShareAbandonFixed are the cases of a lookup whose callers all gave up
// that a draw could miss: a Get of its key arrives while it runs with a
// slot free, while it waits in the queue, and while it runs with no slot
// free.
var testShareAbandonFixed = []testShareScenario{
	{
		maxInFlight: 2,
		spec:        map[string]testKeySpec{},
		steps: []testShareStep{
			{kind: testShareGets, keys: []string{"EUR", "EUR"}},
			{kind: testShareAbandon, gets: 2},
		},
	},
	{
		maxInFlight: 1,
		spec:        map[string]testKeySpec{"GBP": {empty: true}},
		steps: []testShareStep{
			{kind: testShareGets, keys: []string{"EUR"}},
			{kind: testShareGets, keys: []string{"GBP", "GBP"}},
			{kind: testShareAbandon, pick: 1, gets: 1},
			{kind: testShareAbandon, pick: 0, gets: 2},
			{kind: testShareAnswer},
		},
	},
}

// testShareFlight is one lookup of a key in the model, running or queued,
// and the callers who share it.
type testShareFlight struct {
	key     string
	n       int // which lookup of key
	callers []*testShareGet
}

type testShareGet struct {
	key  string
	call *katatest.Call[string]
	left bool
}

// testSharePlay is a sharing scenario being played. Its model follows the
// README only as far as sharing goes: a Get of a key not stored, with no
// lookup of it running or queued, needs a new lookup; any other miss joins
// the one there is. Which lookup starts when, and whatever else the README
// says, is left to the other items: the test lets the lookups that did
// start answer.
type testSharePlay struct {
	h       *katatest.H
	be      *testShareBackend
	cache   *Cache
	stored  map[string]bool
	values  map[string]string           // the value stored for each key
	open    map[string]*testShareFlight // keys whose lookup runs or waits
	lookups map[string]int              // lookups of each key the model allows so far
}

func (s testShareScenario) play(h *katatest.H) {
	p := &testSharePlay{h: h, be: &testShareBackend{spec: s.spec, count: map[string]int{}},
		stored: map[string]bool{}, values: map[string]string{}, open: map[string]*testShareFlight{}, lookups: map[string]int{}}
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
			running := p.running()
			if len(running) == 0 {
				continue
			}
			if !p.answer(running[st.pick%len(running)], when) {
				return
			}
		case testShareLeave:
			var waiting []*testShareGet
			for _, k := range testShareKeys {
				if fl := p.open[k]; fl != nil {
					for _, g := range fl.callers {
						if !g.left && !g.call.Returned() {
							waiting = append(waiting, g)
						}
					}
				}
			}
			if len(waiting) == 0 {
				continue
			}
			g := waiting[st.pick%len(waiting)]
			g.left = true
			g.call.Cancel()
			synctest.Wait() // what the caller gets is R3's
		case testShareAbandon:
			var open []*testShareFlight
			for _, k := range testShareKeys {
				if fl := p.open[k]; fl != nil {
					open = append(open, fl)
				}
			}
			if len(open) == 0 {
				continue
			}
			if !p.abandon(open[st.pick%len(open)], st.gets, when) {
				return
			}
		}
		if !p.check(when) {
			return
		}
	}
	for i := 0; i < 20; i++ {
		running := p.running()
		if len(running) == 0 {
			break
		}
		when := fmt.Sprintf("once the steps were over, as the lookups left answered, oldest first (%d)", i+1)
		if !p.answer(running[0], when) || !p.check(when) {
			return
		}
	}
	run.Cancel()
	synctest.Wait() // a Run that does not return is R5's
}

// abandon lets every caller still waiting for fl give up, then starts n
// Gets of its key, and checks that they joined fl, which goes on: no new
// lookup started, and Stats counts as many lookups running and queued as
// it did once they had left.
func (p *testSharePlay) abandon(fl *testShareFlight, n int, when string) bool {
	h := p.h
	for _, g := range fl.callers {
		if !g.left && !g.call.Returned() {
			g.left = true
			g.call.Cancel()
		}
	}
	synctest.Wait() // what the callers get is R3's
	if !p.check(when) {
		return false
	}
	before, ok := p.stats()
	if !ok {
		return false // the loop does not answer: other items say more
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fl.key
	}
	p.getAll(keys)
	if p.open[fl.key] != fl {
		return false // the model lost it: check says more
	}
	if got, want := p.be.calls(fl.key), p.lookups[fl.key]; got > want {
		h.Errorf("a new Get of %q started a second lookup of it after every caller of its first lookup gave up, "+
			"while that lookup still ran (%s): %d lookup(s) of %q, want %d. A caller who gives up leaves its lookup "+
			"going on, and that lookup is still the key's lookup, running or queued, until it answers: a miss for "+
			"the key joins it. Don't forget a key's lookup when its last caller leaves", fl.key, when, got, fl.key,
			want)
		return false
	}
	after, ok := p.stats()
	if !ok {
		return false
	}
	if after.InFlight != before.InFlight || after.Queued != before.Queued {
		h.Errorf("a new Get of %q queued or started a second lookup of it after every caller of its first lookup "+
			"gave up, while that lookup still ran or waited in the queue (%s): Stats showed InFlight %d, Queued %d "+
			"once the callers had left and InFlight %d, Queued %d once %d new Get(s) of %q arrived, with no lookup "+
			"answering in between. A caller who gives up leaves its lookup going on, and that lookup is still the "+
			"key's lookup, running or queued, until it answers: a miss for the key joins it. Don't forget a key's "+
			"lookup when its last caller leaves", fl.key, when, before.InFlight, before.Queued, after.InFlight,
			after.Queued, n, fl.key)
		return false
	}
	return true
}

// stats returns what Stats says now, and false if the loop does not answer
// (a loop stuck elsewhere is another item's failure).
func (p *testSharePlay) stats() (Stats, bool) {
	st := katatest.Start(p.h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
	synctest.Wait()
	if !st.Returned() {
		st.Cancel()
		synctest.Wait()
		return Stats{}, false
	}
	s, err := st.Result()
	return s, err == nil
}

// running returns the lookups that started and have not answered, oldest
// first.
func (p *testSharePlay) running() []*testShareLookup {
	p.be.mu.Lock()
	defer p.be.mu.Unlock()
	var running []*testShareLookup
	for _, l := range p.be.lookups {
		if !l.released {
			running = append(running, l)
		}
	}
	return running
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
		fl := p.open[k]
		if fl == nil && !p.stored[k] {
			p.lookups[k]++
			fl = &testShareFlight{key: k, n: p.lookups[k]}
			p.open[k] = fl
		}
		for range byKey[k] {
			g := &testShareGet{key: k}
			g.call = katatest.Start(p.h, func(ctx context.Context) (string, error) { return p.cache.Get(ctx, k) })
			if fl != nil {
				fl.callers = append(fl.callers, g)
			}
		}
		synctest.Wait()
	}
}

// loopFree reports whether the loop answers Stats: a loop stuck elsewhere
// (on a caller who left, say) is another item's failure.
func (p *testSharePlay) loopFree() bool {
	_, ok := p.stats()
	return ok
}

// waiting returns fl's callers who have not given up, and how many of them
// have returned.
func (fl *testShareFlight) waiting() (waiting []*testShareGet, returned int) {
	for _, g := range fl.callers {
		if !g.left {
			waiting = append(waiting, g)
			if g.call.Returned() {
				returned++
			}
		}
	}
	return waiting, returned
}

// answer lets lookup l return and checks that every caller still waiting
// for it got its result, the same for all of them.
func (p *testSharePlay) answer(l *testShareLookup, when string) bool {
	h := p.h
	p.be.answer(l.key, l.n)
	synctest.Wait()
	fl := p.open[l.key]
	if fl == nil || fl.n != l.n {
		return false // a lookup the model does not know: check reported it, or R3 says more
	}
	delete(p.open, l.key)
	if l.err == nil {
		p.stored[l.key] = true
		p.values[l.key] = l.value
	}
	waiting, returned := fl.waiting()
	if len(fl.callers) < 2 || len(waiting) == 0 {
		return true // nothing shared, or nobody waits: other items say more
	}
	result := fmt.Sprintf("found %q", l.value)
	if l.err != nil {
		result = fmt.Sprintf("failed with %q", l.err)
	}
	if returned < len(waiting) {
		if !p.loopFree() {
			return false // the loop is stuck (on a caller who left, say): R1 and R3 say more
		}
		stuck := len(waiting) - returned
		if l.err != nil {
			h.Errorf("%d of the %d callers still waiting for one shared lookup of %q kept waiting after that lookup "+
				"%s (%s): a failed lookup's error goes to every caller waiting for the key, those who joined it "+
				"included, as it is; don't keep the joiners waiting, nor start another lookup for them (the next "+
				"Get asks the backend again)", stuck, len(waiting), l.key, result, when)
		} else {
			h.Errorf("%d of the %d callers still waiting for one shared lookup of %q kept waiting after that lookup "+
				"%s (%s): answer every caller waiting for the key when its result arrives, those who joined it "+
				"included", stuck, len(waiting), l.key, result, when)
		}
		return false
	}
	var answers []string
	same := true
	for _, g := range waiting {
		if g.call.Panicked() {
			return false
		}
		v, err := g.call.Result()
		answers = append(answers, fmt.Sprintf("(%q, %v)", v, err))
		first, firstErr := waiting[0].call.Result()
		same = same && err == firstErr && (err != nil || v == first)
	}
	if !same {
		h.Errorf("the %d callers still waiting for one shared lookup of %q got different answers %s: %s; that "+
			"lookup %s, and every caller sharing it gets that result, as it is (the very error lookup returned, "+
			"not another lookup's)", len(waiting), l.key, when, strings.Join(answers, ", "), result)
		return false
	}
	return true // the same for all: whether it is the lookup's own is R3's
}

// check compares what the code did with the model once everything
// settled: the callers sharing a lookup that has not answered yet all still
// wait, and no key has more lookups than it needs.
func (p *testSharePlay) check(when string) bool {
	h := p.h
	for _, k := range testShareKeys {
		fl := p.open[k]
		if fl == nil || len(fl.callers) < 2 {
			continue
		}
		waiting, returned := fl.waiting()
		if returned == 0 {
			continue
		}
		if returned == len(waiting) {
			return false // answered without a lookup answering: R3 and R4 say more
		}
		h.Errorf("%d of the %d callers sharing the lookup of %q returned %s while the others still waited for it, "+
			"before it answered: every caller sharing a lookup waits for its one result", returned, len(waiting), k,
			when)
		return false
	}
	for _, k := range testShareKeys {
		if got, want := p.be.calls(k), p.lookups[k]; got > want && p.stored[k] {
			h.Errorf("%d lookup(s) of %q started by %s; want %d: a Get of %q, whose value a lookup had found, "+
				"asked the backend again instead of answering from the map%s", got, k, when, want, k,
				testEmptyHint(p.values[k]))
			return false
		} else if got > want {
			waiting := 0
			if fl := p.open[k]; fl != nil {
				w, _ := fl.waiting()
				waiting = len(w)
			}
			h.Errorf("%d lookup(s) of %q started by %s; want %d: misses for a key whose lookup is running or queued "+
				"must share it, whatever it returns (%d Get(s) of %q wait now). Keep the callers waiting for each "+
				"key in the loop, answer them all with the one result, and start a new lookup only for a Get that "+
				"arrives once it is over", got, k, when, want, waiting, k)
			return false
		}
	}
	return true
}

func TestB1_ExploreSharedLookupsAnswerEveryCallerWhateverTheyReturn(t *testing.T) {
	katatest.Run(t, testShareFixed.play)
	katatest.Replay(t, testShareAbandonFixed, func(h *katatest.H, s testShareScenario) { s.play(h) })
	katatest.Explore(t, 12, testDrawShare, func(h *katatest.H, s testShareScenario) { s.play(h) })
}

package blockingloop

// Explored requirements: each test draws many scenarios (katatest.Explore)
// of concurrent Gets, lookups that answer in any order, callers who leave,
// failures of every kind, heartbeats while lookups run and a stop with
// lookups still running, and checks its requirement over all of them. Some
// steps do several things at once (Gets arrive, lookups answer and callers
// give up, with nothing settling in between); every Get's answer is then
// checked against the order of events with a model of the README's cache
// (katatest.History, porcupine).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testKeySpec is how the backend answers the lookups of one key.
type testKeySpec struct {
	held  bool // each lookup waits until the test releases it (or its ctx ends)
	fails int  // 0 never; 1 the first lookup fails; 2 every lookup fails
	kind  int  // which kind of error (testErrKinds)
	// The values are the backend's to choose, the zero value included:
	empty   bool // a lookup that finds a value finds "", a value like any other
	partial bool // a failed lookup returns a value beside its error (still a failure)
}

// result is what the n-th lookup of key returns.
func (sp testKeySpec) result(key string, n int) (string, error) {
	if sp.fails == 2 || sp.fails == 1 && n == 1 {
		v := ""
		if sp.partial {
			v = fmt.Sprintf("partial:%s#%d", key, n)
		}
		return v, testErrKinds[sp.kind].make(key, n)
	}
	if sp.empty {
		return "", nil
	}
	return fmt.Sprintf("v:%s#%d", key, n), nil
}

// describe says how the lookups of a key answer, for a scenario's String.
func (sp testKeySpec) describe() string {
	how := ""
	switch sp.fails {
	case 1:
		how += fmt.Sprintf(", the first lookup fails (%s)", testErrKinds[sp.kind].name)
	case 2:
		how += fmt.Sprintf(", every lookup fails (%s)", testErrKinds[sp.kind].name)
	}
	if sp.fails != 0 && sp.partial {
		how += " and returns a partial value beside its error"
	}
	if sp.fails != 2 && sp.empty {
		how += `, the value found is "" (the empty string)`
	}
	return how
}

// drawValues draws the values a key's lookups return.
func (sp *testKeySpec) drawValues(r *rapid.T, key string) {
	sp.empty = rapid.IntRange(0, 3).Draw(r, "empty value "+key) == 0
	sp.partial = sp.fails != 0 && rapid.Bool().Draw(r, "partial value "+key)
}

// testKeyName is how a scenario's String names a key: the empty string
// is a key like any other.
func testKeyName(k string) string {
	if k == "" {
		return `""`
	}
	return k
}

func testKeyNames(keys []string) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = testKeyName(k)
	}
	return strings.Join(names, ", ")
}

// testErrKinds are the errors a lookup fails with: each call makes a fresh
// one, so that "the lookup's error" means that very error.
var testErrKinds = []struct {
	name string
	make func(key string, n int) error
}{
	{"errors.New", func(key string, n int) error { return errors.New("provider: no rate for " + key) }},
	{"an error wrapping io.ErrUnexpectedEOF", func(key string, n int) error {
		return fmt.Errorf("provider: reading %s: %w", key, io.ErrUnexpectedEOF)
	}},
	{"a *providerError{503}", func(key string, n int) error { return &testProviderError{code: 503, key: key} }},
	{"errors.Join of two errors", func(key string, n int) error {
		return errors.Join(errors.New("primary down"), &testProviderError{code: 429, key: key})
	}},
	// The backend's own upstream call was cancelled, while the cache runs:
	// still the lookup's error, not a sign that the cache stopped.
	{"an error wrapping context.Canceled (the provider's upstream call was cancelled)", func(key string, n int) error {
		return fmt.Errorf("provider: upstream request for %s: %w", key, context.Canceled)
	}},
}

type testProviderError struct {
	code int
	key  string
}

func (e *testProviderError) Error() string {
	return fmt.Sprintf("provider: %s: status %d", e.key, e.code)
}

// testLookup is one call of the backend.
type testLookup struct {
	key      string
	n        int // the n-th lookup of key, from 1
	release  chan struct{}
	slowStop bool // once its ctx ends it still waits for release
	ctxSeen  bool
	returned bool
	value    string
	err      error
}

// testScnBackend is the backend of a scenario: it records every lookup.
type testScnBackend struct {
	mu      sync.Mutex
	spec    map[string]testKeySpec
	lookups []*testLookup
	count   map[string]int
	running katatest.Peak
	hist    *katatest.History
	ends    []func(any) // a lookup's end in the history, recorded as open until the scenario ends
}

func (b *testScnBackend) lookup(ctx context.Context, key string) (string, error) {
	leave := b.running.Enter()
	defer leave()
	b.mu.Lock()
	b.count[key]++
	sp := b.spec[key]
	l := &testLookup{key: key, n: b.count[key], release: make(chan struct{})}
	l.value, l.err = sp.result(key, l.n)
	b.lookups = append(b.lookups, l)
	id := testLookupClient + len(b.lookups)
	b.mu.Unlock()
	var err error
	if sp.held {
		select {
		case <-l.release:
		case <-ctx.Done():
			b.mu.Lock()
			l.ctxSeen = true
			slow := l.slowStop
			b.mu.Unlock()
			if slow {
				<-l.release
			}
			err = fmt.Errorf("provider: %w", ctx.Err())
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l.returned = true
	if err != nil {
		l.value, l.err = "", err
	}
	if b.hist != nil {
		// The loop stores the result some time after the lookup returned:
		// the event stays open until the scenario ends.
		b.ends = append(b.ends, b.hist.Call(id, testLookupEnd{key: key, value: l.value, err: l.err}))
	}
	return l.value, l.err
}

// open returns the lookups that have not returned, oldest first.
func (b *testScnBackend) open() []*testLookup {
	b.mu.Lock()
	defer b.mu.Unlock()
	var open []*testLookup
	for _, l := range b.lookups {
		if !l.returned {
			open = append(open, l)
		}
	}
	return open
}

// started counts the lookups that have started, of every key.
func (b *testScnBackend) started() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.lookups)
}

func (b *testScnBackend) calls(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.count[key]
}

// testScnStep is one step of a scenario.
type testScnStep struct {
	kind    int      // testStepGets, testStepRelease, testStepCancel, testStepTick
	keys    []string // Gets started at once, each on a goroutine of its own
	picks   []int    // which held lookups (release, burst) or waiting callers (cancel), any order
	leave   []int    // burst: which waiting callers give up
	order   []int    // burst: in what order its acts happen (indexes into keys, then picks, then leave)
	advance time.Duration
}

const (
	testStepGets = iota
	testStepRelease
	testStepCancel
	testStepTick
	testStepReleaseWithHit // let the oldest held lookup answer while a Get of a cached key arrives
	testStepBurst          // at once: Gets arrive, held lookups answer, waiting callers give up
)

type testScenario struct {
	maxInFlight int
	tick        time.Duration // 0: no heartbeat
	spec        map[string]testKeySpec
	early       []string // Gets started before Run
	steps       []testScnStep
	slowStop    []int // at the end, which running lookups take a while to stop, released in this order
	idleStop    bool  // R5: every lookup answers before Run's ctx ends, so none runs at the stop
	grace       time.Duration
	// R5: Run's ctx ends while the loop is inside OnTick, and lateCalls calls
	// of Stats and Get (of a key nobody asked for yet), made at that moment,
	// reach the loop only once OnTick returns.
	lateCalls int
}

// The empty string is a key like any other.
var testScnKeys = []string{"EUR", "GBP", "JPY", "CHF", ""}

// testLateKey is the key of the Gets made as Run's ctx ends: its lookup,
// if one starts, answers at once.
const testLateKey = "USD"

func (s testScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MaxInFlight %d", s.maxInFlight)
	if s.tick > 0 {
		fmt.Fprintf(&b, ", Tick %v", s.tick)
	}
	if s.grace > 0 {
		fmt.Fprintf(&b, ", Grace %v", s.grace)
	}
	b.WriteString("; the backend:")
	for _, k := range testScnKeys {
		sp := s.spec[k]
		how := "answers at once"
		if sp.held {
			how = "holds each lookup until released"
		}
		fmt.Fprintf(&b, " %s %s%s;", testKeyName(k), how, sp.describe())
	}
	if len(s.early) > 0 {
		fmt.Fprintf(&b, "\n  before Run starts: Get %s at once", testKeyNames(s.early))
	}
	b.WriteString("\n  Run starts")
	for i, st := range s.steps {
		fmt.Fprintf(&b, "\n  step %d: ", i+1)
		switch st.kind {
		case testStepGets:
			fmt.Fprintf(&b, "Get %s, each from its own goroutine, at once", testKeyNames(st.keys))
		case testStepRelease:
			fmt.Fprintf(&b, "let %d held lookup(s) answer, one after the other (picks %v among those running, oldest first)",
				len(st.picks), st.picks)
		case testStepCancel:
			fmt.Fprintf(&b, "the caller of waiting Get number %d (oldest first) gives up", st.picks[0])
		case testStepTick:
			fmt.Fprintf(&b, "the clock moves %v", st.advance)
		case testStepReleaseWithHit:
			b.WriteString("the oldest held lookup answers while a Get of a cached key arrives")
		case testStepBurst:
			b.WriteString("at once, nothing settling in between: ")
			var acts []string
			for _, a := range st.order {
				switch {
				case a < len(st.keys):
					acts = append(acts, fmt.Sprintf("Get %s arrives", testKeyName(st.keys[a])))
				case a < len(st.keys)+len(st.picks):
					acts = append(acts, fmt.Sprintf("held lookup %d (oldest first) answers", st.picks[a-len(st.keys)]))
				default:
					acts = append(acts, fmt.Sprintf("the caller of waiting Get %d (oldest first) gives up",
						st.leave[a-len(st.keys)-len(st.picks)]))
				}
			}
			b.WriteString(strings.Join(acts, ", "))
		}
	}
	if s.idleStop {
		b.WriteString("\n  every held lookup answers, so none is running")
	}
	if s.lateCalls > 0 && s.tick > 0 {
		b.WriteString("\n  the clock moves to the next Tick; OnTick takes a while (the clock stands still)")
	}
	fmt.Fprintf(&b, "\n  Run's ctx ends")
	if s.lateCalls > 0 && s.tick > 0 {
		fmt.Fprintf(&b, ", %d calls of Stats and Get(%q) start at once, then OnTick returns (the running lookups "+
			"return only after that)", s.lateCalls, testLateKey)
	}
	if len(s.slowStop) > 0 {
		fmt.Fprintf(&b, " (running lookups %v, oldest first, take a while to stop and are let go in that order)", s.slowStop)
	}
	return b.String()
}

func testDrawScenario(focus string) func(r *rapid.T) testScenario {
	return func(r *rapid.T) testScenario { return testDrawScenarioFor(r, focus) }
}

func testDrawScenarioFor(r *rapid.T, focus string) testScenario {
	s := testScenario{
		maxInFlight: rapid.IntRange(-1, 3).Draw(r, "MaxInFlight"),
		spec:        map[string]testKeySpec{},
	}
	if focus == "R2" && rapid.IntRange(0, 4).Draw(r, "heartbeat off") > 0 || focus != "R2" && rapid.Bool().Draw(r, "heartbeat") {
		s.tick = rapid.SampledFrom([]time.Duration{time.Second, 250 * time.Millisecond, 3 * time.Second}).Draw(r, "Tick")
	}
	for _, k := range testScnKeys {
		sp := testKeySpec{
			held:  rapid.IntRange(0, 3).Draw(r, "held "+k) > 0,
			fails: rapid.SampledFrom([]int{0, 0, 1, 2}).Draw(r, "fails "+k),
			kind:  rapid.IntRange(0, len(testErrKinds)-1).Draw(r, "error kind "+k),
		}
		sp.drawValues(r, k)
		s.spec[k] = sp
	}
	key := rapid.SampledFrom(testScnKeys)
	if rapid.IntRange(0, 3).Draw(r, "early Gets") == 0 {
		s.early = rapid.SliceOfN(key, 1, 3).Draw(r, "early keys")
	}
	n := rapid.IntRange(1, 8).Draw(r, "steps")
	for range n {
		st := testScnStep{kind: rapid.IntRange(0, 3).Draw(r, "step")}
		if st.kind == testStepCancel && focus != "R3" { // callers who leave are R3's
			st.kind = testStepGets
		}
		if focus == "R2" && rapid.Bool().Draw(r, "clock moves") {
			st.kind = testStepTick
		}
		if st.kind != testStepTick && rapid.IntRange(0, 3).Draw(r, "burst") == 0 {
			st.kind = testStepBurst
		}
		switch st.kind {
		case testStepGets:
			st.keys = rapid.SliceOfN(key, 1, 4).Draw(r, "keys")
		case testStepRelease:
			st.picks = rapid.SliceOfN(rapid.IntRange(0, 5), 1, 3).Draw(r, "release picks")
		case testStepCancel:
			st.picks = []int{rapid.IntRange(0, 5).Draw(r, "cancel pick")}
		case testStepBurst:
			st.keys = rapid.SliceOfN(key, 0, 3).Draw(r, "burst keys")
			st.picks = rapid.SliceOfN(rapid.IntRange(0, 5), 1, 3).Draw(r, "burst release picks")
			if focus == "R3" {
				st.leave = rapid.SliceOfN(rapid.IntRange(0, 5), 0, 2).Draw(r, "burst leave picks")
			}
			st.order = rapid.Permutation(testRange(len(st.keys)+len(st.picks)+len(st.leave))).Draw(r, "burst order")
		case testStepTick:
			st.advance = time.Duration(rapid.IntRange(1, 2500).Draw(r, "advance ms")) * time.Millisecond
			if s.tick > 0 && rapid.Bool().Draw(r, "whole ticks") {
				st.advance = time.Duration(rapid.IntRange(1, 3).Draw(r, "ticks"))*s.tick +
					time.Duration(rapid.IntRange(-1, 1).Draw(r, "and ns"))
			}
		}
		s.steps = append(s.steps, st)
	}
	s.slowStop = rapid.SliceOfN(rapid.IntRange(0, 3), 0, 2).Draw(r, "slow to stop")
	if focus == "R5" {
		s.idleStop = len(s.slowStop) == 0 && rapid.Bool().Draw(r, "nothing running at the stop")
		// Longer than the clock moves in any scenario, so that Grace never
		// expires: the lookups here honour their ctx (those that ignore it
		// are B2's).
		s.grace = rapid.SampledFrom([]time.Duration{0, 2 * time.Minute, 5 * time.Minute}).Draw(r, "Grace")
		if s.tick > 0 {
			s.lateCalls = rapid.IntRange(0, 6).Draw(r, "calls as the loop stops")
		}
	}
	return s
}

// testRange is 0, 1, …, n-1.
func testRange(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// testScnGet is a Get the scenario made.
type testScnGet struct {
	key       string
	call      *katatest.Call[string]
	ctx       context.Context
	storedAt  string // the value stored for key when the Get started, if any
	cancelled bool
	raced     bool // its caller gave up while its answer may have been on its way
	seen      bool // the test has checked its outcome
}

// History clients: Gets are numbered from 0, lookups from testLookupClient,
// and Run's stop is testStopClient.
const (
	testLookupClient = 1 << 20
	testStopClient   = 1<<20 - 1
)

// History events and what a Get answered.
type (
	testGetIn  struct{ key string }
	testGetOut struct {
		value  string
		err    error
		gaveUp bool // its caller had given up
	}
	testLookupEnd struct {
		key, value string
		err        error
	}
	testStopIn struct{}
)

// testCacheModel is the README's cache, one event at a time: a Get answers
// a value some lookup of its key returned with a nil error, or the error
// some lookup of its key returned, as it is; ErrStopped only once Run's ctx
// has ended; ctx.Err() only if its caller gave up. A lookup's result counts
// from the moment it returned (the loop stores it some time later), the
// stop from the moment Run's ctx was cancelled.
func testCacheModel() porcupine.Model {
	type state struct {
		found   string // `"key"="value";` for every value a lookup found
		failed  string // `"key":error;` for every error a lookup returned
		stopped bool
	}
	errText := func(err error) string { return fmt.Sprintf("%p/%v", err, err) }
	return porcupine.Model{
		Init: func() any { return state{} },
		Step: func(s, in, out any) (bool, any) {
			st := s.(state)
			switch in := in.(type) {
			case testLookupEnd:
				if in.err != nil {
					st.failed += fmt.Sprintf("%q:%s;", in.key, errText(in.err))
				} else {
					st.found += fmt.Sprintf("%q=%q;", in.key, in.value)
				}
				return true, st
			case testStopIn:
				st.stopped = true
				return true, st
			case testGetIn:
				o := out.(testGetOut)
				switch {
				case o.err == nil:
					return strings.Contains(st.found, fmt.Sprintf("%q=%q;", in.key, o.value)), st
				case strings.Contains(st.failed, fmt.Sprintf("%q:%s;", in.key, errText(o.err))):
					return true, st
				case o.err == ErrStopped:
					return st.stopped, st
				default:
					return o.gaveUp, st
				}
			}
			return false, st
		},
		DescribeOperation: func(in, out any) string {
			switch in := in.(type) {
			case testLookupEnd:
				if in.err != nil {
					return fmt.Sprintf("a lookup of %s returned the error %q", in.key, in.err)
				}
				return fmt.Sprintf("a lookup of %s returned %q", in.key, in.value)
			case testStopIn:
				return "Run's ctx was cancelled"
			case testGetIn:
				o := out.(testGetOut)
				if o.err != nil {
					return fmt.Sprintf("Get(%q) returned the error %q", in.key, o.err)
				}
				return fmt.Sprintf("Get(%q) returned %q", in.key, o.value)
			}
			return fmt.Sprint(in)
		},
	}
}

// testPlay is one scenario being played.
type testPlay struct {
	h      *katatest.H
	s      testScenario
	focus  string
	be     *testScnBackend
	cache  *Cache
	clk    *testStopClock
	run    katatest.ErrCall
	loopID int // the goroutine running Run
	ticks  []testTickSeen
	ticksM sync.Mutex
	gets   []*testScnGet
	hist   katatest.History
	stopAt func(any)         // Run's stop in the history, open until the scenario ends
	stored map[string]string // values stored, as the README's cache would
	found  map[string]bool   // every key and value a lookup returned with a nil error (testFound)
	errs   map[string][]error
	limit  int
	// R3: the keys some Get asked for; R5: while set, OnTick waits there.
	asked    map[string]bool
	tickHold *katatest.Gate
	// R4: Stats, the lookups started and the Gets made at the last check.
	lastStats            Stats
	lastStarted, lastGot int
}

type testTickSeen struct {
	goroutine int
	stats     Stats
}

func (p *testPlay) onTick(s Stats) {
	id := katatest.Goroutine()
	p.ticksM.Lock()
	p.ticks = append(p.ticks, testTickSeen{id, s})
	hold := p.tickHold
	p.ticksM.Unlock()
	if hold != nil {
		_ = hold.Hold(context.Background()) // an OnTick that takes a while, with the clock standing still
	}
}

func (p *testPlay) tickCount() int {
	p.ticksM.Lock()
	defer p.ticksM.Unlock()
	return len(p.ticks)
}

// settled lets the code settle. (A loop that holds a mutex while a
// lookup runs hangs here; the grader reports that hang as such.)
func (p *testPlay) settled(what string) bool {
	synctest.Wait()
	return true
}

func (p *testPlay) get(key string) {
	p.asked[key] = true
	g := &testScnGet{key: key}
	if v, ok := p.stored[key]; ok {
		g.storedAt = v
	}
	id := len(p.gets)
	g.call = katatest.Start(p.h, func(ctx context.Context) (string, error) {
		g.ctx = ctx
		done := p.hist.Call(id, testGetIn{key})
		v, err := p.cache.Get(ctx, key)
		done(testGetOut{value: v, err: err, gaveUp: ctx.Err() != nil})
		return v, err
	})
	p.gets = append(p.gets, g)
}

// waiting returns the Gets that have not returned, oldest first.
func (p *testPlay) waiting() []*testScnGet {
	var w []*testScnGet
	for _, g := range p.gets {
		if !g.call.Returned() {
			w = append(w, g)
		}
	}
	return w
}

// learn records what the lookups that returned found, as the README's
// cache stores it: a value for good, an error never.
func (p *testPlay) learn() {
	p.be.mu.Lock()
	defer p.be.mu.Unlock()
	for _, l := range p.be.lookups {
		if !l.returned {
			continue
		}
		if l.err == nil {
			// Without sharing (B1 is a bonus), two lookups of a key may
			// both find a value: either may be the one stored.
			p.stored[l.key] = l.value
			p.found[testFound(l.key, l.value)] = true
		} else {
			p.errs[l.key] = append(p.errs[l.key], l.err)
		}
	}
}

// testFound is a key and a value found for it, as p.found holds them.
func testFound(key, value string) string { return key + "\x00" + value }

// wrongValue reports a Get(key) that returned value with a nil error,
// though no lookup of key had found it: a failed lookup's partial value, a
// value still to come, or none at all.
func (p *testPlay) wrongValue(key, value, when string) {
	p.be.mu.Lock()
	failed, later := false, false
	for _, l := range p.be.lookups {
		if l.key == key && l.value == value {
			failed = failed || l.err != nil
			later = later || l.err == nil
		}
	}
	p.be.mu.Unlock()
	switch {
	case failed:
		p.h.Errorf("Get(%q) returned (%q, nil)%s: %q is the value a failed lookup of %q returned beside its error. A "+
			"lookup that returns an error has failed, whatever value comes with it: its callers get the error, "+
			"and nothing is stored (test err != nil first, not the value), so the next Get asks the backend again",
			key, value, when, value, key)
	case later:
		p.h.Errorf("Get(%q) returned %q%s, which no lookup of %q had found by then: a Get returns the value a "+
			"lookup returned with a nil error", key, value, when, key)
	default:
		p.h.Errorf("Get(%q) returned %q%s, which no lookup of %q found: a Get returns the value a lookup of its "+
			"key returned with a nil error, as it is", key, value, when, key)
	}
}

// check checks the Gets that returned since the last check.
func (p *testPlay) check(when string) bool {
	h := p.h
	for _, g := range p.gets {
		if g.seen || !g.call.Returned() {
			continue
		}
		g.seen = true
		if g.call.Panicked() {
			return false
		}
		v, err := g.call.Result()
		switch {
		case g.raced && err == g.ctx.Err():
		case g.cancelled && !g.raced:
			if p.focus == "R3" && (err == nil || err != g.ctx.Err()) {
				h.Errorf("Get(%q), whose caller gave up while it waited, returned (%q, %v); want ctx.Err() itself "+
					"(%v), at once: the caller leaves, the lookup goes on", g.key, v, err, g.ctx.Err())
				return false
			}
		case err == nil:
			if p.focus == "R3" && !p.found[testFound(g.key, v)] {
				p.wrongValue(g.key, v, "")
				return false
			}
		case p.focus == "R3":
			found := false
			for _, e := range p.errs[g.key] {
				found = found || e == err
			}
			if !found && errors.Is(err, ErrStopped) {
				h.Errorf("Get(%q) returned ErrStopped (%q) %s, while the cache was still running; want the error its "+
					"lookup returned, as it is: a lookup error that matches context.Canceled (the backend's own call "+
					"was cancelled) is not a stop; only Run's ctx ending stops the cache", g.key, err, when)
				return false
			}
			if !found {
				h.Errorf("Get(%q) returned the error %q (%T, chain %s) %s; want the error its lookup returned, as "+
					"it is (err == what lookup returned), not wrapped and not rebuilt", g.key, err, err,
					katatest.Chain(err), when)
				return false
			}
		}
	}
	return true
}

func (p *testPlay) play() {
	h, s := p.h, p.s
	p.be = &testScnBackend{spec: s.spec, count: map[string]int{}, hist: &p.hist}
	p.stored, p.errs, p.found = map[string]string{}, map[string][]error{}, map[string]bool{}
	p.asked = map[string]bool{}
	p.limit = max(s.maxInFlight, 1)
	cfg := Config{MaxInFlight: s.maxInFlight, Tick: s.tick, OnTick: p.onTick, Grace: s.grace}
	p.clk = &testStopClock{Clock: h.Clk}
	p.cache = New(p.clk, p.be.lookup, cfg)
	defer p.cleanup()

	for _, k := range s.early {
		p.get(k)
	}
	if len(s.early) > 0 && !p.settled("Gets before Run started") {
		return
	}
	loopID := make(chan int, 1)
	p.run = katatest.StartErr(h, func(ctx context.Context) (err error) {
		// A loop stack of its own in every scenario, so that the race
		// detector reports a race of the lookups in every one.
		katatest.AtFreshDepth(func() {
			loopID <- katatest.Goroutine()
			err = p.cache.Run(ctx)
		})
		return err
	})
	p.loopID = <-loopID
	if !p.settled("Run started") || !p.quiet("once Run started") {
		return
	}
	for i, st := range s.steps {
		when := fmt.Sprintf("at step %d", i+1)
		switch st.kind {
		case testStepGets:
			for _, k := range st.keys {
				p.get(k)
			}
		case testStepRelease:
			open := p.be.open()
			var chosen []*testLookup
			for _, pick := range st.picks {
				if len(open) == 0 {
					break
				}
				j := pick % len(open)
				chosen = append(chosen, open[j])
				open = append(open[:j:j], open[j+1:]...)
			}
			for _, l := range chosen { // one at a time: R6 has lookups that end together
				close(l.release)
				p.settled("a lookup answered")
			}
		case testStepCancel:
			w := p.waiting()
			if len(w) == 0 {
				continue
			}
			g := w[st.picks[0]%len(w)]
			g.cancelled = true
			g.call.Cancel()
			if !p.settled("a caller gave up") {
				return
			}
			if p.focus == "R3" && !g.call.Returned() {
				h.Errorf("Get(%q) did not return when its caller gave up (the mock clock stood still): select on "+
					"ctx.Done() and the reply together", g.key)
				return
			}
		case testStepBurst:
			p.burst(st)
		case testStepReleaseWithHit:
			open := p.be.open()
			for k := range p.stored {
				p.get(k)
				break
			}
			// Unlike synctest.Wait, WaitUnordered leaves the loop's read of
			// the map unordered with what the lookup does once released.
			h.WaitUnordered()
			if len(open) > 0 {
				close(open[0].release)
			}
		case testStepTick:
			before := p.tickCount()
			open := len(p.be.open())
			h.Advance(st.advance)
			if p.focus == "R2" && !p.ticked(before, open) {
				return
			}
		}
		if !p.settled(when) || !p.quiet(when) {
			return
		}
	}
	p.stop()
}

// burst does a step's acts at once, in the step's order, with nothing
// settling in between.
func (p *testPlay) burst(st testScnStep) {
	open, waiting := p.be.open(), p.waiting()
	for _, a := range st.order {
		switch {
		case a < len(st.keys):
			p.get(st.keys[a])
		case a < len(st.keys)+len(st.picks):
			if len(open) > 0 {
				j := st.picks[a-len(st.keys)] % len(open)
				close(open[j].release)
				open = append(open[:j:j], open[j+1:]...)
			}
		default:
			if len(waiting) > 0 {
				j := st.leave[a-len(st.keys)-len(st.picks)] % len(waiting)
				g := waiting[j]
				g.cancelled, g.raced = true, true
				g.call.Cancel()
				waiting = append(waiting[:j:j], waiting[j+1:]...)
			}
		}
	}
}

// linearizable checks every Get's answer against the order of events, once
// the scenario is over.
func (p *testPlay) linearizable() {
	p.be.mu.Lock()
	ends := p.be.ends
	p.be.mu.Unlock()
	for _, end := range ends {
		end(nil)
	}
	if p.stopAt != nil {
		p.stopAt(nil)
	}
	p.h.Linearizable(testCacheModel(), &p.hist, "Get")
}

// quiet checks the requirements in focus once everything settled.
func (p *testPlay) quiet(when string) bool {
	h := p.h
	p.learn()
	if !p.check(when) {
		return false
	}
	running := len(p.be.open())
	if peak := p.be.running.Max(); p.focus == "R4" && peak > p.limit {
		h.Errorf("%d lookups ran at once with MaxInFlight %d (%s): at most max(MaxInFlight, 1) lookups run at "+
			"once (values below 1 mean 1); a miss beyond the limit waits in the loop's queue until a running "+
			"lookup reports back", peak, p.s.maxInFlight, when)
		return false
	}
	var stats Stats
	if p.focus == "R1" || p.focus == "R4" {
		st := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
		if !st.Returns("Stats did not answer %s, with %d lookup(s) running: the loop must stay free to answer "+
			"while lookups run, each on a goroutine of its own", when, running) {
			return false
		}
		var err error
		stats, err = st.Result()
		if err != nil {
			h.Errorf("Stats returned %v %s, while Run runs; want the loop's Stats", err, when)
			return false
		}
		if p.focus == "R4" {
			if stats.InFlight != running {
				h.Errorf("Stats.InFlight is %d %s, but %d lookup(s) were running (MaxInFlight %d): InFlight "+
					"counts the lookups started and not yet reported back", stats.InFlight, when, running,
					p.s.maxInFlight)
				return false
			}
			if !p.queuedFollows(stats, when) {
				return false
			}
			if stats.Queued > 0 && running < p.limit {
				h.Errorf("%s, %d lookup(s) were queued while only %d of MaxInFlight %d ran: a queued miss starts "+
					"as soon as a slot is free, when a running lookup reports back%s", when, stats.Queued, running,
					p.s.maxInFlight, p.blankHint())
				return false
			}
			if w := p.waiting(); len(w) > 0 && running == 0 && stats.Queued == 0 {
				keys := map[string]bool{}
				var names []string
				for _, g := range w {
					if !keys[g.key] {
						keys[g.key] = true
						names = append(names, fmt.Sprintf("%q", g.key))
					}
				}
				h.Errorf("%s, %d Get(s) of %s still waited with no lookup running or queued: a miss needs a lookup "+
					"that answers it%s", when, len(w), strings.Join(names, ", "), p.blankHint())
				return false
			}
		}
	}
	if p.focus == "R1" {
		// Every cached key answers at once, whatever is running.
		for k, v := range p.stored {
			g := &testScnGet{key: k, storedAt: v}
			before := p.be.calls(k)
			g.call = katatest.Start(h, func(ctx context.Context) (string, error) { return p.cache.Get(ctx, k) })
			p.settled("a Get of a cached key")
			if n := p.be.calls(k); n > before {
				h.Errorf("Get(%q), a cached key (a lookup found %q), started lookup number %d of %q %s instead of "+
					"answering from the map: a Get of a stored key is a hit, answered at once, and never asks the "+
					"backend again%s", k, v, n, k, when, testEmptyHint(v))
				g.call.Stop()
				return false
			}
			if !g.call.Returned() {
				// Is the loop free? Then the value never reached the map.
				st := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
				p.settled("a Stats call")
				if st.Returned() {
					h.Errorf("Get(%q), a cached key (its lookup returned %q), did not answer %s, yet the loop answered "+
						"Stats at once: that lookup's value never reached the map, or a hit waits for something "+
						"else. Every lookup's result must reach the loop (a send in a select with a default case "+
						"drops it when the loop is busy), and a hit is answered from the map at once", k, v, when)
					g.call.Stop()
					return false
				}
				st.Stop()
			}
			if !g.call.Returns("Get(%q), a cached key, did not answer %s, with %d lookup(s) running: the loop must not "+
				"wait for a lookup, nor for a free slot%s", k, when, running, testEmptyHint(v)) {
				return false
			}
			got, err := g.call.Result()
			if err != nil || !p.found[testFound(k, got)] {
				h.Errorf("Get(%q), a cached key, returned (%q, %v) %s; want the value stored for it (%q)", k, got,
					err, when, v)
				return false
			}
			g.seen = true
			p.gets = append(p.gets, g)
		}
		// The Gets of cached keys were hits, and nothing else.
		after := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
		if !after.Returns("Stats did not answer %s, once the cached keys had answered", when) {
			return false
		}
		st, err := after.Result()
		if err != nil {
			h.Errorf("Stats returned %v %s, while Run runs; want the loop's Stats", err, when)
			return false
		}
		if st.Entries > len(p.stored) {
			h.Errorf("%s, Stats.Entries is %d, but lookups had found a value (with a nil error) for only %d key(s): "+
				"a failed lookup stores nothing, whatever value comes beside its error; store a value only when its "+
				"lookup returned a nil error", when, st.Entries, len(p.stored))
			return false
		}
		if st.Hits+st.Misses != len(p.gets) {
			h.Errorf("%s, Stats counts %d Hits and %d Misses, but %d Get(s) had reached the loop, each answered or "+
				"waiting: Hits + Misses counts every Get the loop received, once; a hit is a Get answered from the "+
				"map, a miss one that waits for a lookup, started, queued or shared", when, st.Hits, st.Misses,
				len(p.gets))
			return false
		}
		if st.Hits-stats.Hits != len(p.stored) || st.Misses != stats.Misses || st.Entries != len(p.stored) {
			empty := ""
			for _, v := range p.stored {
				if v == "" {
					empty = testEmptyHint(v)
				}
			}
			h.Errorf("%s, %d Get(s) of the %d cached key(s) took Stats from %+v to %+v; want %d more Hits, as many "+
				"Misses as before and Entries %d: a Get answered from the map is a hit, and every value stored is an "+
				"entry%s", when, len(p.stored), len(p.stored), stats, st, len(p.stored), len(p.stored), empty)
			return false
		}
	}
	return true
}

// queuedFollows checks Stats.Queued against the last check: since then, each
// lookup that started left the queue or never joined it, and each Get made
// queued at most one more, so Queued_now = Queued_then - started + (at most
// one per Get), whether misses for one key share a lookup or not.
func (p *testPlay) queuedFollows(stats Stats, when string) bool {
	started, got := p.be.started(), len(p.gets)
	last, newStarts, newGets := p.lastStats, started-p.lastStarted, got-p.lastGot
	p.lastStats, p.lastStarted, p.lastGot = stats, started, got
	least := last.Queued - newStarts
	switch {
	case stats.Queued > least+newGets:
		p.h.Errorf("Stats.Queued counts more lookups than can be waiting for a slot: it is %d %s, but it was %d at "+
			"the previous step, %d lookup(s) started since and %d Get(s) arrived, so at most %d can be waiting "+
			"(MaxInFlight %d, %d running). A queued key that starts leaves the queue at once, and only a miss "+
			"queues a lookup (a failed lookup is not tried again: its callers get its error). Queued counts the "+
			"misses still waiting now, not how many ever waited: compute it from what is left in the queue%s",
			stats.Queued, when, last.Queued, newStarts, newGets, max(least+newGets, 0), p.s.maxInFlight,
			stats.InFlight, p.blankHint())
		return false
	case stats.Queued < least:
		p.h.Errorf("Stats.Queued lost queued misses that never started: it is %d %s, but it was %d at the previous "+
			"step and only %d lookup(s) started since, so %d left the queue without starting. A queued miss stays "+
			"queued until a slot frees and its lookup starts%s", stats.Queued, when, last.Queued, newStarts,
			least-stats.Queued, p.blankHint())
		return false
	}
	return true
}

// blankHint is what a message about the queue adds when a Get of the key
// "" waits.
func (p *testPlay) blankHint() string {
	for _, g := range p.waiting() {
		if g.key == "" {
			return `; a Get of "" waits, and "" is a key like any other: never let the empty string stand for ` +
				`"no key waiting"`
		}
	}
	return ""
}

// testEmptyHint is what a message adds when the value stored is "".
func testEmptyHint(v string) string {
	if v != "" {
		return ""
	}
	return `; its value is "", a value like any other: store it, and a key is cached once its value is stored, ` +
		`whatever the value, so tell a hit from a miss by the key's presence in the map (v, ok := values[key]), not ` +
		`by the value`
}

// ticked checks the heartbeats of the clock's last move.
func (p *testPlay) ticked(before, running int) bool {
	h := p.h
	p.ticksM.Lock()
	ticks := append([]testTickSeen(nil), p.ticks...)
	p.ticksM.Unlock()
	want := 0
	if p.s.tick > 0 {
		want = int(h.Elapsed() / p.s.tick)
	}
	if len(ticks) != want {
		h.Errorf("OnTick was called %d time(s) by %v with Tick %v and %d lookup(s) running; want %d, once per "+
			"Tick on the injected clock, whatever the lookups do", len(ticks), h.Elapsed(), p.s.tick, running, want)
		return false
	}
	for _, t := range ticks[before:] {
		if t.goroutine != p.loopID {
			h.Errorf("OnTick ran on goroutine %d, not on the loop goroutine (%d, the one running Run): the loop "+
				"itself calls OnTick with its current Stats, so OnTick never runs beside the loop", t.goroutine,
				p.loopID)
			return false
		}
		if t.stats.InFlight != running {
			h.Errorf("OnTick got Stats with InFlight %d while %d lookup(s) were running: the heartbeat reports the "+
				"loop's current Stats", t.stats.InFlight, running)
			return false
		}
	}
	if len(ticks) > before {
		// Nothing but the clock moved: each tick saw the Stats of now.
		st := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
		if !st.Returns("Stats did not answer after the clock moved %v, with %d lookup(s) running", h.Elapsed(), running) {
			return false
		}
		now, err := st.Result()
		if err != nil {
			h.Errorf("Stats returned %v after the clock moved, while Run runs; want the loop's Stats", err)
			return false
		}
		for _, t := range ticks[before:] {
			if t.stats != now {
				h.Errorf("OnTick got %+v, but Stats, asked right after with only the clock moving in between, "+
					"answered %+v: the heartbeat passes OnTick the loop's current Stats, every field as Stats "+
					"computes it", t.stats, now)
				return false
			}
		}
	}
	if !h.StandsStill(10*max(p.s.tick, time.Second), "OnTick was called", func() bool { return p.tickCount() > len(ticks) }) {
		return false
	}
	return true
}

// stop ends Run's ctx with lookups running and checks R5.
func (p *testPlay) stop() {
	h := p.h
	if p.focus != "R5" || p.s.idleStop { // stopping with lookups running is R5's
		for i := 0; i < 20 && len(p.be.open()) > 0; i++ {
			for _, l := range p.be.open() {
				close(l.release)
				p.settled("a lookup answered")
			}
		}
		if p.focus == "R3" && !p.kept() {
			return
		}
	}
	open := p.be.open()
	var slow []*testLookup
	for _, pick := range p.s.slowStop {
		if len(open) == 0 {
			break
		}
		j := pick % len(open)
		slow = append(slow, open[j])
		open = append(open[:j:j], open[j+1:]...)
	}
	p.be.mu.Lock()
	for _, l := range slow {
		l.slowStop = true
	}
	p.be.mu.Unlock()
	running := p.be.open()
	calls := map[string]int{}
	for _, k := range testScnKeys {
		calls[k] = p.be.calls(k)
	}
	waiting := p.waiting()
	// While the loop is inside OnTick, the running lookups that are quick to
	// stop answer the cancel before the loop sees its ctx end: their results
	// must not reach the waiting callers, who get ErrStopped.
	hold := p.holdTick()
	p.stopAt = p.hist.Call(testStopClient, testStopIn{})
	p.run.Cancel()
	lateGets, lateStats := p.callLate(hold)
	if !p.settled("Run's ctx ended") {
		return
	}
	if p.focus == "R2" && p.s.tick > 0 {
		if n, want := p.tickCount(), int(h.Elapsed()/p.s.tick); n > want {
			h.Errorf("Run's ctx ended with the clock standing still at %v, and OnTick was then called: %d call(s) by "+
				"then with Tick %v; want %d, once per Tick on the injected clock. The heartbeat calls OnTick on a "+
				"Tick and at no other moment: not to publish a last Stats as the loop stops", h.Elapsed(), n,
				p.s.tick, want)
			return
		}
	}
	if p.focus == "R3" {
		p.linearizable()
	}
	if p.focus != "R5" || !p.lateReturned(lateGets, lateStats) {
		return
	}
	for _, g := range waiting {
		if !g.call.Returned() {
			h.Errorf("Get(%q) kept waiting after Run's ctx ended: once the cache stops, waiting callers return "+
				"ErrStopped at once", g.key)
			return
		}
		if v, err := g.call.Result(); !g.cancelled && !errors.Is(err, ErrStopped) {
			h.Errorf("Get(%q), waiting when Run's ctx ended, returned (%q, %v); want ErrStopped%s", g.key, v, err,
				testStopHint(hold != nil))
			return
		}
		if _, err := g.call.Result(); !g.cancelled && testStoppedAlsoCtx(h, fmt.Sprintf("Get(%q), waiting when Run's ctx ended,", g.key), err) {
			return
		}
		g.seen = true
	}
	p.be.mu.Lock()
	for _, l := range running {
		if !l.ctxSeen && !l.returned {
			p.be.mu.Unlock()
			h.Errorf("when Run's ctx ended, the running lookup of %q did not see its ctx cancelled: every lookup "+
				"runs with Run's ctx", l.key)
			return
		}
	}
	p.be.mu.Unlock()
	for i, l := range slow {
		if p.run.Returned() {
			h.Errorf("Run returned while %d lookup(s) it started were still running (their ctx was cancelled, "+
				"but they had not returned): Run returns only once every running lookup has returned",
				len(slow)-i)
			return
		}
		// Calls during the stop get ErrStopped at once.
		if i == 0 {
			key := l.key
			for k := range p.stored { // a cached key too gets ErrStopped
				key = k
			}
			late := katatest.Start(h, func(ctx context.Context) (string, error) { return p.cache.Get(ctx, key) })
			st := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
			if !p.settled("Get and Stats while Run stops") {
				return
			}
			if !late.Returned() || !st.Returned() {
				h.Errorf("a Get or Stats called after Run's ctx ended, while Run still waited for a lookup, did " +
					"not return at once: once the cache stops, Get and Stats return ErrStopped at once")
				late.Stop()
				st.Stop()
				return
			}
			_, err1 := late.Result()
			_, err2 := st.Result()
			if !errors.Is(err1, ErrStopped) || !errors.Is(err2, ErrStopped) {
				h.Errorf("Get and Stats called while Run stopped returned %v and %v; want ErrStopped", err1, err2)
				return
			}
			if testStoppedAlsoCtx(h, "Get, called while Run stopped,", err1) || testStoppedAlsoCtx(h, "Stats, called while Run stopped,", err2) {
				return
			}
		}
		close(l.release)
		if !p.settled("a lookup returned after the stop") {
			return
		}
	}
	// Every lookup has returned by now, whether it was running at the stop
	// or answered its cancel before the loop saw the stop.
	if !p.run.Returned() && p.s.grace > 0 {
		h.Errorf("Run did not return when its ctx ended with no lookup left running (Grace %v, the clock standing "+
			"still): it waited on the Grace timer for lookups that were not there. Grace only bounds the wait for "+
			"lookups still running; with none left, Run returns nil at once, so check that some are running "+
			"before the first wait, not only after a result arrives", p.s.grace)
		h.Advance(p.s.grace) // so that Run ends before the test does
		return
	}
	if !p.run.Returned() {
		h.Errorf("Run did not return once its ctx had ended and every lookup had returned: keep receiving results " +
			"until every running lookup has reported back")
		return
	}
	if err, ok := p.run.Finish("Run"); ok && err != nil {
		h.Errorf("Run returned %v; want nil once every lookup has returned", err)
		return
	}
	for _, k := range testScnKeys {
		if n := p.be.calls(k); n != calls[k] {
			h.Errorf("a lookup of %q started after Run's ctx ended: queued lookups never start once the cache "+
				"stops", k)
			return
		}
	}
	// Nothing the cache started outlives Run: not its heartbeat, not a timer.
	if n := h.Ticking(); n > 0 {
		h.Errorf("Run returned, but %d clk.Ticker(s) it made still ticked on the clock afterwards (Tick %v): the "+
			"heartbeat's ticker is stopped when Run returns, on every way out (defer t.Stop() right after "+
			"clk.Ticker), so that nothing the cache started outlives Run", n, p.s.tick)
		return
	}
	if p.s.grace > 0 {
		return // the Grace timer is B2's
	}
	if moved := h.PendingTimer(); moved != 0 {
		h.Errorf("Run returned, but left a timer pending on clk: it would fire %v later, into a channel nobody "+
			"reads (one more pending timer per stop of a long-lived service). Nothing the cache started outlives "+
			"Run: the heartbeat is one clk.Ticker, stopped when Run returns, not a timer made afresh in each pass "+
			"of the loop; stop every clk.Timer when done (defer t.Stop()); clk.After cannot be stopped", moved)
	}
}

// kept checks R3 once every lookup has returned: every key a Get asked
// for had a lookup, and a key whose lookups never fail is stored, so a new
// Get of it is a hit, whoever gave up meanwhile.
func (p *testPlay) kept() bool {
	h := p.h
	p.learn()
	for _, g := range p.waiting() {
		if !g.cancelled { // a Get stranded though every lookup returned: R4 says more
			return true
		}
	}
	st := katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) })
	p.settled("Stats once every lookup had returned")
	if !st.Returned() {
		st.Stop() // R1 says more
		return true
	}
	stats, err := st.Result()
	if err != nil || stats.Hits+stats.Misses < len(p.gets) || stats.Queued > 0 {
		return true // some Gets never reached the loop, or the queue is stuck: R1 and R4 say more
	}
	for _, k := range testScnKeys {
		if !p.asked[k] {
			continue
		}
		left := ""
		for _, g := range p.gets {
			if g.key == k && g.cancelled {
				left = " (a caller of it gave up while it waited)"
			}
		}
		before := p.be.calls(k)
		if before == 0 && k == "" {
			h.Errorf("Get(%q) missed%s, but no lookup of %q ever ran, even once every other lookup had "+
				"returned: \"\" is a key like any other; never let the empty string stand for \"no key waiting\"",
				k, left, k)
			return false
		}
		if before == 0 {
			h.Errorf("Get(%q) missed%s, but no lookup of %q ever ran, even once every other lookup had "+
				"returned: a miss's lookup goes on whoever still waits for it. A caller who gives up only stops "+
				"waiting; its key, running or queued, is still looked up and the value stored for the next caller "+
				"(don't take a queued key out of the queue when its callers leave)", k, left, k)
			return false
		}
		if p.s.spec[k].fails != 0 { // a key whose every lookup finds a value must end up stored
			continue
		}
		p.get(k)
		g := p.gets[len(p.gets)-1]
		p.settled("a Get once every lookup had returned")
		if n := p.be.calls(k); n > before && p.s.spec[k].empty {
			h.Errorf("Get(%q) missed earlier%s and its backend found a value for it, but once every lookup had "+
				"returned, a new Get(%q) started lookup number %d instead of answering from the map%s", k, left, k, n,
				testEmptyHint(""))
			return false
		} else if n > before {
			h.Errorf("Get(%q) missed earlier%s and its backend had a value for it, but once every lookup had "+
				"returned %q was not stored: a new Get(%q) started lookup number %d. A miss's lookup goes on whoever "+
				"still waits for it: a caller who gives up only stops waiting; its key, running or queued, is still "+
				"looked up and the value stored for the next caller (don't take a queued key out of the queue when "+
				"its callers leave)", k, left, k, k, n)
			return false
		}
		if !g.call.Returns("Get(%q), a cached key, did not answer once every lookup had returned", k) {
			return false
		}
		if v, err := g.call.Result(); err != nil || !p.found[testFound(k, v)] {
			h.Errorf("Get(%q), a cached key, returned (%q, %v) once every lookup had returned; want the value a "+
				"lookup of %q found", k, v, err, k)
			return false
		}
		g.seen = true
	}
	return true
}

// holdTick, for a scenario with calls as the loop stops, moves the clock to
// the next Tick and keeps the loop inside OnTick. It returns the gate that
// holds it there, or nil.
func (p *testPlay) holdTick() *katatest.Gate {
	h := p.h
	if p.focus != "R5" || p.s.lateCalls == 0 || p.s.tick <= 0 {
		return nil
	}
	g := h.Gate()
	p.ticksM.Lock()
	p.tickHold = g
	p.ticksM.Unlock()
	h.Advance(p.s.tick - h.Elapsed()%p.s.tick)
	if g.Waiting() == 0 { // no heartbeat (R2 says more): no window to open
		g.Release()
		return nil
	}
	return g
}

// callLate starts the scenario's calls of Stats and Get once Run's ctx has
// ended, while the loop is still inside OnTick, then lets OnTick return.
func (p *testPlay) callLate(hold *katatest.Gate) (gets []*katatest.Call[string], stats []*katatest.Call[Stats]) {
	h := p.h
	if hold == nil {
		return nil, nil
	}
	for i := range p.s.lateCalls {
		if i%2 == 0 {
			stats = append(stats, katatest.Start(h, func(ctx context.Context) (Stats, error) { return p.cache.Stats(ctx) }))
		} else {
			gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) {
				return p.cache.Get(ctx, testLateKey)
			}))
		}
	}
	synctest.Wait() // each is on its way to the loop, which has not seen its ctx end yet
	hold.Release()
	return gets, stats
}

// lateReturned checks the calls made as Run's ctx ended: each returns,
// with ErrStopped or with the loop's answer if the loop took it first.
func (p *testPlay) lateReturned(gets []*katatest.Call[string], stats []*katatest.Call[Stats]) bool {
	h := p.h
	stuck := 0
	for _, c := range gets {
		if !c.Returned() {
			stuck++
		}
	}
	for _, c := range stats {
		if !c.Returned() {
			stuck++
		}
	}
	if stuck > 0 {
		h.Errorf("%d of the %d Stats and Get calls made just as Run's ctx ended, while the loop was still inside "+
			"OnTick, never returned once the loop stopped: they wait to hand their request to a loop that no "+
			"longer receives. A check for the stop made once, before the send, is not enough: select on the "+
			"stopped channel together with the send (and with the reply), so a call that just missed the stop "+
			"still returns ErrStopped at once", stuck, len(gets)+len(stats))
		katatest.Unwind(h, gets...)
		katatest.Unwind(h, stats...)
		return false
	}
	for _, c := range gets {
		// Even if the loop took the Get before it saw its ctx end, the
		// lookup it needs answers only after that: to nobody.
		if v, err := c.Result(); !errors.Is(err, ErrStopped) {
			h.Errorf("Get(%q), called as Run's ctx ended, returned (%q, %v); want ErrStopped%s", testLateKey, v, err,
				testStopHint(true))
			return false
		}
	}
	for _, c := range stats {
		if _, err := c.Result(); err != nil && !errors.Is(err, ErrStopped) {
			h.Errorf("Stats, called as Run's ctx ended, returned %v; want ErrStopped, or the loop's Stats if it "+
				"took the call before it saw its ctx end", err)
			return false
		}
	}
	return true
}

// testStopHint is what a message about a caller who got something else than
// ErrStopped adds when the loop was busy as Run's ctx ended.
func testStopHint(busy bool) string {
	if !busy {
		return ""
	}
	return ". The loop was inside OnTick when Run's ctx ended, and lookup results that came in before it noticed " +
		"were delivered: a result that reaches the loop after Run's ctx ended (often the lookup's answer to the " +
		"cancel) goes to nobody. When a result comes in, check ctx.Err() first; once it is set, answer no caller " +
		"and stop, so that every waiting caller gets ErrStopped"
}

// cleanup lets every lookup go and stops Run, whatever happened.
func (p *testPlay) cleanup() {
	if p.tickHold != nil {
		p.tickHold.Release()
	}
	if p.run.Call != nil {
		p.run.Cancel()
	}
	for _, g := range p.gets {
		g.call.Cancel()
	}
	p.be.mu.Lock()
	for _, l := range p.be.lookups {
		select {
		case <-l.release:
		default:
			close(l.release)
		}
	}
	p.be.mu.Unlock()
}

// testFixedScenarios are played by every explored test besides the drawn
// ones: three held misses and one of the key "" at MaxInFlight 2 while the
// clock moves a Tick,
// then they answer, the newest running one first, one while a Get of a
// cached key arrives. The first lookup of JPY fails with an error that
// wraps context.Canceled while the cache runs, and a partial value beside
// it; CHF's value is the empty string. In R5, Run has a Grace and
// nothing runs when its ctx ends, which happens while the loop is inside
// OnTick, with Stats and Get calls on their way.
var testFixedScenarios = []testScenario{{
	maxInFlight: 2,
	tick:        time.Second,
	spec: map[string]testKeySpec{"EUR": {held: true}, "GBP": {held: true},
		"JPY": {held: true, fails: 1, kind: 4, partial: true}, // its backend call was cancelled upstream
		"CHF": {empty: true}},                                 // its value is ""
	steps: []testScnStep{
		{kind: testStepGets, keys: []string{"CHF"}},
		{kind: testStepGets, keys: []string{"EUR", "GBP", "JPY", ""}},
		{kind: testStepTick, advance: time.Second},
		{kind: testStepRelease, picks: []int{1}},
		{kind: testStepReleaseWithHit},
		{kind: testStepRelease, picks: []int{0}},
	},
	// R5 only: nothing runs at the stop, with Grace set; calls arrive as
	// Run's ctx ends while the loop is inside OnTick.
	grace:     2 * time.Minute,
	lateCalls: 4,
}}

// testLeaveScenario is R3's besides: at MaxInFlight 1, every caller of the
// misses queued behind a held lookup gives up; their lookups still run.
var testLeaveScenario = testScenario{
	maxInFlight: 1,
	spec:        map[string]testKeySpec{"EUR": {held: true}, "GBP": {fails: 1, kind: 2}},
	steps: []testScnStep{
		{kind: testStepGets, keys: []string{"EUR"}},
		{kind: testStepGets, keys: []string{"GBP", "GBP", "JPY"}},
		{kind: testStepCancel, picks: []int{1}},
		{kind: testStepCancel, picks: []int{1}},
		{kind: testStepCancel, picks: []int{1}},
		{kind: testStepRelease, picks: []int{0}},
	},
}

// testSlowStopScenario is R5's besides: two lookups running and one
// queued at the stop, and the running ones take a while to stop.
var testSlowStopScenario = testScenario{
	maxInFlight: 2,
	spec:        map[string]testKeySpec{"EUR": {held: true}, "GBP": {held: true}, "JPY": {held: true}},
	steps: []testScnStep{
		{kind: testStepGets, keys: []string{"CHF"}},
		{kind: testStepGets, keys: []string{"EUR", "GBP", "JPY"}},
	},
	slowStop: []int{1, 0},
}

// testTickStopScenario is R5's besides: the heartbeat ticks and Grace is
// 0 when Run's ctx ends with a lookup running and one queued; once Run
// returns, no ticker ticks and no timer is left on the clock.
var testTickStopScenario = testScenario{
	maxInFlight: 1,
	tick:        250 * time.Millisecond,
	spec:        map[string]testKeySpec{"EUR": {held: true}, "GBP": {held: true}},
	steps: []testScnStep{
		{kind: testStepGets, keys: []string{"CHF"}},
		{kind: testStepGets, keys: []string{"EUR"}},
		{kind: testStepTick, advance: 600 * time.Millisecond},
		{kind: testStepGets, keys: []string{"GBP"}},
	},
	slowStop: []int{0},
}

// testBlankQueuedScenario is R4's besides: at MaxInFlight 1, the key "" and
// then GBP queue, one after the other, behind a held lookup; as the slots
// free, each starts in turn.
var testBlankQueuedScenario = testScenario{
	maxInFlight: 1,
	spec:        map[string]testKeySpec{"EUR": {held: true}, "": {held: true}},
	steps: []testScnStep{
		{kind: testStepGets, keys: []string{"EUR"}},
		{kind: testStepGets, keys: []string{""}},
		{kind: testStepGets, keys: []string{"GBP"}},
		{kind: testStepRelease, picks: []int{0}},
		{kind: testStepRelease, picks: []int{0}},
	},
}

func testExplore(t *testing.T, focus string, checks int) {
	fixed := testFixedScenarios
	switch focus {
	case "R4":
		fixed = append(fixed[:len(fixed):len(fixed)], testBlankQueuedScenario)
	case "R3":
		fixed = append(fixed[:len(fixed):len(fixed)], testLeaveScenario)
	case "R5":
		fixed = append(fixed[:len(fixed):len(fixed)], testSlowStopScenario, testTickStopScenario)
	}
	for _, s := range fixed {
		if focus != "R5" {
			s.grace, s.lateCalls = 0, 0
		}
		katatest.Run(t, func(h *katatest.H) { (&testPlay{h: h, s: s, focus: focus}).play() })
	}
	katatest.Explore(t, checks, testDrawScenario(focus), func(h *katatest.H, s testScenario) {
		(&testPlay{h: h, s: s, focus: focus}).play()
	})
}

func TestR1_ExploreTheLoopAnswersWhileLookupsRun(t *testing.T) { testExplore(t, "R1", 14) }

func TestR2_ExploreTheHeartbeatRunsOnTheLoop(t *testing.T) { testExplore(t, "R2", 14) }

func TestR3_ExploreCallersWhoLeaveAndLookupsThatFail(t *testing.T) { testExplore(t, "R3", 14) }

func TestR4_ExploreTheLimitWhateverOrderLookupsEnd(t *testing.T) { testExplore(t, "R4", 20) }

func TestR5_ExploreStoppingWithLookupsRunning(t *testing.T) { testExplore(t, "R5", 20) }

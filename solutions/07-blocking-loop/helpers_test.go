package blockingloop

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"

	"gokata/internal/katatest"
)

// testTick is the heartbeat period of every cache under test.
const testTick = time.Second

// testErrBackend is the backend's answer for the keys it fails.
var testErrBackend = errors.New("backend: 503 unavailable")

// testGate is a katatest.Gate that may be released more than once, so the
// cleanup at the end of a test can open every gate.
type testGate struct {
	*katatest.Gate
	once sync.Once
}

func (g *testGate) Release() { g.once.Do(g.Gate.Release) }

// testBackend is the slow service behind the cache. A lookup of key answers
// "v:"+key at once, unless the test holds the key or fails it.
type testBackend struct {
	mu       sync.Mutex
	holds    map[string]*testGate // the lookup waits for the gate (or its ctx)
	cleanups map[string]*testGate // once its ctx is cancelled, the lookup waits here before it returns
	deaf     map[string]bool      // the lookup ignores its ctx, like a legacy client
	fails    map[string]bool
	gates    []*testGate
	calls    map[string]int
	running  katatest.Peak
}

func testNewBackend() *testBackend {
	return &testBackend{holds: map[string]*testGate{}, cleanups: map[string]*testGate{},
		deaf: map[string]bool{}, fails: map[string]bool{}, calls: map[string]int{}}
}

func (b *testBackend) gate() *testGate {
	g := &testGate{Gate: katatest.NewGate()}
	b.gates = append(b.gates, g)
	return g
}

// hold makes the lookups of keys wait until the returned gate is released
// or their ctx ends.
func (b *testBackend) hold(keys ...string) *testGate {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.gate()
	for _, k := range keys {
		b.holds[k] = g
	}
	return g
}

// holdDeaf makes the lookups of key wait for the returned gate whatever
// their ctx says.
func (b *testBackend) holdDeaf(key string) *testGate {
	g := b.hold(key)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.deaf[key] = true
	return g
}

// slowToStop makes a held lookup of key, once its ctx is cancelled, wait
// for the returned gate before it returns: a rollback that takes a while.
func (b *testBackend) slowToStop(key string) *testGate {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.gate()
	b.cleanups[key] = g
	return g
}

// fail makes the lookups of key fail with testErrBackend.
func (b *testBackend) fail(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails[key] = true
}

func (b *testBackend) lookup(ctx context.Context, key string) (string, error) {
	leave := b.running.Enter()
	defer leave()
	b.mu.Lock()
	b.calls[key]++
	hold, cleanup, deaf, fail := b.holds[key], b.cleanups[key], b.deaf[key], b.fails[key]
	b.mu.Unlock()
	if hold != nil {
		hctx := ctx
		if deaf {
			hctx = context.Background()
		}
		if err := hold.Hold(hctx); err != nil {
			if cleanup != nil {
				_ = cleanup.Hold(context.Background())
			}
			return "", fmt.Errorf("lookup %q: %w", key, err)
		}
	}
	if fail {
		return "", fmt.Errorf("lookup %q: %w", key, testErrBackend)
	}
	return "v:" + key, nil
}

// Calls counts the lookups of key that have started.
func (b *testBackend) Calls(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[key]
}

func (b *testBackend) releaseAll() {
	b.mu.Lock()
	gates := append([]*testGate(nil), b.gates...)
	b.mu.Unlock()
	for _, g := range gates {
		g.Release()
	}
}

// testBed is a cache under test, its Run running, with a testBackend behind
// it and its heartbeats recorded.
type testBed struct {
	h       *katatest.H
	backend *testBackend
	ticks   *katatest.Recorder[Stats]
	cache   *Cache
	run     katatest.ErrCall
	calls   []func() // cancel the test's Get and Stats calls
}

// testStart creates a cache on the mock clock with the given MaxInFlight
// and Grace and a heartbeat every testTick, and starts Run. The test defers
// tb.close().
func testStart(h *katatest.H, maxInFlight int, grace time.Duration) *testBed {
	return testStartAt(h, maxInFlight, grace, false)
}

// testStartAt is testStart; with freshStack, Run's loop runs on a stack of
// a depth no other run used. Only the race test needs that: the stack
// grows with every run of the binary, and a Run that never returns with a
// stack that deep would be reported as a leak whose stack cannot be read.
func testStartAt(h *katatest.H, maxInFlight int, grace time.Duration, freshStack bool) *testBed {
	tb := &testBed{h: h, backend: testNewBackend(), ticks: &katatest.Recorder[Stats]{}}
	h.Own(tb.backend.releaseAll) // a stop of a call lets every held lookup go
	tb.cache = New(h.Clk, tb.backend.lookup, Config{
		MaxInFlight: maxInFlight, Tick: testTick, OnTick: tb.ticks.Add, Grace: grace,
	})
	tb.run = katatest.StartErr(h, func(ctx context.Context) error {
		var err error
		// A loop stack of its own in every run, so that the race detector
		// reports R6's race in every run of the same test binary.
		if freshStack {
			katatest.AtFreshDepth(func() { err = tb.cache.Run(ctx) })
		} else {
			err = tb.cache.Run(ctx)
		}
		return err
	})
	return tb
}

// close stops everything the test started: Run first, so the lookups it
// cancels fail rather than store values, then the calls, then the gates.
func (tb *testBed) close() {
	tb.run.Cancel()
	for _, cancel := range tb.calls {
		cancel()
	}
	tb.backend.releaseAll()
	synctest.Wait()
	if !tb.run.Returned() && !tb.h.T.Failed() {
		tb.h.T.Errorf("Run did not return once its ctx had ended and every lookup had returned: does the loop " +
			"select on ctx.Done(), and keep receiving results until every running lookup has reported back?")
	}
}

// get calls Get(key) on a goroutine of its own.
func (tb *testBed) get(key string) *katatest.Call[string] {
	c := katatest.Start(tb.h, func(ctx context.Context) (string, error) { return tb.cache.Get(ctx, key) })
	tb.calls = append(tb.calls, c.Cancel)
	return c
}

// stats calls Stats on a goroutine of its own.
func (tb *testBed) stats() *katatest.Call[Stats] {
	c := katatest.Start(tb.h, func(ctx context.Context) (Stats, error) { return tb.cache.Stats(ctx) })
	tb.calls = append(tb.calls, c.Cancel)
	return c
}

// fetch calls Get(key) for a key the backend answers at once, and reports
// whether it returned the backend's value.
func (tb *testBed) fetch(key string) bool {
	c := tb.get(key)
	if !testAnswered(c) {
		tb.h.T.Errorf("Get(%q) did not return, with no other request and a backend that answers at once: "+
			"is Run serving the requests Get sends?", key)
		return false
	}
	v, err := c.Result()
	if err != nil || v != "v:"+key {
		tb.h.T.Errorf("Get(%q) returned (%q, %v); want the backend's value %q", key, v, err, "v:"+key)
		return false
	}
	return true
}

// testAnswered lets every goroutine settle, without moving the mock clock,
// and reports whether c has returned.
func testAnswered[T any](c *katatest.Call[T]) bool {
	synctest.Wait()
	return c.Returned()
}

// testStopClock is the test's mock clock, where a ticker of a period below
// 1 ticks every hour instead of panicking: R2 reports it, and the scenario
// goes on. [katatest.H.Ticking] tells whether each ticker was stopped.
type testStopClock struct {
	*katatest.Clock
}

func (c *testStopClock) Ticker(d time.Duration) *clock.Ticker {
	if d <= 0 {
		d = time.Hour
	}
	return c.Clock.Ticker(d)
}

// Tick is a ticker that cannot be stopped.
func (c *testStopClock) Tick(d time.Duration) <-chan time.Time { return c.Ticker(d).C }

// testStoppedAlsoCtx reports, and returns true, when err, the answer a
// stopped cache gave a caller whose own ctx is still live, matches
// ErrStopped and a ctx error too: the README's own switch asks about
// context.Canceled first, and takes it for the visitor leaving.
func testStoppedAlsoCtx(h *katatest.H, what string, err error) bool {
	for _, c := range []error{context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, c) {
			h.Errorf("%s returned %q, which matches ErrStopped but also %v, though the caller's own ctx was still "+
				"live: a caller that checks for context.Canceled first, as the README's switch does, believes it "+
				"left. Return ErrStopped itself, not wrapped with the error or the cause of Run's ctx", what, err, c)
			return true
		}
	}
	return false
}

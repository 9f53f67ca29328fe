package queue

// The caller's ctx is not always cancelled by hand: it has a deadline, and
// it carries values (a request id, a trace). produce and every consume call
// get a context derived from the caller's, so each sees both. When the
// deadline passes, a blocked put returns ctx.Err() of the context produce
// got, and Run (and its bonus variants) the caller's ctx.Err(),
// context.DeadlineExceeded, never a context.Canceled that nobody asked for.
// (What ctx.Err() the calls in flight see is not checked: the README asks
// only that their ctx be cancelled, and a design that stops on the caller's
// Done may cancel its own ctx a moment before the deadline reaches it.)

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testKindKey is the key of a value the caller's ctx carries.
type testKindKey struct{}

// What a consume call does when its ctx ends before the test releases it.
const (
	testKindWrapped = iota // returns fmt.Errorf("insert order %d: %w", v, ctx.Err())
	testKindBare           // returns ctx.Err() as it is
	testKindNil            // finishes its write anyway and returns nil
	testKindDeaf           // ignores its ctx: returns nil only when released
)

var testKindHow = [...]string{"on its ctx's end returns fmt.Errorf(\"insert order %d: %w\", ctx.Err())",
	"on its ctx's end returns ctx.Err()", "on its ctx's end returns nil", "ignores its ctx and returns nil when released"}

type testDeadlineRun struct {
	variant      string // "Run", "RunBatches" or "RunDrainTimeout"
	capacity     int
	consumers    int
	size         int           // RunBatches: Batch.Size
	drainTimeout time.Duration // RunDrainTimeout
	items        int           // produce puts 1…items, then waits on its ctx for the next record
	kinds        []int         // consume call i (in the order they start) behaves as kinds[i % len]
	deadline     time.Duration // the caller's ctx's deadline, after the start
	before       [][]int       // steps before the deadline: which held calls return nil (index mod their number, oldest first)
	together     []int         // the held calls that return nil at the same instant as the deadline passes
}

func (s testDeadlineRun) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(capacity %d, %d consumers", s.variant, s.capacity, s.consumers)
	switch s.variant {
	case "RunBatches":
		fmt.Fprintf(&b, ", Batch{Size: %d}", s.size)
	case "RunDrainTimeout":
		fmt.Fprintf(&b, ", drainTimeout %v", s.drainTimeout)
	}
	fmt.Fprintf(&b, ") with a ctx that carries a value and whose deadline is %v after the start (on the mock clock); "+
		"produce puts items 1…%d (it returns the error of a put that fails), then waits on its ctx for the next "+
		"record and returns fmt.Errorf(\"read orders: %%w\", ctx.Err()); each consume call waits until the test "+
		"releases it:", s.deadline, s.items)
	for i, k := range s.kinds {
		fmt.Fprintf(&b, "\n  consume call %d (and every %d-th after it) %s", i, len(s.kinds), testKindHow[k])
	}
	for n, st := range s.before {
		fmt.Fprintf(&b, "\n  step %d: the held calls number %v (counted from the oldest, from 0) return nil", n+1, st)
	}
	fmt.Fprintf(&b, "\n  step %d: the clock moves %v: the caller's deadline passes", len(s.before)+1, s.deadline)
	if len(s.together) > 0 {
		fmt.Fprintf(&b, ", and at the same instant the held calls number %v return nil", s.together)
	}
	b.WriteString("\n  then every call left is released")
	return b.String()
}

func testDrawDeadlineRun(variant string) func(*rapid.T) testDeadlineRun {
	return func(r *rapid.T) testDeadlineRun {
		s := testDeadlineRun{variant: variant}
		s.capacity = rapid.IntRange(0, 2).Draw(r, "capacity")
		s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
		switch variant {
		case "RunBatches":
			s.size = rapid.IntRange(1, 3).Draw(r, "Size")
		case "RunDrainTimeout":
			s.drainTimeout = rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second, time.Hour}).Draw(r, "drainTimeout")
		}
		s.items = rapid.IntRange(0, s.capacity+s.consumers*max(s.size, 1)+2).Draw(r, "items")
		s.kinds = rapid.SliceOfN(rapid.IntRange(testKindWrapped, testKindDeaf), 1, 4).Draw(r, "kinds")
		s.deadline = time.Duration(rapid.IntRange(1, 3000).Draw(r, "deadline ms")) * time.Millisecond
		s.before = rapid.SliceOfN(rapid.SliceOfN(rapid.IntRange(0, 2), 1, 2), 0, 2).Draw(r, "before")
		s.together = rapid.SliceOfN(rapid.IntRange(0, 2), 0, 2).Draw(r, "together")
		return s
	}
}

// testDeadlineCall is one consume call of a testDeadlineRun.
type testDeadlineCall struct {
	items    []int
	kind     int
	gate     chan struct{}
	seen     katatest.CtxSeen
	returned bool
	released bool
}

// testDeadlineState is what one play saw.
type testDeadlineState struct {
	s testDeadlineRun

	mu          sync.Mutex
	calls       []*testDeadlineCall // in the order they started
	accepted    int                 // puts that returned nil
	putErrs     []error
	produceSeen katatest.CtxSeen
	produceEnd  error // ctx.Err() of produce's ctx once it saw it end (or a put failed)
}

func (x *testDeadlineState) produce(ctx context.Context, put func(int) error) error {
	x.mu.Lock()
	x.produceSeen = katatest.SeeCtx(ctx, testKindKey{})
	x.mu.Unlock()
	for v := 1; v <= x.s.items; v++ {
		if err := put(v); err != nil {
			x.mu.Lock()
			x.putErrs = append(x.putErrs, err)
			x.produceEnd = ctx.Err()
			x.mu.Unlock()
			return fmt.Errorf("read orders: %w", err)
		}
		x.mu.Lock()
		x.accepted++
		x.mu.Unlock()
	}
	<-ctx.Done() // the next record never comes: only the deadline ends the stream
	x.mu.Lock()
	x.produceEnd = ctx.Err()
	x.mu.Unlock()
	return fmt.Errorf("read orders: %w", ctx.Err())
}

func (x *testDeadlineState) consume(ctx context.Context, items []int) error {
	x.mu.Lock()
	c := &testDeadlineCall{items: items, kind: x.s.kinds[len(x.calls)%len(x.s.kinds)], gate: make(chan struct{}),
		seen: katatest.SeeCtx(ctx, testKindKey{})}
	x.calls = append(x.calls, c)
	x.mu.Unlock()
	done := ctx.Done()
	if c.kind == testKindDeaf {
		done = nil
	}
	var err error
	select {
	case <-c.gate:
	case <-done:
		end := ctx.Err()
		switch c.kind {
		case testKindWrapped:
			err = fmt.Errorf("insert order %d: %w", items[0], end)
		case testKindBare:
			err = end
		}
	}
	x.mu.Lock()
	c.returned = true
	x.mu.Unlock()
	return err
}

func (x *testDeadlineState) releaseLocked(c *testDeadlineCall) {
	if !c.released {
		c.released = true
		close(c.gate)
	}
}

func (x *testDeadlineState) releaseAll() {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, c := range x.calls {
		x.releaseLocked(c)
	}
}

// releasePicks releases the held calls at the given positions (oldest
// first, modulo their number), all picked before any is released.
func (x *testDeadlineState) releasePicks(picks []int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var held []*testDeadlineCall
	for _, c := range x.calls {
		if !c.returned && !c.released {
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		return
	}
	for _, p := range picks {
		x.releaseLocked(held[p%len(held)])
	}
}

func (s testDeadlineRun) play(h *katatest.H) {
	x := &testDeadlineState{s: s}
	h.Own(x.releaseAll)
	const value = "request 7f3a"
	start := h.Clk.Now()
	deadline := start.Add(s.deadline)
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		ctx = context.WithValue(ctx, testKindKey{}, value)
		switch s.variant {
		case "RunBatches":
			return RunBatches(ctx, h.Clk, s.capacity, s.consumers, Batch{Size: s.size}, x.produce, x.consume)
		case "RunDrainTimeout":
			return RunDrainTimeout(ctx, h.Clk, s.drainTimeout, s.capacity, s.consumers, x.produce,
				func(ctx context.Context, v int) error { return x.consume(ctx, []int{v}) })
		}
		return Run(ctx, s.capacity, s.consumers, x.produce,
			func(ctx context.Context, v int) error { return x.consume(ctx, []int{v}) })
	}, katatest.Timeout(s.deadline))
	synctest.Wait()
	for _, st := range s.before {
		x.releasePicks(st)
		synctest.Wait()
	}
	// The deadline passes, and some calls return at the same instant.
	h.Clk.Add(s.deadline)
	x.releasePicks(s.together)
	synctest.Wait()
	x.releaseAll() // the calls that ignore their ctx
	if !call.Returns("the caller's deadline had passed, produce saw it and every consume call returned, but %s was "+
		"still waiting", s.variant) {
		return
	}
	stats, err, ok := call.Finish(s.variant)
	if !ok {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	type seen struct {
		who  string
		seen katatest.CtxSeen
	}
	all := []seen{{"produce", x.produceSeen}}
	for _, c := range x.calls {
		all = append(all, seen{fmt.Sprintf("the consume call for %v", c.items), c.seen})
	}
	for _, c := range all {
		if c.seen.Value != value {
			h.Errorf("the ctx %s got does not carry the caller's values (ctx.Value(key) is %v, want %q, which the "+
				"caller's ctx holds): give produce and consume a ctx derived from the caller's "+
				"(context.WithCancel(ctx)), which keeps its values (a request id, a trace), not one built on "+
				"context.Background()", c.who, c.seen.Value, value)
			return
		}
		if has := c.seen.LostDeadline(deadline, start); has != "" {
			h.Errorf("the caller's ctx has a deadline, %v after the start, but the ctx %s got has %s: give produce "+
				"and consume a ctx derived from the caller's (context.WithCancel(ctx)), which keeps its deadline, so "+
				"that when it passes their ctx.Err() is context.DeadlineExceeded; a ctx of Run's own "+
				"(context.WithoutCancel(ctx), context.Background()) that only forwards the caller's cancel loses the "+
				"deadline and ends with context.Canceled", s.deadline, c.who, has)
			return
		}
	}
	notDeadline := func(e error) bool { return !errors.Is(e, context.DeadlineExceeded) || errors.Is(e, context.Canceled) }
	for _, e := range x.putErrs {
		if x.produceEnd != nil && !errors.Is(e, x.produceEnd) {
			h.Errorf("the caller's deadline passed while put was blocked on a full queue, and put returned %s, but "+
				"ctx.Err() of the context produce got was %v: a stopped put returns that ctx.Err() (here the caller's "+
				"deadline, context.DeadlineExceeded), not an error of its own", testDescribe(e), x.produceEnd)
			return
		}
	}
	if notDeadline(err) {
		h.Errorf("the caller's ctx ended by its deadline and nobody cancelled, so its ctx.Err() is "+
			"context.DeadlineExceeded, but %s returned %s, which %s: after a stop by the caller, return the "+
			"caller's ctx.Err() as it is (context.DeadlineExceeded here), not the constant context.Canceled, and "+
			"not a reason of your own", s.variant, testDescribe(err),
			map[bool]string{true: "matches context.Canceled", false: "does not match context.DeadlineExceeded"}[errors.Is(err, context.Canceled)])
		return
	}
	if stats.Produced != x.accepted || stats.Produced != stats.Consumed+stats.Dropped {
		h.Errorf("%d puts returned nil before the caller's deadline stopped %s, which returned %+v: Produced "+
			"counts the puts that returned nil, and Produced == Consumed + Dropped", x.accepted, s.variant, stats)
	}
}

func testExploreDeadline(t *testing.T, variant string, checks int) {
	// Every consumer busy and produce blocked on a full queue as the
	// deadline passes, the calls honouring their ctx or not.
	katatest.Replay(t, []testDeadlineRun{
		{variant: variant, capacity: 1, consumers: 2, size: 1, items: 5, kinds: []int{testKindWrapped, testKindDeaf},
			deadline: time.Second, drainTimeout: time.Second},
		{variant: variant, capacity: 0, consumers: 1, size: 2, items: 1, kinds: []int{testKindBare},
			deadline: time.Millisecond, before: [][]int{{0}}},
	}, func(h *katatest.H, s testDeadlineRun) { s.play(h) })
	katatest.Explore(t, checks, testDrawDeadlineRun(variant), func(h *katatest.H, s testDeadlineRun) { s.play(h) })
}

func TestR3_ExploreTheCallersDeadlineReachesProduceAndConsume(t *testing.T) {
	// The caller's ctx carries a value and has a deadline: produce and
	// every consume call see both, and when the deadline passes, put and
	// Run return context.DeadlineExceeded, not context.Canceled.
	testExploreDeadline(t, "Run", 8)
}

func TestB1_ExploreTheCallersDeadlineReachesProduceAndConsume(t *testing.T) {
	testExploreDeadline(t, "RunBatches", 4)
}

func TestB2_ExploreTheCallersDeadlineReachesProduceAndConsume(t *testing.T) {
	testExploreDeadline(t, "RunDrainTimeout", 4)
}

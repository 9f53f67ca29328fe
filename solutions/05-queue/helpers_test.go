package queue

// Helpers shared by the hidden tests. They live in the package under test,
// next to the learner's code, so every package-level name starts with
// "test" to stay clear of the learner's own identifiers.

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

// testProducer puts 1, 2, 3, … up to limit and then returns err; it stops
// at the first put that fails and returns that put's error.
type testProducer struct {
	limit int
	err   error

	mu       sync.Mutex
	accepted int   // puts that returned nil
	putErr   error // what the failing put returned
	done     bool  // produce has returned
}

func (p *testProducer) produce(ctx context.Context, put func(int) error) error {
	defer func() {
		p.mu.Lock()
		p.done = true
		p.mu.Unlock()
	}()
	for i := 1; i <= p.limit; i++ {
		if err := put(i); err != nil {
			p.mu.Lock()
			p.putErr = err
			p.mu.Unlock()
			return err
		}
		p.mu.Lock()
		p.accepted++
		p.mu.Unlock()
	}
	return p.err
}

// state tells how many puts returned nil, what the failing put returned,
// and whether produce has returned.
func (p *testProducer) state() (accepted int, putErr error, done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted, p.putErr, p.done
}

// testConsumer records every item it gets; with a gate, each call then
// waits there until the gate is released or its ctx ends. It never fails:
// like a write that completes, a cancelled call still returns nil, so the
// consumer goes on to look for its next item.
type testConsumer struct {
	gate *katatest.Gate
	got  katatest.Recorder[int]
}

func (c *testConsumer) consume(ctx context.Context, v int) error {
	c.got.Add(v)
	if c.gate != nil {
		_ = c.gate.Hold(ctx)
	}
	return nil
}

// testStart runs Run on its own goroutine with a context the test cancels.
func testStart(h *katatest.H, capacity, consumers int, p *testProducer, c *testConsumer) *katatest.Call[Stats] {
	return katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, capacity, consumers, p.produce, c.consume) })
}

// testStillWaiting is what testEnd reports, after its situation, when Run
// is still waiting.
const testStillWaiting = "%s, Run was still waiting: once produce has returned and the queue is empty, every consumer " +
	"must exit (close the queue after the last put; a consumer stops when it is closed and empty) and Run " +
	"must return after waiting for them"

// testEnd collects Run once nothing holds it any more: produce has returned
// and the consumers are free. If Run is still waiting it reports that,
// after situation, stops the call and returns ok=false.
func testEnd(h *katatest.H, call *katatest.Call[Stats], situation string) (Stats, error, bool) {
	h.T.Helper()
	if !call.Returns(testStillWaiting, situation) {
		return Stats{}, nil, false
	}
	return call.Finish("Run")
}

// testBackpressure holds every consume and lets the producer put up to 20
// items: exactly capacity+consumers puts must return and the next block.
// Then it releases the consumers and expects every item consumed once.
func testBackpressure(h *katatest.H, capacity, consumers int) bool {
	t := h.T
	const limit = 20
	gate := katatest.NewGate()
	p := &testProducer{limit: limit}
	c := &testConsumer{gate: gate}
	call := testStart(h, capacity, consumers, p, c)
	if call.Broken() {
		return false
	}
	want := capacity + consumers
	what := fmt.Sprintf("with capacity %d and %d consumers held inside consume, exactly %d puts should return "+
		"(%d items in the consumers' hands, %d in the queue) and put %d should block",
		capacity, consumers, want, consumers, capacity, want+1)
	accepted, putErr, done := p.state()
	switch {
	case call.Returned():
		_, err := call.Result()
		t.Errorf("%s; instead Run returned (error: %v) after %d puts, with its consumers still inside consume", what, err, accepted)
	case putErr != nil:
		t.Errorf("%s; instead put %d failed with %q although nothing was cancelled: a full queue makes put wait, not fail",
			what, accepted+1, putErr)
	case done:
		t.Errorf("%s; instead all %d puts returned: put must block when the queue is full "+
			"(a channel of size capacity, and a send that waits)", what, limit)
	case accepted < want:
		t.Errorf("%s; only %d puts returned before put %d blocked, and %d consume calls were running: "+
			"start %d consumer goroutines that each take an item, and give the channel room for capacity items",
			what, accepted, accepted+1, gate.Waiting(), consumers)
	case accepted > want:
		t.Errorf("%s; %d puts returned before put %d blocked: something holds items beyond capacity + consumers "+
			"(a goroutine between put and the consumers holds one more; or the channel is bigger than capacity)",
			what, accepted, accepted+1)
	default:
		gate.Release()
		stats, err, ok := testEnd(h, call,
			fmt.Sprintf("capacity %d, %d consumers: after the consumers were released and all %d puts returned", capacity, consumers, limit))
		if !ok {
			return false
		}
		good := assert.NoError(t, err, "capacity %d, %d consumers: every item was consumed and produce returned nil: "+
			"Run must return nil", capacity, consumers)
		good = assert.Equal(t, limit, stats.Produced, "capacity %d, %d consumers: Stats.Produced counts the puts that returned nil",
			capacity, consumers) && good
		return assert.Equal(t, testSeq(1, limit), testSorted(c.got.All()), "capacity %d, %d consumers: "+
			"each accepted item must be consumed exactly once", capacity, consumers) && good
	}
	call.Stop()
	return false
}

// testMore says "1 more item" or "n more items".
func testMore(n int) string {
	if n == 1 {
		return "1 more item"
	}
	return fmt.Sprintf("%d more items", n)
}

// testSeq is from, from+1, …, to.
func testSeq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// testSorted returns a sorted copy.
func testSorted(s []int) []int {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// testPut calls put and recovers a panic, so a put that panics is reported
// as the learner's mistake instead of crashing the test binary.
func testPut(put func(int) error, v int) (err error, panicked any) {
	defer func() { panicked = recover() }()
	return put(v), nil
}

// testCount counts v in vs.
func testCount(vs []int, v int) int {
	n := 0
	for _, x := range vs {
		if x == v {
			n++
		}
	}
	return n
}

package queue

// B1 when produce returns because of a stop, while consumers that hold a
// partial batch are on their way back to the queue. After a stop a partial
// batch is dropped, the final flush included: here the queue is closed
// only because produce returned after the caller's cancel, so a consumer
// that finds it closed has not reached the end of a drain. A consumer that
// asked whether Run had stopped just before the cancel, and then meets the
// stop and the closed queue ready together in one select, must still drop
// its batch; one that takes the closed queue for the end of the drain
// hands its partial batch to consume after the stop.
//
// The window is the consumer's own, from its look at the stop to its
// select: no call of the test's lies in it, so the scenario stages what
// surrounds it. Every consumer takes one item, the first of its batch, and
// is held by the clock right after it made the batch's timer; the test
// lets them all go at once, and the caller cancels from the goroutine of
// the stopAt-th of them to come back from the clock, as its last act
// there. The scenario runs on one processor (GOMAXPROCS 1), and the
// schedule is shaken from the moment the consumers are let go (with a seed
// of the scenario's), so a consumer that came back earlier often yields
// just before its select and waits behind the others. At the cancel the
// yields are turned off (shake.Off), so that produce, which waits for
// nothing but its ctx, returns and the queue is closed before any consumer
// that was waiting there goes on. (A put blocked on a full queue would not
// do: a consumer that takes an item frees it before the cancel, and
// produce would then be the one waiting behind them.) Each such consumer
// then meets both ready, and its select picks either: a design that
// flushes on the closed queue hands consume a partial batch in about half
// of them, several in a scenario. A scenario misses it about once in 40,
// and eight are played. The clock never moves and no batch is full from
// one item, so a correct design hands consume no partial batch here, on
// any schedule. (Turning the yields off from a consumer's goroutine orders
// it before the others' later yields for the race detector: the other
// tests look for races.)

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
	"gokata/internal/katatest/shake"
)

// testStopClose is one RunBatches that the caller cancels as its consumers
// come back from making their batch timers.
type testStopClose struct {
	consumers, capacity int
	queued              int // items in the queue when the consumers are let go (at most capacity)
	size                int // Batch.Size: at least 2, so the one item each consumer took is a partial batch
	every               time.Duration
	stopAt              int    // the caller cancels as the stopAt-th consumer comes back from the clock
	schedule            uint64 // how the consumers yield once they are let go (shake.On)
	end                 int    // -1: produce returns ctx.Err() (or what a failed put said); else testProduceErrors[end]
}

func (s testStopClose) String() string {
	put := fmt.Sprintf("produce puts %s: each consumer takes one, the first of its batch, and is held right "+
		"after it made the batch's timer; %d wait in the queue", testItems(1, s.consumers+s.queued), s.queued)
	end := "ctx.Err()"
	if s.end >= 0 {
		end = testProduceErrors[s.end].how
	}
	return fmt.Sprintf("RunBatches(capacity %d, %d consumers, Batch{Size: %d, FlushEvery: %v}); %s; then the "+
		"consumers are let go together, and the caller cancels as the %s of them comes back from making its "+
		"timer; produce, waiting for its ctx to end, then returns %s; the clock stands still",
		s.capacity, s.consumers, s.size, s.every, put, testOrdinal(s.stopAt), end)
}

// testOrdinal says 1st, 2nd, 3rd, 4th…
func testOrdinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

func testDrawStopClose(r *rapid.T) testStopClose {
	var s testStopClose
	s.consumers = rapid.IntRange(12, 20).Draw(r, "consumers")
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.queued = rapid.IntRange(0, s.capacity).Draw(r, "items queued")
	s.size = rapid.OneOf(rapid.IntRange(2, 5), rapid.Just(math.MaxInt)).Draw(r, "Size")
	s.every = rapid.SampledFrom([]time.Duration{1, time.Millisecond, time.Second, time.Hour, testHuge}).Draw(r, "FlushEvery")
	// Late enough that several consumers came back before the cancel: each
	// is one chance to take the closed queue for the end of the drain.
	s.stopAt = rapid.IntRange(s.consumers*3/4, s.consumers).Draw(r, "the consumer whose return the cancel comes with")
	s.end = rapid.IntRange(-1, len(testProduceErrors)-1).Draw(r, "what produce returns")
	s.schedule = rapid.Uint64().Draw(r, "how the consumers yield")
	return s
}

// testTimerHold is the mock clock, except that whoever makes a timer
// (Timer, After, AfterFunc) waits right after making it until the test lets
// every maker go; the stopAt-th to come back then stops Run with the
// caller's cancel before it returns to the code.
type testTimerHold struct {
	*katatest.Clock
	open    chan struct{}
	release func() // lets every maker go, now and later
	stop    func() // the caller's cancel, with the yields turned off first

	mu      sync.Mutex
	back    int // makers that came back
	stopAt  int
	stopped bool
}

func (c *testTimerHold) Timer(d time.Duration) *clock.Timer {
	t := c.Clock.Timer(d)
	c.hold()
	return t
}

func (c *testTimerHold) After(d time.Duration) <-chan time.Time { return c.Timer(d).C }

func (c *testTimerHold) AfterFunc(d time.Duration, f func()) *clock.Timer {
	t := c.Clock.AfterFunc(d, f)
	c.hold()
	return t
}

func (c *testTimerHold) hold() {
	<-c.open
	c.mu.Lock()
	c.back++
	now := c.back == c.stopAt
	c.mu.Unlock()
	if now {
		c.Stop()
	}
}

// Stop makes the stop now unless it came already.
func (c *testTimerHold) Stop() {
	c.mu.Lock()
	stop := !c.stopped
	c.stopped = true
	c.mu.Unlock()
	if stop {
		c.stop()
	}
}

func (c *testTimerHold) Stopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// testFlushed is one batch consume got, and whether the stop had come.
type testFlushed struct {
	batch     []int
	afterStop bool
}

func (s testStopClose) play(h *katatest.H) {
	shake.Off() // until the consumers are held: nothing to shake there, and Settle is quick on a quiet bubble
	var call *katatest.Call[Stats]
	open := make(chan struct{})
	clk := &testTimerHold{Clock: h.Clk, open: open, release: sync.OnceFunc(func() { close(open) }), stopAt: s.stopAt,
		stop: func() {
			shake.Off() // produce returns and the queue closes before a consumer waiting at its select goes on
			call.Cancel()
		}}
	h.Own(clk.release)
	var (
		mu       sync.Mutex
		flushed  []testFlushed
		accepted atomic.Int64
		returned error // what produce returned
	)
	consume := func(ctx context.Context, b []int) error {
		after := clk.Stopped()
		mu.Lock()
		flushed = append(flushed, testFlushed{slices.Clone(b), after})
		mu.Unlock()
		return nil
	}
	total := s.consumers + s.queued
	produce := func(ctx context.Context, put func(int) error) (err error) {
		defer func() {
			mu.Lock()
			returned = err
			mu.Unlock()
		}()
		var perr error
		for v := 1; v <= total && perr == nil; v++ {
			if perr = put(v); perr == nil {
				accepted.Add(1)
			}
		}
		if perr == nil {
			<-ctx.Done() // the rest of the file waits: only the stop ends produce
			perr = ctx.Err()
		}
		if s.end >= 0 {
			return testProduceErrors[s.end].make()
		}
		return perr
	}
	b := Batch{Size: s.size, FlushEvery: s.every}
	call = katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return RunBatches(ctx, clk, s.capacity, s.consumers, b, produce, consume)
	})
	// Settle, not synctest.Wait: a design that makes its timers under a
	// lock the others need leaves them queued on it while one maker is
	// held. Nothing more can come then, and the makers are let go all the
	// same.
	_ = h.Settle()
	if call.Returned() && call.Panicked() {
		return
	}
	shake.On(s.schedule)
	clk.release()
	synctest.Wait()
	clk.Stop() // fewer than stopAt makers came back (a design that makes fewer timers): the cancel comes now
	if !call.Returns("the caller cancelled as the consumers came back from making their batch timers, and produce " +
		"returned after the cancel, yet RunBatches was still waiting: a stop ends everything at once") {
		return
	}
	stats, err, ok := call.Finish("RunBatches")
	if !ok {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	size := max(s.size, 1)
	handed := 0
	for _, f := range flushed {
		handed += len(f.batch)
	}
	for _, f := range flushed {
		if len(f.batch) >= size {
			continue
		}
		if f.afterStop {
			h.Errorf("RunBatches handed consume the partial batch %v (Size %d) after the caller had cancelled. After "+
				"a stop a partial batch is dropped, the final flush included: produce returned only because of the "+
				"cancel (it returned %s), so the queue was closed after the stop, and that close is no end of a "+
				"drain. A consumer whose select finds ctx.Done() and the closed queue ready together picks either: "+
				"ask whether Run has stopped after every receive, also after the one that finds the queue closed, "+
				"before the final flush", f.batch, s.size, testDescribe(returned))
		} else {
			h.Errorf("RunBatches handed consume the partial batch %v (Size %d, FlushEvery %v) before anything "+
				"stopped it, with the clock standing still and produce still running: a partial batch is "+
				"flushed only FlushEvery after its first item, or by the final flush once produce has returned",
				f.batch, s.size, s.every)
		}
		return
	}
	if !errors.Is(err, context.Canceled) {
		h.Errorf("the caller cancelled, and produce returned %s only afterwards: RunBatches must return ctx.Err(), "+
			"context.Canceled, the first stop; it returned %s", testDescribe(returned), testDescribe(err))
		return
	}
	n := int(accepted.Load())
	if want := (Stats{Produced: n, Consumed: handed, Dropped: n - handed}); stats != want {
		h.Errorf("%d puts returned nil and %d items were handed to consume, then the caller cancelled: RunBatches "+
			"must return %+v (a partial batch dropped at the stop counts its items as Dropped); it returned %+v",
			n, handed, want, stats)
	}
}

func TestB1_ExploreAQueueClosedAfterAStopIsNoEndOfTheDrain(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	katatest.Explore(t, 8, testDrawStopClose, func(h *katatest.H, s testStopClose) { s.play(h) })
}

package queue

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

func TestB1_BatchesFlushBySizeAfterFlushEveryAndAtTheEnd(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const ms = time.Millisecond
		var batches katatest.Recorder[[]int]
		final := katatest.NewGate()
		consume := func(ctx context.Context, b []int) error {
			batches.Add(slices.Clone(b))
			if slices.Contains(b, 10) { // the final batch waits until the test lets it go
				return final.Hold(ctx)
			}
			return nil
		}
		groups := make(chan []int) // the test hands the producer its items, a group at a time
		produce := func(ctx context.Context, put func(int) error) error {
			for {
				select {
				case g, ok := <-groups:
					if !ok {
						return nil
					}
					for _, v := range g {
						if err := put(v); err != nil {
							return err
						}
					}
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
			return RunBatches(ctx, h.Clk, 10, 1, Batch{Size: 3, FlushEvery: 100 * ms}, produce, consume)
		})
		if call.Broken() {
			return
		}
		send := func(g ...int) bool {
			select {
			case groups <- g:
				synctest.Wait()
				return true
			case <-call.Done():
				t.Errorf("RunBatches returned before produce had put its items")
				return false
			}
		}
		var want [][]int
		expect := func(when, why string, flushed ...[]int) bool {
			want = append(want, flushed...)
			if !assert.Equal(t, want, batches.All(), "Size 3, FlushEvery 100ms, one consumer: the batches %s; %s", when, why) {
				call.Stop()
				return false
			}
			return true
		}

		if !send(1, 2, 3, 4, 5, 6, 7) || !expect("once items 1…7 were put at 0ms",
			"a batch is flushed as soon as it holds Size items, and [7] waits for FlushEvery", []int{1, 2, 3}, []int{4, 5, 6}) {
			return
		}
		h.Advance(100*ms - 1)
		if !expect("1ns before 100ms", "a partial batch is flushed FlushEvery after its first item, not earlier") {
			return
		}
		h.Advance(1)
		if !expect("at 100ms", "a partial batch is flushed FlushEvery after its first item was taken "+
			"(a fresh clk.Timer for each batch)", []int{7}) {
			return
		}
		h.Advance(30 * ms)
		if !send(8) {
			return
		}
		h.Advance(60 * ms)
		if !send(9) {
			return
		}
		h.Advance(40*ms - 1)
		if !expect("1ns before 230ms (item 8 came at 130ms, item 9 at 190ms)", "the timer of a batch starts "+
			"with its first item, 8: a ticker running since Run started would have flushed at 200ms") {
			return
		}
		h.Advance(1)
		if !expect("at 230ms (item 8 came at 130ms, item 9 at 190ms)", "a partial batch is flushed FlushEvery "+
			"after its first item; a timer restarted by each new item would wait until 290ms", []int{8, 9}) {
			return
		}
		if !send(10, 11) {
			return
		}
		close(groups) // produce returns
		synctest.Wait()
		if !expect("when produce returned with [10 11] in the last batch", "once the producer has finished and "+
			"the queue is empty, flush what is left at once: the final flush", []int{10, 11}) {
			return
		}
		if call.Returned() {
			t.Errorf("RunBatches returned while consume calls were still running (the final batch): wait for " +
				"every consumer (sync.WaitGroup) before returning")
			call.Stop()
			return
		}
		final.Release()
		stats, err, ok := testEnd(h, call, "produce returned and the final batch was consumed, yet")
		if !ok {
			return
		}
		assert.NoError(t, err, "every batch was consumed: RunBatches must return nil")
		assert.Equal(t, Stats{Produced: 11, Consumed: 11, Dropped: 0}, stats, "RunBatches: Stats count items, not batches")
	})
}

// testBatchLog records the batches consume got: a copy of each as it came,
// and the slice itself, which consume may keep.
type testBatchLog struct {
	mu     sync.Mutex
	copies [][]int
	kept   [][]int
}

func (l *testBatchLog) Add(b []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.copies = append(l.copies, slices.Clone(b))
	l.kept = append(l.kept, b)
}

// All returns the batches as consume got them.
func (l *testBatchLog) All() [][]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.copies)
}

// Kept returns the slices consume got, as they read now.
func (l *testBatchLog) Kept() [][]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.kept)
}

// testBatches starts RunBatches with one consumer that records its batches;
// send hands the producer some items and lets the code settle, and end
// makes produce return (only it does; the test owns it, so a stop calls it
// too).
func testBatches(h *katatest.H, b Batch) (call *katatest.Call[Stats],
	batches *testBatchLog, send func(...int) bool, end func()) {
	batches = &testBatchLog{}
	consume := func(ctx context.Context, b []int) error {
		batches.Add(b)
		return nil
	}
	groups := make(chan []int)
	end = sync.OnceFunc(func() { close(groups) })
	h.Own(end)
	produce := func(ctx context.Context, put func(int) error) error {
		for g := range groups { // until the test ends it, even after a stop
			for _, v := range g {
				if err := put(v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	call = katatest.Start(h, func(ctx context.Context) (Stats, error) { return RunBatches(ctx, h.Clk, 10, 1, b, produce, consume) })
	send = func(g ...int) bool {
		select {
		case groups <- g:
			synctest.Wait()
			return true
		case <-call.Done():
			h.T.Errorf("RunBatches returned before produce had put its items")
			return false
		}
	}
	return call, batches, send, end
}

func TestB1_FlushEveryZeroMeansNoTimer(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		call, batches, send, end := testBatches(h, Batch{Size: 3})
		if call.Broken() {
			return
		}
		if !send(1) || !send(2) {
			return
		}
		h.Advance(time.Hour)
		if got := batches.All(); len(got) > 0 {
			t.Errorf("Size 3, FlushEvery 0, items 1 and 2 put one at a time: the batches %v were flushed before the "+
				"batch was full; FlushEvery 0 means no timer at all (a timer of 0 fires at once)", got)
			call.Stop() // it ends produce too: produce returns only then
			return
		}
		if !send(3, 4) {
			return
		}
		end()
		stats, err, ok := testEnd(h, call, "produce returned and nothing held the consumer, yet")
		if !ok {
			return
		}
		assert.NoError(t, err, "every batch was consumed: RunBatches must return nil")
		assert.Equal(t, [][]int{{1, 2, 3}, {4}}, batches.All(), "Size 3, FlushEvery 0: a batch by size, then the final flush")
		assert.Equal(t, Stats{Produced: 4, Consumed: 4, Dropped: 0}, stats, "RunBatches: Stats count items, not batches")
		for i, b := range batches.Kept() {
			if got := batches.All()[i]; !slices.Equal(b, got) {
				t.Errorf("consume kept the slice of batch %d, %v, and once RunBatches returned it read %v: consume "+
					"may keep the slice it gets, so hand it a fresh slice for every batch (batch = nil after a "+
					"flush, not batch[:0], which writes the next items over the kept ones)", i+1, got, b)
				break
			}
		}
	})
}

func TestB1_AStopDropsThePartialBatch(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		call, batches, send, end := testBatches(h, Batch{Size: 5, FlushEvery: time.Second})
		if call.Broken() {
			return
		}
		if !send(1, 2, 3) {
			return
		}
		if !call.Reaches(len(batches.All()) == 0, "precondition: items 1, 2 and 3 wait in a partial batch (Size 5, FlushEvery 1s)") {
			return
		}
		call.Cancel()
		synctest.Wait() // the consumer has stopped; produce returns only now
		end()
		if instant, _ := call.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("a cancel with a partial batch [1 2 3], then produce returned: RunBatches must return at once; " +
				"it was still waiting")
			call.Stop()
			return
		}
		stats, err, ok := call.Finish("RunBatches")
		if !ok {
			return
		}
		assert.Empty(t, batches.All(), "after a cancel the partial batch is dropped, not handed to consume")
		assert.ErrorIs(t, err, context.Canceled, "a cancel: RunBatches must return ctx.Err()")
		assert.Equal(t, Stats{Produced: 3, Consumed: 0, Dropped: 3}, stats, "cancelled with a partial batch of 3 "+
			"items: they were taken from the queue but never handed to consume, so they count as Dropped; count "+
			"Consumed when a batch is handed to consume, not when an item is taken")
	})
}

func TestB1_EachBatchGetsAFreshTimer(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const s = time.Second
		call, batches, send, end := testBatches(h, Batch{Size: 3, FlushEvery: 10 * s})
		if call.Broken() {
			return
		}
		if !send(1, 2, 3) { // a full batch at 0s
			return
		}
		h.Advance(8 * s)
		if !send(4) { // the first item of the next batch, at 8s
			return
		}
		h.Advance(2 * s)
		if got := batches.All(); len(got) > 1 {
			t.Errorf("Size 3, FlushEvery 10s: [1 2 3] came at 0s and was flushed full; item 4 came at 8s, but "+
				"its batch %v was flushed at 10s, 2s after its first item and 10s after that of [1 2 3]; want it at 18s: "+
				"stop the timer when a batch is flushed by Size, and start a fresh clk.Timer with the first item "+
				"of each batch", got[1])
			call.Stop()
			return
		}
		h.Advance(8*s - 1)
		if got := batches.All(); len(got) > 1 {
			t.Errorf("Size 3, FlushEvery 10s: item 4 came at 8s, but its batch %v was flushed before 18s; want "+
				"it FlushEvery after its first item: a fresh clk.Timer with the first item of each batch", got[1])
			call.Stop()
			return
		}
		h.Advance(1)
		if !assert.Equal(t, [][]int{{1, 2, 3}, {4}}, batches.All(), "Size 3, FlushEvery 10s: [1 2 3] full at 0s, "+
			"then item 4 at 8s: its batch is flushed at 18s, FlushEvery after its first item") {
			call.Stop()
			return
		}
		end()
		if _, err, ok := testEnd(h, call, "produce returned and nothing held the consumer, yet"); ok {
			assert.NoError(t, err, "every batch was consumed: RunBatches must return nil")
		}
	})
}

// testStopped reports a RunDrainTimeout that stopped before its drain
// deadline, at the moment when.
func testStopped(h *katatest.H, call *katatest.Call[Stats], gate *katatest.Gate, when string) bool {
	var err error
	if call.Returned() {
		_, err = call.Result()
	}
	switch {
	case call.Returned() && !errors.Is(err, ErrDrainTimeout):
		h.T.Errorf("%s, RunDrainTimeout returned (error: %v) while consume calls were still running: wait for "+
			"every consumer (sync.WaitGroup); only the drain deadline, 1s after produce returns, may cut the "+
			"drain short", when, err)
	case call.Returned() || gate.Cancelled() > 0:
		h.T.Errorf("%s, RunDrainTimeout with a 1s drain deadline had already stopped the consumers (consume calls "+
			"cancelled: %d): the deadline is 1s after produce returns; it does not start with Run", when, gate.Cancelled())
	default:
		return false
	}
	call.Stop()
	return true
}

func TestB2_DrainDeadlineStopsTheConsumersAndCountsTheDropped(t *testing.T) {
	// At the deadline 48 consumers return from consume while items are
	// queued, as in R3: a consumer that does not check ctx first takes one
	// with probability 1/2 each, so the bubble misses that mistake with
	// probability 2^-48 ≈ 3.6e-15.
	katatest.Run(t, func(h *katatest.H) {
		const consumers = testStopConsumers
		gate := katatest.NewGate()
		c := &testConsumer{gate: gate}
		produce := func(ctx context.Context, put func(int) error) error {
			for i := 1; i <= consumers+3; i++ {
				if err := put(i); err != nil {
					return err
				}
			}
			select { // the rest of the production takes 3s
			case <-h.Clk.After(3 * time.Second):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
			return RunDrainTimeout(ctx, h.Clk, time.Second, 4, consumers, produce, c.consume) // consumers+3 puts fit in capacity 4 + consumers: no put blocks
		})
		if call.Broken() {
			return
		}
		h.Advance(2 * time.Second)
		if testStopped(h, call, gate, "2s into a 3s production") {
			return
		}
		h.Advance(time.Second) // produce returns
		h.Advance(time.Second - 1)
		if testStopped(h, call, gate, "produce returned at 3s; 1ns before 4s") {
			return
		}
		h.Advance(1)
		if !call.Returns("1s after produce returned, with %d consume calls still running and 3 items queued, "+
			"RunDrainTimeout was still waiting: at the drain deadline cancel the consumers' ctx, wait for "+
			"them, and return an error matching ErrDrainTimeout", consumers) {
			return
		}
		stats, err, ok := call.Finish("RunDrainTimeout")
		if !ok {
			return
		}
		if errors.Is(err, context.Canceled) && !errors.Is(err, ErrDrainTimeout) {
			t.Errorf("the drain deadline (1s after produce returned, with %d consume calls running) came first, so "+
				"RunDrainTimeout must return an error matching ErrDrainTimeout; it returned %s, what the consumers "+
				"made of the cancel the deadline sent them: record ErrDrainTimeout as the run's error before you "+
				"cancel the consumers, so that what comes after it does not count first", consumers, testDescribe(err))
			return
		}
		assert.ErrorIs(t, err, ErrDrainTimeout, "the drain deadline passed: the error must match ErrDrainTimeout")
		if got := c.got.All(); len(got) > consumers {
			t.Errorf("after the drain deadline, consume was called for %s (%v): once the deadline "+
				"has passed a consumer must take nothing new; check ctx.Err() before taking the next item",
				testMore(len(got)-consumers), got[consumers:])
			return
		}
		assert.Equal(t, consumers, gate.Cancelled(), "at the drain deadline the running consume calls must see their ctx cancelled")
		assert.Equal(t, Stats{Produced: consumers + 3, Consumed: consumers, Dropped: 3}, stats, "at the drain deadline %d items "+
			"were in the consumers' hands and 3 queued: the queued ones are dropped, and Produced = Consumed + Dropped", consumers)
	})
}

func TestB2_DrainThatEndsInTimeReturnsNil(t *testing.T) {
	// Repeated: a timer left to a goroutine that outlives the call may be
	// stopped by it a moment after the return, before the test looks.
	katatest.Repeat(t, 8, func(h *katatest.H) {
		gate := katatest.NewGate()
		c := &testConsumer{gate: gate}
		p := &testProducer{limit: 5}
		var running int // timers still running the instant RunDrainTimeout returned
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
			stats, err := RunDrainTimeout(ctx, h.Clk, time.Second, 4, 2, p.produce, c.consume)
			running = h.Clk.StopRunning() // right away: nothing else has run since
			return stats, err
		})
		if call.Broken() {
			return
		}
		h.Advance(time.Second - 1)
		if testStopped(h, call, gate, "produce returned at once; 1ns before 1s") {
			return
		}
		gate.Release()
		stats, err, ok := testEnd(h, call, "the consumers were released 1ns before the drain deadline, yet")
		if !ok {
			return
		}
		assert.NoError(t, err, "the drain ended 1ns before its deadline: RunDrainTimeout must return nil")
		assert.Equal(t, Stats{Produced: 5, Consumed: 5, Dropped: 0}, stats, "the drain ended in time: Stats")
		if running > 0 {
			t.Errorf("the drain ended 1ns before its 1s deadline, and when RunDrainTimeout returned, %d timer(s) it "+
				"made on clk were still running: the drain is over, so stop its timer before you return (t := "+
				"clk.Timer(d); defer t.Stop()); a timer never stopped, or stopped later by a goroutine that outlives "+
				"the call, is one more pending timer per call in a long-lived service", running)
			return
		}
		if moved := h.PendingTimer(); moved != 0 {
			t.Errorf("the drain ended 1ns before its 1s deadline and RunDrainTimeout returned, but its drain timer "+
				"was still pending on clk (it would fire %v later, into the void; one more pending timer per call "+
				"in a long-lived service): stop the timer once the drain is over (t := clk.Timer(d); defer t.Stop())",
				moved)
		}
	})
}

func TestB2_NoDeadlineWhenDrainTimeoutIsZero(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		for _, timeout := range []time.Duration{0, -time.Second} {
			gate := katatest.NewGate()
			c := &testConsumer{gate: gate}
			p := &testProducer{limit: 5}
			call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
				return RunDrainTimeout(ctx, h.Clk, timeout, 4, 2, p.produce, c.consume)
			})
			if call.Broken() {
				return
			}
			h.Advance(time.Hour)
			if call.Returned() && gate.Cancelled() == 0 {
				_, err := call.Result()
				if !errors.Is(err, ErrDrainTimeout) {
					t.Errorf("RunDrainTimeout with drainTimeout %v returned (error: %v) while consume calls were still "+
						"running: wait for every consumer (sync.WaitGroup)", timeout, err)
					call.Stop()
					return
				}
			}
			if call.Returned() || gate.Cancelled() > 0 {
				t.Errorf("RunDrainTimeout with drainTimeout %v, an hour into the drain: it had already stopped the "+
					"consumers (consume calls cancelled: %d, returned: %v); drainTimeout <= 0 means no deadline, "+
					"so do not start a timer", timeout, gate.Cancelled(), call.Returned())
				call.Stop()
				return
			}
			gate.Release()
			stats, err, ok := testEnd(h, call, fmt.Sprintf("drainTimeout %v: the consumers were released, yet", timeout))
			if !ok {
				return
			}
			assert.NoError(t, err, "drainTimeout %v means no deadline: the drain ended, so RunDrainTimeout returns nil", timeout)
			assert.Equal(t, Stats{Produced: 5, Consumed: 5, Dropped: 0}, stats, "drainTimeout %v: a complete drain", timeout)
		}
	})
}

func TestB2_AtTheDeadlineRunStillWaitsForTheConsumeInFlight(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		gate := katatest.NewGate()
		consume := func(ctx context.Context, v int) error {
			return gate.Hold(context.Background()) // a write that ignores its ctx
		}
		produce := func(ctx context.Context, put func(int) error) error { return put(1) }
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
			return RunDrainTimeout(ctx, h.Clk, time.Second, 4, 1, produce, consume)
		})
		if call.Broken() {
			return
		}
		h.Advance(time.Second) // the drain deadline passes while item 1 is being consumed
		if call.Returned() {
			t.Errorf("the drain deadline passed while a consume that ignores its ctx was still running, and " +
				"RunDrainTimeout returned: cancel the consumers' ctx at the deadline, then wait for every consume " +
				"in flight to return — Run returns once every consumer has returned, or the caller closes what " +
				"the consume still uses")
			gate.Release()
			return
		}
		gate.Release()
		synctest.Wait()
		stats, err, ok := call.Finish("RunDrainTimeout")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, ErrDrainTimeout, "the drain deadline passed: the error must match ErrDrainTimeout")
		assert.Equal(t, Stats{Produced: 1, Consumed: 1}, stats, "item 1 was in a consumer's hands at the deadline")
	})
}

// testSmallBatch is a RunBatches whose Size is below 1, which means 1.
type testSmallBatch struct {
	size       int
	flushEvery time.Duration
	capacity   int
	consumers  int
	items      int
}

func (s testSmallBatch) String() string {
	return fmt.Sprintf("RunBatches(capacity %d, %d consumer(s), Batch{Size: %d, FlushEvery: %v}); produce puts items "+
		"1…%d, then waits until the test lets it return; the clock stands still", s.capacity, s.consumers, s.size,
		s.flushEvery, s.items)
}

func testDrawSmallBatch(r *rapid.T) testSmallBatch {
	var s testSmallBatch
	s.size = rapid.SampledFrom([]int{0, 0, -1, -7, math.MinInt}).Draw(r, "Size")
	s.flushEvery = rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second}).Draw(r, "FlushEvery")
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
	s.items = rapid.IntRange(s.consumers+1, 7).Draw(r, "items") // some consumer takes two or more
	return s
}

func (s testSmallBatch) play(h *katatest.H) {
	batches := &testBatchLog{}
	consume := func(ctx context.Context, b []int) error {
		batches.Add(b)
		return nil
	}
	end := make(chan struct{})
	release := sync.OnceFunc(func() { close(end) })
	h.Own(release)
	produce := func(ctx context.Context, put func(int) error) error {
		for v := 1; v <= s.items; v++ {
			if err := put(v); err != nil {
				return err
			}
		}
		select {
		case <-end:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b := Batch{Size: s.size, FlushEvery: s.flushEvery}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return RunBatches(ctx, h.Clk, s.capacity, s.consumers, b, produce, consume)
	})
	if call.Broken() {
		return
	}
	bad := func(got [][]int) bool {
		return slices.ContainsFunc(got, func(b []int) bool { return len(b) != 1 })
	}
	got := batches.All()
	if n := len(got); n != s.items || bad(got) {
		h.Errorf("Batch{Size: %d, FlushEvery: %v}, %d consumer(s): produce put items 1…%d and, with the clock "+
			"standing still and produce not yet returned, consume had got the batches %v: a Size below 1 means 1, so "+
			"each item is a batch of its own, handed to consume as soon as a consumer takes it. Reading Size <= 0 as "+
			"\"no size limit\" leaves the items waiting for FlushEvery or the final flush: clamp it, max(b.Size, 1)",
			s.size, s.flushEvery, s.consumers, s.items, got)
		call.Stop()
		return
	}
	release()
	stats, err, ok := testEnd(h, call, "produce returned and every item had been consumed, yet")
	if !ok {
		return
	}
	got = batches.All()
	var items []int
	for _, b := range got {
		items = append(items, b...)
	}
	if bad(got) || !slices.Equal(testSorted(items), testSeq(1, s.items)) {
		h.Errorf("Batch{Size: %d}: RunBatches handed consume the batches %v for items 1…%d; want each item once, in a "+
			"batch of its own (a Size below 1 means 1)", s.size, got, s.items)
		return
	}
	assert.NoError(h, err, "every batch was consumed: RunBatches must return nil")
	assert.Equal(h, Stats{Produced: s.items, Consumed: s.items}, stats, "Stats count items, not batches")
}

func TestB1_ExploreASizeBelowOneMeansOne(t *testing.T) {
	katatest.Explore(t, 6, testDrawSmallBatch, func(h *katatest.H, s testSmallBatch) { s.play(h) })
}

// testHugeBatch is a RunBatches whose Size no batch reaches: a caller's way
// to say "flush by FlushEvery and at the end only".
type testHugeBatch struct {
	size       int
	flushEvery time.Duration
	capacity   int
	consumers  int
	rounds     []int // items put at once in each round; FlushEvery passes between rounds when it can
}

func (s testHugeBatch) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "RunBatches(capacity %d, %d consumer(s), Batch{Size: %d, FlushEvery: %v})", s.capacity, s.consumers,
		s.size, s.flushEvery)
	next := 1
	for _, n := range s.rounds {
		fmt.Fprintf(&b, "; produce puts %s at once", testItems(next, n))
		if s.flushEvery > 0 && s.flushEvery < time.Hour {
			fmt.Fprintf(&b, ", the clock moves %v, then 1ns", s.flushEvery-1)
		}
		next += n
	}
	b.WriteString("; then produce returns")
	return b.String()
}

func testDrawHugeBatch(r *rapid.T) testHugeBatch {
	var s testHugeBatch
	// Sizes that no slice of ints can hold: make([]int, 0, Size) panics.
	s.size = rapid.OneOf(rapid.SampledFrom([]int{math.MaxInt, math.MaxInt - 1, 1 << 62, 1 << 50}),
		rapid.IntRange(1<<46, math.MaxInt)).Draw(r, "Size")
	s.flushEvery = rapid.SampledFrom([]time.Duration{0, time.Millisecond, 50 * time.Millisecond, testHuge, 1 << 62}).Draw(r, "FlushEvery")
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.consumers = rapid.IntRange(1, 3).Draw(r, "consumers")
	s.rounds = rapid.SliceOfN(rapid.IntRange(1, 6), 1, 2).Draw(r, "rounds")
	return s
}

func (s testHugeBatch) play(h *katatest.H) {
	batches := &testBatchLog{}
	consume := func(ctx context.Context, b []int) error {
		batches.Add(b)
		return nil
	}
	groups := make(chan []int)
	end := sync.OnceFunc(func() { close(groups) })
	h.Own(end)
	produce := func(ctx context.Context, put func(int) error) error {
		for g := range groups {
			for _, v := range g {
				if err := put(v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	b := Batch{Size: s.size, FlushEvery: s.flushEvery}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return RunBatches(ctx, h.Clk, s.capacity, s.consumers, b, produce, consume)
	})
	if call.Broken() {
		return
	}
	timed := s.flushEvery > 0 && s.flushEvery < time.Hour // a timer that the test sees fire
	flushed := func() []int {
		var items []int
		for _, b := range batches.All() {
			items = append(items, b...)
		}
		return testSorted(items)
	}
	next := 1
	var want []int // the items flushed so far: by their timers only
	for _, n := range s.rounds {
		g := testSeq(next, next+n-1)
		select {
		case groups <- g:
		case <-call.Done():
			h.Errorf("RunBatches returned before produce had put its items")
			return
		}
		synctest.Wait()
		stood := time.Duration(0)
		if timed {
			stood = s.flushEvery - 1
			h.Advance(stood)
		}
		if got := flushed(); !slices.Equal(got, want) {
			h.Errorf("Batch{Size: %d, FlushEvery: %v}: produce put items %d…%d and the clock stood %v after that, yet "+
				"consume had got the batches %v: no batch holds Size items, and FlushEvery has not passed since their "+
				"first item, so they must wait (a huge Size is a caller's way to say \"flush by time and at the end "+
				"only\"; do not allocate or loop by Size)", s.size, s.flushEvery, next, next+n-1, stood, batches.All())
			call.Stop()
			return
		}
		next += n
		if timed {
			h.Advance(1)
			want = testSeq(1, next-1)
			if got := flushed(); !slices.Equal(got, want) {
				h.Errorf("Batch{Size: %d, FlushEvery: %v}: items 1…%d were taken at once, and FlushEvery later consume "+
					"had got %v: each consumer flushes its partial batch FlushEvery after its first item, whatever Size is",
					s.size, s.flushEvery, next-1, batches.All())
				call.Stop()
				return
			}
		}
	}
	end()
	stats, err, ok := testEnd(h, call, "produce returned and nothing held the consumers, yet")
	if !ok {
		return
	}
	if got := flushed(); !slices.Equal(got, testSeq(1, next-1)) || slices.ContainsFunc(batches.All(), func(b []int) bool { return len(b) == 0 }) {
		h.Errorf("Batch{Size: %d, FlushEvery: %v}: RunBatches handed consume the batches %v for items 1…%d; want each "+
			"item once, and no empty batch: what is left is flushed once the producer has finished", s.size,
			s.flushEvery, batches.All(), next-1)
		return
	}
	assert.NoError(h, err, "every batch was consumed: RunBatches must return nil")
	assert.Equal(h, Stats{Produced: next - 1, Consumed: next - 1}, stats, "Stats count items, not batches")
}

func TestB1_ExploreAHugeSizeFlushesByTimeAndAtTheEnd(t *testing.T) {
	katatest.Explore(t, 6, testDrawHugeBatch, func(h *katatest.H, s testHugeBatch) { s.play(h) })
}

package queue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/internal/katatest"
)

func TestR1_PutBlocksWhenTheQueueIsFull(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		for _, tc := range []struct{ capacity, consumers int }{{3, 2}, {1, 4}} {
			if !testBackpressure(h, tc.capacity, tc.consumers) {
				return
			}
		}
	})
}

func TestR2_DrainsEveryAcceptedItemBeforeReturning(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		gate := katatest.NewGate()
		p := &testProducer{limit: 5}
		c := &testConsumer{gate: gate}
		call := testStart(h, 2, 3, p, c)
		if call.Broken() {
			return
		}
		_, _, done := p.state()
		if !call.Reaches(done, "precondition: with capacity 2 and 3 consumers, 5 puts return without blocking (R1)") {
			return
		}
		if call.Returned() {
			t.Errorf("produce returned after 5 puts, and Run returned while consume calls were still running " +
				"and 2 items waited in the queue: it must let the consumers drain the queue and wait for every " +
				"one of them (sync.WaitGroup) before it returns")
			call.Stop()
			return
		}
		gate.Release()
		stats, err, ok := testEnd(h, call, "produce returned after 5 puts and the consumers were released, yet")
		if !ok {
			return
		}
		assert.NoError(t, err, "every item was consumed and produce returned nil: Run must return nil")
		assert.Equal(t, []int{1, 2, 3, 4, 5}, testSorted(c.got.All()), "after produce returned, every accepted item "+
			"must be consumed exactly once: the 3 in the consumers' hands and the 2 still queued")
		assert.Equal(t, Stats{Produced: 5, Consumed: 5, Dropped: 0}, stats, "a complete drain: Stats")
		assert.Zero(t, gate.Cancelled(), "produce returned nil: the consumers' ctx must not be cancelled during the drain")
	})
}

func TestR2_ProducerErrorStillDrains(t *testing.T) {
	// Any error of produce's, those that match a context error of its own
	// (its own read timeout, its source closed) too: nobody cancelled Run.
	for _, errSource := range []error{
		errors.New("read records: unexpected EOF"),
		fmt.Errorf("read records: %w", context.DeadlineExceeded),
		fmt.Errorf("read records: source closed: %w", context.Canceled),
	} {
		testProducerErrorStillDrains(t, errSource)
	}
}

func testProducerErrorStillDrains(t *testing.T, errSource error) {
	katatest.Run(t, func(h *katatest.H) {
		gate := katatest.NewGate()
		c := &testConsumer{gate: gate}
		fail := make(chan struct{})
		produce := func(ctx context.Context, put func(int) error) error {
			for i := 1; i <= 3; i++ {
				if err := put(i); err != nil {
					return err
				}
			}
			<-fail
			return errSource
		}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, 2, 2, produce, c.consume) })
		if call.Broken() {
			return
		}
		if !call.Reaches(gate.Waiting() == 2, "precondition: with capacity 2 and 2 consumers, 3 puts return "+
			"without blocking (R1), and both consumers are inside consume (consume calls held: %d)", gate.Waiting()) {
			return
		}
		close(fail) // produce returns errSource
		synctest.Wait()
		switch {
		case gate.Cancelled() > 0:
			t.Errorf("produce failed after 3 puts with %q, and Run then cancelled %d consume calls: the 3 accepted "+
				"items must still be consumed; a producer error ends production like a normal return, only a "+
				"cancel of Run's ctx or a consumer error stops the consumers%s", errSource, gate.Cancelled(),
				testOwnCtxError(errSource))
		case call.Returned():
			t.Errorf("produce failed after 3 puts with %q, and Run returned while consume calls were still "+
				"running: a producer error ends production like a normal return, so the consumers drain the queue "+
				"and Run waits for every one of them (sync.WaitGroup) before it returns%s", errSource,
				testOwnCtxError(errSource))
		}
		if t.Failed() {
			call.Stop()
			return
		}
		gate.Release()
		stats, err, ok := testEnd(h, call, "produce failed after 3 puts and the consumers were released, yet")
		if !ok {
			return
		}
		assert.ErrorIs(t, err, errSource, "produce failed: after the drain Run must return its error")
		assert.Equal(t, []int{1, 2, 3}, testSorted(c.got.All()), "produce failed after 3 puts: the accepted items "+
			"must still be consumed exactly once")
		assert.Equal(t, Stats{Produced: 3, Consumed: 3, Dropped: 0}, stats, "a producer error, then a complete drain: Stats")
	})
}

func TestR3_CancelStopsProducerAndConsumers(t *testing.T) {
	// testStopConsumers consumers return from consume at the cancel while
	// the queue is full. Each then meets a select on ctx.Done() and the
	// queue with both ready, as long as nobody took a queued item (which is
	// the mistake showing): a consumer that does not check ctx first takes
	// one with probability 1/2, independently of the others, so the bubble
	// misses that mistake with probability 2^-48 ≈ 3.6e-15. (With 6
	// consumers a bubble missed it 1 time in 64 and needed many fresh
	// bubbles, each costing more than dozens of consumers.)
	katatest.Run(t, func(h *katatest.H) {
		const consumers = testStopConsumers
		gate := katatest.NewGate()
		p := &testProducer{limit: 100}
		c := &testConsumer{gate: gate}
		call := testStart(h, 3, consumers, p, c)
		if call.Broken() {
			return
		}
		accepted, _, done := p.state()
		if !call.Reaches(!(done || call.Returned()), "precondition: with every consumer held, put blocks (R1)") {
			return
		}
		if !call.Reaches(gate.Waiting() == consumers, "precondition: every consumer is inside consume (consume calls held: %d)", gate.Waiting()) {
			return
		}

		call.Cancel()
		if instant, _ := call.ReturnsAtOnce(time.Second); !instant {
			_, putErr, done := p.state()
			t.Errorf("after the cancel Run must return at once; it was still waiting (the blocked put had "+
				"returned: %v, error %v; consume calls still running: %d): put must select on the queue and "+
				"ctx.Done() together, and consumers must stop when ctx is done", done, putErr, gate.Waiting())
			call.Stop()
			return
		}
		stats, err, ok := call.Finish("Run")
		if !ok {
			return
		}
		_, putErr, _ := p.state()
		assert.ErrorIs(t, putErr, context.Canceled, "the put blocked on the full queue must return ctx.Err() "+
			"when ctx is cancelled (got %v)", putErr)
		assert.ErrorIs(t, err, context.Canceled, "after a cancel Run must return ctx.Err()")
		if got := c.got.All(); len(got) > consumers {
			t.Errorf("after the cancel, consume was called for %s (%v): once ctx is done a consumer "+
				"must take nothing new; a select on ctx.Done() and the queue picks at random when both are "+
				"ready, so check ctx.Err() before taking the next item (and `for v := range ch` ignores ctx)",
				testMore(len(got)-consumers), got[consumers:])
			return
		}
		assert.Equal(t, consumers, gate.Cancelled(), "after the cancel the running consume calls must see their ctx cancelled")
		assert.Equal(t, Stats{Produced: accepted, Consumed: consumers, Dropped: accepted - consumers}, stats,
			"cancelled with %d items in the consumers' hands and the rest queued: Produced counts the puts that "+
				"returned nil (not the blocked one that failed); the queued ones are dropped, and Produced = "+
				"Consumed + Dropped", consumers)
	})
}

func TestR3_CancelDuringTheDrain(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		gate := katatest.NewGate()
		p := &testProducer{limit: 7}
		c := &testConsumer{gate: gate}
		call := testStart(h, 4, 3, p, c)
		if call.Broken() {
			return
		}
		_, _, done := p.state()
		if !call.Reaches(done, "precondition: 7 puts fit in capacity 4 + 3 consumers (R1), so produce has returned") {
			return
		}
		if call.Returned() {
			t.Errorf("produce returned after 7 puts, and Run returned while consume calls were still running and 4 " +
				"items waited in the queue: it must wait for the drain (R2) before a stop during the drain can be tested")
			return
		}
		if !call.Reaches(gate.Waiting() == 3, "precondition: every consumer is inside consume (consume calls held: %d)", gate.Waiting()) {
			return
		}

		call.Cancel() // during the drain: 3 items in the consumers' hands, 4 queued
		if instant, _ := call.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("a cancel during the drain (produce had returned, 3 consume calls running, 4 items queued) must " +
				"make Run return at once; it was still waiting: a drain stops on a cancel like production does")
			call.Stop()
			return
		}
		stats, err, ok := call.Finish("Run")
		if !ok {
			return
		}
		if got := c.got.All(); len(got) > 3 {
			t.Errorf("after a cancel during the drain, consume was called for %s (%v): the drain does not outlive "+
				"a cancel; check ctx.Err() before taking the next item, also after produce returned",
				testMore(len(got)-3), got[3:])
			return
		}
		assert.ErrorIs(t, err, context.Canceled, "a cancel during the drain: Run must return ctx.Err()")
		assert.Equal(t, Stats{Produced: 7, Consumed: 3, Dropped: 4}, stats, "a cancel during the drain with 3 items in "+
			"the consumers' hands and 4 queued: the queued ones are dropped, and Produced = Consumed + Dropped")
	})
}

func TestR3_ACancelBeforeALateConsumerErrorWins(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errStore := errors.New("store: disk full")
		deaf := katatest.NewGate()
		consume := func(ctx context.Context, v int) error {
			_ = deaf.Hold(context.Background()) // a write that ignores ctx, and fails when it ends
			return errStore
		}
		p := &testProducer{limit: 3}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, 1, 1, p.produce, consume) })
		if call.Broken() {
			return
		}
		if !call.Reaches(deaf.Waiting() == 1, "precondition: the consumer is inside consume (consume calls held: %d)", deaf.Waiting()) {
			return
		}

		call.Cancel()
		synctest.Wait() // whatever the code does on a cancel is done: only then does the call fail
		if !call.Reaches(!call.Returned(), "precondition: Run waits for the consume call still running (it ignores its ctx)") {
			return
		}
		deaf.Release() // only now does that call fail, on its own
		_, err, ok := call.Finish("Run")
		if !ok {
			return
		}
		if errors.Is(err, errStore) && !errors.Is(err, context.Canceled) {
			t.Errorf("the caller cancelled while a consume call was running, and that call failed only afterwards; "+
				"Run returned the consumer's error %q, but the cancel came first, so Run must return ctx.Err(): "+
				"record the cancel when it happens (or check the caller's ctx when a consumer fails), not when a "+
				"consumer next looks at ctx", err)
			return
		}
		assert.ErrorIs(t, err, context.Canceled, "the cancel came before the consumer's error: Run returns ctx.Err()")
	})
}

func TestR3_PutAfterTheCancelFails(t *testing.T) {
	// After the cancel, produce goes on putting 20 items with room in the
	// queue: a put that selects on ctx.Done() and a send with room, without
	// checking ctx first, accepts each with probability 1/2, so this misses
	// that mistake with probability 2^-20 ≈ 1e-6.
	katatest.Run(t, func(h *katatest.H) {
		const more = 20
		errRead := errors.New("read orders: interrupted")
		gate := katatest.NewGate()
		c := &testConsumer{gate: gate}
		resume := make(chan struct{})
		type result struct {
			accepted int // puts after the cancel that returned nil
			err      error
		}
		res := make(chan result, 1)
		produce := func(ctx context.Context, put func(int) error) error {
			for i := 1; i <= 2; i++ { // one in the consumer's hands, one queued
				if err := put(i); err != nil {
					return err
				}
			}
			<-resume
			var r result
			for i := 3; i < 3+more; i++ {
				if err := put(i); err == nil {
					r.accepted++
				} else {
					r.err = err
				}
			}
			res <- r
			return errRead // produce fails on its own after the cancel
		}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, 30, 1, produce, c.consume) })
		if call.Broken() {
			return
		}
		if !call.Reaches(gate.Waiting() == 1, "precondition: item 1 is being consumed (consume calls held: %d)", gate.Waiting()) {
			return
		}
		call.Cancel()
		synctest.Wait()
		close(resume)
		if instant, _ := call.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("after the cancel produce returned, yet Run was still waiting: stop the consumers on ctx.Done()")
			call.Stop()
			return
		}
		stats, err, ok := call.Finish("Run")
		if !ok {
			return
		}
		r := <-res
		if r.accepted > 0 {
			t.Errorf("after the cancel, %d of %d puts, made with room in the queue, returned nil: once ctx is done "+
				"every put must return ctx.Err(); check ctx.Err() before the send (a select on ctx.Done() and a send "+
				"with room picks either)", r.accepted, more)
			return
		}
		assert.ErrorIs(t, r.err, context.Canceled, "a put after the cancel must return ctx.Err()")
		assert.ErrorIs(t, err, context.Canceled, "the cancel came first and produce returned its own error only "+
			"afterwards: Run must return ctx.Err(); the error of produce counts only when nothing stopped Run")
		assert.Equal(t, Stats{Produced: 2, Consumed: 1, Dropped: 1}, stats, "cancelled with 1 item in the consumer's hands "+
			"and 1 queued: Produced counts the puts that returned nil, so the refused puts after the cancel are not counted")
	})
}

// testStopConsumers is how many consumers are busy when R3, R4 and B2 stop
// them: each is one independent chance to catch a consumer that takes a
// queued item after the stop.
const testStopConsumers = 48

func TestR4_ConsumerErrorStopsABlockedProducer(t *testing.T) {
	// As in R3: the 47 consumers that did not fail return at the cancel
	// while items are queued, and each takes one with probability 1/2 if it
	// does not check ctx first (the one that failed may too, not counted):
	// the bubble misses that mistake with probability at most 2^-47 ≈ 7.1e-15.
	katatest.Run(t, func(h *katatest.H) {
		const consumers = testStopConsumers
		errStore := errors.New("store: disk full")
		gate, failing := katatest.NewGate(), katatest.NewGate()
		var got katatest.Recorder[int]
		consume := func(ctx context.Context, v int) error {
			got.Add(v)
			if v == 1 { // the first item fails, when the test says so
				if err := failing.Hold(ctx); err != nil {
					return err
				}
				return errStore
			}
			_ = gate.Hold(ctx) // cancelled or released, the call completes
			return nil
		}
		p := &testProducer{limit: 100}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, 2, consumers, p.produce, consume) })
		if call.Broken() {
			return
		}
		accepted, _, done := p.state()
		if !call.Reaches(!(done || call.Returned()), "precondition: with every consumer held, put blocks (R1)") {
			return
		}
		if !call.Reaches(failing.Waiting() == 1, "precondition: the consumer of item 1 is running (consume calls held: %d)", failing.Waiting()) {
			return
		}
		if !call.Reaches(gate.Waiting() == consumers-1, "precondition: every other consumer is inside consume (consume calls held: %d)", gate.Waiting()) {
			return
		}

		failing.Release() // consume(1) returns errStore
		if instant, _ := call.ReturnsAtOnce(time.Second); !instant {
			_, putErr, done := p.state()
			t.Errorf("a consumer failed while the producer was blocked on the full queue and the other consumers "+
				"were busy: Run must stop everything and return at once, but it was still waiting (the blocked "+
				"put had returned: %v, error %v): on the first consumer error, record it and cancel the context "+
				"that put and the consumers select on", done, putErr)
			call.Stop()
			return
		}
		stats, err, ok := call.Finish("Run")
		if !ok {
			return
		}
		_, putErr, _ := p.state()
		assert.ErrorIs(t, err, errStore, "a consumer failed: Run must return its error, even though produce then "+
			"returned the error of its put: the first consumer error comes before the error of produce")
		assert.Error(t, putErr, "a consumer failed: the put blocked on the full queue must return an error")
		if n := testCount(got.All(), 1); n > 1 {
			t.Errorf("consume(1) failed with %q, and consume was called with item 1 %d times in all: each "+
				"accepted item is handed to consume at most once, nothing is retried; a consumer error stops Run",
				errStore, n)
			return
		}
		if items := got.All(); len(items) > consumers {
			t.Errorf("after the consumer error, consume was called for %s (%v): once a consumer has "+
				"failed, the others must take nothing new; a select on ctx.Done() and the queue picks at random "+
				"when both are ready, so check ctx.Err() before taking the next item (and `for v := range ch` "+
				"ignores ctx)", testMore(len(items)-consumers), items[consumers:])
			return
		}
		assert.Equal(t, consumers-1, gate.Cancelled(), "a consumer failed: the other consumers' calls must see their ctx cancelled")
		assert.Equal(t, Stats{Produced: accepted, Consumed: consumers, Dropped: accepted - consumers}, stats,
			"a consumer failed with %d items in the consumers' hands and the rest queued: Produced counts the puts that "+
				"returned nil, and Consumed every item handed to consume, the failed call included; the queued ones are "+
				"dropped, and Produced = Consumed + Dropped", consumers)
	})
}

func TestR4_ConsumerErrorDuringTheDrain(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		errStore := errors.New("store: disk full")
		gate, failing := katatest.NewGate(), katatest.NewGate()
		var got katatest.Recorder[int]
		consume := func(ctx context.Context, v int) error {
			got.Add(v)
			if v == 1 { // the first item fails, when the test says so
				if err := failing.Hold(ctx); err != nil {
					return err
				}
				return errStore
			}
			_ = gate.Hold(ctx)
			return nil
		}
		p := &testProducer{limit: 7}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, 4, 3, p.produce, consume) })
		if call.Broken() {
			return
		}
		_, _, done := p.state()
		if !call.Reaches(done, "precondition: 7 puts fit in capacity 4 + 3 consumers (R1), so produce has returned") {
			return
		}
		if call.Returned() {
			t.Errorf("produce returned after 7 puts, and Run returned while consume calls were still running and 4 " +
				"items waited in the queue: it must wait for the drain (R2) before a stop during the drain can be tested")
			return
		}
		if !call.Reaches(failing.Waiting() == 1, "precondition: the consumer of item 1 is running (consume calls held: %d)", failing.Waiting()) {
			return
		}
		if !call.Reaches(gate.Waiting() == 2, "precondition: the other consumers are inside consume (consume calls held: %d)", gate.Waiting()) {
			return
		}

		failing.Release() // consume(1) fails during the drain
		if instant, _ := call.ReturnsAtOnce(time.Second); !instant {
			t.Errorf("a consumer failed during the drain (produce had returned, 4 items queued): Run must stop " +
				"everything and return at once, but it was still waiting: a consumer error stops the drain too")
			call.Stop()
			return
		}
		stats, err, ok := call.Finish("Run")
		if !ok {
			return
		}
		if items := got.All(); len(items) > 3 {
			t.Errorf("after a consumer error during the drain, consume was called for %s (%v): the first consumer "+
				"error stops the drain as well; check ctx.Err() before taking the next item, also after produce returned",
				testMore(len(items)-3), items[3:])
			return
		}
		assert.ErrorIs(t, err, errStore, "a consumer failed during the drain: Run must return its error")
		assert.Equal(t, 2, gate.Cancelled(), "a consumer failed during the drain: the other consumers' calls must see their ctx cancelled")
		assert.Equal(t, Stats{Produced: 7, Consumed: 3, Dropped: 4}, stats, "a consumer failed during the drain with "+
			"3 items in the consumers' hands and 4 queued: Consumed counts every item handed to consume, the failed "+
			"call included; the queued ones are dropped")
	})
}

// testTakenAtTheStop releases testStopConsumers busy consume calls at the
// same instant, with a full queue behind them, and Run stops just as they
// return: the first of those calls cancels the caller's ctx on its way out
// (R3), or fails (R4). Every other consumer goes back to the queue at that
// moment; one that takes an item just as the stop comes and then drops it
// must count it as Dropped: when Run returns, Produced == Consumed +
// Dropped. Which goroutine releases the others varies with lead: the
// test, together with the first call (false), or the first call just
// before it returns (true), so that the stop meets the others on their way
// back to the queue whatever the code does between a return and the stop.
func testTakenAtTheStop(h *katatest.H, byError, lead bool) {
	t := h.T
	const consumers = testStopConsumers
	errStore := errors.New("store: disk full")
	first, others := katatest.NewGate(), katatest.NewGate()
	var got katatest.Recorder[int]
	var call *katatest.Call[Stats]
	var calls atomic.Int32
	consume := func(ctx context.Context, v int) error {
		got.Add(v)
		switch n := calls.Add(1); {
		case n > consumers: // taken after the release: it waits for the stop
			<-ctx.Done()
			return nil
		case n > 1:
			_ = others.Hold(context.Background()) // ignores ctx: a write that completes
			return nil
		}
		_ = first.Hold(context.Background())
		if lead {
			others.Release()
		}
		if byError {
			return errStore
		}
		call.Cancel() // the caller gives up just as this call returns
		return nil
	}
	p := &testProducer{limit: 3 * consumers}
	call = katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, consumers, consumers, p.produce, consume) })
	if call.Broken() {
		return
	}
	if !call.Reaches(others.Waiting() == consumers-1, "precondition: every consumer is inside consume (consume calls held: %d)", others.Waiting()) {
		return
	}
	stop := "the caller cancelled just as a consume call returned"
	if byError {
		stop = fmt.Sprintf("a consume call failed with %q", errStore)
	}
	first.Release()
	if !lead {
		others.Release()
	}
	synctest.Wait()
	if !call.Returns("%s while %d consume calls returned at the same instant, and Run was still waiting: a stop ends "+
		"everything at once", stop, consumers-1) {
		return
	}
	stats, _, ok := call.Finish("Run")
	if !ok {
		return
	}
	accepted, _, produced := p.state()
	if !produced {
		t.Errorf("Run returned while produce was still running: %s while %d consume calls returned at the same "+
			"instant. Run must return only after produce has returned, on a stop too: call produce on Run's own "+
			"goroutine, or wait for the goroutine that runs it", stop, consumers-1)
		return
	}
	handed := len(got.All())
	if stats.Produced == accepted && stats.Consumed == handed && stats.Dropped < accepted-handed {
		t.Errorf("Stats lost %d accepted item(s), counted neither as Consumed nor as Dropped: %s while %d consume "+
			"calls returned at the same instant; %d puts returned nil and %d items were handed to consume, and Run "+
			"returned %+v. An item a consumer took from the queue and then dropped because Run had stopped (its "+
			"select picked the item, not ctx.Done()) is dropped too: count it, or count Dropped as Produced - "+
			"Consumed, not as what is left in the queue", accepted-handed-stats.Dropped, stop, consumers-1, accepted,
			handed, stats)
		return
	}
	assert.Equal(t, Stats{Produced: accepted, Consumed: handed, Dropped: accepted - handed}, stats, "%s while %d "+
		"consume calls returned at the same instant: Produced counts the puts that returned nil, Consumed every "+
		"item handed to consume, Dropped the rest", stop, consumers-1)
}

func TestR3_AnItemTakenAsTheCallerCancelsIsCounted(t *testing.T) {
	lead := false
	katatest.Repeat(t, 8, func(h *katatest.H) { lead = !lead; testTakenAtTheStop(h, false, lead) })
}

func TestR4_AnItemTakenAsAConsumerFailsIsCounted(t *testing.T) {
	lead := false
	katatest.Repeat(t, 8, func(h *katatest.H) { lead = !lead; testTakenAtTheStop(h, true, lead) })
}

func TestR5_PutAfterProduceReturnedFails(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// A goroutine that produce started puts while Run is still draining,
		// with room in the queue: 20 times, so that a put that selects on
		// "closed" and on a send with room picks the send at least once.
		const lates = 20
		gate := katatest.NewGate()
		c := &testConsumer{gate: gate}
		late := make(chan struct{})
		type result struct {
			accepted int // late puts that returned nil
			err      error
			panicked any
		}
		lateDone := make(chan result, 1)
		produce := func(ctx context.Context, put func(int) error) error {
			go func() {
				<-late
				var r result
				for i := 1; i <= lates && r.panicked == nil; i++ {
					r.err, r.panicked = testPut(put, 100+i)
					if r.err == nil && r.panicked == nil {
						r.accepted++
					}
				}
				lateDone <- r
			}()
			return put(1)
		}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, lates, 2, produce, c.consume) })
		if call.Broken() {
			return
		}
		if !call.Reaches(gate.Waiting() == 1, "precondition: item 1 is being consumed (consume calls held: %d)", gate.Waiting()) {
			return
		}
		close(late)
		synctest.Wait() // the late puts have run, or one is blocked
		select {
		case r := <-lateDone:
			switch {
			case r.panicked != nil:
				t.Errorf("a put made after produce returned panicked (%v) while Run was draining: it must return "+
					"ErrClosed; never close the channel while a put may still send (check a closed mark under "+
					"a mutex in put, and close the channel once no put is in flight)", r.panicked)
			case r.accepted > 0:
				t.Errorf("%d of %d puts made after produce returned, while Run was draining with room in the queue, "+
					"returned nil: a late put must return ErrClosed every time; check the closed mark before "+
					"the send (a select on a closed channel and a send with room picks either)", r.accepted, lates)
			default:
				assert.ErrorIs(t, r.err, ErrClosed, "a put made after produce returned, while Run was draining, "+
					"must return ErrClosed at once")
			}
		default:
			t.Errorf("a put made after produce returned was still blocked while Run was draining: it must " +
				"return ErrClosed at once")
			call.Stop()
			return
		}
		gate.Release()
		stats, _, ok := testEnd(h, call, "produce returned after one put and the consumer was released, yet")
		if !ok {
			return
		}
		assert.Equal(t, 1, stats.Produced, "a put made after produce returned is refused, so it is not counted in Produced")
		assert.Equal(t, []int{1}, c.got.All(), "a put made after produce returned is refused, so its item is never consumed")

		// A put kept past the end of Run.
		var kept func(int) error
		call = katatest.Start(h, func(ctx context.Context) (Stats, error) {
			return Run(ctx, 2, 2, func(ctx context.Context, put func(int) error) error {
				kept = put
				return put(1)
			}, (&testConsumer{}).consume)
		})
		if _, _, ok := testEnd(h, call, "produce returned after one put and nothing held the consumers, yet"); !ok {
			return
		}
		err, panicked := testPut(kept, 2)
		if panicked != nil {
			t.Errorf("a put made after Run returned panicked (%v): it must return ErrClosed", panicked)
			return
		}
		assert.ErrorIs(t, err, ErrClosed, "a put made after Run returned must return ErrClosed")
	})
}

// A goroutine produce started keeps putting while produce returns: each
// put races the end of produce. Whichever way each race goes, no put
// panics, and an item a put accepted is consumed. It depends on the
// schedule: repeated.
func TestR5_PutsRacingTheEndOfProduceNeverPanic(t *testing.T) {
	katatest.Repeat(t, 20, func(h *katatest.H) {
		const n = 64
		c := &testConsumer{}
		type result struct {
			accepted []int
			err      error
			panicked any
		}
		done := make(chan result, 1)
		produce := func(ctx context.Context, put func(int) error) error {
			go func() {
				var r result
				for i := 1; i <= n; i++ {
					r.err, r.panicked = testPut(put, i)
					if r.err != nil || r.panicked != nil {
						break
					}
					r.accepted = append(r.accepted, i)
				}
				done <- r
			}()
			return nil // returns while its goroutine is putting
		}
		call := katatest.Start(h, func(ctx context.Context) (Stats, error) { return Run(ctx, n, 2, produce, c.consume) })
		if call.Broken() {
			return
		}
		synctest.Wait()
		r := <-done
		if r.panicked != nil {
			t.Errorf("a goroutine that produce started was putting while produce returned, and a put panicked (%v): "+
				"a put that raced the end of produce saw the queue open, then the channel was closed before it sent — "+
				"count a put in flight in the same critical section as its check of the closed mark, so that Run, "+
				"which waits for the puts in flight before it closes the channel, cannot miss it", r.panicked)
			call.Stop()
			return
		}
		if r.err != nil && !errors.Is(r.err, ErrClosed) {
			t.Errorf("a put that raced the end of produce returned %v: a put either takes its item or, once produce "+
				"has returned, returns ErrClosed. This put saw the queue open but Run did not wait for it — count a "+
				"put in flight in the same critical section as its check of the closed mark", r.err)
		}
		stats, _, ok := testEnd(h, call, "produce had returned and its goroutine had stopped putting, yet")
		if !ok {
			return
		}
		assert.ElementsMatch(t, r.accepted, c.got.All(), "every item a put accepted must be consumed, once, even when the put "+
			"raced the end of produce")
		assert.Equal(t, len(r.accepted), stats.Produced, "Produced counts the puts that returned nil")
	})
}

func TestR6_CapacityZeroIsAHandOff(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		for _, consumers := range []int{2, 1} {
			if !testBackpressure(h, 0, consumers) {
				return
			}
		}
	})
}

func TestR6_BadArgumentsAreAnError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		for _, tc := range []struct{ capacity, consumers int }{{-1, 2}, {2, 0}} {
			p := &testProducer{limit: 10}
			call := testStart(h, tc.capacity, tc.consumers, p, &testConsumer{})
			what := fmt.Sprintf("Run with capacity %d and %d consumers", tc.capacity, tc.consumers)
			if !call.Returns("%s was still waiting: such arguments must be an error, returned at once "+
				"(with no consumer, nobody would ever take an item)", what) {
				return
			}
			_, err, ok := call.Finish("Run")
			if !ok {
				return
			}
			assert.Error(t, err, "%s must return an error", what)
			accepted, _, done := p.state()
			assert.False(t, done || accepted > 0, "%s must return its error without calling produce", what)
		}
	})
}

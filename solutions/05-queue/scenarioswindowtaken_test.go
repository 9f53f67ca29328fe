package queue

// B1: a partial batch is handed to consume FlushEvery after its first item
// was taken by its consumer, not after anything else: not after the item
// was put (time spent waiting in the queue does not count, unlike Kafka's
// linger.ms), not after the consumer's previous flush, not after the batch's
// last item, not after the consumer started.
//
// The take is staged. The test holds every consume call until it lets that
// very call return, so every consumer is busy and the items it puts wait in
// the queue while the clock moves. When the test lets one call return, its
// consumer alone is free: it goes back to the queue at that instant and
// takes the oldest waiting items, a full batch it hands over at once, or
// the last few, a partial batch whose first item it took right then. At
// most one consumer is free at any time, so which items it takes and when
// is the same in every correct design (a channel, a slice under a mutex,
// an actor loop, a ring): the test computes each consume call, its instant
// and its items, and compares after every step.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"gokata/internal/katatest"
)

// testTakenRound is one round of a testTakenFlush: it starts and ends with
// every consumer inside a held consume and the queue empty.
type testTakenRound struct {
	full  int             // full batches among the items put at once
	left  int             // items past them: 1..Size-1, the partial batch
	waits []time.Duration // the clock before each release (full+1 of them): less than, equal to or more than FlushEvery
	picks []int           // which consume in flight each release lets return, oldest first (0-based)
	later time.Duration   // after the last release, before more items come: less than FlushEvery
	more  int             // items put then, taken at once by the consumer with the partial batch; it stays partial
}

// testTakenFlush is a RunBatches whose consumers are all busy while items
// wait in the queue and the clock moves.
type testTakenFlush struct {
	capacity  int
	consumers int
	size      int
	every     time.Duration
	rounds    []testTakenRound
}

func (s testTakenFlush) String() string {
	var b strings.Builder
	setup := s.consumers * s.size
	fmt.Fprintf(&b, "RunBatches(capacity %d, %d consumers, Batch{Size: %d, FlushEvery: %v}); the test holds "+
		"every consume call until it lets that call return; at 0s produce puts %s: each consumer takes a full "+
		"batch and hands it to consume", s.capacity, s.consumers, s.size, s.every, testItems(1, setup))
	next, now := setup+1, time.Duration(0)
	for _, r := range s.rounds {
		n := r.full*s.size + r.left
		fmt.Fprintf(&b, "; at %v produce puts %s, which %s in the queue (every consumer is busy)", now,
			testItems(next, n), map[bool]string{true: "waits", false: "wait"}[n == 1])
		next += n
		for j, w := range r.waits {
			now += w
			fmt.Fprintf(&b, "; the clock moves %v, and at %v the %s consume call in flight returns", w, now,
				testTakenOldest(r.picks[j]))
		}
		due := now + s.every
		if r.more > 0 {
			now += r.later
			fmt.Fprintf(&b, "; the clock moves %v, and at %v produce puts %s", r.later, now, testItems(next, r.more))
			next += r.more
		}
		fmt.Fprintf(&b, "; the clock moves to %v (and 1ns further)", due)
		now = due
	}
	b.WriteString("; then every consume call returns, and produce returns")
	return b.String()
}

// testTakenOldest names the i-th (0-based) oldest call in flight.
func testTakenOldest(i int) string {
	if i == 0 {
		return "oldest"
	}
	return testOrdinal(i+1) + " oldest"
}

// testDrawTakenWait draws how far the clock moves: less than, equal to or
// more than FlushEvery, never 0.
func testDrawTakenWait(r *rapid.T, every time.Duration, label string) time.Duration {
	switch rapid.SampledFrom([]string{"less", "equal", "more"}).Draw(r, label+": against FlushEvery") {
	case "less":
		return every * time.Duration(rapid.IntRange(1, 3).Draw(r, label+": quarters of FlushEvery")) / 4
	case "equal":
		return every
	}
	return every * time.Duration(rapid.IntRange(5, 9).Draw(r, label+": quarters of FlushEvery")) / 4
}

func testDrawTakenFlush(r *rapid.T) testTakenFlush {
	var s testTakenFlush
	s.capacity = rapid.IntRange(0, 3).Draw(r, "capacity")
	s.consumers = rapid.IntRange(2, 4).Draw(r, "consumers")
	s.size = rapid.IntRange(2, 4).Draw(r, "Size")
	s.every = time.Duration(rapid.IntRange(1, 400).Draw(r, "FlushEvery ms")) * time.Millisecond
	rounds := rapid.IntRange(1, 3).Draw(r, "rounds")
	for range rounds {
		var rd testTakenRound
		rd.full = rapid.IntRange(0, 2).Draw(r, "full batches waiting")
		rd.left = rapid.IntRange(1, s.size-1).Draw(r, "items of the partial batch")
		for range rd.full + 1 {
			rd.waits = append(rd.waits, testDrawTakenWait(r, s.every, "clock before a release"))
			rd.picks = append(rd.picks, rapid.IntRange(0, s.consumers-1).Draw(r, "consume call let go"))
		}
		rd.more = rapid.IntRange(0, s.size-1-rd.left).Draw(r, "items joining the partial batch")
		if rd.more > 0 {
			rd.later = s.every * time.Duration(rapid.IntRange(0, 3).Draw(r, "quarters of FlushEvery before they come")) / 4
		}
		s.rounds = append(s.rounds, rd)
	}
	return s
}

// testTakenCall is one call of consume: when it came (since RunBatches
// started, on the mock clock), its items, and what lets it return.
type testTakenCall struct {
	at    time.Duration
	batch []int
	done  chan struct{}
}

func (c *testTakenCall) String() string { return fmt.Sprintf("%v at %v", c.batch, c.at) }

// testTakenPartial is the partial batch a round leaves with one consumer.
type testTakenPartial struct {
	first   int           // its first item
	put     time.Duration // when produce was handed the round's items
	taken   time.Duration // when its consumer took its first item: when the consume call let go returned
	prev    *testTakenCall
	items   []int
	later   []int // items that joined it after the take
	laterAt time.Duration
}

func (p *testTakenPartial) due(every time.Duration) time.Duration { return p.taken + every }

func (s testTakenFlush) play(h *katatest.H) {
	start := h.Clk.Now()
	var mu sync.Mutex
	var calls []*testTakenCall
	holding := true
	releaseAll := func() {
		mu.Lock()
		defer mu.Unlock()
		holding = false
		for _, c := range calls {
			select {
			case <-c.done:
			default:
				close(c.done)
			}
		}
	}
	h.Own(releaseAll)
	consume := func(ctx context.Context, b []int) error {
		c := &testTakenCall{at: h.Clk.Now().Sub(start), batch: slices.Clone(b), done: make(chan struct{})}
		mu.Lock()
		calls = append(calls, c)
		hold := holding
		mu.Unlock()
		if !hold {
			return nil
		}
		select {
		case <-c.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	groups := make(chan []int, 1+len(s.rounds)*2)
	end := sync.OnceFunc(func() { close(groups) })
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
	b := Batch{Size: s.size, FlushEvery: s.every}
	call := katatest.Start(h, func(ctx context.Context) (Stats, error) {
		return RunBatches(ctx, h.Clk, s.capacity, s.consumers, b, produce, consume)
	})
	if call.Broken() {
		return
	}
	setting := fmt.Sprintf("Batch{Size: %d, FlushEvery: %v}, %d consumers, capacity %d", s.size, s.every,
		s.consumers, s.capacity)
	seen := 0
	fresh := func() []*testTakenCall {
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		got := slices.Clone(calls[seen:])
		seen = len(calls)
		return got
	}
	fail := func(format string, args ...any) {
		h.Errorf(format, args...)
		call.Stop()
	}
	next := 1
	put := func(n int) []int {
		g := testSeq(next, next+n-1)
		next += n
		groups <- g // buffered: never blocks, even while produce waits on a full queue
		return g
	}
	var now time.Duration
	advance := func(d time.Duration) {
		if d > 0 {
			h.Advance(d)
			now += d
		}
	}

	// Every consumer takes a full batch and is held in consume with it.
	first := put(s.consumers * s.size)
	held := fresh()
	if len(held) != s.consumers || slices.ContainsFunc(held, func(c *testTakenCall) bool { return len(c.batch) != s.size || c.at != 0 }) {
		fail("%s, every consume call held until the test lets it return: produce put %s at 0s, and consume got "+
			"%v; want %d calls at 0s, each with a full batch of %d items: each consumer takes items until its "+
			"batch holds Size items and hands it over at once", setting, testItems(1, len(first)), held,
			s.consumers, s.size)
		return
	}
	var partial *testTakenPartial // the batch a round leaves with the one free consumer, until it is flushed
	// check compares the calls that came with one step with want (nil: none).
	check := func(step string, want *testTakenCall) bool {
		got := fresh()
		if want == nil && len(got) == 0 {
			return true
		}
		if len(got) == 1 && want != nil && got[0].at == want.at && slices.Equal(got[0].batch, want.batch) {
			held = append(held, got[0])
			return true
		}
		if p := partial; p != nil {
			i := slices.IndexFunc(got, func(c *testTakenCall) bool { return slices.Contains(c.batch, p.first) })
			if i >= 0 && (want == nil || got[i].at != want.at) || i < 0 && want != nil && slices.Contains(want.batch, p.first) {
				fail("%s", s.partialMessage(setting, p, step, got, i))
				return false
			}
		}
		if len(got) == 1 && want != nil && got[0].at == want.at && len(got[0].batch) < len(want.batch) &&
			slices.Equal(got[0].batch, want.batch[:len(got[0].batch)]) {
			fail("%s, every consume call held until the test lets it return: %s, and consume got %v; want %v. "+
				"The free consumer handed over %d item(s) at once, with more waiting, and its batch not full: a "+
				"batch goes out before it holds Size items only when its FlushEvery has passed since its first "+
				"item was taken. A flush timer belongs to one batch: make a fresh clk.Timer as the batch takes its "+
				"first item and stop it when the batch is handed over (a ticker, or a timer used again, may still "+
				"hold a tick from an earlier batch, and Reset does not take it out)", setting, step, got,
				[]*testTakenCall{want}, len(got[0].batch))
			return false
		}
		var w []*testTakenCall
		if want != nil {
			w = append(w, want)
		}
		fail("%s, every consume call held until the test lets it return: %s, and consume got %v; want %v. Only "+
			"a consumer whose consume call returned is free: it goes back to the queue at once and takes the "+
			"oldest waiting items, one by one, handing a batch over as soon as it holds Size items", setting,
			step, got, w)
		return false
	}

	for _, r := range s.rounds {
		put0 := now
		waiting := put(r.full*s.size + r.left)
		if !check(fmt.Sprintf("with every consumer inside consume, produce was handed %s at %v",
			testItems(waiting[0], len(waiting)), now), nil) {
			return
		}
		for j, w := range r.waits {
			advance(w)
			if !check(fmt.Sprintf("with every consumer inside consume and %s waiting, the clock moved to %v",
				testItems(waiting[0], len(waiting)), now), nil) {
				return
			}
			let := held[r.picks[j]]
			held = slices.Delete(held, r.picks[j], r.picks[j]+1)
			close(let.done)
			step := fmt.Sprintf("at %v the test let the consume call of %v (from %v) return, with %s waiting", now,
				let.batch, let.at, testItems(waiting[0], len(waiting)))
			if j < r.full {
				if !check(step, &testTakenCall{at: now, batch: waiting[:s.size]}) {
					return
				}
				waiting = waiting[s.size:]
				continue
			}
			partial = &testTakenPartial{first: waiting[0], put: put0, taken: now, prev: let, items: waiting}
			if !check(step, nil) {
				return
			}
		}
		if r.more > 0 {
			advance(r.later)
			if !check(fmt.Sprintf("the clock moved to %v", now), nil) {
				return
			}
			partial.later, partial.laterAt = put(r.more), now
			if !check(fmt.Sprintf("at %v produce was handed %s, which the consumer holding %v took at once", now,
				testItems(partial.later[0], r.more), partial.items), nil) {
				return
			}
		}
		due := partial.due(s.every)
		advance(due - now - 1)
		if !check(fmt.Sprintf("the clock moved to %v", now), nil) {
			return
		}
		advance(1)
		want := &testTakenCall{at: now, batch: slices.Concat(partial.items, partial.later)}
		if !check(fmt.Sprintf("the clock moved to %v", now), want) {
			return
		}
		partial = nil
	}

	releaseAll()
	end()
	stats, err, ok := testEnd(h, call, "every consume call had returned and produce returned, with nothing queued, yet")
	if !ok {
		return
	}
	total := next - 1
	if err != nil || stats != (Stats{Produced: total, Consumed: total}) {
		h.Errorf("%s: every item was consumed and nothing failed, yet RunBatches returned %+v, %s; want "+
			"{Produced:%d Consumed:%d Dropped:0} and nil", setting, stats, testDescribe(err), total, total)
	}
}

// partialMessage says how a partial batch came at the wrong instant: got
// holds the calls of the step that ended at step, the i-th of them with the
// batch (i < 0: it had not come).
func (s testTakenFlush) partialMessage(setting string, p *testTakenPartial, step string, got []*testTakenCall, i int) string {
	want := p.due(s.every)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: produce was handed item %d at %v, and it waited (in the queue, or in a put blocked on "+
		"it) while every consumer was inside a held consume; at %v the test let the consume call of %v (from %v) "+
		"return, and its consumer went back to the queue and took %v, a partial batch: its first item, %d, was "+
		"taken at %v", setting, p.first, p.put,
		p.taken, p.prev.batch, p.prev.at, p.items, p.first, p.taken)
	if len(p.later) > 0 {
		fmt.Fprintf(&b, " (then %v came at %v and joined it)", p.later, p.laterAt)
	}
	if i >= 0 {
		c := got[i]
		fmt.Fprintf(&b, ". consume got the batch %v at %v, %v after that take", c.batch, c.at, c.at-p.taken)
	} else {
		fmt.Fprintf(&b, ". When %s, consume had not got it (it got %v)", step, got)
	}
	fmt.Fprintf(&b, "; want it at %v: a partial batch is handed to consume FlushEvery (%v) after its first item "+
		"was taken, by the consumer that took it (README B1). ", want, s.every)
	if i >= 0 && got[i].at < want {
		b.WriteString("The timer counted time from before the take: from when the item was put (time spent " +
			"waiting in the queue does not count: this is not Kafka's linger.ms, which counts from the send), " +
			"from the consumer's previous flush or from when it started, or it fired with a tick left from an " +
			"earlier batch (a ticker, or a timer used again: Reset does not take out a tick already waiting in " +
			"its channel). ")
	} else {
		b.WriteString("The timer started after the take: restarted or moved by a later item of the batch, or " +
			"started at some later event. ")
	}
	b.WriteString("Start a fresh clk.Timer(FlushEvery) when the consumer takes the first item of a batch, and " +
		"keep it while more items join.")
	return b.String()
}

func TestB1_ExploreAPartialBatchIsDueFlushEveryAfterItsFirstItemWasTaken(t *testing.T) {
	// A fixed case first: the README's "taken", with the item put 80ms
	// before a busy consumer could take it.
	katatest.Replay(t, []testTakenFlush{{capacity: 2, consumers: 2, size: 3, every: 100 * time.Millisecond,
		rounds: []testTakenRound{{left: 1, waits: []time.Duration{80 * time.Millisecond}, picks: []int{0}}}}},
		func(h *katatest.H, s testTakenFlush) { s.play(h) })
	katatest.Explore(t, 8, testDrawTakenFlush, func(h *katatest.H, s testTakenFlush) { s.play(h) })
}

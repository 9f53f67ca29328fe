package bounded

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/internal/katatest"
)

// testLoad tracks the weight of the calls in flight.
type testLoad struct {
	mu       sync.Mutex
	now, max int
}

func (l *testLoad) enter(w int) (leave func()) {
	l.mu.Lock()
	l.now += w
	l.max = max(l.max, l.now)
	l.mu.Unlock()
	return func() { l.mu.Lock(); l.now -= w; l.mu.Unlock() }
}

func (l *testLoad) peak() int { l.mu.Lock(); defer l.mu.Unlock(); return l.max }

func TestB1_WeightsInFlightNeverExceedCapacity(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		const capacity = 5
		weights := []int{3, 3, 1, 1, 2, 7, 0}
		counted := func(i int) int { return min(max(weights[i], 1), capacity) }
		w := testNewWork(len(weights))
		var load testLoad
		fn := func(ctx context.Context, i int) error {
			defer load.enter(counted(i))()
			return w.call(ctx, i)
		}
		weight := func(i int) int { return weights[i] }
		c := katatest.StartErr(h, func(ctx context.Context) error {
			return ForEachWeighted(ctx, testItems(len(weights)), capacity, weight, fn)
		})
		if c.Broken() {
			return
		}
		steps := []struct {
			release int // the item whose call returns first; -1 for the start
			want    []int
			why     string
		}{
			{-1, []int{0}, "item 1 (weight 3) does not fit next to item 0 (3 + 3 > 5)"},
			{0, []int{1, 2, 3}, "items 1, 2 and 3 fill the capacity (3 + 1 + 1); item 4 (weight 2) must wait"},
			{2, []int{1, 3}, "item 4 (weight 2) still does not fit (3 + 1 + 2 > 5), and item 6 (weight 0, counted as 1) " +
				"must not overtake it: items start in input order"},
			{1, []int{3, 4}, "item 4 fits now (1 + 2); item 5 (weight 7, counted as the capacity 5) must wait to run alone"},
			{3, []int{4}, "item 5 takes the whole capacity, so it waits for item 4"},
			{4, []int{5}, "item 5 (weight 7, above capacity) runs alone: count it as the capacity, or it waits forever"},
			{5, []int{6}, "item 6 (weight 0, counted as 1) runs last"},
		}
		for _, s := range steps {
			what := "once ForEachWeighted got going"
			if s.release >= 0 {
				w.open(s.release)
				testSettle(h)
				what = fmt.Sprintf("after item %d returned", s.release)
			}
			if load.peak() > capacity {
				t.Errorf("capacity %d, weights %v: the weights of the calls in flight reached %d: "+
					"an item may start only when its weight fits in what is left of the capacity",
					capacity, weights, load.peak())
				c.Stop()
				return
			}
			if got := w.running(); !slices.Equal(got, s.want) {
				if testReturnedEarly(h, c, "ForEachWeighted", fmt.Sprintf("capacity %d, weights %v, %s",
					capacity, weights, what)) {
					w.openAll()
					return
				}
				t.Errorf("capacity %d, weights %v: %s the calls running were for items %v; want %v: %s",
					capacity, weights, what, got, s.want, s.why)
				c.Stop()
				return
			}
		}
		w.open(6)
		if !testReturns(h, c, "every call returned, but ForEachWeighted did not") {
			return
		}
		err, ok := c.Finish("ForEachWeighted")
		if !ok {
			return
		}
		assert.NoError(t, err, "every call succeeded")

		// Capacity 1 is the smallest valid one: every item runs alone.
		one := []int{2, 0, 1}
		wOne := testNewWork(len(one))
		wOne.openAll()
		var loadOne testLoad
		fnOne := func(ctx context.Context, i int) error {
			defer loadOne.enter(1)()
			return wOne.call(ctx, i)
		}
		c = katatest.StartErr(h, func(ctx context.Context) error {
			return ForEachWeighted(ctx, testItems(len(one)), 1, func(i int) int { return one[i] }, fnOne)
		})
		if !c.Returns("capacity 1, weights [2 0 1]: every call returns at once, " +
			"but ForEachWeighted did not return") {
			return
		}
		if err, ok := testResult(c); !ok || !assert.NoError(t, err, "capacity 1 is valid (a limit below 1 is "+
			"not): each item, whatever its weight, runs alone; every call succeeded") {
			return
		}
		assert.Equal(t, []int{1, 1, 1}, wOne.callsOf(), "capacity 1, weights [2 0 1]: every item must be called once")
		assert.Equal(t, 1, loadOne.peak(), "capacity 1: the items must run one at a time")

		c = katatest.StartErr(h, func(ctx context.Context) error { return ForEachWeighted(ctx, testItems(3), 0, weight, fn) })
		if !c.Returns("ForEachWeighted with capacity 0 must return an error at once; " +
			"it was still waiting") {
			return
		}
		err, ok = c.Finish("ForEachWeighted")
		if ok {
			assert.ErrorIs(t, err, ErrInvalidLimit, "ForEachWeighted with capacity 0: the error must match ErrInvalidLimit")
		}
	})
}

func TestB2_ABusyBulkheadShedsAndEveryCallGivesItsSlotBack(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		none, err := NewBulkhead(0)
		assert.Nil(t, none, "NewBulkhead(0) must return a nil Bulkhead")
		assert.ErrorIs(t, err, ErrInvalidLimit, "NewBulkhead(0): the error must match ErrInvalidLimit")
		single, err := NewBulkhead(1)
		if assert.NoError(t, err, "NewBulkhead(1): one slot is a valid bulkhead (a limit below 1 is not)") &&
			assert.NotNil(t, single, "NewBulkhead(1)") {
			w1 := testNewWork(1)
			w1.openAll()
			c1 := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, single, testItems(1), w1.call) })
			if !c1.Returns("TryForEach with 1 item on a free bulkhead of 1 slot " +
				"did not return") {
				return
			}
			if err, ok := testResult(c1); ok {
				assert.NoError(t, err, "TryForEach with 1 item on a free bulkhead of 1 slot: the item takes the slot")
			}
		}
		b, err := NewBulkhead(3)
		require.NoError(t, err, "NewBulkhead(3)")
		require.NotNil(t, b, "NewBulkhead(3)")

		// Request A holds 2 of the 3 slots.
		wA := testNewWork(2)
		a := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(2), wA.call) })
		if a.Broken() {
			return
		}
		if got := wA.running(); len(got) != 2 {
			if testReturnedEarly(h, a, "TryForEach", "2 items on a bulkhead with 3 free slots") {
				wA.openAll()
				return
			}
			t.Errorf("a bulkhead with 3 free slots: TryForEach with 2 items must start both at once; running: %v", got)
			return
		}

		// Request B takes the last slot for its item 0; item 1 finds none.
		errBoom := errors.New("thumbnail 0: 500 internal error")
		wB := testNewWork(3)
		bc := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(3), wB.call) })
		if bc.Broken() {
			return
		}
		if !bc.Returned() {
			// Not bc.Returns: its leak check would blame request A,
			// which is still running by design.
			t.Errorf("the 3 slots of the bulkhead were taken (2 by another request, 1 by item 0 of this one), " +
				"so item 1 found no free slot: TryForEach must shed it at once and return ErrBusy, after " +
				"cancelling its call in flight; it was still waiting")
			bc.Cancel()
			a.Cancel()
			return
		}
		err = bc.Err()
		assert.ErrorIs(t, err, ErrBusy, "every slot was busy when item 1 came: shedding it is the first error, "+
			"so TryForEach must return an error matching ErrBusy")
		if wB.started() == 0 {
			t.Errorf("2 of the bulkhead's 3 slots were taken when TryForEach came with 3 items, and it started none " +
				"of them: item 0 finds the free slot and must run; only an item that finds every slot busy is " +
				"shed, not a whole request because it has more items than free slots")
			a.Cancel()
			return
		}
		assert.Equal(t, 1, wB.started(), "item 1 was shed: nothing starts after it")
		assert.Equal(t, 1, wB.cancelled(), "shedding an item counts as the first error: the call in flight "+
			"must see its ctx cancelled")
		assert.Equal(t, []int{0, 1}, wA.running(), "shedding affects only the request that was shed: "+
			"the other request's calls must go on")

		wA.openAll()
		if !a.Returns("every call of request A returned, but its TryForEach did not") {
			return
		}
		if err, ok := a.Finish("TryForEach"); !ok || !assert.NoError(t, err, "request A: every call succeeded") {
			return
		}

		// A failed call must give its slot back too.
		wF := testNewWork(1)
		wF.errs[0] = errBoom
		wF.openAll()
		f := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(1), wF.call) })
		if !f.Returns("the only call failed, but TryForEach did not return") {
			return
		}
		if err, ok := f.Finish("TryForEach"); !ok || !assert.ErrorIs(t, err, errBoom, "the only call failed") {
			return
		}
		wC := testNewWork(3)
		cc := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(3), wC.call) })
		if cc.Broken() {
			return
		}
		if cc.Returned() {
			err := cc.Err()
			t.Errorf("after every call had returned, one of them with an error, TryForEach with 3 items on a bulkhead "+
				"of 3 returned %v; want all 3 started: every call must give its slot back when it returns, "+
				"failed ones too (defer the release)", err)
			return
		}
		wC.openAll()
		if !cc.Returns("every call returned, but TryForEach did not") {
			return
		}
		if err, ok := cc.Finish("TryForEach"); ok {
			assert.NoError(t, err, "every call succeeded")
		}
	})
}

func TestB2_RequestsShareTheSlotsAtTheSameTime(t *testing.T) {
	// Two requests start in the same instant on one bulkhead, so their
	// loops take slots concurrently: a count of slots kept without a lock
	// or an atomic is a data race the race detector sees every time, and
	// a count checked and then taken in two steps lets both requests past
	// the limit, or lets both see the last free slot, so that one waits for
	// it instead of being shed. It depends on the schedule: repeated.
	katatest.Repeat(t, 12, func(h *katatest.H) {
		b, err := NewBulkhead(3)
		if !assert.NoError(t, err, "NewBulkhead(3)") {
			return
		}
		gate := katatest.NewGate()
		var peak katatest.Peak
		fn := func(ctx context.Context, _ int) error {
			defer peak.Enter()()
			return gate.Hold(ctx)
		}
		x := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(2), fn) })
		y := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(2), fn) })
		if x.Broken() || y.Broken() {
			return
		}
		if peak.Max() > 3 {
			t.Errorf("two requests with 2 items each started at once on a bulkhead of 3 slots, and %d calls ran at "+
				"once: take a slot in one step (a buffered channel, or a counter changed under a mutex or with "+
				"CompareAndSwap), never check the count and then take it", peak.Max())
		}
		gate.Release()
		// Not x.Returns: a first TryForEach that panicked (reported
		// already) still has the second one checked.
		synctest.Wait()
		if !x.Returned() {
			t.Errorf("every call returned, but the first TryForEach did not")
			x.Stop()
			return
		}
		if !y.Returns("every call returned, but the second TryForEach did not") {
			return
		}
		errX, okX := testResult(x)
		errY, okY := testResult(y)
		if okX && okY && !errors.Is(errX, ErrBusy) && !errors.Is(errY, ErrBusy) &&
			(errors.Is(errX, context.Canceled) || errors.Is(errY, context.Canceled)) {
			t.Errorf("two requests wanted 4 slots at once from a bulkhead of 3, and they returned %v and %v: an item "+
				"was shed, and the cancel of the calls in flight that the shed caused came out as the error. The "+
				"shed counts as the first error: record ErrBusy before you cancel, so the context errors of the "+
				"calls the cancel wakes come after it and are dropped", errX, errY)
		} else if okX && okY {
			assert.True(t, errors.Is(errX, ErrBusy) || errors.Is(errY, ErrBusy), "two requests wanted 4 slots at "+
				"once from a bulkhead of 3: the item that found every slot busy must be shed with ErrBusy, yet "+
				"both returned %v and %v — it waited for a slot instead: take a slot in one step that cannot "+
				"wait (a select with a default case on the send, or CompareAndSwap), never check that one is "+
				"free and then take it", errX, errY)
		}
	})
}

func TestB2_RequestsRaceForTheLastSlot(t *testing.T) {
	// Four requests of one item each, on a bulkhead of one slot, start in
	// the same instant: one gets the slot and the other three are shed at
	// once. A free slot looked at and then taken in a second step lets two
	// of them see it free, and the one that loses then waits for the slot
	// instead. It depends on the schedule: four requests give it more
	// chances, and the scenario is repeated.
	const requests = 4
	katatest.Repeat(t, 24, func(h *katatest.H) {
		b, err := NewBulkhead(1)
		if !assert.NoError(t, err, "NewBulkhead(1)") {
			return
		}
		gate := katatest.NewGate()
		fn := func(ctx context.Context, _ int) error { return gate.Hold(ctx) }
		calls := make([]katatest.ErrCall, requests)
		for i := range calls {
			calls[i] = katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(1), fn) })
		}
		shed := 0
		for _, c := range calls {
			if c.Broken() {
				gate.Release()
				return
			}
			if c.Returned() && errors.Is(c.Err(), ErrBusy) {
				shed++
			}
		}
		if shed != requests-1 {
			t.Errorf("%d requests of one item each started at once on a bulkhead of 1 slot: one gets the slot, and "+
				"the other %d must be shed with ErrBusy at once, but %d were — the others waited for the slot: "+
				"take a slot in one step that cannot wait (a select with a default case on the send, or "+
				"CompareAndSwap), never check that one is free and then take it", requests, requests-1, shed)
		}
		gate.Release()
		for i, c := range calls {
			c.Returns("every call returned, but TryForEach %d of %d did not", i+1, requests)
		}
	})
}

func TestB2_AShedClaimDoesNotHideASlotJustGivenBack(t *testing.T) {
	// A bulkhead of one slot and a few clients, each making requests of
	// one item one after the other, all at once; every call returns at
	// once. A request finds the slot taken only while another request
	// holds it, and a request holds it only between its call to
	// TryForEach and that call's return. So a request that was shed while
	// no request that got the slot was under way found a free slot busy.
	// A claim that counts itself first and gives the count back when it
	// overshot (an atomic add, then a subtract) does that: while a claim
	// that failed is still counted, a slot just given back looks busy. A
	// few instructions wide: many requests, and the scenario is repeated.
	//
	// Every TryForEach is stamped from one counter before it starts and
	// after it returns, so the test knows which ones could overlap. A slot
	// given back after TryForEach returned sheds such a request too; if no
	// other request overlapped it, that is the only cause, and the verdict
	// says so; otherwise it names both.
	const clients, requests = 8, 12
	type try struct {
		s0, s1 int64 // stamps before the call and after it returned
		shed   bool
	}
	katatest.Repeat(t, 90, func(h *katatest.H) {
		b, err := NewBulkhead(1)
		if !assert.NoError(t, err, "NewBulkhead(1)") {
			return
		}
		var seq atomic.Int64
		start := make(chan struct{})
		tries := make([][]try, clients)
		calls := make([]katatest.ErrCall, clients)
		fn := func(context.Context, int) error { return nil }
		for i := range calls {
			calls[i] = katatest.StartErr(h, func(ctx context.Context) error {
				<-start
				for range requests {
					s0 := seq.Add(1)
					err := TryForEach(ctx, b, testItems(1), fn)
					tries[i] = append(tries[i], try{s0, seq.Add(1), errors.Is(err, ErrBusy)})
					if err != nil && !errors.Is(err, ErrBusy) {
						return err
					}
				}
				return nil
			})
		}
		close(start)
		for i, c := range calls {
			if !c.Returns("every call returns at once, but client %d's requests did not all return", i+1) {
				return
			}
		}
		overlap := func(a, b try) bool { return a.s0 < b.s1 && b.s0 < a.s1 }
		for i, ts := range tries {
			for _, s := range ts {
				if !s.shed {
					continue
				}
				held, alone := false, true
				for _, os := range tries {
					for _, o := range os {
						if o != s && overlap(o, s) {
							alone = false
							held = held || !o.shed
						}
					}
				}
				switch {
				case held:
					continue
				case alone:
					t.Errorf("a bulkhead of 1 slot: client %d's request was shed with ErrBusy while no other "+
						"request was under way: the slot of a request that had returned was still taken — give "+
						"the slot back before the call's goroutine counts itself done (defer wg.Done() first, so "+
						"that it runs last)", i+1)
				default:
					t.Errorf("a bulkhead of 1 slot: client %d's request was shed with ErrBusy while the only "+
						"requests under way were shed too, so none of them held the slot, and every request "+
						"before them had returned. Either a claim that failed still looked like a slot in use — "+
						"take a slot in one step that changes nothing when it fails (a select with a default case "+
						"on the send, or CompareAndSwap), not an add that a subtract undoes — or the slot of a "+
						"request that had returned was still taken — give the slot back before the call's "+
						"goroutine counts itself done", i+1)
				}
				return
			}
		}
	})
}

func TestB2_ASheddingRequestWaitsForItsCallsInFlight(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		b, err := NewBulkhead(2)
		if !assert.NoError(t, err, "NewBulkhead(2)") {
			return
		}
		wA := testNewWork(1) // request A holds one of the 2 slots
		a := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(1), wA.call) })
		if a.Broken() || !testRunning(h, wA, 1, a, "1 item on a free bulkhead of 2 slots") {
			return
		}
		// Request B's item 0 takes the last slot and ignores its ctx (an
		// upload finishing what it started); item 1 finds no slot.
		wB := testNewWork(3)
		wB.deaf[0] = true
		bc := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(3), wB.call) })
		if bc.Broken() {
			return
		}
		synctest.Wait()
		if bc.Returned() {
			err := bc.Err()
			t.Errorf("item 1 was shed (every slot busy) while item 0, which ignores its ctx, still ran, and "+
				"TryForEach returned at once (%v): shedding is the first error — cancel the calls in flight, then "+
				"wait for them before returning, or item 0 runs on unseen and a retry of the request runs it twice", err)
			wB.openAll()
			wA.openAll()
			return
		}
		wB.openAll()
		// Not bc.Returns: a TryForEach that panicked (reported already)
		// still has request A checked.
		synctest.Wait()
		if !bc.Returned() {
			t.Errorf("item 0 returned, but the TryForEach that shed item 1 did not")
			bc.Stop()
			wA.openAll()
			return
		}
		if err, ok := testResult(bc); ok {
			assert.ErrorIs(t, err, ErrBusy, "item 1 was shed: TryForEach returns an error matching ErrBusy")
		}
		wA.openAll()
		a.Returns("request A's call returned, but its TryForEach did not")
	})
}

func TestB2_ACancelledRequestKeepsNoSlot(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		b, err := NewBulkhead(1)
		if !assert.NoError(t, err, "NewBulkhead(1)") {
			return
		}
		// Three clients that already left: each finds the slot free.
		for range 3 {
			w := testNewWork(1)
			w.openAll()
			c := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(1), w.call) },
				katatest.Cancelled())
			if !c.Returns("TryForEach with a ctx already cancelled did not return") {
				return
			}
			if got := w.started(); got > 0 {
				t.Errorf("TryForEach with a ctx already cancelled called fn %d time(s) on a free slot: as for ForEach, "+
					"a ctx already done starts nothing, and nothing starts after a cancel or the first error; "+
					"TryForEach never waits, but it must still look at ctx before it starts each call", got)
				return
			}
		}
		w := testNewWork(1)
		w.openAll()
		c := katatest.StartErr(h, func(ctx context.Context) error { return TryForEach(ctx, b, testItems(1), w.call) })
		if !c.Returns("TryForEach with 1 item on a bulkhead of 1 free slot did not return") {
			return
		}
		if err, ok := testResult(c); ok && errors.Is(err, ErrBusy) {
			t.Errorf("three TryForEach calls with a ctx already cancelled started nothing, and then a request with 1 "+
				"item on the bulkhead of 1 slot, with nothing running, was shed (%v): a slot taken and then not used "+
				"(ctx found done) must be given back, or every client that leaves early loses a slot for good", err)
			return
		} else if ok {
			assert.NoError(t, err, "1 item on a bulkhead of 1 free slot: it runs")
		}
	})
}

func TestB1_AnItemWaitingForRoomDoesNotStartAfterTheFirstError(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		// Capacity 2, weights 2, 1, 1: item 0 runs alone and items 1 and 2
		// wait for room. Item 0 fails: its room comes back, but the run is
		// over, so neither may start.
		errBoom := errors.New("thumbnail 0: 500 internal error")
		weights := []int{2, 1, 1}
		w := testNewWork(len(weights))
		w.errs[0] = errBoom
		c := katatest.StartErr(h, func(ctx context.Context) error {
			return ForEachWeighted(ctx, testItems(len(weights)), 2, func(i int) int { return weights[i] }, w.call)
		})
		if c.Broken() {
			return
		}
		if got := w.running(); !slices.Equal(got, []int{0}) {
			t.Errorf("capacity 2, weights %v: the calls running were for items %v; want [0]: item 0 takes the "+
				"whole capacity", weights, got)
			w.openAll()
			c.Stop()
			return
		}
		w.open(0)
		testSettle(h)
		if n := w.started(); n > 1 {
			t.Errorf("capacity 2, weights %v: item 0 failed while items 1 and 2 waited for room, and then %d of them "+
				"started: after the first error nothing new may start, even an item whose room has just come back; "+
				"wait for room in a way that also sees ctx end, and check ctx again once you have the room",
				weights, n-1)
			w.openAll()
			c.Stop()
			return
		}
		if !testReturns(h, c, "item 0 failed and nothing else was running, but ForEachWeighted did not return") {
			return
		}
		err, ok := c.Finish("ForEachWeighted")
		if ok {
			assert.ErrorIs(t, err, errBoom, "item 0 failed: ForEachWeighted must return that first error")
		}
	})
}

// testLateGiveBack reports whether a request of one item, made right
// after another one returned, finds a bulkhead of 1 slot busy in a
// hundred tries: a slot given back after TryForEach returned. Nothing
// else is under way, so no claim can race another.
func testLateGiveBack(h *katatest.H) bool {
	b, err := NewBulkhead(1)
	if err != nil {
		return false
	}
	fn := func(context.Context, int) error { return nil }
	c := katatest.StartErr(h, func(ctx context.Context) error {
		for range 100 {
			if err := TryForEach(ctx, b, testItems(1), fn); err != nil {
				return err
			}
		}
		return nil
	})
	return !c.Broken() && c.Returns("requests of one item, one after another, on a bulkhead of 1 slot, every call "+
		"returning at once: TryForEach did not return") && errors.Is(c.Err(), ErrBusy)
}

func TestB2_ASlotIsFreeAgainWhenTryForEachReturns(t *testing.T) {
	// A request fills the bulkhead, its calls return at once, and the next
	// request, right after it returned, takes every slot again. A call
	// whose goroutine says it is done before it gives its slot back lets
	// TryForEach return with the slot still taken, and the next request is
	// shed for nothing. It depends on the schedule: repeated.
	katatest.Repeat(t, 16, func(h *katatest.H) {
		const limit = 3
		b, err := NewBulkhead(limit)
		if !assert.NoError(t, err, "NewBulkhead(3)") {
			return
		}
		fn := func(context.Context, int) error { return nil }
		c := katatest.StartErr(h, func(ctx context.Context) error {
			if err := TryForEach(ctx, b, testItems(limit), fn); err != nil {
				return err
			}
			for range 100 { // each request right after the one before it
				if err := TryForEach(ctx, b, testItems(limit), fn); err != nil {
					return err
				}
			}
			return nil
		})
		if !c.Returns("two requests of 3 items, one after the other, on a bulkhead of 3 " +
			"slots, every call returning at once: TryForEach did not return") {
			return
		}
		if err := c.Err(); errors.Is(err, ErrBusy) && testLateGiveBack(h) {
			t.Errorf("a request of 3 items on a bulkhead of 3 slots returned, every call done, and the next request, "+
				"right after it, got %q: a slot was still taken after TryForEach returned — give the slot back "+
				"before the goroutine counts itself done (defer wg.Done() first, so that it runs last), so that "+
				"every call has given its slot back when TryForEach returns", err)
		} else if errors.Is(err, ErrBusy) {
			t.Errorf("a request of 3 items on a bulkhead of 3 slots returned, every call done, and the next request, "+
				"right after it, got %q, although requests of one item, one after another on a bulkhead of 1 slot, "+
				"are never shed: the slots were free, but a claim gave up when one of the request's own calls gave "+
				"its slot back at that moment. A claim that loses such a race must try again (a failed "+
				"CompareAndSwap means the count changed, not that it is at the limit), or take a slot in one step "+
				"that cannot lose one (a select with a default case on a send to a buffered channel)", err)
		} else {
			assert.NoError(t, err, "every call succeeded: TryForEach must return nil")
		}
	})
}

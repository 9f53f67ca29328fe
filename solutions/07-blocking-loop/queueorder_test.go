package blockingloop

// R4 and the queue's order. The misses beyond MaxInFlight wait in a FIFO
// queue the loop owns, in the order the loop took them. The test holds the
// loop in OnTick (which runs on the loop goroutine) while Gets for one key
// after another arrive, each settled before the next: they wait to be
// taken in that order. Then the loop goes on and takes them back to back.
// When slots free, the queued misses start oldest first, whatever the
// scheduler did meanwhile with any goroutines the loop started for them.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

func TestR4_QueuedMissesStartInTheOrderTheLoopTookThem(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	// Not shaken (katatest.Run): a loop that yields after each go
	// statement lets each goroutine reach the semaphore in turn, while a
	// loop left alone takes the Gets and starts the goroutines back to back.
	for range 6 {
		katatest.Run(t, func(h *katatest.H) { testQueueOrder(h, keys) })
		if t.Failed() {
			return
		}
	}
}

func testQueueOrder(h *katatest.H, keys []string) {
	var mu sync.Mutex
	var started []string
	gates := map[string]*katatest.Gate{}
	for _, k := range keys {
		gates[k] = h.Gate()
	}
	lookup := func(ctx context.Context, key string) (string, error) {
		mu.Lock()
		started = append(started, key)
		mu.Unlock()
		if err := gates[key].Hold(ctx); err != nil {
			return "", err
		}
		return "value of " + key, nil
	}
	startedNow := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(started)
	}
	tick := h.Gate()
	var ticks atomic.Int32
	onTick := func(Stats) {
		if ticks.Add(1) == 1 {
			_ = tick.Hold(context.Background())
		}
	}
	cache := New(h.Clk, lookup, Config{MaxInFlight: 1, Tick: time.Second, OnTick: onTick})
	run := katatest.StartErr(h, cache.Run)
	var gets []*katatest.Call[string]
	defer func() {
		// The lookups end first, while Run still receives: what Run does
		// with a lookup that returns after its ctx ended is R5's business.
		tick.Release()
		for _, g := range gates {
			g.Release()
		}
		h.Settle()
		run.Cancel()
		for _, g := range gets {
			g.Cancel()
		}
		synctest.Wait()
	}()
	get := func(k string) {
		gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, k) }))
		synctest.Wait()
	}
	get(keys[0])
	if got := startedNow(); !slices.Equal(got, keys[:1]) {
		return // R1 and R4's other tests say why
	}
	h.Advance(time.Second)
	if tick.Waiting() != 1 {
		return // R2's tests say why
	}
	for _, k := range keys[1:] {
		get(k) // its Get waits for the loop, held in OnTick, behind the ones before
	}
	tick.Release()
	for i, k := range keys {
		synctest.Wait()
		got := startedNow()
		if len(got) != i+1 || got[i] != k {
			h.Errorf("MaxInFlight 1; the lookup of %q runs; while the loop was busy (in OnTick), Gets for %s "+
				"came in that order and waited for it, then it took them; as each lookup returned, the lookups "+
				"started were %s; want %s: the misses beyond MaxInFlight wait in a FIFO queue the loop owns, and "+
				"the oldest starts when a slot frees. Goroutines that each wait for a slot themselves (a "+
				"semaphore) start in whatever order the scheduler brought them there, not in the order the loop "+
				"took the misses", keys[0], strings.Join(keys[1:], ", "), fmt.Sprint(got), fmt.Sprint(keys[:i+1]))
			return
		}
		gates[k].Release()
	}
}

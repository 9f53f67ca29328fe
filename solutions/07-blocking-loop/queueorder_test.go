package blockingloop

// R4 and the queue's order. The misses beyond MaxInFlight wait in a FIFO
// queue the loop owns: the loop's order is the order in which it took the
// misses, which the test knows, because it asks Stats after each miss
// until the loop has counted it. No settle comes between: a goroutine the
// loop started for a miss may not have got anywhere yet. When slots free,
// the queued misses start oldest first, whatever the scheduler did with
// those goroutines.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"gokata/internal/katatest"
)

func TestR4_QueuedMissesStartInTheOrderTheLoopTookThem(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	katatest.Repeat(t, 12, func(h *katatest.H) {
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
		cache := New(h.Clk, lookup, Config{MaxInFlight: 1})
		run := katatest.StartErr(h, cache.Run)
		var gets []*katatest.Call[string]
		defer func() {
			run.Cancel()
			for _, g := range gets {
				g.Cancel()
			}
			synctest.Wait()
		}()
		for i, k := range keys {
			gets = append(gets, katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, k) }))
			for tries := 0; ; tries++ { // until the loop has taken this miss
				st, err := cache.Stats(context.Background())
				if err != nil || tries > 1000 {
					return // R4's other tests say why
				}
				if st.Misses == i+1 {
					break
				}
				if st.Misses > i+1 {
					return
				}
				runtime.Gosched()
			}
		}
		for i, k := range keys {
			h.Advance(0)
			got := startedNow()
			if len(got) != i+1 || got[i] != k {
				h.Errorf("MaxInFlight 1; the lookup of %q runs, and the loop took misses for %s, in that order, "+
					"while it ran; as each lookup returned, the lookups started were %s; want %s: the misses beyond "+
					"MaxInFlight wait in a FIFO queue the loop owns, and the oldest starts when a slot frees. Goroutines "+
					"that each wait for a slot themselves (a semaphore) start in whatever order the scheduler brought "+
					"them there, not in the order the loop took the misses", keys[0], strings.Join(keys[1:], ", "),
					fmt.Sprint(got), fmt.Sprint(keys[:i+1]))
				return
			}
			gates[k].Release()
		}
	})
}

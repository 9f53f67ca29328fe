package blockingloop

// R2: a nil OnTick turns the heartbeat off, whatever Tick says. There is
// nothing to call on a beat, so Run must not call it: the loop keeps
// answering, a lookup held or not, and stops as usual.

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"gokata/internal/katatest"
)

func TestR2_ANilOnTickTurnsTheHeartbeatOff(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		backend := testNewBackend()
		h.Own(backend.releaseAll)
		gate := backend.hold("slow")
		cache := New(h.Clk, backend.lookup, Config{MaxInFlight: 1, Tick: testTick}) // OnTick nil
		var panicked any
		run := katatest.StartErr(h, func(ctx context.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					panicked, err = r, fmt.Errorf("Run panicked: %v", r)
				}
			}()
			return cache.Run(ctx)
		})
		get := katatest.Start(h, func(ctx context.Context) (string, error) { return cache.Get(ctx, "slow") })
		synctest.Wait()
		h.Advance(10 * testTick)
		if run.Returned() {
			if panicked != nil {
				h.Errorf("Run panicked (%v) when the first Tick (%v) passed, with Config.OnTick nil: a nil OnTick "+
					"turns the heartbeat off whatever Tick says, so make the ticker only when Tick > 0 and "+
					"OnTick != nil (a nil func cannot be called)", panicked, testTick)
				return
			}
			h.Errorf("Run returned %v before its ctx ended, with Tick %v and OnTick nil: a nil OnTick turns the "+
				"heartbeat off, and the loop keeps serving", run.Err(), testTick)
			return
		}
		stats := katatest.Start(h, cache.Stats)
		if !stats.Returns("Stats kept waiting, 10 Ticks into a cache with Tick %v and OnTick nil and a lookup "+
			"held: a nil OnTick turns the heartbeat off, and the loop keeps answering", testTick) {
			return
		}
		if _, err := stats.Result(); err != nil {
			h.Errorf("Stats returned %v, 10 Ticks into a cache with Tick %v and OnTick nil; want the stats", err, testTick)
			return
		}
		gate.Release()
		if !get.Returns("Get(\"slow\") kept waiting after its lookup returned, with Tick %v and OnTick nil", testTick) {
			return
		}
		if v, err := get.Result(); err != nil || v != "v:slow" {
			h.Errorf("Get(\"slow\") returned (%q, %v) with Tick %v and OnTick nil; want the lookup's value", v, err, testTick)
			return
		}
		run.Cancel()
		if !run.Returns("Run kept running after its ctx ended, with Tick %v and OnTick nil", testTick) {
			return
		}
		if err, ok := run.Finish("Run"); ok && err != nil {
			h.Errorf("Run returned %v once its ctx ended, with Tick %v and OnTick nil; want nil", err, testTick)
		}
	})
}

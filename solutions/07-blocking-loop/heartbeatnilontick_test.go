package blockingloop

// R2's last clause: "Tick <= 0 or a nil OnTick turns the heartbeat off".
// A Config may set a Tick and leave OnTick nil (the period comes from a
// shared default, the metrics are wired elsewhere): the cache serves as
// usual while the clock passes Tick after Tick, with a lookup held across
// some of them, and never calls the nil func, which would crash the whole
// service on the loop goroutine.

import (
	"testing"
	"time"

	"gokata/internal/katatest"
)

func TestR2_ANilOnTickTurnsTheHeartbeatOff(t *testing.T) {
	for _, tick := range []time.Duration{1, testTick, 3*testTick + 1} {
		katatest.Run(t, func(h *katatest.H) {
			tb := &testBed{h: h, backend: testNewBackend(), ticks: &katatest.Recorder[Stats]{}}
			h.Own(tb.backend.releaseAll)
			tb.cache = New(h.Clk, tb.backend.lookup, Config{MaxInFlight: 2, Tick: tick})
			tb.run = katatest.StartErr(h, tb.cache.Run)
			defer tb.close()
			held := tb.backend.hold("slow")
			slow := tb.get("slow")
			for _, key := range []string{"a", "b", "c"} {
				h.Advance(tick)
				if !tb.fetch(key) {
					h.T.Errorf("with Tick %v and a nil OnTick: a nil OnTick turns the heartbeat off, and the loop serves as before", tick)
					return
				}
			}
			held.Release()
			h.Advance(2*tick + 1)
			if !testAnswered(slow) {
				h.T.Errorf("with Tick %v and a nil OnTick, Get(%q) did not return once its lookup answered: "+
					"a nil OnTick turns the heartbeat off, and the loop serves as before", tick, "slow")
			}
		})
	}
}

package fanout

// R1 past any round number: a limit "to be safe" (a semaphore of 256, of
// 1000, of 1024) is a limit all the same, and it shows only with more
// elements than it lets through. The README's contract is one call per
// element at once, however many elements there are (kata 03 adds a limit).

import (
	"context"
	"testing"

	"gokata/internal/katatest"
)

// testManyN is past the round numbers a cap "to be safe" is written with
// (256, 500, 1000, 1024), by one.
const testManyN = 1025

func TestR1_ThousandsOfCallsAreAllInFlightAtOnce(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		in := make([]int, testManyN)
		for i := range in {
			in[i] = testBase + i
		}
		g := h.Gate()
		fn := func(ctx context.Context, v int) (string, error) {
			_ = g.Hold(context.Background()) // a slow lookup that ignores its ctx
			return testResult(v), nil
		}
		c := katatest.Start(h, func(ctx context.Context) ([]string, error) { return Map(ctx, in, fn) })
		if c.Broken() {
			return
		}
		if !c.Waits("Map returned before any of its %d calls of fn had returned: it must wait for every call it starts",
			testManyN) {
			return
		}
		if got := g.Waiting(); got != testManyN {
			t.Errorf("only %d of %d calls of fn were in flight at once: Map must start every call before it waits for "+
				"any, with no limit, however many elements there are. A semaphore or a pool \"to be safe\" (of 1000, "+
				"of 1024 workers) holds back every element past it until a call returns; bounding the fan-out is "+
				"another contract (kata 03)", got, testManyN)
			c.Stop()
			return
		}
		g.Release()
		if !c.Returns("every call of fn had returned, but Map was still waiting") {
			return
		}
		out, err, ok := c.Finish("Map")
		if !ok {
			return
		}
		if err != nil || len(out) != testManyN { // their order is R2's business
			t.Errorf("every call of fn succeeded, but Map returned %d results and %v: want %d results and no error",
				len(out), err, testManyN)
		}
	})
}

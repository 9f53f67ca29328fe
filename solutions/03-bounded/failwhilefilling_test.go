package bounded

// R3 when a call fails while ForEach is still starting calls. With a
// limit as large as the items, ForEach never waits for a slot: it starts
// one call after another, and item 0's call fails at once, on a goroutine
// of its own, while the later items start. Once that call has returned its
// error, no new call may start. A correct ForEach can start a call or two
// in the moment between the failure and the cancel it causes; a ForEach
// that learns of the failure only when it next waits for a slot, or only
// once every call is started, starts all the rest.
//
// The scenario runs on one processor (GOMAXPROCS 1), so that the moment
// between a failure and its cancel is counted in switches between
// goroutines, which the shaken schedule makes at the code's
// synchronization points, not in nanoseconds: on several processors a
// failing goroutine the runtime pauses right after its call returned lets
// the loop start any number of calls, whatever the design.

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"gokata/internal/katatest"
)

func TestR3_NoCallStartsOnceACallFailedWhileTheOthersStart(t *testing.T) {
	const n = 256
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	katatest.Repeat(t, 8, func(h *katatest.H) {
		errBoom := errors.New("thumbnail 0: 500 internal error")
		var failed atomic.Bool
		var late, started atomic.Int32
		fn := func(ctx context.Context, i int) error {
			if i == 0 {
				failed.Store(true)
				return errBoom
			}
			started.Add(1)
			if failed.Load() && ctx.Err() == nil {
				late.Add(1)
			}
			<-ctx.Done()
			return ctx.Err()
		}
		c := katatest.StartErr(h, func(ctx context.Context) error { return ForEach(ctx, testItems(n), n, fn) })
		if !c.Returns("limit 256, 256 items: item 0 failed at once and every other call returns when its ctx is " +
			"cancelled, but ForEach did not return: the first error cancels the ctx of every call, a call started " +
			"at the moment of the failure included (a ctx of its own per call, registered after the failure swept " +
			"the registered ones, stays live), and ForEach waits for the calls it started") {
			return
		}
		if err := c.Err(); !errors.Is(err, errBoom) {
			return // R4's business
		}
		if k := late.Load(); k > (n-1)/2 {
			h.Errorf("limit 256, 256 items: item 0's call failed at once, while ForEach was still starting the "+
				"others, and %d calls started after that, with a live ctx (of %d calls started in all): once a call has "+
				"failed, no new call starts. The call that fails records its error and cancels at once, on its own "+
				"goroutine; a loop that learns of a failure only when it next waits for a slot, or once every call "+
				"has started, goes on starting calls meanwhile", k, started.Load())
		}
	})
}

package breaker

// R3 for a probe that ends without returning and without a panic: fn
// calls runtime.Goexit (t.FailNow inside fn does), so its goroutine
// unwinds through Do's deferred calls, where recover() returns nil. "A
// probe that ends, however it ends, frees its place": the next call is
// let through as a probe, or finds the breaker open again if that probe
// counted as a failure, but is never turned away as one too many.

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"gokata/internal/katatest"
)

func TestR3_AProbeThatEndsInGoexitFreesItsPlace(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		r := testNew(h, Settings{MaxFailures: 1, OpenTimeout: 10 * time.Second, HalfOpenMaxRequests: 1})
		if !r.fails(1, "a failure with MaxFailures 1") {
			return
		}
		h.Advance(10 * time.Second)
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			_ = r.b.Do(context.Background(), func(context.Context) error {
				runtime.Goexit()
				return nil
			})
		}()
		synctest.Wait()
		select {
		case <-ended:
		default:
			h.Errorf("a probe whose fn called runtime.Goexit never ended: Do must not wait for anything once fn is gone")
			return
		}
		err, ran, ok := r.call(nil, "the call after the probe that ended in runtime.Goexit")
		if !ok {
			return
		}
		if errors.Is(err, ErrTooManyRequests) {
			h.Errorf("half-open with HalfOpenMaxRequests 1: the one probe's fn ended in runtime.Goexit (as t.FailNow "+
				"does), and the next Do was rejected with %q: that probe still held its place, and the breaker is "+
				"stuck half-open, rejecting every call for good. A probe that ends, however it ends, frees its "+
				"place: give it back in a deferred function that runs whatever way fn ended (recover() returns nil "+
				"on a Goexit, so a place freed only on a return or a recovered panic is never freed)", err)
			return
		}
		if err != nil && !errors.Is(err, ErrOpen) {
			h.Errorf("after the probe that ended in runtime.Goexit, the next Do returned %q; want it let through as "+
				"a probe (nil) or, if that probe counted as a failure, rejected with ErrOpen", err)
			return
		}
		if err == nil && !ran {
			h.Errorf("the next Do returned nil without calling fn")
		}
	})
}

package katatest

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestWaitUnorderedRunsEveryGoroutineUntilItBlocks(t *testing.T) {
	Run(t, func(h *H) {
		var steps atomic.Int32
		block := make(chan struct{})
		for range 3 {
			go func() {
				for range 100 {
					steps.Add(1)
				}
				<-block
			}()
		}
		start := h.Elapsed()
		h.WaitUnordered()
		if got := steps.Load(); got != 300 {
			t.Errorf("after WaitUnordered the goroutines had taken %d of their 300 steps; want all of them", got)
		}
		if h.Elapsed() != start {
			t.Errorf("WaitUnordered moved the mock clock by %v; it must not", h.Elapsed()-start)
		}
		close(block)
	})
}

func TestAtFreshDepthNeverRepeatsADepth(t *testing.T) {
	seen := map[int]bool{}
	for range 5 {
		AtFreshDepth(func() {
			n := runtime.Callers(0, make([]uintptr, 4096))
			if seen[n] {
				t.Errorf("AtFreshDepth called f twice at a depth of %d frames", n)
			}
			seen[n] = true
		})
	}
	if len(seen) != 5 {
		t.Errorf("AtFreshDepth called f at %d depths in 5 calls; want 5", len(seen))
	}
}

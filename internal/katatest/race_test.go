package katatest

import (
	"fmt"
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

func TestAtFreshDepthNeverRepeatsAStack(t *testing.T) {
	seen := map[string]bool{}
	depths := map[int]bool{}
	for range 300 {
		AtFreshDepth(func() {
			pcs := make([]uintptr, 4096)
			n := runtime.Callers(0, pcs)
			stack := fmt.Sprint(pcs[:n])
			if seen[stack] {
				t.Errorf("AtFreshDepth called f twice from the same stack: %s", stack)
			}
			seen[stack] = true
			depths[n] = true
		})
	}
	if len(seen) != 300 {
		t.Errorf("AtFreshDepth called f from %d stacks in 300 calls; want 300", len(seen))
	}
	if len(depths) != 1 {
		t.Errorf("AtFreshDepth called f at %d depths; want one, however many calls came before", len(depths))
	}
}

package katatest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSettleWaitsForQuietCode(t *testing.T) {
	Run(t, func(h *H) {
		var mu sync.Mutex
		n := 0
		for range 5 {
			go func() {
				mu.Lock() // contended, but never held across a wait
				n++
				mu.Unlock()
			}()
		}
		c := Go(h, func() (int, error) { return 0, pause(context.Background(), h.Clk, time.Second) })
		require.Nil(t, h.Settle(), "nothing holds a mutex across a wait")
		mu.Lock()
		assert.Equal(t, 5, n, "Settle returned before the goroutines had run")
		mu.Unlock()
		assert.False(t, c.Returned())
		h.Advance(time.Second)
		assert.True(t, c.Returned())
	})
}

func TestSettleReportsMutexHeldAcrossAWait(t *testing.T) {
	Run(t, func(h *H) {
		var mu sync.Mutex
		ctx, cancel := context.WithCancel(context.Background())
		held := Go(h, func() (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return 0, pause(ctx, h.Clk, time.Hour) // waits holding mu
		})
		require.Nil(t, h.Settle(), "one goroutine waiting on the clock is quiet")
		queued := Go(h, func() (int, error) { mu.Lock(); mu.Unlock(); return 0, nil })
		for i := range 2 { // the state is stable: asking again gives the same answer
			stuck := h.Settle()
			if assert.Len(t, stuck, 1, "round %d: the goroutine queued on the mutex", i+1) {
				assert.Contains(t, stuck[0], "sync.Mutex.Lock")
			}
		}
		cancel()
		assert.Nil(t, h.Settle(), "the holder returned and released the mutex")
		assert.True(t, held.Returned() && queued.Returned())

		var rw sync.RWMutex
		rw.Lock()
		reader := Go(h, func() (int, error) { rw.RLock(); rw.RUnlock(); return 0, nil })
		if stuck := h.Settle(); assert.Len(t, stuck, 1, "a reader queued on an RWMutex") {
			assert.Contains(t, stuck[0], "sync.RWMutex.RLock")
		}
		rw.Unlock()
		assert.Nil(t, h.Settle())
		assert.True(t, reader.Returned())
	})
}

// Goroutines counts the bubble's goroutines only: not one blocked outside
// it, as a goroutine an earlier test left behind is.
func TestGoroutinesCountsTheBubbleOnly(t *testing.T) {
	outside := make(chan struct{})
	defer close(outside)
	for range 20 {
		go func() { <-outside }()
	}
	Run(t, func(h *H) {
		before := h.Goroutines()
		assert.Positive(t, before, "the test body's own goroutine is in the bubble")
		stop := make(chan struct{})
		for range 3 {
			go func() { <-stop }()
		}
		synctest.Wait()
		assert.Equal(t, before+3, h.Goroutines())
		close(stop)
		synctest.Wait()
		assert.Equal(t, before, h.Goroutines())
	})
}

// A goroutine waiting on a channel made outside the bubble (a package-level
// lock) is blocked, not busy: Settle names it instead of hanging.
func TestSettleReportsAWaitOnAChannelFromOutside(t *testing.T) {
	lock := make(chan struct{}, 1) // made outside the bubble
	lock <- struct{}{}
	Run(t, func(h *H) {
		done := make(chan struct{})
		go func() {
			lock <- struct{}{} // held: waits, not durably
			<-lock
			close(done)
		}()
		stuck := h.Settle()
		require.Len(t, stuck, 1)
		assert.Contains(t, stuck[0], "chan send")
		<-lock // the holder lets go
		<-done
	})
}

// Goroutine names the calling goroutine: the same id on one goroutine,
// another on every other, also on a goroutine started once the one before
// it has ended (its stack may be the same one, reused).
func TestGoroutineNamesTheCallingGoroutine(t *testing.T) {
	outside := Goroutine()
	assert.Positive(t, outside)
	assert.Equal(t, outside, Goroutine(), "the same goroutine, the same id")
	Run(t, func(h *H) {
		own := Goroutine()
		assert.Equal(t, own, Goroutine(), "inside a bubble too")
		assert.NotEqual(t, outside, own, "the bubble's goroutine is not the test's")
		seen := map[int]bool{outside: true, own: true}
		for range 5 { // one after the other: each has ended before the next starts
			ch := make(chan int)
			go func() { ch <- Goroutine() }()
			id := <-ch
			synctest.Wait()
			assert.False(t, seen[id], "goroutine %d was seen before: ids are never reused", id)
			seen[id] = true
		}
	})
}

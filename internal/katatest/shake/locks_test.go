package shake

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast read of a goroutine's id agrees with its stack dump, on every
// goroutine.
func TestGoid(t *testing.T) {
	if hasG {
		require.GreaterOrEqual(t, goidOffset, 0, "the id's offset is found where getg exists")
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { assert.Equal(t, goidFromStack(), goid()) })
	}
	wg.Wait()
	assert.Equal(t, goidFromStack(), goid())
}

// A lock taken and given back, with its notes, as a graded build does
// for each Lock in the code: a few hundred nanoseconds.
func BenchmarkNotes(b *testing.B) {
	var mu sync.Mutex
	for range b.N {
		Locking(&mu, false, "f.go", 1)
		mu.Lock()
		Locked(&mu, false, "f.go", 1)
		mu.Unlock()
		Unlocked(&mu, false)
	}
}

package katatest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/internal/failure"
	"gokata/internal/katatest/shake"
)

// stuckOn is a goroutine of the dump, in state, at line of the learner's
// file k.go in /k.
func stuckOn(id int, state string, line int) failure.Goroutine {
	return failure.Goroutine{Header: fmt.Sprintf("goroutine %d [%s]", id, state), State: state,
		Frames: []failure.Frame{{Func: "F", File: "/k/k.go", Line: line}}}
}

func lockAt(addr uintptr, read bool, line int) shake.Lock {
	return shake.Lock{Addr: addr, Read: read, File: "k.go", Line: line}
}

func TestDiagnoseLocks(t *testing.T) {
	const a, b = 0xa0, 0xb0
	for _, c := range []struct {
		name    string
		gs      []failure.Goroutine
		notes   map[int]shake.Notes
		certain string // a part of the diagnosis; "" for none
		holder  string // a part of goroutine 1's holder line
	}{{
		name: "opposite orders",
		gs:   []failure.Goroutine{stuckOn(1, "sync.Mutex.Lock", 20), stuckOn(2, "sync.Mutex.Lock", 30)},
		notes: map[int]shake.Notes{
			1: {Holds: []shake.Lock{lockAt(a, false, 19)}, Wait: lockAt(b, false, 20), Waits: true},
			2: {Holds: []shake.Lock{lockAt(b, false, 29)}, Wait: lockAt(a, false, 30), Waits: true},
		},
		certain: "lock-order deadlock: 2 goroutines",
		holder:  "taken at /k/k.go:29 by a goroutine that holds it while it waits: sync.Mutex.Lock",
	}, {
		name:    "locked twice",
		gs:      []failure.Goroutine{stuckOn(1, "sync.Mutex.Lock", 40)},
		notes:   map[int]shake.Notes{1: {Holds: []shake.Lock{lockAt(a, false, 35)}, Wait: lockAt(a, false, 40), Waits: true}},
		certain: "locked twice: a goroutine holds the lock it took at /k/k.go:35 and asks for it again at /k/k.go:40",
		holder:  "it holds that lock itself, taken at /k/k.go:35",
	}, {
		name: "read lock again with a writer waiting",
		gs:   []failure.Goroutine{stuckOn(1, "sync.RWMutex.RLock", 52), stuckOn(2, "sync.RWMutex.Lock", 70)},
		notes: map[int]shake.Notes{
			1: {Holds: []shake.Lock{lockAt(a, true, 40)}, Wait: lockAt(a, true, 52), Waits: true},
			2: {Wait: lockAt(a, false, 70), Waits: true},
		},
		certain: "recursive read lock: a goroutine holds a read lock it took at /k/k.go:40 and asks for it again at /k/k.go:52 while another waits to write-lock it at /k/k.go:70",
	}, {
		name: "two readers and no writer wait for nothing",
		gs:   []failure.Goroutine{stuckOn(1, "sync.RWMutex.RLock", 52), stuckOn(2, "chan receive", 60)},
		notes: map[int]shake.Notes{
			1: {Holds: []shake.Lock{lockAt(a, true, 40)}, Wait: lockAt(a, true, 52), Waits: true},
			2: {Holds: []shake.Lock{lockAt(a, true, 58)}},
		},
	}, {
		name:    "held by an ended goroutine",
		gs:      []failure.Goroutine{stuckOn(1, "sync.Mutex.Lock", 20)},
		notes:   map[int]shake.Notes{1: {Wait: lockAt(a, false, 20), Waits: true}, 9: {Holds: []shake.Lock{lockAt(a, false, 12)}}},
		certain: "a lock is never unlocked: it was taken at /k/k.go:12 by a goroutine that has ended",
		holder:  "the lock was taken at /k/k.go:12 by a goroutine that has ended without unlocking it",
	}, {
		name:   "held across a wait: the test may still release it",
		gs:     []failure.Goroutine{stuckOn(1, "sync.Mutex.Lock", 20), stuckOn(2, "select (durable)", 25)},
		notes:  map[int]shake.Notes{1: {Wait: lockAt(a, false, 20), Waits: true}, 2: {Holds: []shake.Lock{lockAt(a, false, 22)}}},
		holder: "the lock was taken at /k/k.go:22 by a goroutine that holds it while it waits: select (durable) at /k/k.go:25 F",
	}, {
		name: "without notes nothing is said",
		gs:   []failure.Goroutine{stuckOn(1, "sync.Mutex.Lock", 20), stuckOn(2, "sync.Mutex.Lock", 30)},
	}} {
		t.Run(c.name, func(t *testing.T) {
			got := diagnoseLocks(c.gs, c.notes, "/k")
			if c.certain == "" {
				assert.Empty(t, got.certain)
			} else {
				assert.Contains(t, got.certain, c.certain)
			}
			if c.holder == "" {
				assert.Empty(t, got.holders[1])
			} else {
				assert.Contains(t, got.holders[1], c.holder)
			}
		})
	}
}

// The notes a graded build takes around Lock and Unlock statements reach
// Locks: the lock a goroutine holds, the one it waits for, with their lines.
func TestLockNotes(t *testing.T) {
	var a, b int
	done, hold, release := make(chan bool), make(chan bool), make(chan bool)
	var id int
	go func() {
		id = Goroutine()
		shake.Locking(&a, false, "locks_test.go", 1)
		shake.Locked(&a, false, "locks_test.go", 2)
		shake.Locking(&b, true, "locks_test.go", 3)
		hold <- true
		<-release
		shake.Locked(&b, true, "locks_test.go", 4)
		shake.Unlocked(&b, true)
		shake.Unlocked(&a, false)
		done <- true
	}()
	<-hold
	n := shake.Locks()[id]
	if assert.Len(t, n.Holds, 1) {
		assert.Contains(t, n.Holds[0].File, "locks_test.go")
		assert.Positive(t, n.Holds[0].Line)
	}
	assert.True(t, n.Waits)
	assert.True(t, n.Wait.Read)
	close(release)
	<-done
	assert.NotContains(t, shake.Locks(), id, "every lock was given back")
}

func TestNeverWoken(t *testing.T) {
	assert.Contains(t, neverWoken([]failure.Goroutine{stuckOn(1, "chan receive (durable)", 10), stuckOn(2, "sync.Cond.Wait (durable)", 12)}, "/k"),
		"waits in Cond.Wait at /k/k.go:12 F and nothing left will Signal or Broadcast")
	assert.Contains(t, neverWoken([]failure.Goroutine{stuckOn(1, "sync.WaitGroup.Wait (durable)", 9)}, "/k"),
		"waits in WaitGroup.Wait at /k/k.go:9 F and the count never reaches zero")
	assert.Empty(t, neverWoken([]failure.Goroutine{stuckOn(1, "select (durable)", 10)}, "/k"))
}

package katatest

import (
	"sync/atomic"
	"time"
)

// Data-race requirements need two things from a test, and the race detector
// makes both easy to get wrong.
//
// It reports two accesses only if nothing orders them, and synctest.Wait
// orders everything the bubble's goroutines did before it before everything
// the test does after it. And by default it reports a race between the same
// two call stacks only once per process: under a plain go test -count=N a
// race found in the first run passes unreported in the others. (The checker
// runs test binaries with GORACE=suppress_equal_stacks=0, which reports it
// every time.) WaitUnordered keeps the accesses unordered; AtFreshDepth keeps
// a race visible under plain go test -count as well.

// WaitUnordered lets every other goroutine of the bubble run until it is
// durably blocked, as synctest.Wait does, but without ordering what they did
// before what the test does next. Use it between two steps whose accesses
// must stay concurrent for the race detector: let the code under test read
// its state, WaitUnordered, then release the goroutines that may write it.
//
// It lets 1ns of bubble time pass; the mock clock does not move. The
// bubble's clock advances only once every other goroutine is durably blocked,
// and waking from a timer, unlike returning from synctest.Wait, creates no
// happens-before edge.
func (h *H) WaitUnordered() { time.Sleep(time.Nanosecond) }

var freshStack atomic.Uint32

// AtFreshDepth calls f from a call stack that no earlier call in this process
// used. Call it first thing in the goroutine whose accesses may race (an event
// loop, say) and do that goroutine's work in f: each run of the test then
// races from a call stack of its own, which the race detector reports even
// when an earlier run of the same binary reported the same lines.
//
// The stack spells the call's number in binary, one frame per bit, each
// frame a call from one of two sites: 32 frames, whatever the number (a
// stack as deep as the number made a long go test -count run slower with
// every call).
func AtFreshDepth(f func()) { nestBits(freshStack.Add(1), 32, f) }

// nestBits calls f below one frame per remaining bit of n: the frame of a 1
// bit calls from one site, that of a 0 bit from another.
func nestBits(n uint32, bits int, f func()) {
	switch {
	case bits == 0:
		f()
	case n&1 == 1:
		nestOne(n>>1, bits-1, f)
	default:
		nestZero(n>>1, bits-1, f)
	}
}

//go:noinline
func nestOne(n uint32, bits int, f func()) { nestBits(n, bits, f) }

//go:noinline
func nestZero(n uint32, bits int, f func()) { nestBits(n, bits, f) }

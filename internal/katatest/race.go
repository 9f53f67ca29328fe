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

var freshDepth atomic.Int64

// AtFreshDepth calls f at a call depth that no earlier call in this process
// used. Call it first thing in the goroutine whose accesses may race (an event
// loop, say) and do that goroutine's work in f: each run of the test then
// races from a call stack of its own, which the race detector reports even
// when an earlier run of the same binary reported the same lines.
func AtFreshDepth(f func()) { nestCalls(freshDepth.Add(1), f) }

func nestCalls(n int64, f func()) {
	if n == 0 {
		f()
		return
	}
	nestCalls(n-1, f)
}

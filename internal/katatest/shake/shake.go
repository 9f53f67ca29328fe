// Package shake widens the windows between synchronization points.
//
// Only time is fake in a hidden test; the scheduler still decides which
// goroutine runs. Left alone, it lets a short call run from start to end
// without a switch, so a window a few instructions wide (a check and an
// act in two critical sections, a state recorded just after a release)
// almost never has another goroutine inside it. [Point] yields the
// processor a few times at the moments where a switch can change the
// outcome: the grader calls it after every synchronization statement of
// the code it grades, and the harness's fakes call it where the code
// calls into them.
//
// Point does nothing until [On] turns the yields on: the harness does so
// for each repetition of a scenario whose outcome depends on scheduling,
// with a seed of its own, and [Off] turns them off again.
//
// Point must not order anything: the race detector reports two accesses
// only when nothing orders them, and a mutex, a channel or an atomic
// read-modify-write here would order the goroutines that pass through it
// and hide their races. So Point only loads one word that On stored before
// those goroutines began, draws from the runtime's per-thread random
// source (math/rand/v2's functions) and calls runtime.Gosched, none of
// which the race detector sees as synchronization.
//
// A seed does not replay a schedule: the scheduler still picks who runs
// next. It picks how often and how long Point yields, so different seeds
// shake the code in different ways.
package shake

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
)

// state is zero while the yields are off. Otherwise its low byte is the
// chance out of 256 that a Point yields at all, and the next byte the
// most times it yields in a row.
var state atomic.Uint64

// On turns the yields on for the seed. Call it before the goroutines it
// should shake start, from the goroutine that starts them.
func On(seed uint64) { state.Store(profile(seed)) }

// Off turns the yields off.
func Off() { state.Store(0) }

// profile derives from the seed how eagerly Point yields: with a
// chance of 1/2, 3/4, 7/8 or always, each time 1 to 4 times in a row.
// (A check-then-act window shows in about 65, 90, 95 and 100 runs of
// 100 with these chances; with a chance of 1/4, in under half.)
func profile(seed uint64) uint64 {
	r := mix(seed)
	chance := [4]uint64{128, 192, 224, 256}[r%4] // out of 256
	most := 1 + (r>>2)%4
	return chance | most<<16
}

// mix is splitmix64's finalizer: nearby seeds give unrelated profiles.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// Point may yield the processor a few times, as the seed given to On
// says; while the yields are off it returns at once.
func Point() {
	s := state.Load()
	if s == 0 {
		return
	}
	r := rand.Uint64()
	if r&0xff >= s&0xffff {
		return
	}
	for range 1 + (r>>8)%(s>>16) {
		runtime.Gosched()
	}
}

// Enabled reports whether the yields are on.
func Enabled() bool { return state.Load() != 0 }

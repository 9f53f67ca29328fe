// Package session is the checker's application layer: grading a learner's
// code (and what a grade means for a bug hunt under way), a watch session
// that grades again on every save, and a timed interview (a bug hunt's
// included), which leaves its record (package record) behind; catch;
// what else a learner asks of a checkout (Checkout: reset, bug hunts,
// hints, decisions, the reference, the kata list); regrading returned
// work; and doctor's checks of the machine. Each
// reports what happens as events, plain data that a front
// end renders: the command line draws them on a terminal, a web board
// could send them to a browser. Nothing here writes to a terminal.
//
// Events are delivered one at a time, in order, on the goroutine that runs
// the session, through an Emit func; a nil Emit drops them. A session's
// inputs are channels (the lines typed, the saves seen) and a context
// whose cancellation is Ctrl-C. Time comes from an injected clock.
package session

import (
	"path/filepath"
	"strings"
	"time"

	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/grade"
)

// Event is one of the types below.
type Event interface{ event() }

// Building says that the build of kata Kata's test binary started; the
// first one on a machine takes about a minute. Built follows it.
type Building struct {
	Kata string
	Race bool // under the race detector
}

// Built says that the build announced by Building ended.
type Built struct{ Kata string }

// Graded is a grade of the learner's code, already recorded in the state
// file. In a timed session, Left is the time left when it was made.
type Graded struct {
	Result *grade.Result
	Timed  bool
	Left   time.Duration
	// Code is the learner's files as graded (name → content), read
	// before the grade; Fingerprint is theirs and the hidden tests'.
	Code        map[string][]byte
	Fingerprint fingerprint.Pair
	Hunt        *Hunt // the bug hunt under way on the kata; nil for none
}

// Warning is something that went wrong without stopping the session, such
// as a state file that could not be written.
type Warning struct{ Text string }

// Watching follows each grade of a watch session: which exercise is
// watched, whether it passes, and the kata a pass leads to ("" when
// every kata passes).
type Watching struct {
	Kata     string
	Exercise string // relative to the checkout
	Passed   bool
	Next     string
}

// Stopped says that the session was interrupted (Ctrl-C).
type Stopped struct{}

func (Building) event() {}
func (Built) event()    {}
func (Graded) event()   {}
func (Warning) event()  {}
func (Watching) event() {}
func (Stopped) event()  {}

// emitter sends events to an Emit func that may be nil.
type emitter func(Event)

func (e emitter) emit(ev Event) {
	if e != nil {
		e(ev)
	}
}

// rel names path relative to root for events.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

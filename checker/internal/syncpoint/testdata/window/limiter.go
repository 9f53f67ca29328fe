// Package window has a window a few instructions wide: Take checks the
// limit and counts the call in two critical sections, so two callers can
// pass the same check before either counts.
package window

import "sync"

// Limiter lets at most limit calls of Take succeed.
type Limiter struct {
	mu       sync.Mutex
	n, limit int
}

// New returns a Limiter of limit calls.
func New(limit int) *Limiter { return &Limiter{limit: limit} }

// Take reports whether the call is within the limit, and counts it.
func (l *Limiter) Take() bool {
	l.mu.Lock()
	ok := l.n < l.limit
	l.mu.Unlock()
	l.mu.Lock()
	if ok {
		l.n++
	}
	l.mu.Unlock()
	return ok
}

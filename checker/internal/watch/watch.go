// Package watch tells when files have changed and then stayed unchanged
// for a moment: the signal to grade again after the learner saves.
//
// It polls a fingerprint of the files (a hash of their contents) rather
// than asking the operating system for events: a few small files hash in
// microseconds, polling works the same everywhere, and an editor that
// writes a temporary file and renames it, or saves the same content again,
// needs no special case. A change is reported once the fingerprint has
// stayed the same for Quiet, and only if it differs from the one reported
// last (or from the first, before any report).
package watch

import (
	"context"
	"time"
)

// Options tune a watch. The zero value uses the defaults.
type Options struct {
	Poll  time.Duration // how often to look; default 25ms
	Quiet time.Duration // how long the files must stay unchanged; default 60ms
	// Settled, when set, is called on the watching goroutine with the
	// fingerprint of every settled change, also of one whose signal a
	// pending one absorbs: a record can keep every version saved.
	Settled func(fingerprint string)
}

func (o Options) withDefaults() Options {
	if o.Poll <= 0 {
		o.Poll = 25 * time.Millisecond
	}
	if o.Quiet <= 0 {
		o.Quiet = 60 * time.Millisecond
	}
	return o
}

// Changes reads the fingerprint now, then polls it until ctx ends and
// sends on the returned channel after every settled change. A signal not
// yet received absorbs later ones: a slow receiver gets one signal for
// many saves, never a backlog. The channel is closed when ctx ends. An
// error from fingerprint counts as a change still in progress (a file
// half written, or renamed away for a moment).
func Changes(ctx context.Context, fingerprint func() (string, error), opt Options) <-chan struct{} {
	opt = opt.withDefaults()
	out := make(chan struct{}, 1)
	const broken = "\x00" // no fingerprint: the files are mid-change
	read := func() string {
		fp, err := fingerprint()
		if err != nil {
			return broken
		}
		return fp
	}
	reported := read()
	go func() {
		defer close(out)
		tick := time.NewTicker(opt.Poll)
		defer tick.Stop()
		seen, since := reported, time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			fp := read()
			if fp != seen {
				seen, since = fp, time.Now()
				continue
			}
			if seen == reported || seen == broken || time.Since(since) < opt.Quiet {
				continue
			}
			reported = seen
			if opt.Settled != nil {
				opt.Settled(seen)
			}
			select {
			case out <- struct{}{}:
			default: // one is pending already
			}
		}
	}()
	return out
}

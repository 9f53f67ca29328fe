package watch_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/watch"
)

// files is a fake set of files whose fingerprint the test sets.
type files struct {
	mu  sync.Mutex
	fp  string
	err error
}

func (f *files) set(fp string, err error) { f.mu.Lock(); f.fp, f.err = fp, err; f.mu.Unlock() }
func (f *files) fingerprint() (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fp, f.err
}

var opt = watch.Options{Poll: 50 * time.Millisecond, Quiet: 100 * time.Millisecond}

// signals counts what arrived on ch so far, without waiting.
func signals(ch <-chan struct{}) int {
	n := 0
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return n
			}
			n++
		default:
			return n
		}
	}
}

func TestNoChangeNoSignal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &files{fp: "a"}
		ch := watch.Changes(ctx, f.fingerprint, opt)
		time.Sleep(time.Minute)
		assert.Equal(t, 0, signals(ch))
	})
}

func TestSignalAfterQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &files{fp: "a"}
		ch := watch.Changes(ctx, f.fingerprint, opt)
		start := time.Now()
		f.set("b", nil)
		<-ch
		took := time.Since(start)
		assert.GreaterOrEqual(t, took, opt.Quiet, "not before the files stayed quiet")
		assert.LessOrEqual(t, took, opt.Quiet+2*opt.Poll, "soon after")
		time.Sleep(time.Minute)
		assert.Equal(t, 0, signals(ch), "one signal per change")
	})
}

// An editor that writes a file in several steps, a few polls apart, causes
// one grade, after the last step.
func TestDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &files{fp: "a"}
		ch := watch.Changes(ctx, f.fingerprint, opt)
		for _, fp := range []string{"b1", "b2", "b3"} {
			f.set(fp, nil)
			time.Sleep(opt.Quiet / 2)
		}
		f.set("", errors.New("file renamed away"))
		time.Sleep(time.Second)
		assert.Equal(t, 0, signals(ch), "no signal while the files are broken or changing")
		f.set("b4", nil)
		time.Sleep(time.Second)
		assert.Equal(t, 1, signals(ch))
	})
}

// Saving the content that was last reported again is no change.
func TestSameContentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &files{fp: "a"}
		ch := watch.Changes(ctx, f.fingerprint, opt)
		f.set("b", nil)
		time.Sleep(3 * opt.Poll / 2) // seen by one poll only, then back
		f.set("a", nil)
		time.Sleep(time.Second)
		assert.Equal(t, 0, signals(ch))
	})
}

// A receiver busy grading gets one signal for many saves, not a backlog.
func TestCoalesce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &files{fp: "a"}
		ch := watch.Changes(ctx, f.fingerprint, opt)
		for _, fp := range []string{"b", "c", "d"} {
			f.set(fp, nil)
			time.Sleep(time.Second)
		}
		assert.Equal(t, 1, signals(ch))
	})
}

func TestClosedWhenDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		f := &files{fp: "a"}
		ch := watch.Changes(ctx, f.fingerprint, opt)
		cancel()
		_, ok := <-ch
		assert.False(t, ok)
	})
}

// Settled hears every settled change, also those whose signal a pending
// one absorbs, and no change that did not settle.
func TestSettledHearsEveryChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		f := &files{fp: "a"}
		var heard []string // on the watching goroutine; read after it settles
		o := opt
		o.Settled = func(fp string) { heard = append(heard, fp) }
		ch := watch.Changes(ctx, f.fingerprint, o)
		for _, fp := range []string{"b", "c", "half", "d"} {
			f.set(fp, nil)
			if fp == "half" {
				time.Sleep(opt.Poll) // seen, but changed again before it settled
				continue
			}
			time.Sleep(time.Second)
		}
		synctest.Wait()
		assert.Equal(t, []string{"b", "c", "d"}, heard)
		assert.Equal(t, 1, signals(ch), "one signal for the three, none received in between")
	})
}

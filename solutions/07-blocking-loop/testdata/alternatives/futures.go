// Design: futures: the loop hands every Get a future for its key (one per
// lookup, shared by every caller), which it completes by closing a channel;
// callers wait on the future, and a buffered results channel lets lookups finish.
package blockingloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
)

// Config tunes a Cache.
type Config struct {
	MaxInFlight int
	Tick        time.Duration
	OnTick      func(Stats)
	Grace       time.Duration
}

// Stats is a snapshot of the loop's state.
type Stats struct {
	Entries  int
	Hits     int
	Misses   int
	InFlight int
	Queued   int
}

// ErrStopped is returned by Get and Stats once Run's ctx has ended.
var ErrStopped = errors.New("blockingloop: cache stopped")

// ErrAbandoned is matched by Run's error when Grace passed with lookups running.
var ErrAbandoned = errors.New("blockingloop: lookups abandoned")

// future is the outcome of one lookup: done is closed once value and err
// are set, by the loop, and never written again.
type future struct {
	key   string
	done  chan struct{}
	value string
	err   error
}

// Cache is a read-through cache whose state belongs to Run's goroutine.
type Cache struct {
	clk    clock.Clock
	lookup func(ctx context.Context, key string) (string, error)
	cfg    Config

	asks    chan ask
	polls   chan chan Stats
	stopped chan struct{}
}

type ask struct {
	key   string
	reply chan *future // buffered: the loop never waits for the caller
}

// New returns a cache; nothing runs until Run.
func New(clk clock.Clock, lookup func(ctx context.Context, key string) (string, error), cfg Config) *Cache {
	if cfg.MaxInFlight < 1 {
		cfg.MaxInFlight = 1
	}
	return &Cache{clk: clk, lookup: lookup, cfg: cfg,
		asks: make(chan ask), polls: make(chan chan Stats), stopped: make(chan struct{})}
}

// Run is the event loop.
func (c *Cache) Run(ctx context.Context) error {
	var beat <-chan time.Time
	if c.cfg.Tick > 0 && c.cfg.OnTick != nil {
		t := c.clk.Ticker(c.cfg.Tick)
		defer t.Stop()
		beat = t.C
	}
	var (
		ready    = map[string]string{}  // stored values
		pending  = map[string]*future{} // lookups running or queued, by key
		waiting  []*future              // queued, oldest first
		running  int
		hits     int
		misses   int
		finished = make(chan *future, c.cfg.MaxInFlight) // room for every running lookup
	)
	start := func(f *future) {
		running++
		go func() {
			f.value, f.err = c.lookup(ctx, f.key)
			finished <- f // never blocks: at most MaxInFlight run
		}()
	}
	snapshot := func() Stats {
		return Stats{Entries: len(ready), Hits: hits, Misses: misses, InFlight: running, Queued: len(waiting)}
	}
loop:
	for {
		select {
		case a := <-c.asks:
			if v, ok := ready[a.key]; ok {
				hits++
				f := &future{key: a.key, done: make(chan struct{}), value: v}
				close(f.done)
				a.reply <- f
				continue
			}
			misses++
			f := pending[a.key]
			if f == nil {
				f = &future{key: a.key, done: make(chan struct{})}
				pending[a.key] = f
				if running < c.cfg.MaxInFlight {
					start(f)
				} else {
					waiting = append(waiting, f)
				}
			}
			a.reply <- f
		case f := <-finished:
			running--
			if ctx.Err() != nil {
				break loop // the stop came first: this result may answer it, and goes to nobody
			}
			delete(pending, f.key)
			if f.err == nil {
				ready[f.key] = f.value
			} else {
				f.value = ""
			}
			close(f.done)
			if len(waiting) > 0 {
				next := waiting[0]
				waiting = waiting[1:]
				start(next)
			}
		case reply := <-c.polls:
			reply <- snapshot()
		case <-beat:
			c.cfg.OnTick(snapshot())
		case <-ctx.Done():
			break loop
		}
	}
	close(c.stopped)
	var expired <-chan time.Time
	if c.cfg.Grace > 0 {
		t := c.clk.Timer(c.cfg.Grace)
		defer t.Stop()
		expired = t.C
	}
	for running > 0 {
		select {
		case <-finished:
			running--
		case <-expired:
			// The channel has room for every lookup still running,
			// so their goroutines end as soon as the lookups return.
			return fmt.Errorf("%w: %d lookups still running", ErrAbandoned, running)
		}
	}
	return nil
}

// Get returns key's value, from the cache or from a lookup it starts,
// queues or shares.
func (c *Cache) Get(ctx context.Context, key string) (string, error) {
	a := ask{key: key, reply: make(chan *future, 1)}
	select {
	case c.asks <- a:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
	var f *future
	select {
	case f = <-a.reply:
	case <-c.stopped:
		return "", ErrStopped
	}
	select {
	case <-f.done:
		return f.value, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
}

// Stats returns a snapshot of the loop's state.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	reply := make(chan Stats, 1)
	select {
	case c.polls <- reply:
		return <-reply, nil
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	case <-c.stopped:
		return Stats{}, ErrStopped
	}
}

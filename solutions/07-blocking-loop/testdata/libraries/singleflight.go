// Library: golang.org/x/sync v0.22.0
// Fails: none
// Why: a mutex-guarded map, DoChan with Run's ctx captured, a select on the caller's ctx and a semaphore.Weighted for the limit meet the kata's contract; the glue is the Stats counters, a lookup refused once the cache stopped, ErrStopped for whatever a lookup or an Acquire reports once Run's ctx has ended, and the grace on the clock.

// Package blockingloop is the kata's API the way a lock-based cache is
// written with golang.org/x/sync: a mutex-guarded map, singleflight's
// DoChan to share a lookup among the callers of one key, and a
// semaphore.Weighted for MaxInFlight, whose FIFO Acquire is the queue. The
// lookups run with Run's ctx, and each caller stops waiting on its own
// ctx. Run only ticks the heartbeat and, at the end, waits for the
// lookups. The glue does what the libraries cannot be told: the counters
// for Stats, refusing lookups once the cache stops, and the grace.
package blockingloop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sync/singleflight"
)

// Config tunes a Cache. The zero value runs one lookup at a time, with no
// heartbeat.
type Config struct {
	MaxInFlight int
	Tick        time.Duration
	OnTick      func(Stats)
	Grace       time.Duration
}

// Stats is a snapshot of the cache's state.
type Stats struct {
	Entries  int
	Hits     int
	Misses   int
	InFlight int
	Queued   int
}

// ErrStopped is returned by Get and Stats once Run's ctx has ended.
var ErrStopped = errors.New("blockingloop: cache stopped")

// ErrAbandoned is matched by the error Run returns when Grace passed with
// lookups still running.
var ErrAbandoned = errors.New("blockingloop: lookups abandoned")

// Cache is a map behind a mutex, filled through singleflight.
type Cache struct {
	clk    clock.Clock
	lookup func(ctx context.Context, key string) (string, error)
	cfg    Config
	group  singleflight.Group
	sem    *semaphore.Weighted

	started chan struct{} // closed when Run starts; runCtx is set before
	stopped chan struct{} // closed when Run's ctx ends
	runCtx  context.Context

	mu               sync.Mutex
	values           map[string]string
	hits, misses     int
	inFlight, queued int
	stopping         bool
	lookups          sync.WaitGroup // lookups started and not returned
}

// New returns a cache that looks missing keys up with lookup.
func New(clk clock.Clock, lookup func(ctx context.Context, key string) (string, error), cfg Config) *Cache {
	cfg.MaxInFlight = max(cfg.MaxInFlight, 1)
	return &Cache{
		clk:     clk,
		lookup:  lookup,
		cfg:     cfg,
		sem:     semaphore.NewWeighted(int64(cfg.MaxInFlight)),
		started: make(chan struct{}),
		stopped: make(chan struct{}),
		values:  map[string]string{},
	}
}

// Run ticks the heartbeat until ctx ends, then waits for the lookups (at
// most Grace, when set).
func (c *Cache) Run(ctx context.Context) error {
	c.runCtx = ctx
	close(c.started)
	var tick <-chan time.Time
	if c.cfg.Tick > 0 && c.cfg.OnTick != nil {
		t := c.clk.Ticker(c.cfg.Tick)
		defer t.Stop()
		tick = t.C
	}
	for done := false; !done; {
		select {
		case <-tick:
			s, _ := c.snapshot()
			c.cfg.OnTick(s)
		case <-ctx.Done():
			done = true
		}
	}
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	close(c.stopped)

	drained := make(chan struct{})
	go func() {
		c.lookups.Wait()
		close(drained)
	}()
	if c.cfg.Grace <= 0 {
		<-drained
		return nil
	}
	t := c.clk.Timer(c.cfg.Grace)
	defer t.Stop()
	select {
	case <-drained:
		return nil
	case <-t.C:
		c.mu.Lock()
		n := c.inFlight
		c.mu.Unlock()
		if n == 0 { // the last one returned at the very instant Grace ran out
			return nil
		}
		return fmt.Errorf("%w: %d still running %v after the cache stopped", ErrAbandoned, n, c.cfg.Grace)
	}
}

// Get answers from the map, or shares a lookup through singleflight.
func (c *Cache) Get(ctx context.Context, key string) (string, error) {
	if err := c.wait(ctx); err != nil {
		return "", err
	}
	c.mu.Lock()
	if v, ok := c.values[key]; ok {
		c.hits++
		c.mu.Unlock()
		return v, nil
	}
	c.misses++
	c.mu.Unlock()

	// The lookup gets Run's ctx, not the caller's: singleflight runs the
	// first caller's function for everybody.
	ch := c.group.DoChan(key, func() (any, error) { return c.fetch(key) })
	select {
	case r := <-ch:
		if c.runCtx.Err() != nil {
			// Acquire and the lookup watch Run's ctx and may report
			// its cancel (or anything else) before Run has marked the
			// cache stopped: once Run's ctx has ended, a result goes to
			// nobody.
			return "", ErrStopped
		}
		v, _ := r.Val.(string)
		return v, r.Err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
}

// fetch waits for a slot and runs the lookup: singleflight's goroutine
// blocks in Acquire while MaxInFlight lookups run.
func (c *Cache) fetch(key string) (string, error) {
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		return "", ErrStopped
	}
	c.lookups.Add(1)
	c.queued++
	c.mu.Unlock()
	defer c.lookups.Done()

	err := c.sem.Acquire(c.runCtx, 1)
	c.mu.Lock()
	c.queued--
	if err == nil && c.stopping {
		c.sem.Release(1)
		err = ErrStopped
	}
	if err != nil {
		c.mu.Unlock()
		return "", err
	}
	c.inFlight++
	c.mu.Unlock()

	v, err := c.lookup(c.runCtx, key)
	c.sem.Release(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
	if err != nil {
		return "", err
	}
	c.values[key] = v
	return v, nil
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	if err := c.wait(ctx); err != nil {
		return Stats{}, err
	}
	return c.snapshot()
}

func (c *Cache) snapshot() (Stats, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return Stats{}, ErrStopped
	}
	return Stats{Entries: len(c.values), Hits: c.hits, Misses: c.misses, InFlight: c.inFlight, Queued: c.queued}, nil
}

// wait holds a call until Run has started.
func (c *Cache) wait(ctx context.Context) error {
	select {
	case <-c.started:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.stopped:
	}
	select {
	case <-c.stopped:
		return ErrStopped
	default:
		return nil
	}
}

// Library: golang.org/x/sync v0.22.0
// Fails: R3 R5 B1 B2
// Why: singleflight.Do the way most code calls it, with the caller's ctx captured: the first caller's cancel cancels the lookup every caller shares (R3), so once every caller of a lookup gave up the next miss for the key calls the backend again instead of joining it (B1); the lookup does not see Run's ctx, and Do cannot be told to stop waiting, so a caller waits out the lookup when the cache stops (R5) and when its own ctx ends while the lookup ignores it (B2).

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

	// The way most code calls it: Do, with the caller's ctx captured by
	// the function that singleflight runs for everybody.
	v, err, _ := c.group.Do(key, func() (any, error) { return c.fetch(ctx, key) })
	if err != nil && c.runCtx.Err() != nil {
		return "", ErrStopped
	}
	s, _ := v.(string)
	return s, err
}

// fetch waits for a slot and runs the lookup with the first caller's ctx.
func (c *Cache) fetch(ctx context.Context, key string) (string, error) {
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		return "", ErrStopped
	}
	c.lookups.Add(1)
	c.queued++
	c.mu.Unlock()
	defer c.lookups.Done()

	err := c.sem.Acquire(ctx, 1)
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

	v, err := c.lookup(ctx, key)
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

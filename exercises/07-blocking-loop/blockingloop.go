// Package blockingloop is a read-through cache run by a single goroutine:
// an event loop that owns all of the cache's state and answers requests
// sent to it over channels.
//
// [Cache.Run] is the loop. It alone reads and writes the map of cached
// values and the counters; [Cache.Get] and [Cache.Stats] send it a request
// and wait for its reply, so they are safe for concurrent use without a
// lock. A Get for a key the map lacks (a miss) needs a lookup: a slow call to
// the backend. The contract:
//
//   - The loop never waits for a lookup. Each lookup runs on a goroutine of
//     its own and sends its result back to the loop, which stores it and
//     answers the callers waiting for that key. While lookups run, the loop
//     keeps answering Stats, Gets of cached keys and its heartbeat. Only the
//     loop touches the map: lookup goroutines never do.
//   - At most [Config.MaxInFlight] lookups run at once. Further misses wait
//     in a FIFO queue the loop owns, and start oldest first as running
//     lookups end; the loop itself never blocks on the limit.
//   - A lookup runs with Run's ctx, not its caller's: its result is stored
//     for everybody. A caller who gives up returns at once and the late
//     result is still stored. Every reply channel has room for one answer,
//     so the loop never waits for a caller either.
//   - Every [Config.Tick] on the injected clock the loop calls
//     [Config.OnTick] with fresh [Stats].
//   - When Run's ctx ends, the loop stops answering (Get and Stats return
//     [ErrStopped]; a lookup that returns after that, often with the ctx's
//     error, answers nobody), running lookups see their ctx cancelled, queued
//     ones never start, and Run returns once every running lookup has
//     returned. Nothing the cache started is left running.
//
// The code below keeps the state safe, but it breaks the first promise: the
// loop calls lookup itself, so while the backend thinks, the whole cache
// (cached keys, Stats, the heartbeat) freezes. It runs; it is not done.
//
// Time comes from the injected clock.Clock, never from package time: the
// heartbeat is a clk.Ticker, stopped when Run returns; a wait with a
// deadline (the grace period of bonus B2) is a fresh clk.Timer in a select,
// stopped when done. Never Reset a mock timer: on a fired, undrained one it
// blocks the clock's next Add.
package blockingloop

import (
	"context"
	"errors"
	"time"

	"github.com/benbjohnson/clock"
)

// Config tunes a Cache. The zero value runs one lookup at a time, with no
// heartbeat.
type Config struct {
	// MaxInFlight is the most lookups that run at once; values below 1
	// mean 1.
	MaxInFlight int
	// Tick is the heartbeat period on the injected clock; 0 or less turns
	// the heartbeat off.
	Tick time.Duration
	// OnTick, if not nil, is called by the loop on every heartbeat with its
	// current Stats (to publish metrics, say). It runs on the loop
	// goroutine: it must be quick and must not call Get or Stats.
	OnTick func(Stats)
	// Grace (bonus B2) bounds how long Run waits, once its ctx has ended,
	// for lookups that ignore their ctx; 0 means wait for all of them
	// however long they take.
	Grace time.Duration
}

// Stats is a snapshot of the loop's state. Hits + Misses is the number of
// Gets the loop has received.
type Stats struct {
	Entries  int // values in the cache
	Hits     int // Gets answered from the cache
	Misses   int // Gets that had to wait for a lookup, including those that shared one
	InFlight int // lookups running now
	Queued   int // lookups waiting for a free slot
}

// ErrStopped is returned by Get and Stats once Run's ctx has ended.
var ErrStopped = errors.New("blockingloop: cache stopped")

// ErrAbandoned (bonus B2) is matched by the error Run returns when Grace
// passed with lookups still running.
var ErrAbandoned = errors.New("blockingloop: lookups abandoned")

// Cache is a read-through cache whose state belongs to the goroutine
// running Run. Create it with New.
type Cache struct {
	clk    clock.Clock
	lookup func(ctx context.Context, key string) (string, error)
	cfg    Config

	gets    chan getRequest // Get → loop
	stats   chan chan Stats // Stats → loop
	stopped chan struct{}   // closed when the loop stops answering
}

type getRequest struct {
	key   string
	reply chan answer // room for one answer: the loop never waits for the caller
}

type answer struct {
	value string
	err   error
}

// New returns a cache that looks missing keys up with lookup. Nothing runs
// until Run is called; Get and Stats wait for Run meanwhile.
//
// lookup is the slow backend call. It gets Run's ctx and should honour it,
// but a legacy backend may not (bonus B2). It must be safe for concurrent
// use.
func New(clk clock.Clock, lookup func(ctx context.Context, key string) (string, error), cfg Config) *Cache {
	cfg.MaxInFlight = max(cfg.MaxInFlight, 1)
	return &Cache{
		clk:     clk,
		lookup:  lookup,
		cfg:     cfg,
		gets:    make(chan getRequest),
		stats:   make(chan chan Stats),
		stopped: make(chan struct{}),
	}
}

// Run is the event loop: it serves Get and Stats and ticks the heartbeat
// until ctx ends. Then it stops answering, the running lookups see their
// ctx cancelled (queued ones never start), and Run returns nil once every
// running lookup has returned.
//
// Bonus B2: with Config.Grace > 0, Run waits at most Grace on the clock
// for the running lookups; if some are still running then, it returns an
// error that matches ErrAbandoned and says how many. Their late results are
// dropped, and their goroutines end as soon as their lookups return.
//
// Call Run once.
func (c *Cache) Run(ctx context.Context) error {
	var tick <-chan time.Time
	if c.cfg.Tick > 0 && c.cfg.OnTick != nil {
		t := c.clk.Ticker(c.cfg.Tick)
		defer t.Stop()
		tick = t.C
	}
	values := map[string]string{}
	var st Stats
	for {
		select {
		case req := <-c.gets:
			if v, ok := values[req.key]; ok {
				st.Hits++
				req.reply <- answer{value: v}
				continue
			}
			st.Misses++
			// The slow call, made right here on the loop goroutine: until
			// the backend answers, this loop serves nobody else.
			v, err := c.lookup(ctx, req.key)
			if err != nil {
				req.reply <- answer{err: err}
				continue
			}
			values[req.key] = v
			req.reply <- answer{value: v}
		case reply := <-c.stats:
			st.Entries = len(values)
			reply <- st
		case <-tick:
			st.Entries = len(values)
			c.cfg.OnTick(st)
		case <-ctx.Done():
			close(c.stopped)
			return nil
		}
	}
}

// Get returns the value for key: from the cache, or from a lookup, which it
// starts, queues or (bonus B1) shares with the other callers waiting for the
// same key. A lookup's error is returned to every caller waiting for that
// key and is not cached: the next Get tries again.
//
// Get returns ctx.Err() as soon as ctx ends, even while its lookup runs
// (the lookup goes on and its result is stored), and ErrStopped once the
// cache stops.
func (c *Cache) Get(ctx context.Context, key string) (string, error) {
	req := getRequest{key: key, reply: make(chan answer, 1)}
	select {
	case c.gets <- req:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
	select {
	case a := <-req.reply:
		return a.value, a.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
}

// Stats returns a snapshot of the loop's state. It returns ctx.Err() if ctx
// ends before the loop answers, and ErrStopped once the cache stops.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	reply := make(chan Stats, 1)
	select {
	case c.stats <- reply:
		return <-reply, nil // the loop answers a request it took at once
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	case <-c.stopped:
		return Stats{}, ErrStopped
	}
}

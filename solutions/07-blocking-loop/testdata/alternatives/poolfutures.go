// Design: a fixed pool of MaxInFlight worker goroutines fed by a never-full channel, with the FIFO of further misses kept in the loop, and one future (a done channel closed by the loop) per pending key that every waiting caller shares; bonuses B1 and B2 included.

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
//     [ErrStopped]), running lookups see their ctx cancelled, queued ones
//     never start, and Run returns once every running lookup has returned.
//     Nothing the cache started is left running.
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
	"fmt"
	"sync"
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
	reply chan reply // room for one reply: the loop never waits for the caller
}

// reply is the loop's answer to a Get: a value at once (a hit), or the
// future of the lookup the caller now waits for (a miss).
type reply struct {
	value string
	fut   *future
}

// future is the result of one lookup, shared by every caller waiting for
// its key. Only the loop writes it, before it closes done; callers read it
// after done is closed.
type future struct {
	done  chan struct{}
	value string
	err   error
}

// New returns a cache that looks missing keys up with lookup. Nothing runs
// until Run is called; Get and Stats wait for Run meanwhile.
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

// result is what a worker reports back to the loop.
type result struct {
	key   string
	value string
	err   error
}

// Run is the event loop: it serves Get and Stats and ticks the heartbeat
// until ctx ends. Then it stops answering, the running lookups see their
// ctx cancelled (queued ones never start), and Run returns nil once every
// running lookup has returned (bonus B2: at most Grace later, or an error
// matching ErrAbandoned).
//
// Design: Run starts a fixed pool of MaxInFlight workers fed by a channel
// with room for MaxInFlight keys. The loop hands a key to the pool only
// while fewer than MaxInFlight lookups are in flight, so that send never
// blocks; the FIFO of further misses stays in the loop. Each pending key
// has one future that every caller waiting for it shares.
//
// Call Run once.
func (c *Cache) Run(ctx context.Context) error {
	var tick <-chan time.Time
	if c.cfg.Tick > 0 && c.cfg.OnTick != nil {
		t := c.clk.Ticker(c.cfg.Tick)
		defer t.Stop()
		tick = t.C
	}

	jobs := make(chan string, c.cfg.MaxInFlight) // never full: see above
	results := make(chan result)
	abandon := make(chan struct{}) // closed when Run stops waiting (B2)
	var workers sync.WaitGroup
	for range c.cfg.MaxInFlight {
		workers.Go(func() {
			for key := range jobs {
				var r result
				if err := ctx.Err(); err != nil {
					r = result{key: key, err: err} // handed over as the cache stopped: never started
				} else {
					v, err := c.lookup(ctx, key)
					r = result{key: key, value: v, err: err}
				}
				select {
				case results <- r:
				case <-abandon: // Run is gone: drop the late result
				}
			}
		})
	}

	values := map[string]string{}
	pending := map[string]*future{} // keys running or queued
	var queue []string              // keys waiting for a worker, oldest first
	inFlight, hits, misses := 0, 0, 0
	dispatch := func(key string) {
		inFlight++
		jobs <- key
	}
	snapshot := func() Stats {
		return Stats{Entries: len(values), Hits: hits, Misses: misses, InFlight: inFlight, Queued: len(queue)}
	}

	for {
		select {
		case req := <-c.gets:
			if v, ok := values[req.key]; ok {
				hits++
				req.reply <- reply{value: v}
				continue
			}
			misses++
			f, ok := pending[req.key]
			if !ok {
				f = &future{done: make(chan struct{})}
				pending[req.key] = f
				if inFlight < c.cfg.MaxInFlight {
					dispatch(req.key)
				} else {
					queue = append(queue, req.key)
				}
			}
			req.reply <- reply{fut: f}
		case r := <-results:
			inFlight--
			if ctx.Err() != nil { // the stop came first: this result may answer it, and goes to nobody
				close(c.stopped)
				close(jobs)
				return c.drain(&workers, results, abandon, inFlight)
			}
			f := pending[r.key]
			delete(pending, r.key)
			if r.err == nil {
				values[r.key] = r.value
				f.value = r.value
			}
			f.err = r.err
			close(f.done) // publishes value and err to every waiting caller
			if len(queue) > 0 {
				key := queue[0]
				queue = queue[1:]
				dispatch(key)
			}
		case rc := <-c.stats:
			rc <- snapshot()
		case <-tick:
			c.cfg.OnTick(snapshot())
		case <-ctx.Done():
			close(c.stopped)
			close(jobs) // the queued keys were never sent: they never start
			return c.drain(&workers, results, abandon, inFlight)
		}
	}
}

// drain waits for the workers, whose ctx has ended, to finish the lookups
// in flight: all of them, or as many as end within Grace.
func (c *Cache) drain(workers *sync.WaitGroup, results <-chan result, abandon chan struct{}, inFlight int) error {
	finished := make(chan struct{})
	go func() {
		workers.Wait()
		close(finished)
	}()
	var expired <-chan time.Time
	if c.cfg.Grace > 0 {
		t := c.clk.Timer(c.cfg.Grace)
		defer t.Stop()
		expired = t.C
	}
	for {
		select {
		case <-results:
			inFlight--
		case <-finished:
			return nil
		case <-expired:
			close(abandon) // the stragglers drop their results and end when their lookups return
			if inFlight == 0 {
				return nil // every lookup had answered; its worker was on its way out
			}
			return fmt.Errorf("%w: %d still running %v after the cache stopped", ErrAbandoned, inFlight, c.cfg.Grace)
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
	req := getRequest{key: key, reply: make(chan reply, 1)}
	select {
	case c.gets <- req:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
	var r reply
	select {
	case r = <-req.reply:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
	if r.fut == nil {
		return r.value, nil
	}
	select {
	case <-r.fut.done:
		return r.fut.value, r.fut.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
}

// Stats returns a snapshot of the loop's state. It returns ctx.Err() if ctx
// ends before the loop answers, and ErrStopped once the cache stops.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	rc := make(chan Stats, 1)
	select {
	case c.stats <- rc:
		return <-rc, nil // the loop answers a request it took at once
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	case <-c.stopped:
		return Stats{}, ErrStopped
	}
}

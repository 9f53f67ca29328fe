// Design: a fixed pool of MaxInFlight worker goroutines, started by Run; the loop
// hands a key to an idle worker over that worker's own channel and keeps the rest.
package blockingloop

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

// Cache is a read-through cache owned by the goroutine running Run.
type Cache struct {
	clk     clock.Clock
	lookup  func(ctx context.Context, key string) (string, error)
	cfg     Config
	reqs    chan request
	stopped chan struct{}
}

type reply struct {
	value string
	err   error
}

// request is either a Get (stats == nil) or a Stats call.
type request struct {
	key   string
	get   chan reply
	stats chan Stats
}

type done struct {
	worker int
	key    string
	reply
}

// New returns a cache; nothing runs until Run.
func New(clk clock.Clock, lookup func(ctx context.Context, key string) (string, error), cfg Config) *Cache {
	if cfg.MaxInFlight < 1 {
		cfg.MaxInFlight = 1
	}
	return &Cache{clk: clk, lookup: lookup, cfg: cfg, reqs: make(chan request), stopped: make(chan struct{})}
}

// Run is the event loop.
func (c *Cache) Run(ctx context.Context) error {
	n := c.cfg.MaxInFlight
	jobs := make([]chan string, n)
	results := make(chan done)
	abandon := make(chan struct{})
	var wg sync.WaitGroup
	idle := make([]int, 0, n)
	for i := range jobs {
		jobs[i] = make(chan string, 1) // a worker is sent a key only when idle: never blocks
		idle = append(idle, i)
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for key := range jobs[i] {
				v, err := c.lookup(ctx, key)
				select {
				case results <- done{i, key, reply{v, err}}:
				case <-abandon:
					return
				}
			}
		}(i)
	}
	stopWorkers := func() {
		for _, j := range jobs {
			close(j)
		}
	}

	var tick <-chan time.Time
	if c.cfg.Tick > 0 && c.cfg.OnTick != nil {
		t := c.clk.Ticker(c.cfg.Tick)
		defer t.Stop()
		tick = t.C
	}

	values := map[string]string{}
	waiting := map[string][]chan reply{}
	var pending []string
	hits, misses := 0, 0
	snapshot := func() Stats {
		return Stats{Entries: len(values), Hits: hits, Misses: misses, InFlight: n - len(idle), Queued: len(pending)}
	}
	dispatch := func() {
		for len(idle) > 0 && len(pending) > 0 {
			w := idle[len(idle)-1]
			idle = idle[:len(idle)-1]
			jobs[w] <- pending[0]
			pending = pending[1:]
		}
	}

loop:
	for {
		select {
		case r := <-c.reqs:
			if r.stats != nil {
				r.stats <- snapshot()
				continue
			}
			if v, ok := values[r.key]; ok {
				hits++
				r.get <- reply{value: v}
				continue
			}
			misses++
			ws, known := waiting[r.key]
			waiting[r.key] = append(ws, r.get)
			if !known {
				pending = append(pending, r.key)
				dispatch()
			}
		case d := <-results:
			idle = append(idle, d.worker)
			if ctx.Err() != nil {
				break loop // the stop came first: this result may answer it, and goes to nobody
			}
			if d.err == nil {
				values[d.key] = d.value
			}
			for _, w := range waiting[d.key] {
				w <- reply{value: d.value, err: d.err}
			}
			delete(waiting, d.key)
			dispatch()
		case <-tick:
			c.cfg.OnTick(snapshot())
		case <-ctx.Done():
			break loop
		}
	}
	close(c.stopped)
	stopWorkers()
	busy := n - len(idle)
	var expired <-chan time.Time
	if c.cfg.Grace > 0 {
		t := c.clk.Timer(c.cfg.Grace)
		defer t.Stop()
		expired = t.C
	}
	for busy > 0 {
		select {
		case <-results:
			busy--
		case <-expired:
			close(abandon)
			return fmt.Errorf("%w: %d lookups still running", ErrAbandoned, busy)
		}
	}
	wg.Wait()
	return nil
}

func (c *Cache) ask(ctx context.Context, r request) error {
	select {
	case c.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.stopped:
		return ErrStopped
	}
}

// Get returns the value for key, from the cache or from a lookup.
func (c *Cache) Get(ctx context.Context, key string) (string, error) {
	r := request{key: key, get: make(chan reply, 1)}
	if err := c.ask(ctx, r); err != nil {
		return "", err
	}
	select {
	case a := <-r.get:
		return a.value, a.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
}

// Stats returns a snapshot of the loop's state.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	r := request{stats: make(chan Stats, 1)}
	if err := c.ask(ctx, r); err != nil {
		return Stats{}, err
	}
	select {
	case s := <-r.stats:
		return s, nil
	case <-c.stopped:
		return Stats{}, ErrStopped
	}
}

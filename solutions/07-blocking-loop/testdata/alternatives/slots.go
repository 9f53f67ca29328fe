// Design: one map of entries, each in an explicit state (queued, loading, ready),
// and a channel of MaxInFlight slot tokens that the loop takes without waiting
// (select with default) and puts back when a lookup reports; a WaitGroup counts lookups.
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

type state int

const (
	queued state = iota
	loading
	ready
)

type entry struct {
	state   state
	value   string
	waiters []chan reply
}

type reply struct {
	value string
	err   error
}

type request struct {
	key   string
	reply chan reply // buffered
}

type outcome struct {
	key string
	reply
}

// Cache is a read-through cache whose state belongs to Run's goroutine.
type Cache struct {
	clk    clock.Clock
	lookup func(ctx context.Context, key string) (string, error)
	cfg    Config

	requests chan request
	stats    chan chan Stats
	stopped  chan struct{}
}

// New returns a cache; nothing runs until Run.
func New(clk clock.Clock, lookup func(ctx context.Context, key string) (string, error), cfg Config) *Cache {
	cfg.MaxInFlight = max(1, cfg.MaxInFlight)
	return &Cache{clk: clk, lookup: lookup, cfg: cfg,
		requests: make(chan request), stats: make(chan chan Stats), stopped: make(chan struct{})}
}

// Run is the event loop.
func (c *Cache) Run(ctx context.Context) error {
	slots := make(chan struct{}, c.cfg.MaxInFlight)
	for range c.cfg.MaxInFlight {
		slots <- struct{}{}
	}
	entries := map[string]*entry{}
	var order []string // queued keys, oldest first
	var hits, misses int
	outcomes := make(chan outcome)
	gone := make(chan struct{}) // closed when Run stops listening
	var lookups sync.WaitGroup

	launch := func(key string) bool {
		select {
		case <-slots:
		default:
			return false
		}
		entries[key].state = loading
		lookups.Add(1)
		go func() {
			defer lookups.Done()
			v, err := c.lookup(ctx, key)
			select {
			case outcomes <- outcome{key, reply{v, err}}:
			case <-gone:
			}
		}()
		return true
	}
	snapshot := func() Stats {
		s := Stats{Hits: hits, Misses: misses, InFlight: c.cfg.MaxInFlight - len(slots), Queued: len(order)}
		for _, e := range entries {
			if e.state == ready {
				s.Entries++
			}
		}
		return s
	}
	var beat <-chan time.Time
	if c.cfg.Tick > 0 && c.cfg.OnTick != nil {
		t := c.clk.Ticker(c.cfg.Tick)
		defer t.Stop()
		beat = t.C
	}
loop:
	for {
		select {
		case r := <-c.requests:
			e := entries[r.key]
			if e != nil && e.state == ready {
				hits++
				r.reply <- reply{value: e.value}
				continue
			}
			misses++
			if e != nil {
				e.waiters = append(e.waiters, r.reply)
				continue
			}
			entries[r.key] = &entry{state: queued, waiters: []chan reply{r.reply}}
			if !launch(r.key) {
				order = append(order, r.key)
			}
		case o := <-outcomes:
			slots <- struct{}{}
			if ctx.Err() != nil {
				break loop // the stop came first: this result may answer it, and goes to nobody
			}
			e := entries[o.key]
			if o.err == nil {
				e.state, e.value = ready, o.value
			} else {
				delete(entries, o.key)
				o.value = ""
			}
			for _, w := range e.waiters {
				w <- o.reply
			}
			e.waiters = nil
			for len(order) > 0 && launch(order[0]) {
				order = order[1:]
			}
		case reply := <-c.stats:
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
	for len(slots) < c.cfg.MaxInFlight {
		select {
		case <-outcomes:
			slots <- struct{}{}
		case <-expired:
			close(gone)
			return fmt.Errorf("%w: %d lookups did not return within %v", ErrAbandoned,
				c.cfg.MaxInFlight-len(slots), c.cfg.Grace)
		}
	}
	close(gone)
	lookups.Wait() // every goroutine has sent its outcome: they are ending
	return nil
}

// Get returns key's value.
func (c *Cache) Get(ctx context.Context, key string) (string, error) {
	r := request{key: key, reply: make(chan reply, 1)}
	select {
	case c.requests <- r:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
	select {
	case a := <-r.reply:
		return a.value, a.err
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
	case c.stats <- reply:
		return <-reply, nil
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	case <-c.stopped:
		return Stats{}, ErrStopped
	}
}

// Design: an actor with a mailbox of closures: Get, Stats and finished lookups all
// send the loop a func that it runs on its own goroutine; a WaitGroup tracks lookups.
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
	mailbox chan func(*state) // run on the loop goroutine
	stopped chan struct{}
}

// state belongs to the loop goroutine.
type state struct {
	ctx      context.Context
	values   map[string]string
	waiters  map[string][]func(string, error)
	backlog  []string
	running  int
	st       Stats
	finished chan func(*state)
	abandon  chan struct{}
	wg       sync.WaitGroup
	lookup   func(ctx context.Context, key string) (string, error)
	limit    int
}

// New returns a cache; nothing runs until Run.
func New(clk clock.Clock, lookup func(ctx context.Context, key string) (string, error), cfg Config) *Cache {
	return &Cache{clk: clk, lookup: lookup, cfg: cfg, mailbox: make(chan func(*state)), stopped: make(chan struct{})}
}

func (s *state) launch(key string) {
	s.running++
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		v, err := s.lookup(s.ctx, key)
		select {
		case s.finished <- func(s *state) { s.complete(key, v, err) }:
		case <-s.abandon:
		}
	}()
}

func (s *state) complete(key, v string, err error) {
	s.running--
	if err == nil {
		s.values[key] = v
	} else {
		v = ""
	}
	for _, answer := range s.waiters[key] {
		answer(v, err)
	}
	delete(s.waiters, key)
	if len(s.backlog) > 0 && s.running < s.limit {
		next := s.backlog[0]
		s.backlog = s.backlog[1:]
		s.launch(next)
	}
}

func (s *state) get(key string, answer func(string, error)) {
	if v, ok := s.values[key]; ok {
		s.st.Hits++
		answer(v, nil)
		return
	}
	s.st.Misses++
	if ws, ok := s.waiters[key]; ok {
		s.waiters[key] = append(ws, answer)
		return
	}
	s.waiters[key] = []func(string, error){answer}
	if s.running >= s.limit {
		s.backlog = append(s.backlog, key)
		return
	}
	s.launch(key)
}

func (s *state) snapshot() Stats {
	st := s.st
	st.Entries, st.InFlight, st.Queued = len(s.values), s.running, len(s.backlog)
	return st
}

// Run is the event loop.
func (c *Cache) Run(ctx context.Context) error {
	s := &state{
		ctx: ctx, values: map[string]string{}, waiters: map[string][]func(string, error){},
		finished: make(chan func(*state)), abandon: make(chan struct{}),
		lookup: c.lookup, limit: max(1, c.cfg.MaxInFlight),
	}
	var tick <-chan time.Time
	if c.cfg.OnTick != nil && c.cfg.Tick > 0 {
		t := c.clk.Ticker(c.cfg.Tick)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case f := <-c.mailbox:
			f(s)
		case f := <-s.finished:
			if ctx.Err() != nil { // the stop came first: this result may answer it, and goes to nobody
				s.running--
				close(c.stopped)
				return c.shutdown(s)
			}
			f(s)
		case <-tick:
			c.cfg.OnTick(s.snapshot())
		case <-ctx.Done():
			close(c.stopped)
			return c.shutdown(s)
		}
	}
}

// shutdown waits for the running lookups, at most Grace if set.
func (c *Cache) shutdown(s *state) error {
	var graceC <-chan time.Time
	if c.cfg.Grace > 0 {
		t := c.clk.Timer(c.cfg.Grace)
		defer t.Stop()
		graceC = t.C
	}
	for s.running > 0 {
		select {
		case <-s.finished: // results after the stop are dropped
			s.running--
		case <-graceC:
			close(s.abandon)
			return fmt.Errorf("gave up after %v with %d lookups running: %w", c.cfg.Grace, s.running, ErrAbandoned)
		}
	}
	s.wg.Wait() // each has reported back; let its goroutine end
	return nil
}

func (c *Cache) send(ctx context.Context, f func(*state)) error {
	select {
	case c.mailbox <- f:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.stopped:
		return ErrStopped
	}
}

// Get returns the value for key, from the cache or from a lookup.
func (c *Cache) Get(ctx context.Context, key string) (string, error) {
	type res struct {
		v   string
		err error
	}
	out := make(chan res, 1)
	if err := c.send(ctx, func(s *state) {
		s.get(key, func(v string, err error) { out <- res{v, err} })
	}); err != nil {
		return "", err
	}
	select {
	case r := <-out:
		return r.v, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-c.stopped:
		return "", ErrStopped
	}
}

// Stats returns a snapshot of the loop's state.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	out := make(chan Stats, 1)
	if err := c.send(ctx, func(s *state) { out <- s.snapshot() }); err != nil {
		return Stats{}, err
	}
	return <-out, nil
}

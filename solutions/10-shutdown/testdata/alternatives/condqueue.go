// Design: a sync.Cond over a slice queue, woken by context.AfterFunc when a
// ctx ends; each running job has its own ctx, which the hard stop cancels one by one.

package shutdown

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Job is one unit of work.
type Job struct {
	ID      string
	Payload string
}

// Report says what a shutdown left undone. Both lists are in no particular
// order, and both are empty when the drain finished in time.
type Report struct {
	// Abandoned holds the jobs that were running when the grace ran out and
	// whose handle then returned an error: the hard stop cut them short.
	Abandoned []Job
	// Dropped holds the accepted jobs that never started.
	Dropped []Job
}

// ErrShuttingDown is matched (errors.Is) by the error Submit returns once
// Shutdown has begun.
var ErrShuttingDown = errors.New("shutdown: the service is shutting down")

// Service is a worker pool with a bounded queue and a graceful shutdown.
// Create it with [New].
type Service struct {
	clk      clock.Clock
	workers  int
	capacity int
	handle   func(context.Context, Job) error

	mu        sync.Mutex
	cond      *sync.Cond // broadcast at every change of the fields below
	queue     []Job
	idle      int                    // workers waiting for a job
	live      int                    // workers that have not returned
	running   map[*runningJob]string // the jobs in handle, by their own cancel
	started   bool
	begun     bool // Shutdown called: Ready is false
	closed    bool // intake stopped
	halted    bool // hard stop: nothing more starts
	delay     time.Duration
	hooks     []func(context.Context) error
	abandoned []Job

	done   chan struct{}
	report Report
	err    error
}

// runningJob is a job in handle, with its own ctx: the hard stop cancels
// each of them and marks it cut.
type runningJob struct {
	cancel context.CancelFunc
	cut    bool
}

// New returns a Service with workers workers (at least 1) and room for
// queue jobs in its queue (0 means that Submit waits for a free worker).
func New(clk clock.Clock, workers, queue int, handle func(ctx context.Context, j Job) error) *Service {
	s := &Service{clk: clk, workers: max(workers, 1), capacity: max(queue, 0), handle: handle,
		running: map[*runningJob]string{}, done: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// wakeOnDone broadcasts when ctx ends and sets *ended (under mu), so that a
// cond.Wait loop can also wait for ctx. The caller must call the returned
// stop.
func (s *Service) wakeOnDone(ctx context.Context, ended *bool) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		s.mu.Lock()
		*ended = true
		s.cond.Broadcast()
		s.mu.Unlock()
	})
}

// Start launches the workers, once; after Shutdown has begun it does nothing.
func (s *Service) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.begun {
		return
	}
	s.started = true
	s.live = s.workers
	for range s.workers {
		go s.work()
	}
}

func (s *Service) work() {
	s.mu.Lock()
	defer func() {
		s.live--
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	for {
		s.idle++
		s.cond.Broadcast() // room for a waiting Submit
		for len(s.queue) == 0 && !s.closed && !s.halted {
			s.cond.Wait()
		}
		s.idle--
		if s.halted || len(s.queue) == 0 {
			return
		}
		j := s.queue[0]
		s.queue = s.queue[1:]
		ctx, cancel := context.WithCancel(context.Background())
		rj := &runningJob{cancel: cancel}
		s.running[rj] = j.ID
		s.mu.Unlock()

		err := s.handle(ctx, j)
		cancel()

		s.mu.Lock()
		delete(s.running, rj)
		if err != nil && rj.cut {
			s.abandoned = append(s.abandoned, j)
		}
	}
}

// Submit puts j in the queue, waiting on a full queue for room, for ctx, or
// for the shutdown.
func (s *Service) Submit(ctx context.Context, j Job) error {
	var gaveUp bool
	defer s.wakeOnDone(ctx, &gaveUp)()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		switch {
		case s.closed:
			return ErrShuttingDown
		case len(s.queue) < s.capacity+s.idle:
			s.queue = append(s.queue, j)
			s.cond.Broadcast()
			return nil
		case gaveUp:
			return ctx.Err()
		}
		s.cond.Wait()
	}
}

// Shutdown stops intake, drains the queue and waits for every job; if ctx
// ends first it hard-stops and reports what it abandoned and dropped.
func (s *Service) Shutdown(ctx context.Context) (Report, error) {
	s.mu.Lock()
	first := !s.begun
	s.begun = true
	delay := s.delay
	s.mu.Unlock()
	if first {
		s.report, s.err = s.shutdown(ctx, delay)
		close(s.done)
	} else {
		select {
		case <-s.done:
		case <-ctx.Done():
			return Report{}, ctx.Err()
		}
	}
	return Report{Abandoned: slices.Clone(s.report.Abandoned), Dropped: slices.Clone(s.report.Dropped)}, s.err
}

func (s *Service) shutdown(ctx context.Context, delay time.Duration) (Report, error) {
	if delay > 0 {
		t := s.clk.Timer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	var late bool
	stop := s.wakeOnDone(ctx, &late)
	s.mu.Lock()
	s.closed = true
	s.cond.Broadcast()
	for s.live > 0 && !late {
		s.cond.Wait()
	}
	var errs []error
	if s.live > 0 {
		errs = append(errs, ctx.Err()) // Done is closed: late is set only then
		s.halted = true
		for rj := range s.running {
			rj.cut = true
			rj.cancel()
		}
		s.cond.Broadcast()
		for s.live > 0 {
			s.cond.Wait()
		}
	}
	r := Report{Abandoned: s.abandoned, Dropped: s.queue}
	s.queue = nil
	hooks := s.hooks
	s.mu.Unlock()
	stop()

	for i := len(hooks) - 1; i >= 0; i-- {
		if err := hooks[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return r, errors.Join(errs...)
}

// Ready reports whether the Service wants more work: from Start until
// Shutdown begins.
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started && !s.begun
}

// SetPreDrainDelay makes Shutdown keep accepting jobs for d after Ready
// turns false.
func (s *Service) SetPreDrainDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// OnShutdown registers f to run once every worker has returned.
func (s *Service) OnShutdown(f func(ctx context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, f)
}

// Run starts the Service, waits for a signal or the end of ctx, then shuts
// down with grace on the clock; a second signal ends the grace at once.
func (s *Service) Run(ctx context.Context, signals <-chan os.Signal, grace time.Duration) (Report, error) {
	s.Start()
	select {
	case <-signals:
	case <-ctx.Done():
	}
	graceCtx, cancel := s.clk.WithTimeout(context.Background(), grace)
	defer cancel()
	finished := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-signals:
			cancel()
		case <-finished:
		}
	})
	defer wg.Wait()
	defer close(finished)
	return s.Shutdown(graceCtx)
}

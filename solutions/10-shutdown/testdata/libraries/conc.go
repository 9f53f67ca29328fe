// Library: github.com/sourcegraph/conc v0.3.0
// Fails: R1 R2 R3 R4 R6 B1 B2
// Sometimes: R5
// Why: conc's pool has no queue: Go blocks until a worker is free and watches no ctx, so a Submit that a queue with room takes at once waits instead, and every test that queues jobs behind busy workers, or before Start, fails at that step (R1 R2 R3 R4 R5 R6 B1 B2); with no queue, nothing is ever dropped for the report. Waiting for every job after a hard stop, once the jobs are in, and running the hooks after the pool's Wait hold (B3).

// Package shutdown is the kata's API on github.com/sourcegraph/conc's
// pool: WithMaxGoroutines(workers) runs the jobs, Submit is the pool's Go,
// and the drain is its Wait. The pool has no queue, no ctx for Go and no
// notion of intake, so the glue adds what it cannot be told: an intake
// flag with a count of the Submits inside Go (Go after Wait would send on
// a closed channel), the jobs' ctx and the hard stop, the report, and the
// bonuses (Run, readiness, hooks) as the reference has them.
package shutdown

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/sourcegraph/conc/pool"
)

// Job is one unit of work.
type Job struct {
	ID      string
	Payload string
}

// Report says what a shutdown left undone.
type Report struct {
	Abandoned []Job
	Dropped   []Job
}

// ErrShuttingDown is matched by the error Submit returns once Shutdown has
// begun.
var ErrShuttingDown = errors.New("shutdown: the service is shutting down")

// Service is a conc pool with an intake flag.
type Service struct {
	clk    clock.Clock
	handle func(context.Context, Job) error
	pool   *pool.Pool

	jobCtx context.Context
	stop   context.CancelFunc

	mu        sync.Mutex
	started   bool
	shutting  bool
	closed    bool
	sending   sync.WaitGroup // Submits inside pool.Go
	delay     time.Duration
	hooks     []func(context.Context) error
	abandoned []Job

	done   chan struct{}
	report Report
	err    error
}

// New returns a Service whose pool runs at most workers jobs at once. conc
// has no queue: queue is not used, and Go waits for a free worker.
func New(clk clock.Clock, workers, queue int, handle func(ctx context.Context, j Job) error) *Service {
	jobCtx, stop := context.WithCancel(context.Background())
	return &Service{
		clk:    clk,
		handle: handle,
		pool:   pool.New().WithMaxGoroutines(max(workers, 1)),
		jobCtx: jobCtx,
		stop:   stop,
		done:   make(chan struct{}),
	}
}

// Start marks the Service started; conc starts its goroutines on Go.
func (s *Service) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.shutting {
		s.started = true
	}
}

// Submit hands j to the pool's Go, which blocks until a worker is free.
func (s *Service) Submit(ctx context.Context, j Job) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrShuttingDown
	}
	s.sending.Add(1)
	s.mu.Unlock()
	defer s.sending.Done()
	if err := ctx.Err(); err != nil {
		return err
	}
	s.pool.Go(func() {
		if err := s.handle(s.jobCtx, j); err != nil && s.jobCtx.Err() != nil {
			s.mu.Lock()
			s.abandoned = append(s.abandoned, j)
			s.mu.Unlock()
		}
	})
	return nil
}

// Shutdown stops intake, waits for the Submits inside Go, then for the
// pool; if ctx ends first it cancels the jobs' ctx and waits.
func (s *Service) Shutdown(ctx context.Context) (Report, error) {
	s.mu.Lock()
	first := !s.shutting
	s.shutting = true
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
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()

	drained := make(chan struct{})
	go func() {
		s.sending.Wait() // Go after Wait would panic
		s.pool.Wait()
		close(drained)
	}()
	var errs []error
	select {
	case <-drained:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
		s.stop()
		<-drained
	}
	s.stop()

	s.mu.Lock()
	r := Report{Abandoned: s.abandoned}
	hooks := s.hooks
	s.mu.Unlock()
	for i := len(hooks) - 1; i >= 0; i-- {
		if err := hooks[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return r, errors.Join(errs...)
}

// Ready reports whether the Service wants more work.
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started && !s.shutting
}

// SetPreDrainDelay makes Shutdown keep accepting jobs for d on the clock.
func (s *Service) SetPreDrainDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// OnShutdown registers f to run during Shutdown, after the pool's Wait.
func (s *Service) OnShutdown(f func(ctx context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, f)
}

// Run starts the Service, waits for a signal or ctx, then shuts down with
// grace on the clock; a second signal ends the grace.
func (s *Service) Run(ctx context.Context, signals <-chan os.Signal, grace time.Duration) (Report, error) {
	s.Start()
	select {
	case <-signals:
	case <-ctx.Done():
	}
	graceCtx, cancel := s.clk.WithTimeout(context.Background(), grace)
	defer cancel()
	over := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-signals:
			cancel()
		case <-over:
		}
	}()
	r, err := s.Shutdown(graceCtx)
	close(over)
	<-watched
	return r, err
}

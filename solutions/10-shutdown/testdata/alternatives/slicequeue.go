// Design: no job channel: a mutex-guarded slice is the queue; Submits, idle
// workers and Shutdown each wait on a signal channel closed when what they wait for changes.

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

	jobCtx   context.Context // every job's ctx; cancelled only by the hard stop
	hardStop context.CancelFunc

	mu        sync.Mutex
	room      chan struct{} // signalled when a Submit may find room, or intake stops
	queued    chan struct{} // signalled when a job is queued, or the phase changes
	exited    chan struct{} // signalled when a worker returns
	pending   []Job         // the queue, oldest first
	idle      int           // workers waiting for a job: each is room for one more
	active    int           // workers that have not returned
	phase     phase
	begun     bool // Shutdown has been called: Ready is false
	delay     time.Duration
	hooks     []func(context.Context) error
	abandoned []Job

	done   chan struct{} // closed once the first Shutdown has its result
	report Report
	err    error
}

type phase int

const (
	created  phase = iota // New: Submit queues, nobody works
	serving               // Start: the workers run
	draining              // intake stopped; the workers finish the queue
	stopped               // hard stop: nothing more starts
)

// New returns a Service with workers workers (at least 1) and room for
// queue jobs in its queue (0 means that Submit waits for a free worker).
func New(clk clock.Clock, workers, queue int, handle func(ctx context.Context, j Job) error) *Service {
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{
		clk: clk, workers: max(workers, 1), capacity: max(queue, 0), handle: handle,
		jobCtx: ctx, hardStop: cancel,
		room: make(chan struct{}), queued: make(chan struct{}), exited: make(chan struct{}),
		done: make(chan struct{}),
	}
}

// signal wakes everyone waiting on *ch and gives later waiters a fresh
// channel; the caller holds mu.
func signal(ch *chan struct{}) {
	close(*ch)
	*ch = make(chan struct{})
}

// Start launches the workers, once; after Shutdown has begun it does nothing.
func (s *Service) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase != created || s.begun {
		return
	}
	s.phase = serving
	s.active = s.workers
	for range s.workers {
		go s.work()
	}
}

func (s *Service) work() {
	s.mu.Lock()
	defer func() {
		s.active--
		signal(&s.exited)
		s.mu.Unlock()
	}()
	for {
		switch {
		case s.phase == stopped:
			return
		case len(s.pending) > 0:
			j := s.pending[0]
			s.pending = s.pending[1:]
			signal(&s.room)
			s.mu.Unlock()
			err := s.handle(s.jobCtx, j)
			s.mu.Lock()
			if err != nil && s.jobCtx.Err() != nil {
				s.abandoned = append(s.abandoned, j)
			}
		case s.phase == draining:
			return
		default:
			s.idle++
			signal(&s.room) // one more place for a waiting Submit
			ch := s.queued
			s.mu.Unlock()
			<-ch
			s.mu.Lock()
			s.idle--
		}
	}
}

// Submit puts j in the queue, waiting on a full queue for room, for ctx, or
// for the shutdown.
func (s *Service) Submit(ctx context.Context, j Job) error {
	s.mu.Lock()
	for {
		if s.phase >= draining {
			s.mu.Unlock()
			return ErrShuttingDown
		}
		// Room: a free place in the queue, or a worker waiting idle.
		if len(s.pending) < s.capacity+s.idle {
			s.pending = append(s.pending, j)
			signal(&s.queued)
			s.mu.Unlock()
			return nil
		}
		ch := s.room
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.mu.Lock()
	}
}

// idleNow waits until every worker has returned (true) or ctx ends (false).
func (s *Service) idleNow(ctx context.Context) bool {
	for {
		s.mu.Lock()
		n, ch := s.active, s.exited
		s.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
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
	if !first {
		select {
		case <-s.done:
			return Report{Abandoned: slices.Clone(s.report.Abandoned), Dropped: slices.Clone(s.report.Dropped)}, s.err
		case <-ctx.Done():
			return Report{}, ctx.Err()
		}
	}
	if delay > 0 {
		t := s.clk.Timer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}

	s.mu.Lock()
	s.phase = draining
	signal(&s.room)
	signal(&s.queued)
	s.mu.Unlock()

	var errs []error
	if !s.idleNow(ctx) {
		errs = append(errs, ctx.Err())
		s.mu.Lock()
		s.phase = stopped
		signal(&s.queued)
		s.mu.Unlock()
		s.hardStop()
		s.idleNow(context.Background())
	}
	s.hardStop()

	s.mu.Lock()
	s.report = Report{Abandoned: s.abandoned, Dropped: s.pending}
	s.pending = nil
	hooks := slices.Clone(s.hooks)
	s.mu.Unlock()
	for _, h := range slices.Backward(hooks) {
		if err := h(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	s.err = errors.Join(errs...)
	close(s.done)
	return Report{Abandoned: slices.Clone(s.report.Abandoned), Dropped: slices.Clone(s.report.Dropped)}, s.err
}

// Ready reports whether the Service wants more work: from Start until
// Shutdown begins.
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phase == serving && !s.begun
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
	type result struct {
		r   Report
		err error
	}
	out := make(chan result, 1)
	go func() {
		r, err := s.Shutdown(graceCtx)
		out <- result{r, err}
	}()
	for {
		select {
		case <-signals:
			cancel()
		case res := <-out:
			return res.r, res.err
		}
	}
}

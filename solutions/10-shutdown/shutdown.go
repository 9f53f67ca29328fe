// Package shutdown runs jobs on a pool of workers fed by a bounded queue,
// and stops the way http.Server.Shutdown does: refuse new work at once,
// finish the work already accepted, and when the caller's patience runs out
// cancel what is still running, wait for it, and say what was lost.
//
// A [Service] has a FIFO queue of queue jobs and workers goroutines that take
// jobs from it and call handle on each, one at a time. [Service.Submit]
// puts a job in the queue; on a full queue it waits for room, for its ctx,
// or for the shutdown, whichever comes first. A Submit that returns nil has
// handed its job over: the job is handled exactly once, or it appears in the
// [Report] of the shutdown. A refused job is never handled.
//
// [Service.Shutdown] stops intake at once (after the pre-drain delay, if
// bonus B2 set one): from then on every Submit returns an error matching
// [ErrShuttingDown], including the ones waiting for room, and none of them
// panics, however they race with Shutdown. It then drains: queued jobs
// still start, in order, and Shutdown waits for every job to finish. If its ctx ends first, it hard-stops: it cancels the ctx of every
// running job, starts no queued job, waits for every worker to return, and
// returns ctx.Err() and a Report of the jobs it abandoned and dropped.
// Nothing the Service started is running when Shutdown returns, so handle
// must honour its ctx for Shutdown to return soon after the deadline.
//
// The ctx a job gets is cancelled by the hard stop and by nothing else: not
// when Shutdown begins, not by the caller of Submit. Shutdown happens once:
// concurrent and later calls wait for the same end and return the same
// result, and nothing is closed twice.
//
// All methods are safe for concurrent use. Two rules keep them so. A send
// on a closed channel panics, and Submit sends on the queue: close the queue
// only once no Submit can be sending on it any more. And never hold a mutex
// while handle runs or while waiting for the queue or the clock: every other
// caller would queue behind it.
//
// Time comes from the injected clock.Clock, never from package time (bonus
// B1 and B2 wait on it). Wait for a fresh clk.Timer in a select with
// ctx.Done() and Stop it on the way out; build a deadline on the clock with
// clk.WithTimeout, select on its Done() and read its Err() only after Done()
// is closed (the mock clock's Err is not synchronised).
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
	clk     clock.Clock
	workers int
	handle  func(context.Context, Job) error
	queue   chan Job

	// jobCtx is the ctx of every job; stop is the hard stop. It is created
	// in New, not derived from Shutdown's ctx: only the hard stop may end it.
	jobCtx context.Context
	stop   context.CancelFunc

	mu        sync.Mutex
	started   bool
	shutting  bool           // Shutdown has begun: Ready is false
	closed    bool           // intake has stopped
	closing   chan struct{}  // closed with closed, to wake the Submits waiting for room
	sending   sync.WaitGroup // Submits that got past the check and may still send
	delay     time.Duration
	hooks     []func(context.Context) error
	abandoned []Job
	dropped   []Job

	running sync.WaitGroup // the workers
	done    chan struct{}  // closed when the shutdown is over and its result set
	report  Report
	err     error
}

// New returns a Service with workers workers (at least 1) and room for
// queue jobs in its queue (0 means that Submit waits for a free worker).
// handle is called for every job, on a worker's goroutine. The workers start
// with [Service.Start].
func New(clk clock.Clock, workers, queue int, handle func(ctx context.Context, j Job) error) *Service {
	jobCtx, stop := context.WithCancel(context.Background())
	return &Service{
		clk:     clk,
		workers: max(workers, 1),
		handle:  handle,
		queue:   make(chan Job, max(queue, 0)),
		jobCtx:  jobCtx,
		stop:    stop,
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// Start launches the workers. Jobs submitted before Start wait in the queue.
// Calling Start again, or after Shutdown has begun, does nothing.
func (s *Service) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.shutting {
		return
	}
	s.started = true
	s.running.Add(s.workers)
	for range s.workers {
		go s.work()
	}
}

func (s *Service) work() {
	defer s.running.Done()
	for j := range s.queue {
		if s.jobCtx.Err() != nil { // hard-stopped: start nothing more
			s.record(&s.dropped, j)
			return
		}
		if err := s.handle(s.jobCtx, j); err != nil && s.jobCtx.Err() != nil {
			s.record(&s.abandoned, j)
		}
	}
}

func (s *Service) record(list *[]Job, j Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	*list = append(*list, j)
}

// Submit puts j in the queue. On a full queue it waits until there is room
// (nil), ctx is done (ctx.Err()), or intake stops (an error matching
// ErrShuttingDown), whichever comes first. Once Shutdown has begun, Submit
// returns ErrShuttingDown at once. It never panics.
func (s *Service) Submit(ctx context.Context, j Job) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrShuttingDown
	}
	// Counted under the same lock as the check: once Shutdown has set
	// closed, no new sender can appear, and it can wait for these.
	s.sending.Add(1)
	s.mu.Unlock()
	defer s.sending.Done()

	select {
	case s.queue <- j:
		return nil
	case <-s.closing:
		return ErrShuttingDown
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops intake, drains the queue and waits for every job to
// finish. If ctx ends first it hard-stops: the running jobs' ctx is
// cancelled, no queued job starts, and once every worker has returned
// Shutdown returns ctx.Err() and a Report of the abandoned and dropped jobs.
// Without a hard stop it returns an empty Report and nil (plus the errors of
// the hooks, bonus B3).
//
// Only the first call's ctx sets the grace. Every call returns the same
// result once the shutdown is over; a later call whose own ctx ends first
// returns its ctx.Err() and an empty Report, and the shutdown goes on. Each
// call gets a Report of its own: a caller may sort or change its slices
// without touching what another call returns.
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
	if delay > 0 { // bonus B2: still take jobs while the callers see Ready() turn false
		t := s.clk.Timer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}

	s.mu.Lock()
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	// Every Submit still in its select sees closing and returns; after
	// that nobody sends on the queue, so closing it cannot panic.
	s.sending.Wait()
	close(s.queue)

	drained := make(chan struct{})
	go func() {
		s.running.Wait()
		close(drained)
	}()
	var errs []error
	select {
	case <-drained:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
		s.stop()
		<-drained // cancel, then wait: nothing may run after Shutdown returns
	}
	s.stop()

	s.mu.Lock()
	for j := range s.queue { // what the workers left: all of it if never started
		s.dropped = append(s.dropped, j)
	}
	r := Report{Abandoned: s.abandoned, Dropped: s.dropped}
	hooks := s.hooks
	s.mu.Unlock()

	for i := len(hooks) - 1; i >= 0; i-- { // bonus B3: like defer, last registered first
		if err := hooks[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return r, errors.Join(errs...)
}

// Ready reports whether the Service wants more work: true from Start until
// Shutdown begins (bonus B2). A load balancer's readiness probe reads it.
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started && !s.shutting
}

// SetPreDrainDelay makes Shutdown keep accepting jobs for d on the clock
// after Ready turns false (or until Shutdown's ctx ends), so that callers
// who check readiness stop sending before intake stops (bonus B2). Call it
// before Shutdown.
func (s *Service) SetPreDrainDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// OnShutdown registers f to run during Shutdown, after every worker has
// returned, whether the queue was drained or the jobs were hard-stopped
// (bonus B3). Hooks run once, on Shutdown's goroutine, in reverse order of
// registration, with Shutdown's ctx; their errors are joined into the error
// Shutdown returns. Register hooks before Shutdown.
func (s *Service) OnShutdown(f func(ctx context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, f)
}

// Run starts the Service, waits for a signal from signals or for ctx to
// end, then shuts down with grace on the clock, and returns what Shutdown
// returns (bonus B1). A second signal during the shutdown ends the grace at
// once: the jobs are hard-stopped and the error matches context.Canceled.
//
// signals is injected so that tests need no real signal; a program passes
// the channel it gave to signal.Notify.
func (s *Service) Run(ctx context.Context, signals <-chan os.Signal, grace time.Duration) (Report, error) {
	s.Start()
	select {
	case <-signals:
	case <-ctx.Done():
	}
	// The grace is measured from now on the clock, and it must not derive
	// from ctx: that may be what just ended.
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

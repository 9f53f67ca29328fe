// Design: a sync.Cond design with no job channel at all (so nothing can be sent on a closed channel): a FIFO slice behind one mutex, workers and waiting Submits sleeping on one Cond, room = capacity + idle workers for the hand-off, Submit's ctx waking it via context.AfterFunc; bonuses B1, B2 and B3 included.

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
//
// Design: no channel carries the jobs, so none is ever closed and no Submit
// can send on a closed one. The queue is a slice behind mu, and everybody
// who waits for it (a Submit waiting for room, a worker waiting for a job)
// waits on one of two sync.Conds of that mutex (room for Submits, work for
// workers); a Submit's ctx wakes it through context.AfterFunc.
type Service struct {
	clk      clock.Clock
	workers  int
	capacity int
	handle   func(context.Context, Job) error

	// jobCtx is the ctx of every job; stop is the hard stop. Created in New,
	// ended by the hard stop only.
	jobCtx context.Context
	stop   context.CancelFunc

	mu        sync.Mutex
	room      *sync.Cond // Submits wait here for room or the end of intake
	work      *sync.Cond // idle workers wait here for a job, the end of intake or the hard stop
	queue     []Job      // accepted jobs not started yet, oldest first
	idle      int        // workers waiting for a job: with them, a Submit may go past capacity
	started   bool
	shutting  bool // Shutdown has begun: Ready is false
	closed    bool // intake has stopped
	halted    bool // the hard stop: no job starts any more
	delay     time.Duration
	hooks     []func(context.Context) error
	abandoned []Job

	running sync.WaitGroup // the workers
	done    chan struct{}  // closed once the result below is set
	report  Report
	err     error
}

// New returns a Service with workers workers (at least 1) and room for
// queue jobs in its queue (0 means that Submit waits for a free worker).
func New(clk clock.Clock, workers, queue int, handle func(ctx context.Context, j Job) error) *Service {
	jobCtx, stop := context.WithCancel(context.Background())
	s := &Service{
		clk:      clk,
		workers:  max(workers, 1),
		capacity: max(queue, 0),
		handle:   handle,
		jobCtx:   jobCtx,
		stop:     stop,
		done:     make(chan struct{}),
	}
	s.room = sync.NewCond(&s.mu)
	s.work = sync.NewCond(&s.mu)
	return s
}

// Start launches the workers. Calling Start again, or after Shutdown has
// begun, does nothing.
func (s *Service) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.shutting {
		return
	}
	s.started = true
	s.running.Add(s.workers)
	for range s.workers {
		go s.worker()
	}
}

// work takes jobs in order until the queue is closed and empty, or until
// the hard stop. The lock is held only between jobs, never around handle.
func (s *Service) worker() {
	defer s.running.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.halted {
			return // what is left in the queue goes to the Report's Dropped
		}
		if len(s.queue) > 0 {
			j := s.queue[0]
			s.queue = s.queue[1:]
			s.room.Broadcast() // room for a waiting Submit
			s.mu.Unlock()
			err := s.handle(s.jobCtx, j)
			s.mu.Lock()
			if err != nil && s.jobCtx.Err() != nil {
				s.abandoned = append(s.abandoned, j)
			}
			continue
		}
		if s.closed {
			return // drained
		}
		s.idle++
		s.room.Broadcast() // a Submit may hand its job to this worker
		s.work.Wait()
		s.idle--
	}
}

// Submit puts j in the queue. On a full queue it waits until there is room
// (nil), ctx is done (ctx.Err()), or intake stops (ErrShuttingDown).
func (s *Service) Submit(ctx context.Context, j Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if s.closed {
			return ErrShuttingDown
		}
		// Room: the queue's capacity, plus one per idle worker (the
		// hand-off: the job is taken as soon as that worker wakes).
		if len(s.queue) < s.capacity+s.idle {
			s.queue = append(s.queue, j)
			s.work.Signal() // one job: one worker
			return nil
		}
		select { // read Err only once Done is closed (the mock clock's ctx)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		wake := context.AfterFunc(ctx, func() {
			s.mu.Lock()
			s.room.Broadcast()
			s.mu.Unlock()
		})
		s.room.Wait()
		wake()
	}
}

// Shutdown stops intake, drains the queue and waits for every job to
// finish. If ctx ends first it hard-stops and reports. Only the first
// call's ctx sets the grace; every call returns the same result, and a
// later call whose own ctx ends first returns its ctx.Err().
func (s *Service) Shutdown(ctx context.Context) (Report, error) {
	s.mu.Lock()
	first := !s.shutting
	s.shutting = true
	delay := s.delay
	s.mu.Unlock()
	if first {
		r, err := s.shutdown(ctx, delay)
		s.report, s.err = r, err
		close(s.done) // publishes report and err
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
	if delay > 0 { // bonus B2: still take jobs while callers see Ready() turn false
		t := s.clk.Timer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}

	s.mu.Lock()
	s.closed = true
	s.room.Broadcast() // waiting Submits refuse
	s.work.Broadcast() // idle workers return once the queue is empty
	s.mu.Unlock()

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
		s.mu.Lock()
		s.halted = true
		s.stop() // under the lock: a worker that sees halted false took its job before the stop
		s.work.Broadcast()
		s.mu.Unlock()
		<-drained // nothing may run after Shutdown returns
	}
	s.stop()

	s.mu.Lock()
	r := Report{Abandoned: s.abandoned, Dropped: s.queue} // what no worker started
	s.queue = nil
	hooks := s.hooks
	s.mu.Unlock()

	for i := len(hooks) - 1; i >= 0; i-- { // bonus B3: last registered first
		if err := hooks[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return r, errors.Join(errs...)
}

// Ready reports whether the Service wants more work: true from Start until
// Shutdown begins (bonus B2).
func (s *Service) Ready() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started && !s.shutting
}

// SetPreDrainDelay makes Shutdown keep accepting jobs for d on the clock
// after Ready turns false (bonus B2). Call it before Shutdown.
func (s *Service) SetPreDrainDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// OnShutdown registers f to run during Shutdown, after every worker has
// returned (bonus B3).
func (s *Service) OnShutdown(f func(ctx context.Context) error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hooks = append(s.hooks, f)
}

// Run starts the Service, waits for a signal or for ctx to end, then shuts
// down with grace on the clock (bonus B1). A second signal ends the grace
// at once.
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

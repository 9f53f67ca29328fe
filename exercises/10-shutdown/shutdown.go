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
	// TODO: the queue, the workers' WaitGroup, a mutex and what it guards,
	// the context every job gets, the result of the shutdown...
}

// New returns a Service with workers workers (at least 1) and room for
// queue jobs in its queue (0 means that Submit waits for a free worker).
// handle is called for every job, on a worker's goroutine. The workers start
// with [Service.Start].
//
// Every job's ctx comes from a context the Service creates here and cancels
// only at the hard stop: not from Submit's ctx, not from Shutdown's.
func New(clk clock.Clock, workers, queue int, handle func(ctx context.Context, j Job) error) *Service {
	panic("TODO: make the queue and the context the jobs will get")
}

// Start launches the workers. Jobs submitted before Start wait in the queue.
// Calling Start again, or after Shutdown has begun, does nothing.
//
// Each worker takes jobs from the queue in order and calls handle on each,
// until the queue is closed and empty. After the hard stop a worker starts
// no job: it leaves what it takes to the Report's Dropped list and returns.
func (s *Service) Start() {
	panic("TODO: start the workers")
}

// Submit puts j in the queue. On a full queue it waits until there is room
// (nil), ctx is done (ctx.Err()), or intake stops (an error matching
// ErrShuttingDown), whichever comes first. Once Shutdown has begun, Submit
// returns ErrShuttingDown at once. It never panics.
//
// Submit runs from many goroutines at once, and at the same time as
// Shutdown: whatever the interleaving, it must never send on a closed
// channel, and a job it accepts must be handled or reported.
func (s *Service) Submit(ctx context.Context, j Job) error {
	panic("TODO: put j in the queue, or refuse it")
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
	panic("TODO: stop intake, drain, and hard-stop when ctx ends first")
}

// Ready reports whether the Service wants more work: true from Start until
// Shutdown begins (bonus B2). A load balancer's readiness probe reads it.
func (s *Service) Ready() bool {
	panic("TODO: bonus B2: report readiness")
}

// SetPreDrainDelay makes Shutdown keep accepting jobs for d on the clock
// after Ready turns false (or until Shutdown's ctx ends), so that callers
// who check readiness stop sending before intake stops (bonus B2). Call it
// before Shutdown.
func (s *Service) SetPreDrainDelay(d time.Duration) {
	panic("TODO: bonus B2: keep d for Shutdown")
}

// OnShutdown registers f to run during Shutdown, after every worker has
// returned, whether the queue was drained or the jobs were hard-stopped
// (bonus B3). Hooks run once, on Shutdown's goroutine, in reverse order of
// registration, with Shutdown's ctx; their errors are joined into the error
// Shutdown returns. Register hooks before Shutdown.
func (s *Service) OnShutdown(f func(ctx context.Context) error) {
	panic("TODO: bonus B3: keep f for Shutdown")
}

// Run starts the Service, waits for a signal from signals or for ctx to
// end, then shuts down with grace on the clock, and returns what Shutdown
// returns (bonus B1). A second signal during the shutdown ends the grace at
// once: the jobs are hard-stopped and the error matches context.Canceled.
//
// signals is injected so that tests need no real signal; a program passes
// the channel it gave to signal.Notify. The grace is a deadline on clk
// (clk.WithTimeout) whose parent is not ctx: ctx may be what just ended.
func (s *Service) Run(ctx context.Context, signals <-chan os.Signal, grace time.Duration) (Report, error) {
	panic("TODO: bonus B1: serve until a signal, then shut down with grace")
}

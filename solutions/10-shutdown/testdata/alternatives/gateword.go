// Design: one atomic state word holds the phase bits and the count of Submits inside the intake gate,
// changed only by CompareAndSwap; the last one out of a closed gate seals the queue, the last worker closes idle.

package shutdown

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
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

// The state word: four phase bits above a count of Submits inside the gate.
const (
	started  uint64 = 1 << 63 // Start launched the workers
	shutting uint64 = 1 << 62 // Shutdown has begun: Ready is false
	shut     uint64 = 1 << 61 // intake has stopped: the gate lets nobody in
	sealed   uint64 = 1 << 60 // the queue is closed
	inside   uint64 = sealed - 1
)

// Service is a worker pool with a bounded queue and a graceful shutdown.
type Service struct {
	clk     clock.Clock
	workers int
	handle  func(context.Context, Job) error
	queue   chan Job

	jobCtx context.Context // every job's ctx: cancelled by the hard stop only
	halt   context.CancelFunc

	word    atomic.Uint64
	refuse  chan struct{} // closed with the shut bit: wakes Submits waiting for room
	closedQ chan struct{} // closed right after the queue is
	live    atomic.Int64  // workers still running
	idle    chan struct{} // closed once no worker runs, or will

	mu        sync.Mutex // guards the fields below, never held while waiting
	delay     time.Duration
	hooks     []func(context.Context) error
	abandoned []Job
	dropped   []Job

	over   chan struct{} // closed once the first Shutdown has its result
	report Report
	err    error
}

// New returns a Service with workers workers (at least 1) and room for
// queue jobs. It starts nothing.
func New(clk clock.Clock, workers, queue int, handle func(ctx context.Context, j Job) error) *Service {
	jobCtx, halt := context.WithCancel(context.Background())
	return &Service{
		clk:     clk,
		workers: max(workers, 1),
		handle:  handle,
		queue:   make(chan Job, max(queue, 0)),
		jobCtx:  jobCtx,
		halt:    halt,
		refuse:  make(chan struct{}),
		closedQ: make(chan struct{}),
		idle:    make(chan struct{}),
		over:    make(chan struct{}),
	}
}

// Start launches the workers, once, and not after Shutdown has begun.
func (s *Service) Start() {
	for {
		w := s.word.Load()
		if w&(started|shutting) != 0 {
			return
		}
		if s.word.CompareAndSwap(w, w|started) {
			break
		}
	}
	s.live.Store(int64(s.workers))
	for range s.workers {
		go s.work()
	}
}

func (s *Service) work() {
	defer func() {
		if s.live.Add(-1) == 0 {
			close(s.idle)
		}
	}()
	for j := range s.queue {
		if s.jobCtx.Err() != nil {
			s.note(&s.dropped, j)
			return // the rest stays in the queue for Shutdown to list
		}
		if err := s.handle(s.jobCtx, j); err != nil && s.jobCtx.Err() != nil {
			s.note(&s.abandoned, j)
		}
	}
}

func (s *Service) note(list *[]Job, j Job) {
	s.mu.Lock()
	*list = append(*list, j)
	s.mu.Unlock()
}

// trySeal closes the queue if intake has stopped and nobody is inside the
// gate. The CompareAndSwap makes it happen once, whoever gets there.
func (s *Service) trySeal() {
	for {
		w := s.word.Load()
		if w&shut == 0 || w&sealed != 0 || w&inside != 0 {
			return
		}
		if s.word.CompareAndSwap(w, w|sealed) {
			close(s.queue)
			close(s.closedQ)
			return
		}
	}
}

// Submit puts j in the queue, waiting on a full queue for room, for ctx, or
// for intake to stop, whichever comes first.
func (s *Service) Submit(ctx context.Context, j Job) error {
	for {
		w := s.word.Load()
		if w&shut != 0 {
			return ErrShuttingDown
		}
		if s.word.CompareAndSwap(w, w+1) {
			break
		}
	}
	defer func() {
		s.word.Add(^uint64(0)) // one fewer inside the gate
		s.trySeal()
	}()
	select {
	case s.queue <- j:
		return nil
	case <-s.refuse:
		return ErrShuttingDown
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops intake, drains the queue and waits for every job; if ctx
// ends first it hard-stops and reports what was abandoned and dropped.
// Every call gets the result of the first one.
func (s *Service) Shutdown(ctx context.Context) (Report, error) {
	var old uint64
	for {
		old = s.word.Load()
		if s.word.CompareAndSwap(old, old|shutting) {
			break
		}
	}
	if old&shutting == 0 {
		s.report, s.err = s.shutdown(ctx, old&started != 0)
		close(s.over)
	} else {
		select {
		case <-s.over:
		case <-ctx.Done():
			return Report{}, ctx.Err()
		}
	}
	return Report{Abandoned: slices.Clone(s.report.Abandoned), Dropped: slices.Clone(s.report.Dropped)}, s.err
}

func (s *Service) shutdown(ctx context.Context, hadStarted bool) (Report, error) {
	if !hadStarted {
		close(s.idle) // Start will see shutting and launch nobody
	}
	s.mu.Lock()
	delay := s.delay
	s.mu.Unlock()
	if delay > 0 {
		t := s.clk.Timer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}

	for {
		w := s.word.Load()
		if s.word.CompareAndSwap(w, w|shut) {
			break
		}
	}
	close(s.refuse)
	s.trySeal()
	<-s.closedQ // the Submits still inside see refuse and leave at once

	var errs []error
	select {
	case <-s.idle:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
		s.halt()
		<-s.idle // cancel, then wait for every worker
	}
	s.halt()

	s.mu.Lock()
	for j := range s.queue { // sealed: what no worker started
		s.dropped = append(s.dropped, j)
	}
	r := Report{Abandoned: s.abandoned, Dropped: s.dropped}
	hooks := slices.Clone(s.hooks)
	s.mu.Unlock()

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
	w := s.word.Load()
	return w&started != 0 && w&shutting == 0
}

// SetPreDrainDelay makes Shutdown keep accepting jobs for d on the clock
// after Ready turns false.
func (s *Service) SetPreDrainDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// OnShutdown registers f to run after every worker has returned, last
// registered first, with Shutdown's ctx.
func (s *Service) OnShutdown(f func(ctx context.Context) error) {
	s.mu.Lock()
	s.hooks = append(s.hooks, f)
	s.mu.Unlock()
}

// Run starts the Service, waits for a signal or for ctx, then shuts down
// with grace on the clock; a second signal ends the grace at once.
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
		case res := <-out:
			return res.r, res.err
		case <-signals:
			cancel()
			signals = nil // one second signal is enough
		}
	}
}

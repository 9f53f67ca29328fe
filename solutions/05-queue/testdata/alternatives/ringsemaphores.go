// Design: a fixed ring buffer between two hand-written counting semaphores (free slots, filled slots)
// with FIFO waiter lists; consumers claim the head by index, and capacity 0 is a per-item future.

package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Stats counts the items of one call of Run. When Run returns,
// Produced == Consumed + Dropped.
type Stats struct {
	Produced int
	Consumed int
	Dropped  int
}

// ErrClosed is returned by a put that starts after produce has returned.
var ErrClosed = errors.New("queue: put after produce returned")

// ErrDrainTimeout is matched by the error of RunDrainTimeout when the drain
// did not finish in time.
var ErrDrainTimeout = errors.New("queue: drain deadline passed")

// Batch says when RunBatches hands a batch to consume.
type Batch struct {
	Size       int
	FlushEvery time.Duration
}

// --- a counting semaphore with FIFO waiters --------------------------------

// sema is a counting semaphore: units are taken one at a time, in the order
// the takers arrived, and given back any number at a time. A taker can give
// up when one of two channels is ready.
type sema struct {
	mu      sync.Mutex
	avail   int
	waiters []chan struct{} // closed when granted one unit
}

// how a wait on a sema ended
type outcome int

const (
	granted outcome = iota
	aborted         // the done channel is ready
	due             // the due channel is ready
)

func (s *sema) acquire(done <-chan struct{}, dueC <-chan time.Time) outcome {
	select {
	case <-dueC: // a batch that is due is flushed before it grows
		return due
	default:
	}
	s.mu.Lock()
	if s.avail > 0 && len(s.waiters) == 0 {
		s.avail--
		s.mu.Unlock()
		return granted
	}
	w := make(chan struct{})
	s.waiters = append(s.waiters, w)
	s.mu.Unlock()
	select {
	case <-w:
		return granted
	case <-done:
		return s.leave(w, aborted)
	case <-dueC:
		return s.leave(w, due)
	}
}

// leave takes waiter w off the list; if a release granted it a unit in the
// meantime, the unit is kept and the wait counts as granted: the caller
// checks under its own lock whether it may use it.
func (s *sema) leave(w chan struct{}, why outcome) outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.waiters {
		if x == w {
			s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
			return why
		}
	}
	return granted
}

func (s *sema) release(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n > 0 && len(s.waiters) > 0 {
		close(s.waiters[0])
		s.waiters = s.waiters[1:]
		n--
	}
	s.avail += n
}

// --- the ring ---------------------------------------------------------------

// future is the hand-off of capacity 0: put waits until a consumer claims
// the item, or withdraws it on a stop. Both happen under the ring's lock.
type future struct {
	claimed   chan struct{}
	taken     bool
	withdrawn bool
}

type slot[T any] struct {
	v   T
	fut *future // nil unless capacity is 0
}

type ring[T any] struct {
	parent context.Context // the caller's ctx
	ctx    context.Context // the ctx produce and consume get
	cancel context.CancelFunc

	handoff   bool
	consumers int
	free      *sema // free slots in buf; a put takes one, a claim gives it back
	filled    *sema // one unit per item in buf, plus one per consumer once closed and empty

	mu       sync.Mutex
	buf      []slot[T]
	head, n  int
	closed   bool // produce has returned
	inflight int  // puts that passed the closed check and have not returned
	exits    bool // the consumers' exit units were released
	err      error
	produced int
	consumed int
	live     int           // consumers not yet returned
	finished chan struct{} // closed by the last consumer to return
}

// fail records err if it is the first error and stops everything. The
// caller's cancel wins if it came first.
func (q *ring[T]) fail(err error) {
	q.mu.Lock()
	q.failLocked(err)
	q.mu.Unlock()
}

func (q *ring[T]) failLocked(err error) {
	if q.err == nil {
		q.err = err
		if cerr := q.parent.Err(); cerr != nil {
			q.err = cerr
		}
	}
	q.cancel() // under the lock: whoever sees ctx done under it sees err set, or a caller's cancel
}

// stoppedLocked reports whether the run is stopped, recording the caller's
// cancel as the error when nothing was recorded yet.
func (q *ring[T]) stoppedLocked() bool {
	if q.ctx.Err() == nil {
		return false
	}
	if q.err == nil {
		q.failLocked(q.parent.Err())
	}
	return true
}

// outLocked is called whenever a put leaves or intake closes: once intake is
// closed and no put is inside, each consumer gets one exit unit.
func (q *ring[T]) outLocked() bool {
	if q.closed && q.inflight == 0 && !q.exits {
		q.exits = true
		return true
	}
	return false
}

func (q *ring[T]) put(v T) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return ErrClosed
	}
	q.inflight++
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.inflight--
		release := q.outLocked()
		q.mu.Unlock()
		if release {
			q.filled.release(q.consumers)
		}
	}()

	if err := q.ctx.Err(); err != nil {
		return err
	}
	if q.free.acquire(q.ctx.Done(), nil) != granted {
		return q.ctx.Err()
	}
	q.mu.Lock()
	if err := q.ctx.Err(); err != nil {
		q.mu.Unlock()
		q.free.release(1)
		return err
	}
	var fut *future
	if q.handoff {
		fut = &future{claimed: make(chan struct{})}
	} else {
		q.produced++
	}
	q.buf[(q.head+q.n)%len(q.buf)] = slot[T]{v, fut}
	q.n++
	q.mu.Unlock()
	q.filled.release(1)
	if fut == nil {
		return nil
	}
	select {
	case <-fut.claimed:
		return nil
	case <-q.ctx.Done():
		q.mu.Lock()
		defer q.mu.Unlock()
		if fut.taken {
			return nil
		}
		fut.withdrawn = true
		return q.ctx.Err()
	}
}

// what a claim found
type claim int

const (
	item    claim = iota
	drained       // intake closed and the ring empty
	stopped       // cancel, consumer error or drain deadline
	timeUp        // the batch timer fired
)

// claim takes the head of the ring.
func (q *ring[T]) claim(dueC <-chan time.Time) (T, claim) {
	var zero T
	switch q.filled.acquire(q.ctx.Done(), dueC) {
	case aborted:
		q.mu.Lock()
		q.stoppedLocked()
		q.mu.Unlock()
		return zero, stopped
	case due:
		return zero, timeUp
	}
	q.mu.Lock()
	if q.stoppedLocked() {
		q.mu.Unlock()
		return zero, stopped
	}
	if q.n == 0 {
		// More units than items: an exit unit, so intake is closed.
		q.mu.Unlock()
		return zero, drained
	}
	s := q.buf[q.head]
	q.buf[q.head] = slot[T]{}
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	if s.fut != nil {
		if s.fut.withdrawn { // only after a stop, which was checked above
			q.mu.Unlock()
			return zero, stopped
		}
		s.fut.taken = true
		close(s.fut.claimed)
		q.produced++
	}
	q.mu.Unlock()
	q.free.release(1)
	return s.v, item
}

// hand counts n items as handed to consume, unless the run is stopped.
func (q *ring[T]) hand(n int) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stoppedLocked() {
		return false
	}
	q.consumed += n
	return true
}

func (q *ring[T]) consumerDone() {
	q.mu.Lock()
	q.live--
	last := q.live == 0
	q.mu.Unlock()
	if last {
		close(q.finished)
	}
}

// consumer collects batches and hands them over; Run uses size 1 and no timer.
func (q *ring[T]) consumer(clk clock.Clock, size int, every time.Duration, consume func(context.Context, []T) error) {
	defer q.consumerDone()
	var batch []T
	var timer *clock.Timer
	var dueC <-chan time.Time
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
			timer, dueC = nil, nil
		}
	}
	defer stopTimer()
	flush := func() bool {
		stopTimer()
		if len(batch) == 0 {
			return true
		}
		out := batch
		batch = nil
		if !q.hand(len(out)) {
			return false // stopped: the partial batch is dropped
		}
		if err := consume(q.ctx, out); err != nil {
			q.fail(err)
			return false
		}
		return true
	}
	for {
		v, what := q.claim(dueC)
		switch what {
		case stopped:
			return
		case drained:
			flush() // the final flush
			return
		case timeUp:
			if !flush() {
				return
			}
		case item:
			batch = append(batch, v)
			if len(batch) == 1 && every > 0 {
				timer = clk.Timer(every)
				dueC = timer.C
			}
			if len(batch) >= size && !flush() {
				return
			}
		}
	}
}

func run[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int,
	size int, every time.Duration,
	produce func(context.Context, func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	if capacity < 0 || consumers < 1 {
		return Stats{}, fmt.Errorf("queue: capacity %d, consumers %d: want capacity >= 0 and at least one consumer", capacity, consumers)
	}
	slots := max(capacity, 1)
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	q := &ring[T]{
		parent:    ctx,
		ctx:       inner,
		cancel:    cancel,
		handoff:   capacity == 0,
		consumers: consumers,
		free:      &sema{avail: slots},
		filled:    &sema{},
		buf:       make([]slot[T], slots),
		live:      consumers,
		finished:  make(chan struct{}),
	}
	for range consumers {
		go q.consumer(clk, size, every, consume)
	}

	perr := produce(inner, q.put)

	q.mu.Lock()
	q.closed = true
	release := q.outLocked()
	q.mu.Unlock()
	if release {
		q.filled.release(consumers)
	}

	if drainTimeout <= 0 {
		<-q.finished
	} else {
		t := clk.Timer(drainTimeout)
		select {
		case <-q.finished:
		case <-t.C:
			q.fail(ErrDrainTimeout)
			<-q.finished
		}
		t.Stop()
	}

	q.mu.Lock()
	defer q.mu.Unlock()
	st := Stats{Produced: q.produced, Consumed: q.consumed, Dropped: q.produced - q.consumed}
	if q.err != nil {
		return st, q.err
	}
	return st, perr
}

// Run calls produce once with a put that blocks while the ring is full, and
// runs consumers goroutines that claim items in FIFO order and call consume
// with each.
func Run[T any](ctx context.Context, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return run(ctx, nil, 0, capacity, consumers, 1, 0, produce, func(ctx context.Context, b []T) error {
		return consume(ctx, b[0])
	})
}

// RunBatches is Run with consumers that hand consume batches of items.
func RunBatches[T any](ctx context.Context, clk clock.Clock, capacity, consumers int, b Batch, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	return run(ctx, clk, 0, capacity, consumers, max(b.Size, 1), b.FlushEvery, produce, consume)
}

// RunDrainTimeout is Run with a deadline on the drain, counted on clk from
// the moment produce returns.
func RunDrainTimeout[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	return run(ctx, clk, drainTimeout, capacity, consumers, 1, 0, produce, func(ctx context.Context, b []T) error {
		return consume(ctx, b[0])
	})
}

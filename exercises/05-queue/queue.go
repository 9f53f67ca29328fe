// Package queue runs one producer and a fixed number of consumers around a
// bounded queue, the shape of most ingestion pipelines: read records, hand
// them to workers that write them somewhere slow.
//
// Backpressure: the queue holds at most capacity items, and each consumer
// holds the one item it is consuming, so with every consumer busy exactly
// capacity+consumers puts return; the next put blocks until a consumer takes
// an item. Capacity 0 is an unbuffered hand-off.
//
// Shutdown: when produce returns, put accepts nothing more, the consumers
// drain what is queued, and Run returns after the last consume returned. A
// cancel of ctx or the first consumer error stops everything instead: a
// blocked put returns, no new consume starts, in-flight consumes see their
// ctx cancelled, and what is still queued is dropped and counted. When Run
// returns, none of its goroutines is still running.
//
// The bonus variants take an injected clock.Clock and wait only on it: a
// fresh clk.Timer for each wait, stopped when done (never Reset a mock
// timer: Reset on a fired, undrained one blocks the clock's next Add), in a
// select with ctx.Done().
package queue

import (
	"context"
	"errors"
	"time"

	"github.com/benbjohnson/clock"
)

// Stats counts the items of one call of Run. When Run returns,
// Produced == Consumed + Dropped.
type Stats struct {
	Produced int // puts that returned nil: items accepted into the queue
	Consumed int // accepted items handed to consume, failed calls included
	Dropped  int // accepted items never handed to consume (cancel, consumer error, drain deadline)
}

// ErrClosed is returned by a put that starts after produce has returned.
var ErrClosed = errors.New("queue: put after produce returned")

// ErrDrainTimeout is matched by the error of [RunDrainTimeout] when the drain
// did not finish in time.
var ErrDrainTimeout = errors.New("queue: drain deadline passed")

// Run calls produce once, with a put that blocks while the queue is full,
// and starts consumers goroutines that take items from the queue in FIFO
// order and call consume with one item at a time. consume is called from
// several goroutines at once, so it must be safe for concurrent use; the
// calls may finish in any order. Each accepted item is handed to consume at
// most once, and exactly once unless Run is stopped.
//
// put returns nil once the item is in the queue (with capacity 0: in a
// consumer's hands). It returns ctx.Err() of the context produce got if
// that context is done: Run cancels it when the caller cancels ctx and on
// the first consumer error. A put that starts after produce returned
// returns ErrClosed at once. put is safe for concurrent use; call it from
// produce or from goroutines that produce waits for.
//
// When produce returns, put accepts nothing more, the consumers drain the
// queue, and Run returns after the last consume returned. A cancel or the
// first consumer error stops everything instead: no new consume starts, the
// calls in flight see their ctx cancelled, and the queued items are dropped
// (counted in [Stats]). Either way Run returns only after produce and every
// goroutine it started have returned.
//
// The error is the first consumer error or, after a cancel, ctx.Err(),
// whichever came first; otherwise the error produce returned (which stops
// nothing: the accepted items are still consumed); otherwise nil. A
// negative capacity or fewer than one consumer is an error, returned
// without calling produce. A ctx already done when Run is called is a
// cancel like any other: produce is still called, and every put fails.
func Run[T any](ctx context.Context, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	panic("TODO: a channel of size capacity, consumer goroutines, a put that selects on ctx")
}

// Batch says when [RunBatches] hands a batch to consume (bonus B1).
type Batch struct {
	// Size flushes a batch as soon as it holds Size items; below 1 means 1.
	Size int
	// FlushEvery flushes a partial batch this long after its first item was
	// taken, on the injected clock; 0 or below flushes only by Size and at the end.
	FlushEvery time.Duration
}

// RunBatches is Run with consumers that take items one by one and hand them
// to consume in batches (bonus B1). Each consumer keeps its own batch and
// flushes it when it holds b.Size items, b.FlushEvery after its first item
// (a fresh timer on clk per batch), and once more, if not empty, when the
// producer has finished and the queue is empty. After a cancel or a consumer
// error a partial batch is dropped, not flushed, and its timer stopped: no
// timer stays on clk once RunBatches returns. Stats count items, not
// batches; consume may keep the slice it gets.
func RunBatches[T any](ctx context.Context, clk clock.Clock, capacity, consumers int, b Batch, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, []T) error) (Stats, error) {
	panic("TODO: bonus B1: consumers that collect batches and flush them by size, by timer and at the end")
}

// RunDrainTimeout is Run with a deadline on the drain (bonus B2): if the
// consumers have not finished drainTimeout after produce returned (on clk),
// Run stops them as on a cancel: in-flight consumes see their ctx
// cancelled, no new consume starts, the queued items are dropped and
// counted, and the error matches ErrDrainTimeout. The deadline starts when
// produce returns, not when Run starts; drainTimeout <= 0 means no deadline.
func RunDrainTimeout[T any](ctx context.Context, clk clock.Clock, drainTimeout time.Duration, capacity, consumers int, produce func(ctx context.Context, put func(T) error) error, consume func(context.Context, T) error) (Stats, error) {
	panic("TODO: bonus B2: after produce returns, wait for the drain or the deadline on clk")
}

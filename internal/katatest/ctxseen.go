package katatest

import (
	"context"
	"fmt"
	"time"
)

// CtxSeen is what a call saw of the ctx it was given: the value the
// caller's ctx carries under a key of the test's, and the deadline. A call
// given a ctx derived from the caller's sees both; one built on
// context.Background() or context.WithoutCancel loses one or the other.
type CtxSeen struct {
	Value    any
	Deadline time.Time // the zero Time: no deadline
}

// SeeCtx is what ctx shows of key's value and of its deadline.
func SeeCtx(ctx context.Context, key any) CtxSeen {
	d, _ := ctx.Deadline()
	return CtxSeen{Value: ctx.Value(key), Deadline: d}
}

// LostDeadline is "" when s has the deadline want; otherwise what it has
// instead, for a verdict: "no deadline", or "the deadline 40ms after the
// start", timed from start.
func (s CtxSeen) LostDeadline(want, start time.Time) string {
	switch {
	case s.Deadline.Equal(want):
		return ""
	case s.Deadline.IsZero():
		return "no deadline"
	}
	return fmt.Sprintf("the deadline %v after the start", s.Deadline.Sub(start))
}

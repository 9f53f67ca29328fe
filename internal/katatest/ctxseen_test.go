package katatest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

type ctxSeenKey struct{}

func TestSeeCtx(t *testing.T) {
	start := time.Date(2030, 5, 6, 14, 0, 0, 0, time.UTC)
	want := start.Add(40 * time.Millisecond)
	caller, cancel := context.WithDeadline(context.WithValue(context.Background(), ctxSeenKey{}, "req-7"), want)
	defer cancel()

	derived, stop := context.WithCancel(caller)
	defer stop()
	s := SeeCtx(derived, ctxSeenKey{})
	assert.Equal(t, "req-7", s.Value)
	assert.Empty(t, s.LostDeadline(want, start), "a derived ctx keeps the deadline")

	own := SeeCtx(context.WithoutCancel(caller), ctxSeenKey{})
	assert.Equal(t, "req-7", own.Value, "WithoutCancel keeps the values")
	assert.Equal(t, "no deadline", own.LostDeadline(want, start))

	bare := SeeCtx(context.Background(), ctxSeenKey{})
	assert.Nil(t, bare.Value)

	other, stop2 := context.WithDeadline(context.Background(), start.Add(time.Second))
	defer stop2()
	assert.Equal(t, "the deadline 1s after the start", SeeCtx(other, ctxSeenKey{}).LostDeadline(want, start))
}

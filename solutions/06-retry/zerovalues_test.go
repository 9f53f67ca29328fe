package retry

// A success is a nil error, whatever the value: 0 units in stock, an empty
// body, a nil slice or pointer are answers like any other, and Do returns
// them at once, without another attempt.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"gokata/internal/katatest"
)

// testZeroSuccess runs Do[T] with an op that fails once with a retryable
// error, then succeeds with zero (the zero value of T), and checks that Do
// returns that success after exactly two attempts.
func testZeroSuccess[T any](h *katatest.H, what, shown string, zero T, same func(T) bool) bool {
	calls := 0
	op := func(context.Context) (T, error) {
		calls++
		if calls == 1 {
			var v T
			return v, errors.New("stock lookup: connection reset")
		}
		if calls == 2 {
			return zero, nil
		}
		var v T
		return v, fmt.Errorf("stock lookup: attempt %d made after a success", calls)
	}
	p := Policy{MaxAttempts: 4, BaseDelay: 10 * time.Millisecond}
	c := katatest.Start(h, func(ctx context.Context) (T, error) { return Do(ctx, h.Clk, p, op) })
	if c.Broken() {
		return false
	}
	h.Advance(time.Hour)
	if !c.Returns("Do[%s]: attempt 2 succeeded with %s, but Do was still running after an hour of mock time: "+
		"a nil error is a success whatever the value, so return it at once", what, shown) {
		return false
	}
	v, err, ok := c.Finish("Do")
	if !ok {
		return false
	}
	if calls != 2 || err != nil || !same(v) {
		h.Errorf("Do[%s]: attempt 1 failed and attempt 2 succeeded with %s and a nil error, but Do made %d attempt(s) "+
			"and returned (%v, %v): a nil error is a success whatever the value (0 units in stock, an empty "+
			"body, a nil slice are answers), so Do returns it as it is and makes no further attempt; don't take "+
			"the zero value of T for a missing answer", what, shown, calls, v, err)
		return false
	}
	return true
}

// testZeroReply is a reply of a struct type.
type testZeroReply struct {
	Status int
	Body   string
}

func TestR7_ASuccessWithTheZeroValueIsASuccess(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		_ = testZeroSuccess(h, "int", "0", 0, func(v int) bool { return v == 0 }) &&
			testZeroSuccess(h, "string", `""`, "", func(v string) bool { return v == "" }) &&
			testZeroSuccess(h, "[]byte", "a nil slice", nil, func(v []byte) bool { return v == nil }) &&
			testZeroSuccess(h, "*int", "a nil pointer", nil, func(v *int) bool { return v == nil }) &&
			testZeroSuccess(h, "struct", "the zero struct", testZeroReply{}, func(v testZeroReply) bool { return v == testZeroReply{} })
	})
}

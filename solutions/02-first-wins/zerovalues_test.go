package firstwins

// A success is a nil error, whatever the value: an empty string, 0, a nil
// slice or pointer are answers like any other, and the first of them wins.

import (
	"context"
	"errors"
	"testing"
	"time"

	"gokata/internal/katatest"
)

// testZeroWins runs First[T] with three replicas: replica 0 fails at once,
// replica 1 succeeds with zero (the zero value of T) after 10ms, replica 2
// answers only when the test releases it, after First returned. First must
// return replica 1's success at 10ms.
func testZeroWins[T any](h *katatest.H, what, shown string, zero T, same func(T) bool) bool {
	const ms = time.Millisecond
	g := h.Gate()
	var none T
	calls := []func(context.Context) (T, error){
		func(context.Context) (T, error) { return none, errors.New("replica 0: 503 from the price service") },
		func(context.Context) (T, error) { h.Clk.Sleep(10 * ms); return zero, nil },
		func(context.Context) (T, error) { return none, g.Hold(context.Background()) },
	}
	c := katatest.Start(h, func(ctx context.Context) (T, error) { return First(ctx, h.Clk, time.Second, calls...) })
	if c.Broken() {
		return false
	}
	h.Advance(10 * ms)
	if !c.Returns("First[%s]: replica 1 succeeded at 10ms with %s and a nil error, but First was still waiting: "+
		"a nil error is a success whatever the value (an empty string, 0, a nil slice are answers), so the first "+
		"one wins and First returns it at once; don't take the zero value of T for a missing answer", what, shown) {
		return false
	}
	g.Release()
	v, err, ok := c.Finish("First")
	if !ok {
		return false
	}
	if err != nil || !same(v) {
		h.Errorf("First[%s]: replica 1 succeeded at 10ms with %s and a nil error, but First returned (%v, %v): a nil "+
			"error is a success whatever the value, so First returns it as it is, with a nil error; don't take the "+
			"zero value of T for a missing answer", what, shown, v, err)
		return false
	}
	return true
}

func TestR1_ASuccessWithTheZeroValueWins(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		_ = testZeroWins(h, "string", `""`, "", func(v string) bool { return v == "" }) &&
			testZeroWins(h, "int", "0", 0, func(v int) bool { return v == 0 }) &&
			testZeroWins(h, "[]byte", "a nil slice", nil, func(v []byte) bool { return v == nil }) &&
			testZeroWins(h, "*int", "a nil pointer", nil, func(v *int) bool { return v == nil })
	})
}

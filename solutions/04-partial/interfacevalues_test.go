package partial

// R1 with a result type that is an interface: a call may succeed with a
// nil value of it (no body, no cached entry), and that is an outcome like
// any other. A design that carries values through `any` and asserts them
// back to Out panics on the nil.

import (
	"context"
	"io"
	"strings"
	"testing"

	"gokata/internal/katatest"
)

func TestR1_ANilValueOfAnInterfaceTypeIsAnOutcome(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		body := io.NopCloser(strings.NewReader("price list"))
		fn := func(_ context.Context, sku string) (io.ReadCloser, error) {
			if sku == "sku-2" {
				return body, nil
			}
			return nil, nil // nothing stored for this one: no body, no error
		}
		inputs := []string{"sku-1", "sku-2", "sku-3"}
		out := katatest.Start(h, func(ctx context.Context) ([]Outcome[string, io.ReadCloser], error) {
			return Gather(ctx, inputs, fn), nil
		})
		if !out.Returns("Gather[string, io.ReadCloser] whose calls returned (nil, nil) or a body did not return") {
			return
		}
		got, _, ok := out.Finish("Gather")
		if !ok {
			return
		}
		if len(got) != len(inputs) {
			h.Errorf("Gather[string, io.ReadCloser] over %q returned %d outcomes; want one per input", inputs, len(got))
			return
		}
		for i, o := range got {
			want := io.ReadCloser(nil)
			if i == 1 {
				want = body
			}
			if o.Input != inputs[i] {
				h.Errorf("Gather[string, io.ReadCloser] over %q: out[%d] is the outcome of %q, not of input %d, %q: "+
					"out[i] must be the outcome of inputs[i], whatever order the calls finish in", inputs, i, o.Input, i, inputs[i])
				return
			}
			if o.Err != nil || o.Value != want {
				h.Errorf("Gather[string, io.ReadCloser] over %q: out[%d] is {Input: %q, Value: %v, Err: %v}; want "+
					"{Input: %q, Value: %v, Err: nil}: a call that succeeds with a nil value of an interface type "+
					"is a success like any other, with that nil as its Value", inputs, i, o.Input, o.Value, o.Err,
					inputs[i], want)
				return
			}
		}
	})
}

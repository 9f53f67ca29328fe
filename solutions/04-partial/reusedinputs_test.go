package partial

// R3 after Gather returned: the caller owns its inputs slice again and may
// reuse it for the next batch. The outcomes already returned still name the
// inputs they were for.

import (
	"context"
	"strings"
	"testing"

	"gokata/internal/katatest"
)

func TestR3_AnErrorStillNamesItsInputAfterTheCallerReusesTheSlice(t *testing.T) {
	katatest.Run(t, func(h *katatest.H) {
		fn := func(_ context.Context, sku string) (int, error) {
			if sku == "sku-2" {
				return 0, testErrNotFound
			}
			return 100, nil
		}
		buf := []string{"sku-1", "sku-2"}
		out := katatest.Start(h, func(ctx context.Context) ([]Outcome[string, int], error) {
			return Gather(ctx, buf, fn), nil
		})
		if !out.Returns("Gather over [sku-1 sku-2], whose calls return at once, did not return") {
			return
		}
		got, _, ok := out.Finish("Gather")
		if !ok {
			return
		}
		if len(got) != 2 || got[1].Err == nil {
			return // one outcome per input, and a failure for sku-2: graded by R1 and R3
		}
		texts := func() (msg, joined string) {
			if err := Join(got); err != nil {
				joined = err.Error()
			}
			return got[1].Err.Error(), joined
		}
		if msg, joined := texts(); !strings.Contains(msg, "sku-2") || !strings.Contains(joined, "sku-2") {
			return // an error that names its input, Join too: graded by the other R3 tests
		}
		buf[0], buf[1] = "sku-7", "sku-8" // the caller's next batch
		msg, joined := texts()
		for _, c := range []struct{ what, text string }{{"out[1].Err.Error()", msg}, {"Join(out).Error()", joined}} {
			if !strings.Contains(c.text, "sku-2") || strings.Contains(c.text, "sku-8") {
				h.Errorf("out := Gather(ctx, buf, fn) over buf = [sku-1 sku-2], sku-2 failed; then the caller reused "+
					"buf for its next batch (buf[1] = \"sku-8\"), and %s is %q: an outcome's error names the input "+
					"it failed for, so take the input's value when the call fails, not a pointer into the caller's "+
					"slice", c.what, c.text)
				return
			}
		}
	})
}

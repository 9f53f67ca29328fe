package partial

// A stop at the very start: calls that fail as soon as they are called stop
// the gather while GatherWith is still starting the others. Whichever way
// the schedule goes, every call either never starts (its input is skipped)
// or gets a ctx the stop cancels: a call that starts while the stop goes
// through must not run on with a ctx nobody cancels. Each scenario is
// repeated, each time with the schedule shaken by a seed of its own.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"gokata/internal/katatest"
)

// testStopAtStart runs GatherWith(opt) on n inputs whose first failing
// calls fail at once; the others wait, honouring their ctx, until the test
// ends. req is the item graded.
func testStopAtStart(h *katatest.H, req string, opt Options, failing int) {
	const n = 12
	skus := testSKUs(n)
	held := testNewGate(h)
	b := testNewBackend()
	errs := map[string]error{}
	for i, sku := range skus {
		b.calls[sku] = testCall{wait: held}
		if i < failing {
			errs[sku] = fmt.Errorf("%s: %w", sku, testErrNotFound)
			b.calls[sku] = testCall{err: errs[sku]}
		}
	}
	what := fmt.Sprintf("GatherWith(Options{FailFast: %v, MaxFailures: %d}) on %d inputs, the calls for the first %d "+
		"failing as soon as they are called, the others waiting until their ctx ends", opt.FailFast, opt.MaxFailures,
		n, failing)
	c := testStart(h, skus, b.fn, &opt)
	if c.Broken() {
		return
	}
	synctest.Wait()
	if !c.Returned() {
		h.Errorf("%s: stopping cancels the calls still running and starts no new call, but after the stop %d call(s) "+
			"still waited with a ctx nobody cancelled: a call that starts while the stop goes through must get a ctx "+
			"already cancelled; derive every call's ctx from one context the stop cancels (context.WithCancelCause), "+
			"rather than look at a stopped flag and then register a ctx of the call's own", req+": "+what,
			held.Waiting())
		c.Stop()
		return
	}
	out, ok := testCollect(h, c, skus)
	if !ok {
		return
	}
	for i, o := range out {
		sku := skus[i]
		switch err, failed := errs[sku]; {
		case failed && o.Err == nil, failed && !errors.Is(o.Err, err):
			h.Errorf("%s: %s: the call for %s failed on its own and keeps its own error, but its outcome has %v", req,
				what, sku, o.Err)
			return
		case !failed && !errors.Is(o.Err, ErrSkipped):
			h.Errorf("%s: %s: the call for %s was cut short by the stop, or never started, so its outcome's error "+
				"matches ErrSkipped, but it is %v", req, what, sku, o.Err)
			return
		case !failed && !strings.Contains(o.Err.Error(), sku):
			h.Errorf("%s: %s: a skipped outcome is a failed one, and the error of every failed outcome names its "+
				"input (its message contains the input, formatted with %%v), but the call for %s was cut short by "+
				"the stop, or never started, and its outcome's error says only %q: wrap ErrSkipped with %%w in an "+
				"error that names the input, as every other failure's, not the bare ErrSkipped", req, what, sku, o.Err)
			return
		}
	}
}

func TestB1_AStopAtTheStartReachesEveryCall(t *testing.T) {
	katatest.Repeat(t, 20, func(h *katatest.H) { testStopAtStart(h, "B1", Options{FailFast: true}, 1) })
}

func TestB2_AStopAtTheStartReachesEveryCall(t *testing.T) {
	katatest.Repeat(t, 24, func(h *katatest.H) { testStopAtStart(h, "B2", Options{MaxFailures: 1}, 2) })
}

// testNoCallAfterStop runs GatherWith(opt) on n inputs whose calls all fail
// as soon as they are called, and counts the calls that started with their
// ctx already cancelled: calls fn made after the stop. A correct gather
// makes none, bar the few whose goroutine looked before the stop and
// called just after it; one that never looks makes one per input still to
// start. req is the item graded.
func testNoCallAfterStop(h *katatest.H, req string, opt Options) {
	const n = 64
	skus := testSKUs(n)
	var calls, late atomic.Int64
	fn := func(ctx context.Context, sku string) (int, error) {
		// Read first, with nothing that blocks before: a call that waited
		// on a lock of the test's would see a stop that came meanwhile.
		if ctx.Err() != nil {
			late.Add(1)
		}
		calls.Add(1)
		return 0, fmt.Errorf("%s: %w", sku, testErrNotFound)
	}
	c := testStart(h, skus, fn, &opt)
	if c.Broken() || !c.Returns("GatherWith did not return, although every call failed at once") {
		return
	}
	if late := late.Load(); late > n/2 {
		h.Errorf("%s: GatherWith(Options{FailFast: %v, MaxFailures: %d}) on %d inputs whose calls all fail at once: "+
			"fn was called %d times, %d of them with a ctx the stop had already cancelled: stopping starts no new "+
			"call. An input whose call has not started when the gather stops gets ErrSkipped without a call: "+
			"look whether the gather has stopped just before you call fn", req, opt.FailFast, opt.MaxFailures, n,
			calls.Load(), late)
	}
}

func TestB1_NoCallStartsOnceTheGatherHasStopped(t *testing.T) {
	katatest.Repeat(t, 4, func(h *katatest.H) { testNoCallAfterStop(h, "B1", Options{FailFast: true}) })
}

func TestB2_NoCallStartsOnceTheGatherHasStopped(t *testing.T) {
	katatest.Repeat(t, 4, func(h *katatest.H) { testNoCallAfterStop(h, "B2", Options{MaxFailures: 2}) })
}

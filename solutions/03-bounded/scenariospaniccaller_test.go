package bounded

// R4, at the edge of the limit: "each call on a goroutine", whatever the
// limit. With a limit of 1 the calls run one at a time, and it is tempting
// to run them on the caller's goroutine, one after another ("no goroutine
// needed for one at a time"). Then a panic in fn unwinds through ForEach
// into its caller, where a recover (net/http recovers every handler's
// panics) swallows it: the bug no longer crashes the program, with a limit
// of 1 only. The crash is watched from outside, in a copy of the test
// binary, whose caller of ForEach recovers.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"gokata/internal/katatest"
)

// testPanicCallerChild is set in the environment of the copy of the test
// binary that TestR4_APanicInFnIsNotTheCallersToRecoverEvenWithLimitOne
// starts.
const testPanicCallerChild = "KATA_03_PANIC_CALLER_CHILD"

func TestR4_APanicInFnIsNotTheCallersToRecoverEvenWithLimitOne(t *testing.T) {
	if os.Getenv(testPanicCallerChild) == "1" {
		before := runtime.NumGoroutine()
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					fmt.Printf("ForEach's caller recovered the panic: %v\n", r)
				}
			}()
			err = ForEach(context.Background(), testItems(2), 1, func(_ context.Context, item int) error {
				if item == 0 {
					panic("image 0 is corrupt (the test panics in fn on purpose)")
				}
				return nil
			})
		}()
		for runtime.NumGoroutine() > before { // as in TestR4_APanicInFnCrashesTheProgram
			runtime.Gosched()
		}
		fmt.Printf("ForEach returned %v\n", err)
		return
	}
	katatest.Run(t, func(h *katatest.H) {
		c := katatest.StartErr(h, func(ctx context.Context) error {
			return ForEach(ctx, testItems(1), 1, func(context.Context, int) error { return nil })
		})
		if !c.Returns("limit 1, 1 item whose call returns at once: ForEach did not return") {
			return
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestR4_APanicInFnIsNotTheCallersToRecoverEvenWithLimitOne$")
		cmd.Env = append(os.Environ(), testPanicCallerChild+"=1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case strings.Contains(string(out), "ForEach's caller recovered the panic"):
			t.Errorf("fn ran on the caller's goroutine with a limit of 1: fn panicked for item 0, and ForEach's " +
				"caller, which recovers panics (as net/http does for every handler), recovered it, so the bug did " +
				"not crash the program. Each call runs on a goroutine ForEach starts, whatever the limit, so a " +
				"panic in fn crashes the program with a limit of 1 as with 8")
		case errors.As(err, &exit) && strings.Contains(string(out), "panic: image 0 is corrupt"):
			// It crashed, with fn's own panic.
		case strings.Contains(string(out), "ForEach returned"):
			line, _, _ := strings.Cut(string(out[strings.Index(string(out), "ForEach returned"):]), "\n")
			t.Errorf("fn panicked for item 0 (limit 1), and the program went on: %s. A panic in fn is a bug in "+
				"fn, not an error: do not recover it; let it crash the program", line)
		default:
			tail := string(out)
			if len(tail) > 2000 {
				tail = "…" + tail[len(tail)-2000:]
			}
			t.Errorf("fn panicked for item 0 (limit 1), and the program ended without fn's panic (%v); what it "+
				"printed:\n%s", err, tail)
		}
	})
}

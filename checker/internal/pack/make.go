package pack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gokata/checker/internal/grade"
	"gokata/checker/internal/pristine"
	"gokata/checker/internal/usage"
)

// UsageError is a request that cannot be done as made (usage.Error).
type UsageError = usage.Error

// Make builds kit as `checker pack` does: it finds the go command in the
// environment vars (grade.Detect; kit.Env is then its environment),
// refuses a system Go cannot build for, builds the kit, and says on
// stderr what it is doing and on stdout what it made. A directory that is
// not empty, or a kata not committed, is a UsageError.
func Make(ctx context.Context, kit Kit, vars []string, stdout, stderr io.Writer) error {
	tc, err := grade.Detect(ctx, vars)
	if err != nil {
		return err
	}
	if err := CheckPlatform(ctx, tc, kit.Root, kit.OS, kit.Arch); err != nil {
		return err
	}
	kit.Env, kit.Log = tc.Env, stderr
	start := time.Now()
	err = Build(ctx, kit)
	if errors.Is(err, ErrNotEmpty) {
		return &UsageError{Msg: err.Error() + "; pack never overwrites", Try: "checker pack --out DIR, with a new or empty DIR"}
	}
	if errors.Is(err, ErrAnswersExist) {
		return &UsageError{Msg: err.Error() + "; pack never overwrites: move it away, or pack to another DIR", Try: "checker pack --out DIR --interview --bughunt, with a new DIR"}
	}
	if errors.Is(err, pristine.ErrNoHistory) {
		return &UsageError{Msg: err.Error(), Try: "checker pack --out DIR 01 02 (only committed katas)"}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "checker: pack: done in %s\n", elapsed(time.Since(start)))
	fmt.Fprintf(stdout, "Kit ready in %s: %d katas, %s with their hidden tests inside.\n", kit.Out, len(kit.Katas), kit.Binary())
	fmt.Fprintf(stdout, "It runs on %s, where the candidate needs Go and a C compiler;\n", PlatformName(kit.Platform()))
	fmt.Fprintln(stdout, "the hidden tests are out of sight in the binary, not secret.")
	fmt.Fprintf(stdout, "What each file held is in %s, outside the kit: regrade --packed names what changed.\n", kit.ManifestFile())
	if kit.Interview {
		fmt.Fprintln(stdout, "An interview kit: the READMEs keep the Decisions back; interview and decisions NN show them.")
		fmt.Fprintln(stdout, "It carries no reference solution and no known mistake, not even inside its checker.")
	}
	if kit.Bughunt {
		fmt.Fprintf(stdout, "Each kata starts as a bug hunt: a real mistake planted in a working solution.\nWhat was planted, and the fix, are in %s, outside the kit: keep it.\n", kit.AnswersFile())
	}
	return nil
}

// CheckPlatform refuses, with a UsageError, a system goos/goarch the go
// command of tc cannot build for (run in dir), and says which it can (go
// tool dist list).
func CheckPlatform(ctx context.Context, tc *grade.Toolchain, dir, goos, goarch string) error {
	out, err := tc.Go(ctx, dir, "tool", "dist", "list")
	if err != nil {
		return err
	}
	var systems, arches []string
	for _, p := range strings.Fields(out) {
		o, a, _ := strings.Cut(p, "/")
		if p == goos+"/"+goarch {
			return nil
		}
		if !slices.Contains(systems, o) {
			systems = append(systems, o)
		}
		if o == goos {
			arches = append(arches, a)
		}
	}
	try := "checker pack --out DIR --os darwin --arch arm64"
	if len(arches) == 0 {
		return &UsageError{Msg: fmt.Sprintf("--os=%s: Go cannot build for that system; --os takes one of: %s", goos, strings.Join(systems, " ")), Try: try}
	}
	return &UsageError{Msg: fmt.Sprintf("--arch=%s: Go cannot build %s for that CPU; --arch takes one of: %s", goarch, goos, strings.Join(arches, " ")), Try: try}
}

// elapsed rounds d for people: tenths of a second under a minute, whole
// seconds above.
func elapsed(d time.Duration) time.Duration {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

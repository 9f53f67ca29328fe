package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/pack"
	"gokata/checker/internal/pristine"
)

var packVerb = verb{
	name: "pack", args: "--out DIR [NN…]", section: workshops, needs: needKatas,
	kitless: "a kit cannot pack a kit: pack from the kata repository",
	summary: "a candidate kit: exercises and a checker with the hidden tests\ninside (out of sight, not secret); no solutions",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		out := fs.String("out", "", "the kit's `DIR`, new or empty")
		goos := fs.String("os", runtime.GOOS, "the `system` the kit runs on, e.g. darwin (default: this one)")
		goarch := fs.String("arch", runtime.GOARCH, "the `CPU` the kit runs on, e.g. arm64 (default: this one)")
		interview := fs.Bool("interview", false, "an interview kit: the READMEs keep the Decisions back")
		return func(c *call) (int, error) { return packKit(c, *out, *goos, *goarch, *interview) }
	},
}

// packKit builds a candidate kit (package pack) in out: every kata, or
// the ones named.
func packKit(c *call, out, goos, goarch string, interview bool) (int, error) {
	ctx, env, katas := c.ctx, c.env, c.katas
	if out == "" {
		return 0, &usageError{"pack needs --out DIR, the kit's directory", "checker pack --out ../kit"}
	}
	tc, err := grade.Detect(ctx, env.Vars)
	if err != nil {
		return 0, err
	}
	if err := checkPlatform(ctx, tc, c.cat.Root, goos, goarch); err != nil {
		return 0, err
	}
	kit := pack.Kit{Root: c.cat.Root, Out: absPath(env.Dir, out), Katas: katas, Env: tc.Env, OS: goos, Arch: goarch, Interview: interview}
	first := ""
	if kit.Platform() != runtime.GOOS+"/"+runtime.GOARCH {
		first = " (the first build for another system takes a few minutes)"
	}
	fmt.Fprintf(env.Stderr, "checker: packing %d katas and building the kit's checker for %s%s…\n", len(katas), kit.Platform(), first)
	err = pack.Build(ctx, kit)
	if errors.Is(err, pack.ErrNotEmpty) {
		return 0, &usageError{err.Error() + "; pack never overwrites", "checker pack --out DIR, with a new or empty DIR"}
	}
	if errors.Is(err, pristine.ErrNoHistory) {
		return 0, &usageError{err.Error(), "checker pack --out DIR 01 02 (only committed katas)"}
	}
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(env.Stdout, "Kit ready in %s: %d katas, %s with their hidden tests inside.\n", kit.Out, len(katas), kit.Binary())
	fmt.Fprintf(env.Stdout, "It runs on %s, where the candidate needs Go and a C compiler;\n", pack.PlatformName(kit.Platform()))
	fmt.Fprintln(env.Stdout, "the hidden tests are out of sight in the binary, not secret.")
	if interview {
		fmt.Fprintln(env.Stdout, "An interview kit: the READMEs keep the Decisions back; interview and decisions NN show them.")
	}
	return ExitPass, nil
}

// checkPlatform refuses a system the go command cannot build for, and
// says which it can (go tool dist list).
func checkPlatform(ctx context.Context, tc *grade.Toolchain, dir, goos, goarch string) error {
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
		return &usageError{fmt.Sprintf("--os=%s: Go cannot build for that system; --os takes one of: %s", goos, strings.Join(systems, " ")), try}
	}
	return &usageError{fmt.Sprintf("--arch=%s: Go cannot build %s for that CPU; --arch takes one of: %s", goarch, goos, strings.Join(arches, " ")), try}
}

// hasPacked reports whether this checker carries hidden tests: it is a kit's.
func hasPacked() bool {
	files, err := bundle.Files()
	return err != nil || len(files) > 0
}

package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/syncpoint"
	"gokata/internal/failure"
)

// BuildFailure is why the package with the hidden tests did not build.
type BuildFailure struct {
	Kind  failure.Kind // Compile: the learner's code; API: the exported API differs
	Lines []string     // compiler lines in the learner's files, or the API differences
}

var errLineRE = regexp.MustCompile(`^(\S+\.go):(\d+)(?::\d+)?: (.*)$`)

const maxBuildLines = 20

// writeOverlay writes the overlay file for the go command into tmp: the
// target's files and, in a kit, the grader's own copies of the harness.
// Without tests, every test file of the package is left out, the hidden
// tests too: go vet then checks the learner's code alone, which is quicker.
func (g *grader) writeOverlay(t Target, tmp string, tests bool) (string, error) {
	name := "overlay.json"
	if !tests {
		name = "overlay-notests.json"
	}
	return g.writeOverlayFile(t, filepath.Join(tmp, name), tests)
}

// writeShaken writes the overlay of the test build with the source files
// rewritten by package syncpoint: each of their synchronization points is
// followed by a call of shake.Point on the same line, so the harness can
// widen the windows between them (package gokata/internal/katatest/shake).
// The copies are in tmp; the overlay lists them under the files' own
// names, so compile errors, panics and race reports name the graded
// files and their lines. It returns "" when no file has a point.
func (g *grader) writeShaken(t Target, tmp string) (string, error) {
	read := func(tests bool) (map[string][]byte, error) {
		names, err := t.files(tests)
		if err != nil {
			return nil, err
		}
		out := map[string][]byte{}
		for dst, src := range names {
			if data, err := gofiles.ReadRegular(src); err == nil {
				out[dst] = data
			}
		}
		return out, nil
	}
	srcs, err := read(false)
	if err != nil {
		return "", err
	}
	tests, err := read(true)
	if err != nil {
		return "", err
	}
	changed := syncpoint.Rewrite(srcs, tests)
	if len(changed) == 0 {
		return "", nil
	}
	dir := filepath.Join(tmp, "shaken")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	t.Overlay = maps.Clone(t.Overlay)
	for dst, data := range changed {
		p := filepath.Join(dir, filepath.Base(dst))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return "", err
		}
		t.Overlay[dst] = p
	}
	return g.writeOverlayFile(t, filepath.Join(tmp, "overlay-shaken.json"), true)
}

func (g *grader) writeOverlayFile(t Target, path string, tests bool) (string, error) {
	replace := maps.Clone(t.Overlay)
	if g.tc.Kit != nil {
		replace = maps.Clone(g.tc.Kit.Overlay)
		maps.Copy(replace, t.Overlay)
	}
	if !tests {
		inDir, err := goFiles(t.Dir, true)
		if err != nil {
			return "", err
		}
		for _, f := range inDir {
			replace[f] = ""
		}
		for dst := range replace {
			if strings.HasSuffix(dst, "_test.go") {
				replace[dst] = ""
			}
		}
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, ov, 0o600)
}

// modArgs makes a go command read the target's own go.mod (a library
// adapter's, see Target.ModFile), or the grader's own go.mod in a kit.
func (g *grader) modArgs(t Target) []string {
	if t.ModFile != "" {
		return []string{"-modfile", t.ModFile}
	}
	if g.tc.Kit != nil {
		return []string{"-modfile", g.tc.Kit.ModFile}
	}
	return nil
}

// build compiles the test binary once, with the hidden tests overlaid.
func (g *grader) build(ctx context.Context, t Target, tmp, ovPath string) (string, *BuildFailure, error) {
	bin := filepath.Join(tmp, t.Kata.Package+".test")
	if runtime.GOOS == "windows" {
		bin += ".exe" // as go test names it there
	}
	// -ldflags=-w: no DWARF, which nothing here reads (stacks and race
	// reports come from the runtime's own tables), and the link is faster.
	// -gcflags=-l: no inlining in the kata's package, the one package
	// compiled anew for every version graded (its dependencies come from
	// the build cache). The hidden tests run on fake time, so nothing
	// needs the speed, and compiling them takes a fifth less; inlining
	// changes no behaviour, and frames stay the same in stacks and races.
	args := []string{"test", "-c", "-o", bin, "-vet=off", "-ldflags=-w", "-gcflags=-l", "-overlay", ovPath}
	if g.tc.Race {
		args = append(args, "-race")
	}
	args = append(args, g.modArgs(t)...)
	args = append(args, "./"+filepath.ToSlash(rel(g.root, t.Dir)))
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir, cmd.Env = g.root, g.tc.BuildEnv()
	ownProcessGroup(cmd) // an interrupt stops the compiler and linker too
	out, err := cmd.CombinedOutput()
	if err == nil {
		return bin, nil, nil
	}
	if ctx.Err() != nil {
		return "", nil, ctx.Err()
	}
	if _, ok := err.(*exec.ExitError); !ok {
		return "", nil, err
	}
	return "", g.explainBuild(t, string(out)), nil
}

// explainBuild sorts compiler errors into the learner's own mistakes and
// errors inside the hidden tests, which mean the exported API changed.
func (g *grader) explainBuild(t Target, out string) *BuildFailure {
	hidden := t.hiddenSet()
	var mine, theirs, other []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		m := errLineRE.FindStringSubmatch(line)
		if m == nil {
			other = append(other, line)
			continue
		}
		file := m[1]
		if !filepath.IsAbs(file) {
			file = filepath.Join(g.root, file)
		}
		if shown, ok := t.Shown[file]; ok {
			file = shown
		}
		if hidden[file] {
			theirs = append(theirs, m[3])
		} else {
			mine = append(mine, rel(g.root, file)+":"+strings.TrimPrefix(line, m[1]+":"))
		}
	}
	switch {
	case len(mine) > 0:
		return &BuildFailure{Kind: failure.Compile, Lines: capLines(mine)}
	case len(theirs) > 0:
		srcs, _ := t.Sources()
		var learner []string
		for _, src := range srcs {
			learner = append(learner, src)
		}
		ref, _ := goFiles(t.Kata.Solution, false)
		diff := apiDiff(stubAPI(t.Kata.Solution, ref), apiOf(learner))
		if len(diff) == 0 {
			diff = append([]string{"the hidden tests do not compile against your package:"}, theirs...)
		}
		return &BuildFailure{Kind: failure.API, Lines: capLines(diff)}
	default:
		return &BuildFailure{Kind: failure.Compile, Lines: capLines(other)}
	}
}

func capLines(ls []string) []string {
	if len(ls) > maxBuildLines {
		return append(ls[:maxBuildLines:maxBuildLines], "…")
	}
	return ls
}

// trimRoot shows paths under root as relative paths.
func trimRoot(root, s string) string {
	return string(bytes.ReplaceAll([]byte(s), []byte(root+string(filepath.Separator)), nil))
}

// Package pristine recovers a kata's untouched stub from the checkout's git
// history, never from the working tree: the working tree holds the
// learner's edits, and so may HEAD once the learner has committed them.
//
// The stub is taken from the newest commit (merges aside) that changed
// both the kata's exercise and its solution directory: maintainers change
// the two together (a stub whose API changes needs new hidden tests),
// learners change only the exercise. A kata whose history has no such
// commit falls back to the commit that first added its kata.json.
package pristine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gofiles"
)

// ErrNoHistory means the stub cannot be recovered: no git, not a git
// checkout, or a kata that was never committed.
var ErrNoHistory = errors.New("no git history for the kata")

// Stub is a kata's stub as the maintainers shipped it.
type Stub struct {
	Commit string            // where it was read
	Files  map[string][]byte // file name in the exercise directory → content
}

// Read recovers the .go files of kata k's stub. env is the environment of
// the git commands.
func Read(ctx context.Context, env []string, k catalog.Kata) (Stub, error) {
	g := gitRunner{ctx: ctx, env: env, dir: k.Exercise}
	out, err := g.run("rev-parse", "--show-toplevel", "--show-prefix")
	if err != nil {
		return Stub{}, fmt.Errorf("%w: %v", ErrNoHistory, err)
	}
	top, prefix, _ := strings.Cut(strings.TrimSpace(out), "\n")
	g.dir = top // pathspecs below are relative to the top
	ex := strings.TrimSuffix(strings.TrimSpace(prefix), "/")
	sol := path.Join(path.Dir(path.Dir(ex)), "solutions", k.Slug)
	commit, err := g.pick(ex, sol)
	if err != nil {
		return Stub{}, err
	}
	names, err := g.run("ls-tree", "--name-only", commit, "--", ex+"/")
	if err != nil {
		return Stub{}, err
	}
	s := Stub{Commit: commit, Files: map[string][]byte{}}
	for _, p := range strings.Split(strings.TrimSpace(names), "\n") {
		if !strings.HasSuffix(p, ".go") {
			continue
		}
		data, err := g.run("cat-file", "blob", commit+":"+p)
		if err != nil {
			return Stub{}, err
		}
		s.Files[path.Base(p)] = []byte(data)
	}
	if len(s.Files) == 0 {
		return Stub{}, fmt.Errorf("%w: commit %.12s has no .go files in %s", ErrNoHistory, commit, ex)
	}
	return s, nil
}

// pick finds the commit to read the stub from (see the package doc).
func (g gitRunner) pick(ex, sol string) (string, error) {
	out, err := g.run("log", "--no-merges", "--format=%x00%H", "--name-only", "--", ex, sol)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrNoHistory, err)
	}
	for _, entry := range strings.Split(out, "\x00") {
		lines := strings.Fields(entry)
		if len(lines) == 0 {
			continue
		}
		var inEx, inSol bool
		for _, f := range lines[1:] {
			inEx = inEx || strings.HasPrefix(f, ex+"/")
			inSol = inSol || strings.HasPrefix(f, sol+"/")
		}
		if inEx && inSol {
			return lines[0], nil
		}
	}
	out, err = g.run("log", "--diff-filter=A", "--format=%H", "--", ex+"/kata.json")
	if err != nil {
		return "", err
	}
	hashes := strings.Fields(out)
	if len(hashes) == 0 {
		return "", fmt.Errorf("%w: %s was never committed", ErrNoHistory, ex)
	}
	return hashes[len(hashes)-1], nil
}

type gitRunner struct {
	ctx context.Context
	env []string
	dir string
}

func (g gitRunner) run(args ...string) (string, error) {
	cmd := exec.CommandContext(g.ctx, "git", args...)
	cmd.Dir, cmd.Env = g.dir, g.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %s", args[0], msg)
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return string(out), nil
}

// Untouched reports whether kata k's exercise holds exactly the stub's .go
// files (its learner's own _test.go files aside), byte for byte: the
// learner has not started.
func Untouched(ctx context.Context, env []string, k catalog.Kata) (bool, error) {
	stub, err := Read(ctx, env, k)
	if err != nil {
		return false, err
	}
	d, err := gofiles.List(k.Exercise, false)
	if err != nil {
		return false, err
	}
	if len(d.Dangling) > 0 || len(d.Odd) > 0 || len(d.Files) != len(stub.Files) {
		return false, nil
	}
	for _, f := range d.Files {
		want, ok := stub.Files[filepath.Base(f)]
		if !ok {
			return false, nil
		}
		got, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if !bytes.Equal(got, want) {
			return false, nil
		}
	}
	return true, nil
}

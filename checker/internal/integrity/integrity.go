// Package integrity keeps grading honest about the files it trusts: the
// harness under internal/, go.mod and go.sum, the hidden tests, and the
// rest of the checkout (the checker's own source, the other exercises).
//
// Two checks. Before a learner's grade, in a git clone, Uncommitted lists
// the grader's files that differ from the committed version: the learner
// verbs refuse to grade then. Around every run of the learner's code,
// Take and Changed compare the checkout (all but the graded exercise and
// the files editors write on their own: dot files and directories such as
// .git, .kata and .idea, #autosaves#, backups~) before and after: code
// that writes there while it is graded fails the grade, and the file is
// named.
//
// This stops accidents and cheating that takes less than real work; it is
// not a sandbox. What the code does to files outside the checkout (the go
// build cache, say), or to .git, is not seen.
package integrity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Snapshot is the state of the files of one or more trees: path → what
// identifies its content.
type Snapshot map[string]string

// hashLimit: where the system gives no change time, files up to this
// size are hashed, larger ones (bin/checker) identified by size, time and
// mode.
const hashLimit = 1 << 20

// Take records every file under root except those under skip (absolute
// paths) and the directories .git and .kata at the top, and every file
// under each of extra. Links are recorded as links, never followed; only
// regular files are opened.
func Take(root string, skip []string, extra ...string) (Snapshot, error) {
	s := Snapshot{}
	skipped := map[string]bool{filepath.Join(root, ".git"): true, filepath.Join(root, ".kata"): true}
	for _, p := range skip {
		skipped[filepath.Clean(p)] = true
	}
	if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil { // not read, but not to be removed either
		s[filepath.Join(root, ".git")] = "present"
	}
	for _, dir := range append([]string{root}, extra...) {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
					return nil // removed meanwhile, or not ours to read: no content to compare
				}
				return err
			}
			if skipped[p] || p != dir && editorFile(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return nil
			}
			id, err := identify(p, d)
			if err != nil {
				return err
			}
			s[p] = id
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// editorFile reports whether a file or directory is one that editors and
// IDEs write on their own (.idea/, .vscode/, .notes.md.swp, #notes.md#,
// notes.md~): not the grader's, and go build ignores them too.
func editorFile(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "#") || strings.HasSuffix(name, "~")
}

func identify(p string, d fs.DirEntry) (string, error) {
	fi, err := d.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return "gone", nil
	}
	if err != nil {
		return "", err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		return "link " + target, err
	}
	// The change time moves with every write, rename or chmod, and no
	// program can set it back: with it, nothing needs to be read.
	if id, ok := changeID(fi); ok {
		return id, nil
	}
	if !fi.Mode().IsRegular() || fi.Size() > hashLimit {
		return fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano()), nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, hashLimit+1)); err != nil {
		return "", err
	}
	return fmt.Sprintf("%v %x", fi.Mode().Perm(), h.Sum(nil)), nil
}

// Changed lists the files that differ between s and after: changed,
// added or removed, sorted.
func (s Snapshot) Changed(after Snapshot) []string {
	var out []string
	for p, id := range after {
		if s[p] != id {
			out = append(out, p)
		}
	}
	for p := range s {
		if _, ok := after[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Change is a file that differs from its committed version.
type Change struct {
	Path string // relative to the root, with slashes
	New  bool   // never committed: to remove, not to restore
}

// Uncommitted lists the files under paths (relative to root; git
// pathspecs) that differ from their committed version: changed, staged,
// deleted, or not committed at all (ignored files included), sorted.
// ok is false when there is nothing to compare with: root is not in a git
// work tree, git is not installed, or nothing was ever committed.
func Uncommitted(ctx context.Context, env []string, root string, paths []string) (changed []Change, ok bool, err error) {
	top := gitTop(root)
	if top == "" {
		return nil, false, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, false, nil
	}
	args := append([]string{"-c", "core.quotepath=off", "status", "--porcelain=v2", "--branch", "-z",
		"--untracked-files=all", "--ignored=matching", "--"}, paths...)
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = root, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, fmt.Errorf("git status: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	records := strings.Split(string(out), "\x00")
	for i := 0; i < len(records); i++ {
		r := records[i]
		var p string
		isNew := false
		switch {
		case r == "# branch.oid (initial)":
			return nil, false, nil
		case strings.HasPrefix(r, "1 "): // changed: 8 fields, then the path
			p = field(r, 8)
		case strings.HasPrefix(r, "2 "): // renamed: 9 fields, the path, then the old path
			p = field(r, 9)
			i++
		case strings.HasPrefix(r, "u "):
			p = field(r, 10)
		case strings.HasPrefix(r, "? "), strings.HasPrefix(r, "! "):
			p, isNew = r[2:], true
		default:
			continue
		}
		if rel, err := filepath.Rel(root, filepath.Join(top, filepath.FromSlash(p))); err == nil {
			p = filepath.ToSlash(rel)
		}
		changed = append(changed, Change{p, isNew})
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].Path < changed[j].Path })
	return changed, true, nil
}

// field returns what follows the n-th space-separated field of r.
func field(r string, n int) string {
	for range n {
		_, r, _ = strings.Cut(r, " ")
	}
	return r
}

// gitTop is the nearest directory at or above dir that holds .git, or "".
func gitTop(dir string) string {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

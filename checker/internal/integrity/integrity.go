// Package integrity keeps grading honest about the files it trusts: the
// harness under internal/, go.mod and go.sum, the hidden tests, and the
// rest of the checkout (the checker's own source, the other exercises).
//
// Two checks. Before a learner's grade, in a git clone, Uncommitted lists
// the grader's files that differ from the committed version, by content
// (git's index flags could hide an edit from git status): the learner
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
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
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

// Change is a file that differs from its committed version, or that git
// has been told not to compare.
type Change struct {
	Path string // relative to the root, with slashes
	New  bool   // never committed: to remove, not to restore
	// Flag is an index flag set on the file ("skip-worktree",
	// "assume-unchanged"): git status then says nothing of its edits.
	// Its content may differ too (Differs).
	Flag    string
	Differs bool // its content differs from the committed version (always, when New)
}

// Uncommitted lists the files under paths (relative to root: a file, a
// directory, or a pattern of path.Match such as dir/*_test.go) whose
// content differs from the version in HEAD, or that were never committed
// (ignored files included), or that carry an index flag which makes git
// status overlook their edits, sorted.
//
// It asks git only for HEAD's tree and the index flags, with replace refs
// off, and hashes the files itself: git status trusts those flags, and an
// edit hidden behind one would pass for the committed version. A file
// whose only difference is CRLF line ends (a Windows checkout) is the
// committed version.
//
// ok is false when there is nothing to compare with: root is not in a git
// work tree, git is not installed, or nothing was ever committed.
func Uncommitted(ctx context.Context, env []string, root string, paths []string) (changed []Change, ok bool, err error) {
	if gitTop(root) == "" {
		return nil, false, nil
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, false, nil
	}
	git := gitCmd{ctx: ctx, dir: root, env: append(slices.Clip(env), "GIT_NO_REPLACE_OBJECTS=1")}
	if _, err := git.run("rev-parse", "-q", "--verify", "HEAD^{commit}"); err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, nil // nothing committed yet
	}
	committed, err := headTree(git, paths)
	if err != nil {
		return nil, false, err
	}
	flags, err := indexFlags(git, paths)
	if err != nil {
		return nil, false, err
	}
	changed, err = compare(root, paths, committed, flags)
	if err != nil {
		return nil, false, err
	}
	return changed, true, nil
}

// headTree is HEAD's version of the files under paths, by path.
func headTree(git gitCmd, paths []string) (map[string]blob, error) {
	tree, err := git.run(append([]string{"ls-tree", "-r", "-z", "HEAD", "--"}, treeSpecs(paths)...)...)
	if err != nil {
		return nil, err
	}
	committed := map[string]blob{}
	for _, rec := range strings.Split(tree, "\x00") {
		meta, p, found := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		if !found || len(f) != 3 || !matches(paths, p) {
			continue
		}
		committed[p] = blob{mode: f[0], hash: f[2]}
	}
	return committed, nil
}

// indexFlags are the index flags set on the files under paths, by path:
// "skip-worktree" or "assume-unchanged" (see Change.Flag).
func indexFlags(git gitCmd, paths []string) (map[string]string, error) {
	index, err := git.run(append([]string{"ls-files", "-v", "-z", "--"}, treeSpecs(paths)...)...)
	if err != nil {
		return nil, err
	}
	flags := map[string]string{}
	for _, rec := range strings.Split(index, "\x00") {
		if len(rec) < 3 || !matches(paths, rec[2:]) {
			continue
		}
		switch tag := rec[0]; {
		case tag == 'S' || tag == 's':
			flags[rec[2:]] = "skip-worktree"
		case tag >= 'a' && tag <= 'z':
			flags[rec[2:]] = "assume-unchanged"
		}
	}
	return flags, nil
}

// compare lists, sorted, the files under paths in root that differ from
// their committed version or carry an index flag, and the committed files
// that are gone.
func compare(root string, paths []string, committed map[string]blob, flags map[string]string) ([]Change, error) {
	present, err := workFiles(root, paths)
	if err != nil {
		return nil, err
	}
	var changed []Change
	seen := map[string]bool{}
	for _, p := range present {
		seen[p] = true
		b, inHead := committed[p]
		differs := true
		if inHead {
			if differs, err = b.differs(filepath.Join(root, filepath.FromSlash(p))); err != nil {
				return nil, err
			}
		}
		if differs || flags[p] != "" {
			changed = append(changed, Change{Path: p, New: !inHead, Flag: flags[p], Differs: differs})
		}
	}
	for p, b := range committed {
		if !seen[p] && b.mode != gitlinkMode { // deleted
			changed = append(changed, Change{Path: p, Flag: flags[p], Differs: true})
		}
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].Path < changed[j].Path })
	return changed, nil
}

// gitCmd runs git in dir.
type gitCmd struct {
	ctx context.Context
	dir string
	env []string
}

func (g gitCmd) run(args ...string) (string, error) {
	cmd := exec.CommandContext(g.ctx, "git", append([]string{"--no-replace-objects", "-c", "core.quotepath=off"}, args...)...)
	cmd.Dir, cmd.Env = g.dir, g.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if g.ctx.Err() != nil {
			return "", g.ctx.Err()
		}
		return "", fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// treeSpecs are the directories and files git is asked about for paths:
// a pattern's directory stands for it (matches filters the answer).
func treeSpecs(paths []string) []string {
	var out []string
	for _, p := range paths {
		if strings.ContainsAny(p, "*?[") {
			p = path.Dir(p)
		}
		out = append(out, p)
	}
	return out
}

// matches reports whether p (with slashes) is one of paths, lies under
// one of them, or matches one of their patterns.
func matches(paths []string, p string) bool {
	for _, spec := range paths {
		if p == spec || strings.HasPrefix(p, spec+"/") {
			return true
		}
		if ok, _ := path.Match(spec, p); ok {
			return true
		}
	}
	return false
}

// workFiles lists what is in the working tree under paths, relative to
// root with slashes: every file and link, never following a link.
func workFiles(root string, paths []string) ([]string, error) {
	var out []string
	add := func(abs string) {
		if r, err := filepath.Rel(root, abs); err == nil {
			out = append(out, filepath.ToSlash(r))
		}
	}
	for _, spec := range paths {
		if strings.ContainsAny(spec, "*?[") {
			found, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(spec)))
			if err != nil {
				return nil, err
			}
			for _, f := range found {
				if fi, err := os.Lstat(f); err == nil && !fi.IsDir() {
					add(f)
				}
			}
			continue
		}
		err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(spec)), func(p string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if !d.IsDir() {
				add(p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

const (
	linkMode    = "120000"
	gitlinkMode = "160000" // a submodule: a commit, not a file
)

// blob is a file as HEAD's tree holds it: its mode and object name.
type blob struct{ mode, hash string }

// differs reports whether the file at p is other than b: another kind
// (a link for a file), or other content. Links are read, never followed.
func (b blob) differs(p string) (bool, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return false, err
	}
	isLink := fi.Mode()&fs.ModeSymlink != 0
	switch {
	case b.mode == gitlinkMode:
		return false, nil
	case (b.mode == linkMode) != isLink || !isLink && !fi.Mode().IsRegular():
		return true, nil
	case isLink:
		target, err := os.Readlink(p)
		if err != nil {
			return false, err
		}
		return objectName(b.hash, strings.NewReader(target), int64(len(target))) != b.hash, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi.Size() > crlfLimit { // read as it streams: memory stays flat
		return objectName(b.hash, f, fi.Size()) != b.hash, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, crlfLimit+1))
	if err != nil {
		return false, err
	}
	if objectName(b.hash, bytes.NewReader(data), int64(len(data))) == b.hash {
		return false, nil
	}
	lf := bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	return len(lf) == len(data) || objectName(b.hash, bytes.NewReader(lf), int64(len(lf))) != b.hash, nil
}

// crlfLimit: files up to this size are also compared with their CRLF
// line ends made LF, as git's autocrlf checks them out on Windows.
const crlfLimit = 1 << 20

// objectName is git's name for a blob of size bytes read from r, in the
// hash of like (SHA-1, or SHA-256 in a repository that uses it): the hash
// of "blob SIZE\x00" and the content.
func objectName(like string, r io.Reader, size int64) string {
	var h hash.Hash = sha1.New()
	if len(like) == 2*sha256.Size {
		h = sha256.New()
	}
	fmt.Fprintf(h, "blob %d\x00", size)
	if _, err := io.Copy(h, io.LimitReader(r, size)); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
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

// Package exercise changes a kata's exercise folder without losing the
// learner's work: what writing a new set of files there would change
// (Compare), a copy of the learner's .go files (BackUp), then the writes
// (Change.Write). Reset writes the stub this way, a bug hunt its planted
// code.
package exercise

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Change is how an exercise folder differs from the files a verb puts
// there.
type Change struct {
	Dir     string            // the exercise folder
	Files   map[string][]byte // the new files, name → content
	Mine    []string          // the learner's .go files, to back up
	Restore []string          // the files to write: missing, or with other content
	Remove  []string          // the learner's files the new set does not have
	Keep    []string          // the learner's own tests (_test.go) the new set does not have: left in place
}

// None reports whether writing the files changes nothing.
func (c Change) None() bool { return len(c.Restore)+len(c.Remove) == 0 }

// Compare compares the exercise folder dir with files (name → content):
// the learner's .go files, the files that differ or are missing, and the
// learner's files that files does not have: their own tests (_test.go),
// which stay, and the others, which go.
func Compare(dir string, files map[string][]byte) (Change, error) {
	c := Change{Dir: dir, Files: files}
	var err error
	if c.Mine, err = sourceEntries(dir); err != nil {
		return c, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if !sameContent(filepath.Join(dir, name), files[name]) {
			c.Restore = append(c.Restore, name)
		}
	}
	for _, p := range c.Mine {
		name := filepath.Base(p)
		switch _, ok := files[name]; {
		case ok:
		case strings.HasSuffix(name, "_test.go"):
			c.Keep = append(c.Keep, name)
		default:
			c.Remove = append(c.Remove, name)
		}
	}
	sort.Strings(c.Remove)
	sort.Strings(c.Keep)
	return c, nil
}

// Write writes the new files into the exercise folder and removes the
// learner's others; back them up first (BackUp).
func (c Change) Write() error {
	for _, n := range c.Restore {
		if err := ReplaceFile(filepath.Join(c.Dir, n), c.Files[n]); err != nil {
			return err
		}
	}
	for _, n := range c.Remove {
		if err := os.Remove(filepath.Join(c.Dir, n)); err != nil {
			return err
		}
	}
	return nil
}

// BackUp copies files into a new directory named dir (or dir-2, dir-3 …
// when it exists) and returns its name.
func BackUp(dir string, files []string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	name := dir
	for i := 2; ; i++ {
		err := os.Mkdir(name, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		name = fmt.Sprintf("%s-%d", dir, i)
	}
	for _, f := range files {
		if err := copyEntry(f, filepath.Join(name, filepath.Base(f))); err != nil {
			return "", err
		}
	}
	return name, nil
}

// copyEntry copies f to dst: a link as the link it is, a regular file's
// content; a named pipe or a device has no content to keep.
func copyEntry(f, dst string) error {
	fi, err := os.Lstat(f)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(f)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	}
	return nil
}

// sourceEntries lists the .go entries of an exercise that go build would
// read, whatever they are (files, links, pipes): names starting with "."
// or "_" (an editor's lock file) are not the learner's sources.
func sourceEntries(dir string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []string
	for _, p := range all {
		if b := filepath.Base(p); !strings.HasPrefix(b, ".") && !strings.HasPrefix(b, "_") {
			out = append(out, p)
		}
	}
	return out, err
}

// sameContent reports whether p is a regular file (not a link) holding
// data. Only a regular file is opened: a named pipe would block.
func sameContent(p string, data []byte) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	cur, err := os.ReadFile(p)
	return err == nil && bytes.Equal(cur, data)
}

// ReplaceFile puts a new regular file at p (a reset stub, a saved mutant):
// written beside it, then renamed over it, so that a link at p is
// replaced, never written through into the file it points at, and no one
// ever reads half a file.
func ReplaceFile(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".checker-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

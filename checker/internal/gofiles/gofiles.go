// Package gofiles lists the Go source files of a package directory the way
// the go command sees them, without ever opening anything but a regular
// file.
//
// Names starting with "." or "_" are ignored, as go build ignores them (an
// editor's lock file ".#retry.go" is often a dangling symbolic link). A
// symbolic link to a regular file counts as that file. A link that leads
// nowhere is left out (Dangling), and so is anything else that is not a
// regular file or a directory (Odd): a named pipe called x.go would block whoever opens
// it, go build included.
//
// A folder that came from elsewhere (a candidate's returned work) is
// taken with Copy instead: there, a link is refused, not followed.
package gofiles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Dir is what a package directory holds.
type Dir struct {
	Files    []string // regular .go files (or links to them), sorted
	Dangling []string // .go links that lead nowhere
	Odd      []Odd    // .go entries that are not regular files
}

// Odd is a .go entry that is not a regular file.
type Odd struct {
	Path string
	Kind string // "a named pipe", "a directory", …
}

// List reads dir: its test files (name_test.go) when tests, else the
// others.
func List(dir string, tests bool) (Dir, error) {
	var d Dir
	entries, err := os.ReadDir(dir)
	if err != nil {
		return d, err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			strings.HasSuffix(name, "_test.go") != tests {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p) // follows links
		switch {
		case errors.Is(err, fs.ErrNotExist):
			d.Dangling = append(d.Dangling, p)
		case err != nil:
			return d, err
		case fi.Mode().IsRegular():
			d.Files = append(d.Files, p)
		case fi.IsDir(): // go build ignores it too
		default:
			d.Odd = append(d.Odd, Odd{p, kind(fi.Mode())})
		}
	}
	sort.Strings(d.Files)
	return d, nil
}

// Regular returns the regular .go files of dir (tests or not).
func Regular(dir string, tests bool) ([]string, error) {
	d, err := List(dir, tests)
	return d.Files, err
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "not a regular file"
}

// ReadRegular reads p when it is a regular file (or a link to one), and
// refuses anything else instead of opening it: a named pipe would block.
func ReadRegular(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a file", p, kind(fi.Mode()))
	}
	return os.ReadFile(p)
}

// Limits on the source files Copy takes: a kata's solution is a few
// kilobytes.
const (
	MaxFile  = 1 << 20 // bytes of one file
	MaxTotal = 8 << 20 // bytes of all the files of a folder
)

// Refused is an entry of a folder that Copy did not take, and why.
type Refused struct {
	Path string
	Why  string // "is a symbolic link", …
}

// Copy takes the non-test .go files of dir, a folder that came from
// elsewhere, into dst (a directory private to the caller), and returns
// the entries it refused. Every entry of dir is looked at without
// following it (lstat): what go build would read (all but names starting
// with "." or "_", and directories, which are other packages) must be a
// regular file, or it is refused, a symbolic link included, even to a
// regular file; a .go file larger than MaxFile is refused without being
// read, and so are the files beyond MaxTotal. Each file is read once, as
// it streams, so memory stays bounded whatever dir holds.
func Copy(dir, dst string) ([]Refused, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var refused []Refused
	total := int64(0)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		switch {
		case fi.IsDir():
			continue
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			refused = append(refused, Refused{p, fmt.Sprintf("is a symbolic link (to %s), not a file", target)})
			continue
		case !fi.Mode().IsRegular():
			refused = append(refused, Refused{p, "is " + kind(fi.Mode()) + ", not a file"})
			continue
		case !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go"):
			continue // not graded, not read
		case fi.Size() > MaxFile:
			refused = append(refused, Refused{p, fmt.Sprintf("is %s, more than the %s a source file may have", size(fi.Size()), size(MaxFile))})
			continue
		case total+fi.Size() > MaxTotal:
			refused = append(refused, Refused{p, fmt.Sprintf("would make the Go files more than %s together", size(MaxTotal))})
			continue
		}
		n, err := copyFile(p, filepath.Join(dst, name), fi)
		if errors.Is(err, errChanged) {
			refused = append(refused, Refused{p, "changed while it was read"})
			continue
		}
		if err != nil {
			return nil, err
		}
		total += n
	}
	return refused, nil
}

var errChanged = errors.New("changed while it was read")

// copyFile copies the regular file src, as lstat saw it (fi), to dst: if
// src is no longer that file (swapped for a link, say) or grew past
// MaxFile, it copies nothing.
func copyFile(src, dst string, fi fs.FileInfo) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	if now, err := in.Stat(); err != nil || !os.SameFile(fi, now) || !now.Mode().IsRegular() {
		return 0, errChanged
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(in, MaxFile+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > MaxFile {
		err = errChanged
	}
	if err != nil {
		os.Remove(dst)
	}
	return n, err
}

// size shows a number of bytes: in GiB or MiB when that is close enough
// to tell it from the limits, else exactly.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n%(1<<20) == 0 || n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

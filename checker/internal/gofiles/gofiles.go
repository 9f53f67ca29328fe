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
package gofiles

import (
	"errors"
	"fmt"
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

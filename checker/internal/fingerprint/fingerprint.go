// Package fingerprint names a set of source files by one hash, so that two
// people can tell whether they hold the same code: the candidate's record
// of an interview, a kit's check --json and a regrade of the returned
// folder all print the same fingerprints for the same files.
//
// A fingerprint is the hex SHA-256 of, for each file in order of its base
// name, a line "NAME SIZE" followed by the file's bytes. Entries that are
// not regular files (a named pipe called x.go) are never opened; each adds
// a line "NAME KIND" before the files. It is defined here once: the state
// file's staleness check, the interview record, check --json and regrade
// all use it.
package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"gokata/checker/internal/gofiles"
)

// Pair is the fingerprint of a grade: the code graded and the hidden
// tests that graded it.
type Pair struct {
	Code  string `json:"code"`
	Tests string `json:"tests"`
}

// Code is the fingerprint of the non-test .go files of dir: the files a
// grade reads.
func Code(dir string) (string, error) {
	_, fp, err := Read(dir)
	return fp, err
}

// Read reads the non-test .go files of dir (name → content) and returns
// them with their fingerprint, both from one reading.
func Read(dir string) (files map[string][]byte, fp string, err error) {
	d, err := gofiles.List(dir, false)
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	for _, o := range d.Odd { // never opened: a named pipe would block
		fmt.Fprintf(h, "%s %s\n", filepath.Base(o.Path), o.Kind)
	}
	files = map[string][]byte{}
	for _, p := range d.Files {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, "", err
		}
		files[filepath.Base(p)] = data
	}
	write(h, files)
	return files, hex.EncodeToString(h.Sum(nil)), nil
}

// Files is the fingerprint of files (name → content) read elsewhere: a
// snapshot on an interview record, the hidden tests.
func Files(files map[string][]byte) string {
	h := sha256.New()
	write(h, files)
	return hex.EncodeToString(h.Sum(nil))
}

// Paths is the fingerprint of the files at paths, each named by its base
// name.
func Paths(paths []string) (string, error) {
	files := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		files[filepath.Base(p)] = data
	}
	return Files(files), nil
}

func write(h interface{ Write([]byte) (int, error) }, files map[string][]byte) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(h, "%s %d\n", n, len(files[n]))
		h.Write(files[n])
	}
}

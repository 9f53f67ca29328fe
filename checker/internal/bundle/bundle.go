// Package bundle carries what a candidate kit's checker needs from
// solutions/ inside the kit's checker binary: each kata's hidden tests,
// what it reveals on request and may import, the grader's own copy of the
// harness, go.mod and go.sum, and in a practice kit its reference
// solution, WHY.md and mutants (for bug hunts and catch). An interview
// kit's carries no answer: instead of the reference, the stub's exported
// API ("06-retry/api.json"), and for a hunt planted at pack time only its
// bug report ("06-retry/hunt.json", package hunt).
//
// Go cannot link tests compiled in advance against code written later, so
// the files travel as source: a gzip-compressed tar in a string constant,
// which `checker pack` sets by building the checker with a -overlay that
// replaces data.go. The kit's checker unpacks them into a temporary
// directory for the length of one command, laid out as solutions/ is
// ("06-retry/retry_test.go", "06-retry/retry.go",
// "06-retry/testdata/mutants/clksleep.patch"), and that directory stands in
// for each kata's solution directory: the same code reads the reference and
// the mutants in the repository and in a kit, and grading overlays only the
// hidden _test.go files onto the learner's package, never the reference.
//
// This hides the tests and the reference from casual reading (they are not
// in the kit's files, and `strings` on the binary shows compressed bytes);
// it does not protect them: anyone who decompresses the constant has them.
package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"go/format"
	"io"
	"path"
	"sort"
	"strings"
)

// SettingsFile is the name, at the top of the bundle, of how the kit was
// packed (Settings, as JSON); a kit packed without it has the zero
// Settings.
const SettingsFile = "kit.json"

// Settings is how a kit was packed.
type Settings struct {
	// Interview: the kit's READMEs keep the decisions back; only the
	// checker shows them (interview, decisions NN), and reading them
	// early is recorded. The bundle then holds no reference, WHY.md or
	// mutant.
	Interview bool `json:"interview"`
}

// ImportsFile is the name, in a kata's directory of the bundle, of the JSON
// list of what the kata's code may import beyond the gate's default (its
// kata.json "imports" when the kit was packed).
const ImportsFile = "imports.json"

// Files returns the files packed into this binary: the hidden tests, keyed
// by "06-retry/retry_test.go", the reference ("06-retry/retry.go"), its
// WHY.md and mutants ("06-retry/testdata/mutants/clksleep.patch") or, in
// an interview kit, the stub's API and a packed hunt (see the package
// doc), each
// kata's allowed imports ("06-retry/imports.json") and what it reveals on
// request ("06-retry/reveal.json": decisions and hints), the grader's own copies
// of the harness ("internal/katatest/katatest.go"), go.mod and go.sum,
// and the kit's settings ("kit.json"); none in the repository's own
// checker.
func Files() (map[string][]byte, error) {
	return decode(packed)
}

// Packed reports whether this binary is a kit's checker: pack packed
// files into it.
func Packed() bool { return packed != "" }

// KitOr is kit in a kit's checker and repo in the repository's: a message
// that names what only the repository has (make solution, make verify)
// says it with KitOr, and says something else, or nothing, in a kit. The
// kit's parity test reads only the kit's side of a KitOr.
func KitOr(kit, repo string) string {
	if Packed() {
		return kit
	}
	return repo
}

func decode(s string) (map[string][]byte, error) {
	if s == "" {
		return nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		name := path.Clean(h.Name)
		if !expected(name) {
			return nil, fmt.Errorf("bundle: unexpected file %q", h.Name)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		files[name] = data
	}
}

// expected reports whether a bundle may hold a file of that (cleaned)
// name: a kata's file, one of its mutants, the grader's go.mod, go.sum and
// harness, or the kit's settings.
func expected(name string) bool {
	switch {
	case strings.HasPrefix(name, "../") || path.IsAbs(name):
		return false
	case name == "go.mod" || name == "go.sum" || name == SettingsFile || strings.HasPrefix(name, "internal/"):
		return true
	case strings.Count(name, "/") == 1:
		return true
	}
	kata, rest, _ := strings.Cut(name, "/")
	dir, file := path.Split(rest)
	return kata != "internal" && dir == MutantsDir+"/" && strings.HasSuffix(file, ".patch")
}

// MutantsDir is where a kata's mutants are, inside its directory, in a
// bundle as in solutions/.
const MutantsDir = "testdata/mutants"

// Source returns a data.go that packs files ("06-retry/retry_test.go" →
// content): pack builds the kit's checker with it in place of data.go.
func Source(files map[string][]byte) ([]byte, error) {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n]))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	src := fmt.Sprintf("// Code generated by checker pack. DO NOT EDIT.\n\npackage bundle\n\nconst packed = %q\n",
		base64.StdEncoding.EncodeToString(buf.Bytes()))
	return format.Source([]byte(src))
}

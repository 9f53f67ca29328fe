package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadEquivalent(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "equivalent.txt")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	got, err := readEquivalent(write("# comment\n\nretry.go:194:17 CONDITIONALS_BOUNDARY  the clamp is reached either way\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := got["retry.go:194:17 CONDITIONALS_BOUNDARY"]; r != "the clamp is reached either way" {
		t.Errorf("reason = %q", r)
	}
	for _, bad := range []string{
		"retry.go:194 CONDITIONALS_BOUNDARY  no column\n",
		"retry.go:194:17 CONDITIONALS_BOUNDARY\n",           // no reason
		"retry.go:194:17 CONDITIONALS_BOUNDARY one space\n", // reason must follow two spaces
		"a.go:1:1 X  r\na.go:1:1 X  r again\n",              // listed twice
	} {
		if _, err := readEquivalent(write(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if got, err := readEquivalent(filepath.Join(dir, "missing.txt")); err != nil || len(got) != 0 {
		t.Errorf("a missing file must be an empty list: %v %v", got, err)
	}
}

func TestCompare(t *testing.T) {
	got := []mutation{
		{"a.go:1:1", "ARITHMETIC_BASE", "KILLED"},
		{"a.go:2:1", "ARITHMETIC_BASE", "LIVED"},       // unexplained
		{"a.go:3:1", "ARITHMETIC_BASE", "NOT COVERED"}, // unexplained
		{"a.go:4:1", "ARITHMETIC_BASE", "LIVED"},       // explained
		{"a.go:5:1", "ARITHMETIC_BASE", "KILLED"},      // explained, but killed now
		{"a.go:6:1", "ARITHMETIC_BASE", "TIMED OUT"},
		{"a.go:7:1", "ARITHMETIC_BASE", "TIMED OUT"}, // explained; a busy machine may time it out
	}
	listed := map[string]string{
		"a.go:4:1 ARITHMETIC_BASE": "r",
		"a.go:5:1 ARITHMETIC_BASE": "r",
		"a.go:7:1 ARITHMETIC_BASE": "r",
		"a.go:9:1 ARITHMETIC_BASE": "r", // no such mutation any more
	}
	findings := compare(got, listed)
	want := []string{"a.go:2:1", "a.go:3:1", "a.go:5:1", "a.go:9:1"}
	if len(findings) != len(want) {
		t.Fatalf("findings:\n%s", strings.Join(findings, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(findings[i], w) {
			t.Errorf("finding %d = %q, want it about %s", i, findings[i], w)
		}
	}
	if s := summary(got, listed); !strings.Contains(s, "2 unexplained") || !strings.Contains(s, "1 equivalent") {
		t.Errorf("summary = %q", s)
	}
}

func TestKatas(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"01-fanout", "06-retry"} {
		if err := os.MkdirAll(filepath.Join(root, "solutions", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := katas(root, []string{"06"})
	if err != nil || len(got) != 1 || filepath.Base(got[0]) != "06-retry" {
		t.Errorf("katas(06) = %v, %v", got, err)
	}
	if got, _ := katas(root, nil); !slices.Equal([]string{filepath.Base(got[0]), filepath.Base(got[1])}, []string{"01-fanout", "06-retry"}) {
		t.Errorf("katas() = %v", got)
	}
	if _, err := katas(root, []string{"07"}); err == nil {
		t.Error("an unknown kata must be an error")
	}
}

// Every kata's explained survivors still point at an operator their
// mutator changes: an edit above the line fails here in a second, not at
// the end of a mutation run.
func TestEquivalentListsPointAtTheirOperators(t *testing.T) {
	dirs, err := katas(filepath.Join("..", ".."), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		listed, err := readEquivalent(filepath.Join(dir, "testdata", "equivalent.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for key := range listed {
			if err := checkListed(dir, key); err != nil {
				t.Errorf("%s: %v", filepath.Base(dir), err)
			}
		}
	}
}

func TestCheckListedSaysWhenTheLineMoved(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nfunc f(d int) bool {\n\treturn d <= 0\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkListed(dir, "p.go:4:11 CONDITIONALS_BOUNDARY"); err != nil {
		t.Errorf("the <= at 4:11: %v", err)
	}
	for key, want := range map[string]string{
		"p.go:3:1 CONDITIONALS_BOUNDARY":  `"func"`,
		"p.go:4:12 CONDITIONALS_BOUNDARY": "no token starts there",
		"p.go:4:11 ARITHMETIC_BASE":       `"<="`,
		"p.go:4:11 NO_SUCH_MUTATOR":       "no such gremlins mutator",
		"missing.go:1:1 ARITHMETIC_BASE":  "no such file",
	} {
		err := checkListed(dir, key)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", key, err, want)
		}
	}
}

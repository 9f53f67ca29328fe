// Command mutate runs mutation testing over every kata's reference with its
// hidden tests, and fails when a mutation survives that no one has
// explained.
//
// For each solutions/NN-slug it runs gremlins (pinned in this module's
// go.mod, so neither the learners' module nor a kit ever downloads it),
// with testdata excluded. A mutation that LIVED (the tests pass with it) or
// is NOT COVERED (no hidden test runs its line) is a finding, unless the
// kata's testdata/equivalent.txt lists it, one line each:
//
//	retry.go:194:17 CONDITIONALS_BOUNDARY  why no correct test can tell it apart
//
// A listed mutation that is now killed is a finding too, so the list never
// outlives the code it explains.
//
// A mutated run that takes more than -timeout-coefficient times the
// unmutated one is stopped and counts as caught (TIMED OUT): that is how a
// mutation that makes a loop spin is caught. On a machine busy with other
// work a survivor can time out too, so the numbers that count come from a
// run on a machine doing nothing else, as in CI; the summary shows how many
// were caught that way.
//
// Usage, from this directory: go run ./mutate [-root ..] [NN ...]
// Exit status: 0 clean, 1 findings, 2 usage or tool failure.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "..", "the project's root (where go.mod and solutions/ are)")
	workers := fs.Int("workers", 0, "gremlins workers (0: its default, one per CPU)")
	// gremlins stops a mutated test run after coefficient × the time of the
	// unmutated run (build included) and calls it TIMED OUT, which counts as
	// caught: a mutation that makes a loop spin is caught that way. Its
	// default of 3 turns a busy machine into false catches, so the margin is
	// wider here.
	coefficient := fs.Int("timeout-coefficient", 10, "a mutated run longer than this many times the unmutated one is a hang")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	dirs, err := katas(*root, fs.Args())
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 2
	}
	clean := true
	for _, dir := range dirs {
		start := time.Now()
		got, err := unleash(ctx, *root, dir, *workers, *coefficient)
		if err != nil {
			fmt.Fprintf(stderr, "mutate: %s: %v\n", filepath.Base(dir), err)
			return 2
		}
		listed, err := readEquivalent(filepath.Join(dir, "testdata", "equivalent.txt"))
		if err != nil {
			fmt.Fprintf(stderr, "mutate: %v\n", err)
			return 2
		}
		findings := compare(got, listed)
		fmt.Fprintf(stdout, "%s: %s (%.0fs)\n", filepath.Base(dir), summary(got, listed), time.Since(start).Seconds())
		for _, f := range findings {
			fmt.Fprintf(stdout, "  ✘ %s\n", f)
		}
		if len(findings) > 0 {
			clean = false
		}
	}
	if !clean {
		fmt.Fprintln(stdout, "mutate: FAILED: a surviving mutation is first a question about a missing hidden test;"+
			" list it in testdata/equivalent.txt only when no correct test can tell it apart, with the reason")
		return 1
	}
	fmt.Fprintf(stdout, "mutate: %d katas, no unexplained survivors\n", len(dirs))
	return 0
}

// katas lists the solution directories to test: all, or those whose
// number or slug is named.
func katas(root string, names []string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(root, "solutions", "[0-9][0-9]-*"))
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no kata under %s", filepath.Join(root, "solutions"))
	}
	if len(names) == 0 {
		return all, nil
	}
	var out []string
	for _, n := range names {
		found := false
		for _, d := range all {
			if b := filepath.Base(d); b == n || strings.HasPrefix(b, n+"-") {
				out, found = append(out, d), true
			}
		}
		if !found {
			return nil, fmt.Errorf("no kata %q under %s", n, filepath.Join(root, "solutions"))
		}
	}
	return out, nil
}

// mutation is one change gremlins made, named as equivalent.txt names it.
type mutation struct {
	Pos     string // file:line:col, the file relative to the kata's directory
	Mutator string
	Status  string // KILLED, LIVED, NOT COVERED, TIMED OUT, NOT VIABLE, ...
}

func (m mutation) key() string { return m.Pos + " " + m.Mutator }

// survives reports whether no hidden test noticed the mutation.
func (m mutation) survives() bool { return m.Status == "LIVED" || m.Status == "NOT COVERED" }

type report struct {
	Files []struct {
		Name      string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// unleash runs gremlins over one kata and returns every mutation it made.
func unleash(ctx context.Context, root, dir string, workers, coefficient int) ([]mutation, error) {
	out, err := os.CreateTemp("", "mutate-*.json")
	if err != nil {
		return nil, err
	}
	out.Close()
	defer os.Remove(out.Name())
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, err
	}
	args := []string{"tool", "-modfile=tools/go.mod", "gremlins", "unleash", "--silent",
		"--exclude-files", "testdata/.*", "--output", out.Name(),
		"--timeout-coefficient", fmt.Sprint(coefficient)}
	if workers > 0 {
		args = append(args, "--workers", fmt.Sprint(workers))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./"+filepath.ToSlash(rel))...)
	cmd.Dir = root
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("gremlins: %w\n%s", err, log.String())
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		return nil, err
	}
	var r report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("gremlins' report: %w", err)
	}
	var ms []mutation
	for _, f := range r.Files {
		name := filepath.ToSlash(f.Name)
		if p, err := filepath.Rel(dir, filepath.Join(root, f.Name)); err == nil && !strings.HasPrefix(p, "..") {
			name = filepath.ToSlash(p) // gremlins names files from the module root
		}
		for _, m := range f.Mutations {
			ms = append(ms, mutation{fmt.Sprintf("%s:%d:%d", name, m.Line, m.Column), m.Type, m.Status})
		}
	}
	if len(ms) == 0 {
		return nil, errors.New("gremlins made no mutation: is the reference there?")
	}
	return ms, nil
}

var entryRE = regexp.MustCompile(`^(\S+:\d+:\d+)\s+([A-Z_]+)\s{2,}(\S.*)$`)

// readEquivalent reads a kata's list of explained survivors; a missing
// file is an empty list.
func readEquivalent(path string) (map[string]string, error) {
	listed := map[string]string{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return listed, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := entryRE.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("%s:%d: want `file:line:col MUTATOR  reason` (two spaces before the reason), got %q", path, n, line)
		}
		key := m[1] + " " + m[2]
		if _, dup := listed[key]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice", path, n, key)
		}
		listed[key] = m[3]
	}
	return listed, sc.Err()
}

// compare lists the unexplained survivors and the stale explanations.
func compare(got []mutation, listed map[string]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range got {
		seen[m.key()] = true
		_, ok := listed[m.key()]
		switch {
		case m.survives() && !ok:
			what := "lived: the hidden tests pass with it"
			if m.Status == "NOT COVERED" {
				what = "not covered: no hidden test runs this line"
			}
			out = append(out, fmt.Sprintf("%s %s %s", m.Pos, m.Mutator, what))
		case ok && (m.Status == "KILLED" || m.Status == "NOT VIABLE"):
			out = append(out, fmt.Sprintf("%s %s is listed in equivalent.txt but was %s: remove the line", m.Pos, m.Mutator, strings.ToLower(m.Status)))
		}
	}
	var gone []string
	for k := range listed {
		if !seen[k] {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	for _, k := range gone {
		out = append(out, fmt.Sprintf("%s is listed in equivalent.txt but gremlins made no such mutation (did the line move?)", k))
	}
	return out
}

func summary(got []mutation, listed map[string]string) string {
	n := map[string]int{}
	explained := 0
	for _, m := range got {
		n[m.Status]++
		if _, ok := listed[m.key()]; ok && m.survives() {
			explained++
		}
	}
	s := fmt.Sprintf("%d mutations, %d killed", len(got), n["KILLED"])
	if v := n["TIMED OUT"]; v > 0 {
		s += fmt.Sprintf(", %d caught as hangs (timed out)", v)
	}
	if explained > 0 {
		s += fmt.Sprintf(", %d equivalent", explained)
	}
	if v := n["LIVED"] + n["NOT COVERED"] - explained; v > 0 {
		s += fmt.Sprintf(", %d unexplained", v)
	}
	if v := n["NOT VIABLE"]; v > 0 {
		s += fmt.Sprintf(", %d not viable", v)
	}
	return s
}

// operators lists, for each gremlins mutator, the tokens it changes.
var operators = map[string][]token.Token{
	"ARITHMETIC_BASE":         {token.ADD, token.SUB, token.MUL, token.QUO, token.REM},
	"CONDITIONALS_BOUNDARY":   {token.LSS, token.LEQ, token.GTR, token.GEQ},
	"CONDITIONALS_NEGATION":   {token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ},
	"INCREMENT_DECREMENT":     {token.INC, token.DEC},
	"INVERT_ASSIGNMENTS":      {token.ADD_ASSIGN, token.SUB_ASSIGN, token.MUL_ASSIGN, token.QUO_ASSIGN, token.REM_ASSIGN},
	"INVERT_BITWISE":          {token.AND, token.OR, token.XOR, token.AND_NOT, token.SHL, token.SHR},
	"INVERT_BWASSIGN":         {token.AND_ASSIGN, token.OR_ASSIGN, token.XOR_ASSIGN, token.AND_NOT_ASSIGN, token.SHL_ASSIGN, token.SHR_ASSIGN},
	"INVERT_LOGICAL":          {token.LAND, token.LOR},
	"INVERT_LOOPCTRL":         {token.BREAK, token.CONTINUE},
	"INVERT_NEGATIVES":        {token.SUB},
	"REMOVE_SELF_ASSIGNMENTS": {token.ADD_ASSIGN, token.SUB_ASSIGN, token.MUL_ASSIGN, token.QUO_ASSIGN, token.REM_ASSIGN, token.AND_ASSIGN, token.OR_ASSIGN, token.XOR_ASSIGN, token.AND_NOT_ASSIGN, token.SHL_ASSIGN, token.SHR_ASSIGN},
}

var posRE = regexp.MustCompile(`^(\S+):(\d+):(\d+)$`)

// checkListed makes sure an entry of dir's equivalent.txt still names a
// place gremlins can mutate that way: a token its mutator changes sits at
// file:line:col. An edit above the line moves it, and only a full mutation
// run (minutes) would say so otherwise.
func checkListed(dir, key string) error {
	pos, mutator, _ := strings.Cut(key, " ")
	want, ok := operators[mutator]
	if !ok {
		return fmt.Errorf("%s: no such gremlins mutator %q", key, mutator)
	}
	m := posRE.FindStringSubmatch(pos)
	if m == nil {
		return fmt.Errorf("%s: want file:line:col", key)
	}
	src, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m[1])))
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(m[1], -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		p, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		at := fset.Position(p)
		if fmt.Sprintf("%d:%d", at.Line, at.Column) != m[2]+":"+m[3] {
			continue
		}
		if slices.Contains(want, tok) {
			return nil
		}
		if lit == "" {
			lit = tok.String()
		}
		return fmt.Errorf("%s: the token there is %q, which %s does not change (did the line move?)", key, lit, mutator)
	}
	return fmt.Errorf("%s: no token starts there (did the line move?)", key)
}

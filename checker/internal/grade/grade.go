// Package grade runs a kata's hidden tests against a set of source files
// and gives every requirement its own verdict.
//
// The steps: a static gate on the learner's files (package gate); one build
// of the test binary with `go test -c -race -overlay`, the hidden tests laid
// over the package and the learner's own tests left out, with go vet beside
// it on the package alone (which must compile without the hidden tests,
// whose package it shares); runs of that
// binary until every test has a verdict, even when the code panics in a
// goroutine, deadlocks, hangs on a mutex or spins; and a classification of
// each failure in the learner's terms, with the learner's lines.
package grade

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gate"
	"gokata/checker/internal/integrity"
	"gokata/checker/internal/teststream"
	"gokata/internal/failure"
)

// Options tune a grading run.
type Options struct {
	Timeout     time.Duration // a run of the tests longer than this is a hang
	OutputLimit int           // bytes of output kept per test
	Repeat      int           // run every test this many times, shuffled (0 or 1: once)
	CPU         string        // GOMAXPROCS values to run each repetition with, e.g. "1,2,4"
	// Seed, if not 0, replays the scenarios a check drew with that seed
	// (katatest.Explore); 0 draws fresh ones.
	Seed uint64
	// RequireRace: without the race detector, the grade cannot be a
	// pass (an interview's final grade, regrade). Practice grades run
	// without it and say so.
	RequireRace bool

	// Building, if set, is called when the build of the test binary (and
	// go vet beside it) starts; the func it returns, when both have ended.
	Building func() (built func())
}

// DefaultOptions are the options the checker's verbs grade with. The
// hidden tests of a kata run in milliseconds, so 5 s of one run is a hang.
func DefaultOptions() Options { return Options{Timeout: 5 * time.Second, OutputLimit: 64 << 10} }

// Result is the grade of one target.
type Result struct {
	Kata   catalog.Kata
	Race   bool   // graded under the race detector
	NoRace string // why not, when Race is false
	// RaceRequired: the grade cannot be a pass without the race
	// detector (Options.RequireRace).
	RaceRequired bool
	Gate         []gate.Finding // the static gate's findings
	Build        *BuildFailure  // why it did not build; nil when it did
	Items        []ItemResult   // requirements, then bonus follow-ups; none for a learner's own tests (Suite.Own)
	Tests        []TestResult   // every test, in the order of the files
	Runs         int            // repetitions asked for: Repeat times the GOMAXPROCS values (1 when not repeated)
	// Unshaken holds the compiler's lines when the code, rewritten with
	// the points that shake the schedule (package syncpoint), did not
	// build where the code as it is did: the tests then ran without the
	// points. The rewrite must never do this; verify fails when it did.
	Unshaken []string

	scheduling map[string]bool // the tests whose scenario depends on scheduling
	own        bool            // the tests are a learner's own: no Items
	// Untouched: the graded code is the kata's untouched stub, so the
	// items it passes are its declared stub passes (set by the caller,
	// who can read git history; the report shows their reasons).
	Untouched bool
}

// ItemResult is the verdict on one requirement or bonus follow-up: a pass
// when all its tests passed, else the first failure.
type ItemResult struct {
	catalog.Item
	Bonus bool
	Verdict
	Tests  []TestResult
	Runs   int // repetitions in which all its tests finished
	Passes int // repetitions in which all its tests passed
	// Scheduling is true when some of its tests repeat a scenario whose
	// outcome depends on scheduling (katatest.Repeat): code that is wrong
	// may still pass one run of them by luck.
	Scheduling bool
}

// FailedByChance reports whether one run of the item could have gone
// either way: a test that depends on scheduling failed, or the item
// passed some repetitions and failed others.
func (it ItemResult) FailedByChance() bool {
	if it.Passed() {
		return false
	}
	if it.Flaky() {
		return true
	}
	for _, t := range it.Tests {
		if t.Scheduling && !t.Passed() && ranTheCode(t.Kind) {
			return true
		}
	}
	return false
}

// ranTheCode reports whether a failure of kind k came from running the
// code: one that did not (refused, not built, not implemented, not run)
// cannot have gone the other way by luck.
func ranTheCode(k failure.Kind) bool {
	switch k {
	case failure.NotRun, failure.NotImplemented, failure.Forbidden, failure.Compile, failure.API:
		return false
	}
	return true
}

// Flaky reports whether the item passed some repetitions and failed
// others: its outcome depends on scheduling.
func (it ItemResult) Flaky() bool { return it.Passes > 0 && it.Passes < it.Runs }

// Printed counts the lines the code printed during the item's tests.
func (it ItemResult) Printed() int {
	n := 0
	for _, t := range it.Tests {
		n += t.Output.Total()
	}
	return n
}

// TestResult is the verdict on one hidden test.
type TestResult struct {
	Name string `json:"name"`
	Verdict
	Results []string `json:"-"` // one per finished run: "pass", "fail", "skip"
	// Output is what the code printed while the test ran (all its runs,
	// under Repeat), apart from the test's own messages.
	Output teststream.Printed `json:"output,omitzero"`
	// Scheduling: the test repeats a scenario whose outcome depends on
	// scheduling (katatest.Repeat).
	Scheduling bool `json:"scheduling,omitempty"`
}

// Score counts passed requirements and bonus follow-ups.
func (r *Result) Score() (req, reqTotal, bonus, bonusTotal int) {
	for _, it := range r.Items {
		if it.Bonus {
			bonusTotal++
			if it.Passed() {
				bonus++
			}
		} else {
			reqTotal++
			if it.Passed() {
				req++
			}
		}
	}
	return
}

// Passed reports whether every requirement passed and every gate held,
// the race detector's included when it was required.
func (r *Result) Passed() bool {
	req, total, _, _ := r.Score()
	return req == total && len(r.Gate) == 0 && r.Build == nil && !r.RaceMissing()
}

// RaceMissing reports whether the race detector was required and did not
// run: the grade cannot be a pass, whatever the tests say.
func (r *Result) RaceMissing() bool { return r.RaceRequired && !r.Race }

// Verdicts returns the verdict of every item by id.
func (r *Result) Verdicts() map[string]Verdict {
	m := map[string]Verdict{}
	for _, it := range r.Items {
		m[it.ID] = it.Verdict
	}
	return m
}

type grader struct {
	tc   *Toolchain
	root string
	opt  Options
	hung bool // a run has hit the time limit: later runs get less time
	own  bool // the tests are a learner's own (Suite.Own): a pass needs no receipt
}

// Grade grades target t. An error means the grading itself failed (or
// ctx ended); everything wrong with the graded code is in the Result.
func Grade(ctx context.Context, tc *Toolchain, root string, t Target, opt Options) (*Result, error) {
	g := &grader{tc: tc, root: root, opt: opt, own: t.Suite != nil && t.Suite.Own}
	res := &Result{Kata: t.Kata, Race: tc.Race, NoRace: tc.NoRace, RaceRequired: opt.RequireRace, Runs: g.repetitions()}
	var hid hidden
	var err error
	if t.Suite != nil {
		hid, err = readTests(t.Kata, t.Suite.Files, t.Suite.Own)
	} else {
		hid, err = readHidden(t.Kata)
	}
	if err != nil {
		return nil, err
	}
	res.own = g.own
	names, itemOf := hid.names, hid.itemOf
	res.scheduling = hid.scheduling
	srcs, err := t.Sources()
	if err != nil {
		return nil, err
	}
	files, err := readSources(root, srcs)
	if err != nil {
		return nil, err
	}
	res.Gate = gate.Check(files, gate.NewAllowlist(t.Kata.Imports))
	for _, o := range t.Odd {
		res.Gate = append(res.Gate, gate.Finding{File: rel(root, o.Path), Line: 1, Rule: gate.RuleForbidden,
			Message: fmt.Sprintf("%s is %s, not a source file: remove it (go build cannot read it)", filepath.Base(o.Path), o.Kind)})
	}
	res.Gate = append(res.Gate, t.Refused...)
	others, err := dirFiles(root, t.Dir)
	if err != nil {
		return nil, err
	}
	res.Gate = append(res.Gate, gate.Foreign(others)...)
	verdicts := map[string]TestResult{}
	if res.Build = SyntaxFailure(res.Gate); res.Build != nil {
		// A file that does not parse does not compile either: say so
		// without building, and run nothing.
		res.Gate = slices.DeleteFunc(res.Gate, func(f gate.Finding) bool { return f.Rule == gate.RuleSyntax })
		for _, n := range names {
			verdicts[n] = TestResult{Name: n, Verdict: Verdict{Kind: failure.Compile, Message: "does not compile"}}
		}
		res.collect(names, itemOf, verdicts)
		return res, nil
	}
	if v, blocked := blockedVerdict(res.Gate); blocked {
		for _, n := range names {
			verdicts[n] = TestResult{Name: n, Verdict: v}
		}
		res.collect(names, itemOf, verdicts)
		return res, nil
	}
	tmp, err := os.MkdirTemp("", "kata-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ovPath, err := g.writeOverlay(t, tmp, true)
	if err != nil {
		return nil, err
	}
	vetPath, err := g.writeOverlay(t, tmp, false)
	if err != nil {
		return nil, err
	}
	shakenPath, err := g.writeShaken(t, tmp)
	if err != nil {
		return nil, err
	}
	// go vet's concurrency analyzers run beside the build: their findings
	// fail the kata like the clock gate, without hiding any verdict.
	built := func() {}
	if opt.Building != nil {
		built = opt.Building()
	}
	var vetRes vetResult
	var vetErr error
	vetDone := make(chan struct{})
	go func() {
		defer close(vetDone)
		if g.own {
			return // the code is the kata's reference or a mutant of it: none of it is the learner's to vet
		}
		vetRes, vetErr = g.vet(ctx, t, vetPath)
	}()
	bin, bf, err := g.build(ctx, t, tmp, cmp.Or(shakenPath, ovPath))
	if err == nil && bf != nil && shakenPath != "" {
		// Built again from the files as they are, the errors name the
		// learner's own columns, and a rewrite that broke the build (it
		// must not) blames no one: the tests then run without the points.
		shaken := bf
		if bin, bf, err = g.build(ctx, t, tmp, ovPath); err == nil && bf == nil {
			res.Unshaken = shaken.Lines
		}
	}
	<-vetDone
	built()
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", t.Kata.Slug, err)
	}
	if vetErr != nil {
		return nil, fmt.Errorf("vet %s: %w", t.Kata.Slug, vetErr)
	}
	if bf == nil {
		// It built with the hidden tests, but must build without them
		// too: else it reaches into them (see vet).
		bf = vetRes.alone
	}
	if bf != nil {
		res.Build = bf
		v := Verdict{Kind: bf.Kind, Message: "does not compile"}
		if bf.Kind == failure.API {
			v.Message = "your exported API differs from the stub's"
		}
		for _, n := range names {
			verdicts[n] = TestResult{Name: n, Verdict: v}
		}
		res.collect(names, itemOf, verdicts)
		return res, nil
	}
	res.Gate = append(res.Gate, vetRes.findings...)
	verdicts, changed, err := g.runWatched(ctx, bin, t, tmp, names, itemOf)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", t.Kata.Slug, err)
	}
	if len(changed) > 0 {
		res.Gate = append(res.Gate, changed...)
		v := Verdict{Kind: failure.Forbidden, Message: "not graded: your code changed files outside its exercise while it ran"}
		for _, f := range changed {
			v.Detail = append(v.Detail, f.String())
		}
		for _, n := range names {
			verdicts[n] = TestResult{Name: n, Verdict: v}
		}
	}
	for n, v := range verdicts {
		v.Message = trimRoot(root, v.Message)
		v.Detail = slices.Clone(v.Detail)
		for i := range v.Detail {
			v.Detail[i] = trimRoot(root, v.Detail[i])
		}
		verdicts[n] = v
	}
	res.collect(names, itemOf, verdicts)
	return res, nil
}

// runWatched runs the tests (runAll) and reports every file outside the
// graded directory that changed meanwhile (package integrity): in the
// checkout, and the kit's copies of the grader's files.
func (g *grader) runWatched(ctx context.Context, bin string, t Target, tmp string, names []string, itemOf map[string]string) (map[string]TestResult, []gate.Finding, error) {
	skip := []string{t.Dir, tmp}
	var extra []string
	if g.tc.Kit != nil {
		extra = append(extra, g.tc.Kit.Dir)
	} else if r := rel(g.root, t.Kata.Solution); filepath.IsAbs(r) {
		extra = append(extra, t.Kata.Solution)
	}
	before, err := integrity.Take(g.root, skip, extra...)
	if err != nil {
		return nil, nil, err
	}
	verdicts, err := g.runAll(ctx, bin, t.Dir, names, itemOf)
	if err != nil {
		return nil, nil, err
	}
	after, err := integrity.Take(g.root, skip, extra...)
	if err != nil {
		return nil, nil, err
	}
	var changed []gate.Finding
	for _, p := range before.Changed(after) {
		name := rel(g.root, p)
		if g.tc.Kit != nil && strings.HasPrefix(p, g.tc.Kit.Dir+string(filepath.Separator)) {
			name = "the checker's copy of " + strings.TrimPrefix(p, g.tc.Kit.Dir+string(filepath.Separator))
		}
		changed = append(changed, gate.Finding{File: name, Line: 1, Rule: gate.RuleForbidden,
			Message: "changed while your code was graded: code must not write outside its exercise; put it back before grading again (git checkout HEAD -- FILE, or remove a new file)"})
	}
	return verdicts, changed, nil
}

// blockedVerdict is the verdict for code the gate refuses to run.
func blockedVerdict(fs []gate.Finding) (Verdict, bool) {
	var why []string
	for _, f := range fs {
		if f.Blocking() {
			why = append(why, f.String())
		}
	}
	if len(why) == 0 {
		return Verdict{}, false
	}
	sort.Strings(why)
	return Verdict{Kind: failure.Forbidden, Message: "not run: the code uses something the grader does not allow", Detail: why}, true
}

// collect folds test verdicts into requirement verdicts.
func (r *Result) collect(names []string, itemOf map[string]string, verdicts map[string]TestResult) {
	bonus := map[string]bool{}
	for _, b := range r.Kata.Bonus {
		bonus[b.ID] = true
	}
	for _, n := range names {
		tr := verdicts[n]
		tr.Name = n
		tr.Scheduling = r.scheduling[n]
		r.Tests = append(r.Tests, tr)
	}
	if r.own {
		return
	}
	for _, it := range r.Kata.Items() {
		ir := ItemResult{Item: it, Bonus: bonus[it.ID]}
		for _, n := range names {
			if itemOf[n] != it.ID {
				continue
			}
			tr := verdicts[n]
			tr.Scheduling = r.scheduling[n]
			ir.Tests = append(ir.Tests, tr)
			ir.Scheduling = ir.Scheduling || tr.Scheduling
			if !tr.Passed() && tr.Kind != failure.NotRun && ir.Kind == "" {
				ir.Verdict = tr.Verdict
			}
		}
		ir.Runs, ir.Passes = repetitions(ir.Tests)
		switch {
		case len(ir.Tests) == 0:
			ir.Verdict = Verdict{Kind: failure.Assertion, Message: "no hidden test grades " + it.ID}
		case ir.Kind == "":
			ir.Verdict = Verdict{Kind: failure.Pass}
		}
		r.Items = append(r.Items, ir)
	}
}

// repetitions counts the repetitions in which every test finished, and
// those in which every test passed: the k-th result of each test belongs
// to repetition k.
func repetitions(ts []TestResult) (runs, passes int) {
	if len(ts) == 0 {
		return 0, 0
	}
	runs = len(ts[0].Results)
	for _, t := range ts {
		runs = min(runs, len(t.Results))
	}
	for k := range runs {
		if !slices.ContainsFunc(ts, func(t TestResult) bool { return t.Results[k] != "pass" }) {
			passes++
		}
	}
	return runs, passes
}

// String summarises the verdicts on one line, for logs and tests.
func (r *Result) String() string {
	var parts []string
	for _, it := range r.Items {
		parts = append(parts, it.ID+"="+string(it.Kind))
	}
	return strings.Join(parts, " ")
}

// SyntaxFailure is the build failure for files that do not parse, or nil
// when every file parsed.
func SyntaxFailure(fs []gate.Finding) *BuildFailure {
	var lines []string
	for _, f := range fs {
		if f.Rule == gate.RuleSyntax {
			lines = append(lines, f.String())
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &BuildFailure{Kind: failure.Compile, Lines: capLines(lines)}
}

// dirFiles lists the names of the regular files in dir, relative to root,
// for the gate's look at what is not Go.
func dirFiles(root, dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, rel(root, filepath.Join(dir, e.Name())))
		}
	}
	return out, nil
}

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
	pol  policy
	// building, if set, is told of a build under way (GradeShowing)
	building func() (built func())
	hung     bool // a run has hit the time limit: later runs get less time
}

// policy is what a grade asks of the tests and of the code, set by whose
// tests they are. The hidden tests prove each pass with the harness's
// receipt and fold into requirement verdicts, and the code, the learner's,
// is vetted. A learner's own tests (Suite.Own, for catch) run against the
// reference or a mutant: none of that holds, and a panic on a goroutine
// may be the tests' own.
type policy struct {
	receipts bool // a pass needs the harness's receipt; a process that exits before any test is the code's doing
	items    bool // the tests' verdicts fold into requirement verdicts
	vet      bool // go vet's analyzers look at the code
	ownTests bool // the tests are the learner's, under test as much as the code
}

func policyFor(t Target) policy {
	if t.Suite != nil && t.Suite.Own {
		return policy{ownTests: true}
	}
	return policy{receipts: true, items: true, vet: true}
}

// Grade grades target t in named stages: read the tests, read the
// sources, gate, build and vet, run, judge. A stage that settles the
// grade (the gate refuses the code, it does not build, it changed files
// while it ran) gives every test the same verdict. An error means the
// grading itself failed (or ctx ended); everything wrong with the graded
// code is in the Result.
func Grade(ctx context.Context, tc *Toolchain, root string, t Target, opt Options) (*Result, error) {
	return GradeShowing(ctx, tc, root, t, opt, nil)
}

// GradeShowing is Grade for a verb that shows a build under way: building,
// if not nil, is called when the build of the test binary (and go vet
// beside it) starts, and the func it returns when both have ended.
func GradeShowing(ctx context.Context, tc *Toolchain, root string, t Target, opt Options, building func() (built func())) (*Result, error) {
	g := &grader{tc: tc, root: root, opt: opt, pol: policyFor(t), building: building}
	hid, err := t.tests()
	if err != nil {
		return nil, err
	}
	res := &Result{Kata: t.Kata, Race: tc.Race, NoRace: tc.NoRace, RaceRequired: opt.RequireRace, Runs: g.repetitions()}
	files, err := t.Sources()
	if err != nil {
		return nil, err
	}
	if res.Gate, err = g.gate(t, files); err != nil {
		return nil, err
	}
	var stop *Verdict
	if res.Build, res.Gate, stop = Screen(res.Gate); stop != nil {
		return res.same(hid, *stop, g.pol), nil
	}
	tmp, err := os.MkdirTemp(tc.TempDir, "kata-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin, err := g.buildAndVet(ctx, t, tmp, res)
	if err != nil {
		return nil, err
	}
	if res.Build != nil {
		return res.same(hid, buildVerdict(res.Build), g.pol), nil
	}
	verdicts, changed, err := g.runWatched(ctx, bin, t, tmp, hid)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", t.Kata.Slug, err)
	}
	if len(changed) > 0 {
		res.Gate = append(res.Gate, changed...)
		return res.same(hid, changedVerdict(changed), g.pol), nil
	}
	res.judge(hid, g.trimRoot(verdicts), g.pol)
	return res, nil
}

// gate is the static gate's look at the sources (srcs: overlay path →
// file), at what else lies in the exercise, and what the target refused.
func (g *grader) gate(t Target, srcs map[string]string) ([]gate.Finding, error) {
	files, err := readSources(g.root, srcs)
	if err != nil {
		return nil, err
	}
	fs := gate.Check(files, gate.NewAllowlist(t.Kata.Imports))
	for _, o := range t.Odd {
		fs = append(fs, gate.Finding{File: rel(g.root, o.Path), Line: 1, Rule: gate.RuleForbidden,
			Message: fmt.Sprintf("%s is %s, not a source file: remove it (go build cannot read it)", filepath.Base(o.Path), o.Kind)})
	}
	fs = append(fs, t.Refused...)
	others, err := dirFiles(g.root, t.Dir)
	if err != nil {
		return nil, err
	}
	return append(fs, gate.Foreign(others)...), nil
}

// Screen is the step between the gate and the build, for the hidden tests
// and for a learner's own (package catch). Files that do not parse do not
// compile either: build says so without building, and their findings
// leave the gate's list (rest). A blocking finding keeps the tests from
// running. stop is the verdict every test then gets; nil: build the code.
func Screen(fs []gate.Finding) (build *BuildFailure, rest []gate.Finding, stop *Verdict) {
	if build = SyntaxFailure(fs); build != nil {
		rest = slices.DeleteFunc(slices.Clone(fs), func(f gate.Finding) bool { return f.Rule == gate.RuleSyntax })
		v := buildVerdict(build)
		return build, rest, &v
	}
	if v, blocked := blockedVerdict(fs); blocked {
		return nil, fs, &v
	}
	return nil, fs, nil
}

// buildAndVet builds the test binary, with go vet's concurrency analyzers
// beside it: their findings join the gate's, without hiding any verdict.
// It sets res.Build when the code does not build (with the hidden tests,
// or without them: else it reaches into them, see vet) and res.Unshaken
// when only the rewrite that shakes the schedule did not build.
func (g *grader) buildAndVet(ctx context.Context, t Target, tmp string, res *Result) (bin string, err error) {
	ovPath, err := g.writeOverlay(t, tmp, true)
	if err != nil {
		return "", err
	}
	vetPath, err := g.writeOverlay(t, tmp, false)
	if err != nil {
		return "", err
	}
	shakenPath, err := g.writeShaken(t, tmp)
	if err != nil {
		return "", err
	}
	built := func() {}
	if g.building != nil {
		built = g.building()
	}
	var vetRes vetResult
	var vetErr error
	vetDone := make(chan struct{})
	go func() {
		defer close(vetDone)
		if g.pol.vet {
			vetRes, vetErr = g.vet(ctx, t, vetPath)
		}
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
		return "", fmt.Errorf("build %s: %w", t.Kata.Slug, err)
	}
	if vetErr != nil {
		return "", fmt.Errorf("vet %s: %w", t.Kata.Slug, vetErr)
	}
	res.Build = cmp.Or(bf, vetRes.alone)
	if res.Build == nil {
		res.Gate = append(res.Gate, vetRes.findings...)
	}
	return bin, nil
}

// The verdicts that every test of a grade gets when a stage settles it.

func buildVerdict(bf *BuildFailure) Verdict {
	if bf.Kind == failure.API {
		return Verdict{Kind: bf.Kind, Message: "your exported API differs from the stub's"}
	}
	return Verdict{Kind: bf.Kind, Message: "does not compile"}
}

func changedVerdict(changed []gate.Finding) Verdict {
	v := Verdict{Kind: failure.Forbidden, Message: "not graded: your code changed files outside its exercise while it ran"}
	for _, f := range changed {
		v.Detail = append(v.Detail, f.String())
	}
	return v
}

// blockedVerdict is for code the gate refuses to run.
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

// same gives every test verdict v, and judges.
func (r *Result) same(hid hidden, v Verdict, pol policy) *Result {
	verdicts := map[string]TestResult{}
	for _, n := range hid.names {
		verdicts[n] = TestResult{Name: n, Verdict: v}
	}
	r.judge(hid, verdicts, pol)
	return r
}

// trimRoot shows the checkout's paths in the verdicts relative to it.
func (g *grader) trimRoot(verdicts map[string]TestResult) map[string]TestResult {
	for n, v := range verdicts {
		v.Message = trimRoot(g.root, v.Message)
		v.Detail = slices.Clone(v.Detail)
		for i := range v.Detail {
			v.Detail[i] = trimRoot(g.root, v.Detail[i])
		}
		verdicts[n] = v
	}
	return verdicts
}

// runWatched runs the tests (runAll) and reports every file outside the
// graded directory that changed meanwhile (package integrity): in the
// checkout, and the kit's copies of the grader's files.
func (g *grader) runWatched(ctx context.Context, bin string, t Target, tmp string, hid hidden) (map[string]TestResult, []gate.Finding, error) {
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
	verdicts, err := g.runAll(ctx, bin, t.Dir, hid)
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

// judge lists the tests' verdicts and, under a policy with items, folds
// them into requirement verdicts.
func (r *Result) judge(hid hidden, verdicts map[string]TestResult, pol policy) {
	names, itemOf := hid.names, hid.itemOf
	bonus := map[string]bool{}
	for _, b := range r.Kata.Bonus {
		bonus[b.ID] = true
	}
	for _, n := range names {
		tr := verdicts[n]
		tr.Name = n
		tr.Scheduling = hid.scheduling[n]
		r.Tests = append(r.Tests, tr)
	}
	if !pol.items {
		return
	}
	for _, it := range r.Kata.Items() {
		ir := ItemResult{Item: it, Bonus: bonus[it.ID]}
		for _, n := range names {
			if itemOf[n] != it.ID {
				continue
			}
			tr := verdicts[n]
			tr.Scheduling = hid.scheduling[n]
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

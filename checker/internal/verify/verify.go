// Package verify is the authoring check run by CI: for every kata, the
// metadata agrees with the README and the hidden tests; the untouched stub
// fails every requirement it does not declare; the reference passes
// everything; and every mutant (a known-wrong implementation kept as a
// patch against the reference in solutions/NN-slug/testdata/mutants, see
// package mutant) applies and fails exactly the requirements its
// header lists, with a message that matches its Expect pattern, and has
// the Symptom line a bug hunt starts from (package hunt); and every
// alternative (a correct solution in another design, kept in
// solutions/NN-slug/testdata/alternatives) passes everything; and every
// library adapter (the kata's API built on a well-known library, kept in
// solutions/NN-slug/testdata/libraries and built with its own go.mod, see
// LibraryModFile) fails exactly the items its header lists.
package verify

import (
	"bytes"
	"context"
	"fmt"
	"go/format"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/catch"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/internal/failure"
)

// MinMutants is how many mutants every kata must ship.
const MinMutants = 4

// MinAlternatives is how many correct solutions unlike the reference every
// kata must ship.
const MinAlternatives = 2

// Mutant is a known-wrong implementation and what the tests must say of it.
type Mutant struct {
	Name    string
	Path    string   // the patch file
	Mistake string   // "Mistake:" header line
	Fails   []string // "Fails:" the exact set of failing items
	// Sometimes ("Sometimes:") are items the mistake also breaks, which
	// only some schedules expose: each may fail or pass.
	Sometimes []string
	Expect    *regexp.Regexp // "Expect:" must match each failing item's message
	Patch     *mutant.Mutant
}

// ParseMutant reads a mutant's patch file and its header.
func ParseMutant(path string) (Mutant, error) {
	p, err := mutant.Load(path)
	if err != nil {
		return Mutant{Name: strings.TrimSuffix(filepath.Base(path), mutant.Ext), Path: path}, err
	}
	return NewMutant(p)
}

// NewMutant reads what a parsed patch's header says the tests must find.
func NewMutant(p *mutant.Mutant) (Mutant, error) {
	m := Mutant{Name: p.Name, Path: p.Path, Patch: p}
	h := p.Fields()
	m.Mistake = h["Mistake"]
	m.Fails = strings.Fields(h["Fails"])
	sort.Strings(m.Fails)
	if m.Mistake == "" || len(m.Fails) == 0 || h["Expect"] == "" {
		return m, fmt.Errorf("mutant %s: its header needs Mistake:, Fails: and Expect: lines", m.Name)
	}
	m.Sometimes = strings.Fields(h["Sometimes"])
	for _, id := range m.Sometimes {
		if slices.Contains(m.Fails, id) {
			return m, fmt.Errorf("mutant %s: %s is in both Fails: and Sometimes:", m.Name, id)
		}
	}
	var err error
	if m.Expect, err = regexp.Compile(h["Expect"]); err != nil {
		return m, fmt.Errorf("mutant %s: Expect: %w", m.Name, err)
	}
	return m, nil
}

// Sources applies the mutant to the kata's reference: the files it
// changes, with their new content.
func (m Mutant) Sources(k catalog.Kata) ([]mutant.Source, error) {
	return m.Patch.Apply(k.Solution)
}

// Header reads the leading "// Key: value" comment lines of a Go file: the
// header of a grading fixture ("// Want: R1=pass …").
func Header(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return mutant.Fields(data), nil
}

// Alternatives lists a kata's alternative correct solutions.
func Alternatives(k catalog.Kata) ([]string, error) {
	return filepath.Glob(filepath.Join(k.Solution, "testdata", "alternatives", "*.go"))
}

// Mutants lists a kata's mutants; a patch file that cannot be read is an
// error.
func Mutants(k catalog.Kata) ([]Mutant, error) {
	ps, err := mutant.All(k.Solution)
	if err != nil {
		return nil, err
	}
	var ms []Mutant
	for _, p := range ps {
		m, err := NewMutant(p)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// strays lists the .go files in a kata's mutants directory: mutants are
// patches, and a whole copy there would be ignored.
func strays(k catalog.Kata) ([]line, error) {
	gos, err := filepath.Glob(filepath.Join(mutant.Dir(k.Solution), "*.go"))
	var ls []line
	for _, g := range gos {
		ls = append(ls, line{false, fmt.Sprintf("%s is a whole copy, not a patch: store it with checker mutant --save %s %s, then remove it",
			filepath.Base(g), k.Slug[:2], filepath.ToSlash(filepath.Join("solutions", k.Slug, "testdata", "mutants", filepath.Base(g))))})
	}
	return ls, err
}

// hunts checks what bug hunts read in the mutants' headers (package
// hunt): exactly one Symptom each, a Why that names a paragraph of
// WHY.md, and for each hunt-able mutant a Level (one-line only when its
// fix changes one line of code) and a Symptom with nothing a search of
// the kata's code finds (hunt.Findable). One line per problem, or one
// line that counts the hunts.
func hunts(k catalog.Kata, ms []Mutant) []line {
	var ls []line
	n := 0
	code, err := huntCode(k)
	if err != nil {
		return []line{{false, "bug hunts: " + err.Error()}}
	}
	for _, m := range ms {
		b, err := hunt.Read(m.Patch)
		if err == nil {
			_, err = hunt.Why(k.Solution, b)
		}
		if err == nil && b.NoHunt == "" {
			err = huntable(k, b, code)
		}
		if err != nil {
			ls = append(ls, line{false, err.Error()})
			continue
		}
		if b.NoHunt == "" {
			n++
		}
	}
	if len(ls) == 0 && len(ms) > 0 {
		ls = append(ls, line{true, fmt.Sprintf("bug hunts: %d of %s have a symptom to hunt from", n, plural(len(ms), "mutant"))})
	}
	return ls
}

// huntCode is what a learner can search in kata k's hunts but the planted
// code: the reference as a hunt plants it, and the stub.
func huntCode(k catalog.Kata) (hunt.Code, error) {
	ref, err := hunt.Reference(k.Solution)
	if err != nil {
		return hunt.Code{}, err
	}
	stub := map[string][]byte{}
	files, err := gofiles.Regular(k.Exercise, false)
	if err != nil {
		return hunt.Code{}, err
	}
	for _, f := range files {
		if stub[filepath.Base(f)], err = os.ReadFile(f); err != nil {
			return hunt.Code{}, err
		}
	}
	return hunt.Code{Reference: ref, Stub: stub}, nil
}

// huntable checks what makes b, a hunt-able mutant of kata k, a hunt worth
// doing: a one-line hunt's fix changes one line of code, and its symptom
// quotes nothing a search of code (with b planted) finds.
func huntable(k catalog.Kata, b hunt.Bug, code hunt.Code) error {
	size, err := hunt.FixSize(k.Solution, b)
	if err != nil {
		return err
	}
	if b.Level == hunt.OneLine && size != 1 {
		return fmt.Errorf("mutant %s: its // Level: is one-line, but its fix changes %d lines of code: make it reasoning (or schedule), or the patch one line", b.Name, size)
	}
	if code.Planted, err = hunt.Plant(k.Solution, b); err != nil {
		return err
	}
	if found := hunt.Findable(b.Symptom, code); len(found) > 0 {
		return fmt.Errorf("mutant %s: its // Symptom: quotes what a search of the code finds (%s): say what the user saw in words of their own (docs/authoring.md, Step 6)", b.Name, strings.Join(found, ", "))
	}
	return nil
}

// line is one checked fact of the report.
type line struct {
	ok   bool
	text string
}

// Options tune a verify run.
type Options struct {
	Mutants grade.Options // for the stubs and the mutants
	Correct grade.Options // for the references and the alternatives
	// Only, when set, names the mutants to check (of the one kata given),
	// besides the metadata, the stub and the reference: no alternative,
	// no library adapter, no other mutant. A name that is no mutant of
	// the kata is a failed line.
	Only []string
	// Share, when N > 1, grades only the mutants in share K of N (a
	// mutant's share is a hash of its kata and name, so it stays put
	// as others come and go); their headers and hunts are still read,
	// and every stub, reference, alternative and library adapter is
	// still graded. CI grades one share per commit: all of them take
	// longer than its run may (.ci/run).
	Share Share
}

// Share is share K (0 ≤ K < N) of N of the mutants.
type Share struct{ K, N int }

// ParseShare reads "K/N".
func ParseShare(s string) (Share, error) {
	var sh Share
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.K, &sh.N); err != nil || fmt.Sprintf("%d/%d", sh.K, sh.N) != s ||
		sh.N < 1 || sh.K < 0 || sh.K >= sh.N {
		return Share{}, fmt.Errorf("--share %q: want K/N with 0 ≤ K < N, e.g. 1/3", s)
	}
	return sh, nil
}

// has reports whether kata slug's mutant name is in the share.
func (sh Share) has(slug, name string) bool {
	if sh.N <= 1 {
		return true
	}
	h := fnv.New32a()
	io.WriteString(h, slug+"/"+name)
	return int(h.Sum32()%uint32(sh.N)) == sh.K
}

// Run verifies the katas and writes what it checked to w. It returns
// false if anything is wrong.
func Run(ctx context.Context, tc *grade.Toolchain, root string, katas []catalog.Kata, vo Options, w io.Writer) (bool, error) {
	if len(katas) == 0 {
		fmt.Fprintln(w, "verify: no kata found under exercises/")
		return false, nil
	}
	p := &plan{ctx: ctx, tc: tc, root: root, opt: vo,
		lines: make([][]line, len(katas)), checks: make([]*selfCheck, len(katas))}
	for i, k := range katas {
		if err := p.kata(i, k); err != nil {
			return false, err
		}
	}
	if err := p.run(katas); err != nil {
		return false, err
	}
	total := catchTotal{}
	for i, sc := range p.checks {
		if sc != nil {
			p.lines[i] = append(p.lines[i], sc.line(&total))
		}
	}
	return p.print(w, katas, total), nil
}

// job is one version of a kata to build and test, and the line it adds
// to the kata's report.
type job struct {
	kata int
	name string
	run  func() (line, error)
}

// plan is what verify checks: for each kata, the lines known before any
// test runs and the jobs that add the rest.
type plan struct {
	ctx  context.Context
	tc   *grade.Toolchain
	root string
	opt  Options

	jobs    []job
	lines   [][]line // by kata
	mutants int      // mutants shipped, over all katas
	graded  int      // mutants graded: all of them, or those in the share
	// The reference and the mutants run through catch's engine, with the
	// hidden tests as the suite: what they prove is also catch's
	// self-check (selfCheck). nil for a kata without a suite.
	checks []*selfCheck
}

// add appends lines to kata i's report.
func (p *plan) add(i int, ls ...line) { p.lines[i] = append(p.lines[i], ls...) }

// kata plans kata i: its metadata, then the stub, the reference, the
// mutants, the alternatives and the library adapters.
func (p *plan) kata(i int, k catalog.Kata) error {
	ctx, tc, root, opt, correct := p.ctx, p.tc, p.root, p.opt.Mutants, p.opt.Correct
	p.add(i, metadata(k))
	suite, err := catch.Hidden(k)
	if err != nil {
		p.add(i, line{false, err.Error()})
		return nil
	}
	sc := &selfCheck{}
	p.checks[i] = sc
	p.jobs = append(p.jobs,
		job{i, "stub", func() (line, error) { return stub(ctx, tc, root, k, opt) }},
		job{i, "reference", func() (line, error) { return reference(ctx, tc, root, suite, correct, sc) }})
	ms, err := p.mutantsOf(i, k)
	if err != nil {
		return err
	}
	if p.opt.Only != nil {
		for _, name := range p.opt.Only {
			if !slices.ContainsFunc(ms, func(m Mutant) bool { return m.Name == name }) {
				p.add(i, line{false, fmt.Sprintf("--mutant %s: %s has no mutant of that name (testdata/mutants/%s%s)",
					name, k.Slug, name, mutant.Ext)})
			}
		}
		ms = slices.DeleteFunc(ms, func(m Mutant) bool { return !slices.Contains(p.opt.Only, m.Name) })
	} else if err := p.alternatives(i, k); err != nil {
		return err
	}
	for _, m := range ms {
		if !p.opt.Share.has(k.Slug, m.Name) {
			continue
		}
		p.graded++
		p.jobs = append(p.jobs, job{i, m.Name, func() (line, error) { return mutantLine(ctx, tc, root, suite, m, opt, sc) }})
	}
	if p.opt.Only != nil {
		return nil
	}
	as, err := Adapters(k)
	if err != nil {
		return err
	}
	for _, a := range as {
		p.jobs = append(p.jobs, job{i, "library " + a.Name, func() (line, error) { return adapter(ctx, tc, root, k, a, opt) }})
	}
	return nil
}

// mutantsOf reads kata i's mutants and checks what needs no test run:
// their bug hunts, stray files in the mutants folder, and how many there
// are. A patch that cannot be read is one failed line, not the end of
// verify.
func (p *plan) mutantsOf(i int, k catalog.Kata) ([]Mutant, error) {
	paths, err := mutant.Paths(k.Solution)
	if err != nil {
		return nil, err
	}
	var ms []Mutant
	for _, path := range paths {
		m, err := ParseMutant(path)
		if err != nil {
			p.add(i, line{false, err.Error()})
			continue
		}
		ms = append(ms, m)
	}
	p.add(i, hunts(k, ms)...)
	stray, err := strays(k)
	if err != nil {
		return nil, err
	}
	p.add(i, stray...)
	if len(paths) < MinMutants {
		p.add(i, line{false, fmt.Sprintf("only %d mutants; every kata ships at least %d", len(paths), MinMutants)})
	}
	p.mutants += len(paths)
	return ms, nil
}

// alternatives plans a job for each of kata i's alternatives, and checks
// that it ships enough of them.
func (p *plan) alternatives(i int, k catalog.Kata) error {
	alts, err := Alternatives(k)
	if err != nil {
		return err
	}
	if len(alts) < MinAlternatives {
		p.add(i, line{false, fmt.Sprintf("only %d alternatives; every kata ships at least %d correct solutions unlike the reference", len(alts), MinAlternatives)})
	}
	ctx, tc, root, opt := p.ctx, p.tc, p.root, p.opt.Correct
	for _, a := range alts {
		p.jobs = append(p.jobs, job{i, "alternative " + filepath.Base(a), func() (line, error) { return alternative(ctx, tc, root, k, a, opt) }})
	}
	return nil
}

// run runs the jobs, one more at a time than there are cores (each is a
// go build plus a test run: the compiler's front end and the go command's
// own steps use one core, so a core left over would often stand idle; on
// two cores three at a time take a tenth less than two), and adds each
// one's line to its kata's report, in the order planned.
func (p *plan) run(katas []catalog.Kata) error {
	results := make([]line, len(p.jobs))
	errs := make([]error, len(p.jobs))
	sem := make(chan struct{}, runtime.NumCPU()+1)
	var wg sync.WaitGroup
	for i, j := range p.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i], errs[i] = j.run()
		}()
	}
	wg.Wait()
	for i, j := range p.jobs {
		if errs[i] != nil {
			return fmt.Errorf("%s %s: %w", katas[j.kata].Slug, j.name, errs[i])
		}
		p.add(j.kata, results[i])
	}
	return nil
}

// print writes each kata's lines and the totals, and says whether every
// line holds.
func (p *plan) print(w io.Writer, katas []catalog.Kata, total catchTotal) bool {
	good, passed, failed := true, 0, 0
	var failures []string
	for i, k := range katas {
		fmt.Fprintln(w, k.Slug)
		for _, l := range p.lines[i] {
			mark := "✔"
			if l.ok {
				passed++
			} else {
				mark, good = "✘", false
				failed++
				failures = append(failures, k.Slug+": "+l.text)
			}
			fmt.Fprintf(w, "  %s %s\n", mark, l.text)
		}
	}
	verdict := "all good"
	if !good {
		verdict = "FAILED"
	}
	mutants := plural(p.mutants, "mutant")
	if sh := p.opt.Share; sh.N > 1 {
		mutants = fmt.Sprintf("%s (%d of them graded: share %d/%d)", mutants, p.graded, sh.K, sh.N)
	}
	fmt.Fprintf(w, "verify: %s, %s: %s\n", plural(len(katas), "kata"), mutants, verdict)
	fmt.Fprintf(w, "verify: catch self-check: the hidden tests, run as a learner's, catch %d of %d mutants, %s\n", total.caught, total.mutants, alarmText(total.alarms))
	fmt.Fprintf(w, "verify: %d passed, %d failed\n", passed, failed)
	// A long run's log is often read from its tail: the failures again,
	// last, so that the tail names them.
	for _, f := range failures {
		fmt.Fprintf(w, "  ✘ %s\n", f)
	}
	return good
}

// metadata checks kata.json against the README and the hidden tests.
func metadata(k catalog.Kata) line {
	problems := catalog.CheckReadme(k)
	names, itemOf, err := grade.HiddenTests(k)
	if err != nil {
		return line{false, "metadata: " + err.Error()}
	}
	ids := map[string]bool{}
	for _, it := range k.Items() {
		ids[it.ID] = true
		if !slices.ContainsFunc(names, func(n string) bool { return itemOf[n] == it.ID }) {
			problems = append(problems, it.ID+" has no hidden test (TestXX_… named after it)")
		}
	}
	for _, n := range names {
		if !ids[itemOf[n]] {
			problems = append(problems, n+" grades "+itemOf[n]+", which kata.json does not list")
		}
	}
	for i, h := range k.Hints {
		for _, c := range h.Covers {
			if !ids[c] {
				problems = append(problems, fmt.Sprintf("hint %d covers %s, which kata.json does not list", i+1, c))
			}
		}
	}
	if len(k.Ask) == 0 || len(k.Requirements) == 0 {
		problems = append(problems, "kata.json needs ask-first questions and requirements")
	}
	if len(k.Hints) == 0 || len(k.Decisions) == 0 {
		problems = append(problems, fmt.Sprintf("%s needs decisions and hints", filepath.ToSlash(filepath.Join("solutions", k.Slug, catalog.RevealFile))))
	}
	if len(problems) > 0 {
		return line{false, "metadata:\n      " + strings.Join(problems, "\n      ")}
	}
	return line{true, fmt.Sprintf("metadata: README matches kata.json and reveal.json; %d requirements, %d bonus, %d hints, %d hidden tests",
		len(k.Requirements), len(k.Bonus), len(k.Hints), len(names))}
}

func stub(ctx context.Context, tc *grade.Toolchain, root string, k catalog.Kata, opt grade.Options) (line, error) {
	t, err := grade.Learner(k)
	if err != nil {
		return line{}, err
	}
	r, err := grade.Grade(ctx, tc, root, t, opt)
	if err != nil {
		return line{}, err
	}
	declared := map[string]string{}
	for _, p := range k.StubPasses {
		declared[p.ID] = p.Why
	}
	var problems, notes []string
	for _, it := range r.Items {
		why, mayPass := declared[it.ID]
		switch {
		case mayPass && it.Passed():
			notes = append(notes, fmt.Sprintf("%s passes on the stub, as declared: %s", it.ID, why))
		case mayPass:
			problems = append(problems, fmt.Sprintf("%s is declared to pass on the stub but fails: %s", it.ID, it.Message))
		case it.Passed():
			problems = append(problems, fmt.Sprintf("%s passes on the untouched stub: its tests check nothing the stub lacks (or exercises/%s was edited)", it.ID, k.Slug))
		case len(declared) == 0 && it.Kind != failure.NotImplemented:
			problems = append(problems, fmt.Sprintf("%s fails on the stub as %s, not as not-implemented: %s", it.ID, it.Kind, it.Message))
		}
	}
	problems = append(problems, unshaken(r)...)
	if len(problems) > 0 {
		return line{false, "stub:\n      " + strings.Join(problems, "\n      ")}, nil
	}
	text := fmt.Sprintf("stub: fails all %d (not implemented)", len(r.Items))
	if len(notes) > 0 {
		text = fmt.Sprintf("stub: fails %d of %d; %s", len(r.Items)-len(notes), len(r.Items), strings.Join(notes, "; "))
	}
	return line{true, text}, nil
}

func reference(ctx context.Context, tc *grade.Toolchain, root string, s *catch.Suite, opt grade.Options, sc *selfCheck) (line, error) {
	r, err := s.Reference(ctx, tc, root, opt)
	if err != nil {
		return line{}, err
	}
	sc.reference(r)
	return passes(r, "reference", opt), nil
}

// alternative grades a correct solution in another design: like the
// reference, it must pass every required and bonus item, so that a test
// which encodes the reference's design instead of the README is caught.
func alternative(ctx context.Context, tc *grade.Toolchain, root string, k catalog.Kata, path string, opt grade.Options) (line, error) {
	t, err := grade.Replacement(k, path)
	if err != nil {
		return line{}, err
	}
	return passesAll(ctx, tc, root, "alternative "+strings.TrimSuffix(filepath.Base(path), ".go"), t, opt)
}

// passesAll grades a correct solution, named what, and lists every way it
// falls short.
func passesAll(ctx context.Context, tc *grade.Toolchain, root, what string, t grade.Target, opt grade.Options) (line, error) {
	r, err := grade.Grade(ctx, tc, root, t, opt)
	if err != nil {
		return line{}, err
	}
	return passes(r, what, opt), nil
}

// passes lists every way a correct solution's result falls short.
func passes(r *grade.Result, what string, opt grade.Options) line {
	var problems []string
	for _, f := range r.Gate {
		problems = append(problems, "gate: "+f.String())
	}
	problems = append(problems, unshaken(r)...)
	if r.Build != nil {
		problems = append(problems, "does not build: "+strings.Join(r.Build.Lines, "; "))
	}
	for _, it := range r.Items {
		if !it.Passed() && r.Build == nil {
			problems = append(problems, fmt.Sprintf("%s fails: %s: %s", it.ID, it.Kind, it.Message))
		}
	}
	if len(problems) > 0 {
		return line{false, what + ":\n      " + strings.Join(problems, "\n      ")}
	}
	return line{true, fmt.Sprintf("%s: passes all %d%s", what, len(r.Items), inRuns(r, opt))}
}

// mutantLine grades a mutant, the reference with its patch applied,
// through catch's engine with the hidden tests as the suite.
func mutantLine(ctx context.Context, tc *grade.Toolchain, root string, s *catch.Suite, m Mutant, opt grade.Options, sc *selfCheck) (line, error) {
	srcs, err := m.Sources(s.Kata)
	if err != nil {
		sc.stale(m.Patch)
		return line{false, fmt.Sprintf("%v\n      the reference changed under the patch: make the change in the mutant too, and store it again (docs/authoring.md, Step 6)", err)}, nil
	}
	var unformatted []string
	for _, s := range srcs {
		if f, err := format.Source(s.Data); err != nil || !bytes.Equal(f, s.Data) {
			unformatted = append(unformatted, s.Name)
		}
	}
	r, err := s.Mutant(ctx, tc, root, m.Patch, opt)
	if err != nil {
		return line{}, err
	}
	sc.mutant(m.Patch, r)
	var failed []string
	var problems []string
	for _, it := range r.Items {
		if it.Passed() || slices.Contains(m.Sometimes, it.ID) {
			continue
		}
		failed = append(failed, it.ID)
		if it.Passes > 0 {
			problems = append(problems, fmt.Sprintf("%s caught in only %d of %d runs: the test depends on scheduling", it.ID, it.Runs-it.Passes, it.Runs))
		}
		if slices.Contains(m.Fails, it.ID) {
			msg := it.Message + "\n" + strings.Join(it.Detail, "\n")
			if !m.Expect.MatchString(msg) {
				problems = append(problems, fmt.Sprintf("%s fails, but its message does not match %q: %s", it.ID, m.Expect, it.Message))
			}
		}
	}
	sort.Strings(failed)
	if len(unformatted) > 0 {
		problems = append(problems, fmt.Sprintf("the patched %s is not gofmt-clean: format the mutant and store it again", strings.Join(unformatted, ", ")))
	}
	problems = append(problems, unshaken(r)...)
	problems = append(problems, gateNames(m, r)...)
	if !slices.Equal(failed, m.Fails) {
		problems = append(problems, fmt.Sprintf("fails [%s], its header says [%s] (%s)",
			strings.Join(failed, " "), strings.Join(m.Fails, " "), r))
	}
	if len(problems) > 0 {
		return line{false, fmt.Sprintf("mutant %s (%s):\n      %s", m.Name, m.Mistake, strings.Join(problems, "\n      "))}, nil
	}
	return line{true, fmt.Sprintf("mutant %s caught by %s%s: %s", m.Name, strings.Join(m.Fails, " "), inRuns(r, opt), m.Mistake)}, nil
}

// gateNames says when the grade r of a hunt-able mutant m shows a finding
// of the gate (go vet's included): a hunt's first check would name the
// planted line before any test ran.
func gateNames(m Mutant, r *grade.Result) []string {
	if b, err := hunt.Read(m.Patch); err != nil || b.NoHunt != "" || len(r.Gate) == 0 {
		return nil
	}
	var fs []string
	for _, f := range r.Gate {
		fs = append(fs, f.String())
	}
	return []string{fmt.Sprintf("the gate names the planted line (%s), so a bug hunt shows the answer at its first check: mark the mutant // NoHunt: with that reason", strings.Join(fs, "; "))}
}

// unshaken names a rewrite for shaking the schedule that broke a build
// (grade.Result.Unshaken): a bug of the grader, which a learner's code
// must never meet.
func unshaken(r *grade.Result) []string {
	if r.Unshaken == nil {
		return nil
	}
	return []string{"built with the points that shake the schedule, it does not compile (package syncpoint must not break a build): " + strings.Join(r.Unshaken, "; ")}
}

// inRuns says how many runs a verdict stands for, when there were several.
// A test that crashes its process has no count: the run ends there.
func inRuns(r *grade.Result, opt grade.Options) string {
	if opt.Repeat <= 1 || len(r.Items) == 0 {
		return ""
	}
	for _, it := range r.Items {
		if it.Runs < r.Runs {
			return fmt.Sprintf(" (a test crashed its process, so not all %d runs finished)", r.Runs)
		}
	}
	return fmt.Sprintf(" in all %d runs", r.Runs)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

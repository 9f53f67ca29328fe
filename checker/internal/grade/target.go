package grade

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gate"
	"gokata/checker/internal/gofiles"
)

// Target is what to grade: a kata's hidden tests against one set of source
// files, described as an overlay on a package directory. Nothing is copied
// and nothing on disk is changed.
type Target struct {
	Kata    catalog.Kata
	Dir     string            // the package directory the tests are overlaid on
	Overlay map[string]string // file in Dir → file whose content it gets ("" removes it)
	Odd     []gofiles.Odd     // .go entries of Dir that are not regular files: refused, never opened
	ModFile string            // a go.mod to build with instead of the module's (go build -modfile); "" for the module's own
	// Suite, when set, is the tests run instead of the kata's hidden
	// tests; nil runs the hidden tests.
	Suite *Suite
	// Refused is what the gate refuses besides the files' content: the
	// entries of returned work that were not taken (see Returned).
	Refused []gate.Finding
	// Shown maps a file the build reads to the path messages name it by:
	// a private copy to the returned file it was taken from.
	Shown map[string]string
}

// Suite is a set of test files graded test by test (package catch runs a
// learner's own tests against the reference and the mutants this way).
// The target's Overlay must put the files into the package, together with
// a TestMain that calls katatest.Main: a run proves it ended with the
// harness's end receipt, as the hidden tests do.
type Suite struct {
	Files []string // the test files, as they are on disk
	// Own: the files are the learner's own tests, not the hidden tests.
	// Each Test function is then graded on its own (Result.Tests; the
	// result has no Items), and a pass needs no receipt of its own: the
	// code under test is the kata's, and plain tests do not sign.
	Own bool
}

// Learner grades the learner's exercise: the hidden tests are added and the
// learner's own _test.go files left out, so a learner TestMain cannot
// decide the grade.
func Learner(k catalog.Kata) (Target, error) {
	t := Target{Kata: k, Dir: k.Exercise, Overlay: map[string]string{}}
	own, err := gofiles.List(k.Exercise, true)
	if err != nil {
		return t, err
	}
	for _, f := range own.Files {
		t.Overlay[f] = ""
	}
	mine, err := gofiles.List(k.Exercise, false)
	if err != nil {
		return t, err
	}
	// What go build would trip over is kept from it: a link that leads
	// nowhere (left out, like an editor's lock file), anything else that
	// is not a regular file (refused by the gate, see Grade).
	for _, f := range slices.Concat(own.Dangling, mine.Dangling) {
		t.Overlay[f] = ""
	}
	for _, o := range slices.Concat(own.Odd, mine.Odd) {
		t.Overlay[o.Path] = ""
	}
	t.Odd = mine.Odd
	return t, t.overlayHidden(k)
}

// Reference grades the reference solution as it is.
func Reference(k catalog.Kata) Target {
	return Target{Kata: k, Dir: k.Solution, Overlay: map[string]string{}}
}

// Replacement grades one file (an alternative, a fixture) in place of the
// reference's source files.
func Replacement(k catalog.Kata, file string) (Target, error) {
	t := Target{Kata: k, Dir: k.Solution, Overlay: map[string]string{}}
	srcs, err := goFiles(k.Solution, false)
	if err != nil {
		return t, err
	}
	for _, f := range srcs {
		t.Overlay[f] = ""
	}
	t.Overlay[filepath.Join(k.Solution, "zz_"+filepath.Base(file))] = file
	return t, nil
}

// overlayHidden lays kata k's hidden tests over its exercise directory.
func (t Target) overlayHidden(k catalog.Kata) error {
	hidden, err := HiddenFiles(k)
	if err != nil {
		return err
	}
	for _, f := range hidden {
		t.Overlay[filepath.Join(k.Exercise, filepath.Base(f))] = f
	}
	return nil
}

// HiddenFiles lists the kata's hidden test files.
func HiddenFiles(k catalog.Kata) ([]string, error) {
	fs, err := goFiles(k.Solution, true)
	if err == nil && len(fs) == 0 {
		err = fmt.Errorf("kata %s has no hidden tests in %s", k.Slug, k.Solution)
	}
	return fs, err
}

// goFiles lists the regular .go files of dir: the tests, or the other
// files.
func goFiles(dir string, tests bool) ([]string, error) {
	return gofiles.Regular(dir, tests)
}

// Sources returns the package's non-test files as the build sees them:
// name in Dir → path of the content.
func (t Target) Sources() (map[string]string, error) { return t.files(false) }

// files returns the package's non-test files, or its test files, as the
// build sees them: name in Dir → path of the content.
func (t Target) files(tests bool) (map[string]string, error) {
	files, err := goFiles(t.Dir, tests)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, f := range files {
		m[f] = f
	}
	for dst, src := range t.Overlay {
		if strings.HasSuffix(dst, "_test.go") != tests {
			continue
		}
		if src == "" {
			delete(m, dst)
		} else {
			m[dst] = src
		}
	}
	return m, nil
}

// hiddenSet returns the hidden test files, both where they are and where
// the overlay puts them: compiler errors name the former.
func (t Target) hiddenSet() map[string]bool {
	m := map[string]bool{}
	for dst, src := range t.Overlay {
		if src != "" && strings.HasSuffix(dst, "_test.go") {
			m[dst], m[src] = true, true
		}
	}
	if t.Dir == t.Kata.Solution { // the hidden tests are there already
		hidden, _ := HiddenFiles(t.Kata)
		for _, f := range hidden {
			m[f] = true
		}
	}
	return m
}

var testNameRE = regexp.MustCompile(`^Test([RB]\d+)_`)

// HiddenTests maps each hidden test function to the requirement it grades
// ("TestR4_CancelDuringPause" → "R4"), in file order.
func HiddenTests(k catalog.Kata) ([]string, map[string]string, error) {
	h, err := readHidden(k)
	return h.names, h.itemOf, err
}

// hidden is what the source of a kata's hidden tests says about them.
type hidden struct {
	names  []string          // the test functions, in file order
	itemOf map[string]string // test → the requirement it grades
	// scheduling holds the tests that call katatest.Repeat or Explore,
	// themselves or through the test files' own functions: their
	// scenarios vary from run to run.
	scheduling map[string]bool
}

const harnessPath = "gokata/internal/katatest"

// tests reads the tests t is graded with: its suite's, or the kata's
// hidden tests.
func (t Target) tests() (hidden, error) {
	if t.Suite != nil {
		return readTests(t.Kata, t.Suite.Files, t.Suite.Own)
	}
	return readHidden(t.Kata)
}

func readHidden(k catalog.Kata) (hidden, error) {
	files, err := HiddenFiles(k)
	if err != nil {
		return hidden{}, err
	}
	return readTests(k, files, false)
}

// readTests reads the test functions of the given files: the hidden tests
// (TestR1_… named after a requirement, and a TestMain), or with own a
// learner's tests (every TestXxx, each its own item; the grader supplies
// the TestMain).
func readTests(k catalog.Kata, files []string, own bool) (hidden, error) {
	h := hidden{itemOf: map[string]string{}, scheduling: map[string]bool{}}
	files = slices.Clone(files)
	sort.Strings(files)
	hasMain := false
	fset := token.NewFileSet()
	funcs := map[string][]callee{} // function name, or "." and a method name → its bodies
	var tests []callee
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return h, err
		}
		harness := harnessName(af)
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			c := callee{fd.Body, harness}
			if fd.Recv != nil {
				funcs["."+fd.Name.Name] = append(funcs["."+fd.Name.Name], c)
				continue
			}
			funcs[fd.Name.Name] = append(funcs[fd.Name.Name], c)
			if own && IsTestFunc(fd) {
				h.names = append(h.names, fd.Name.Name)
				h.itemOf[fd.Name.Name] = fd.Name.Name
				tests = append(tests, c)
			} else if m := testNameRE.FindStringSubmatch(fd.Name.Name); m != nil && !own {
				h.names = append(h.names, fd.Name.Name)
				h.itemOf[fd.Name.Name] = m[1]
				tests = append(tests, c)
			}
			hasMain = hasMain || fd.Name.Name == "TestMain"
		}
	}
	if !hasMain && !own {
		// Without it the run never proves that it ended, and nothing passes.
		return h, fmt.Errorf("kata %s: the hidden tests have no TestMain; add main_test.go with func TestMain(m *testing.M) { katatest.Main(m) }", k.Slug)
	}
	for i, name := range h.names {
		if repeats(tests[i], funcs, map[*ast.BlockStmt]bool{}) {
			h.scheduling[name] = true
		}
	}
	return h, nil
}

// IsTestFunc reports whether fd is a test the go command runs: TestXxx
// (not TestMain), taking one *testing.T.
func IsTestFunc(fd *ast.FuncDecl) bool {
	name, ok := strings.CutPrefix(fd.Name.Name, "Test")
	if !ok || fd.Recv != nil || name == "Main" || name != "" && unicode.IsLower([]rune(name)[0]) {
		return false
	}
	ps := fd.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) > 1 || fd.Type.Results != nil {
		return false
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "T"
}

// callee is the body of a function of the hidden tests, and the name its
// file gives the harness package ("" if it does not import it).
type callee struct {
	body    *ast.BlockStmt
	harness string
}

// harnessName is the name file f gives package katatest.
func harnessName(f *ast.File) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, "`\"") != harnessPath {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "katatest"
	}
	return ""
}

// repeats reports whether c calls katatest.Repeat, or calls a function (or
// a method of the same name) of the test files that does.
func repeats(c callee, funcs map[string][]callee, seen map[*ast.BlockStmt]bool) bool {
	if seen[c.body] {
		return false
	}
	seen[c.body] = true
	found := false
	ast.Inspect(c.body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		fun := call.Fun
		for { // testGo[int](…) calls testGo
			if ix, ok := fun.(*ast.IndexExpr); ok {
				fun = ix.X
			} else if ix, ok := fun.(*ast.IndexListExpr); ok {
				fun = ix.X
			} else {
				break
			}
		}
		var next []callee
		switch f := fun.(type) {
		case *ast.Ident:
			next = funcs[f.Name]
		case *ast.SelectorExpr:
			if x, ok := f.X.(*ast.Ident); ok && c.harness != "" && x.Name == c.harness {
				// Both vary the scenario from run to run: Repeat with the
				// schedule, Explore with the draw and the schedule.
				found = f.Sel.Name == "Repeat" || f.Sel.Name == "Explore"
				return !found
			}
			next = funcs["."+f.Sel.Name]
		}
		for _, n := range next {
			if repeats(n, funcs, seen) {
				found = true
				break
			}
		}
		return !found
	})
	return found
}

// readSources reads the learner's source files for the gate, named
// relative to root.
func readSources(root string, srcs map[string]string) ([]gate.Source, error) {
	var out []gate.Source
	for dst, src := range srcs {
		data, err := os.ReadFile(src)
		if err != nil {
			return nil, err
		}
		out = append(out, gate.Source{Name: rel(root, dst), Data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// rel shows path relative to root when it lies inside it.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// Returned grades files that came back from elsewhere (a candidate's kit)
// in place of the learner's: the non-test .go files of dir are taken
// into private, a directory of the caller's own (gofiles.Copy: links,
// devices and oversized files are refused, named, and nothing of them is
// read), and the copies laid over kata k's exercise, whose own files are
// left out, with the hidden tests. Compiler errors name the returned
// files.
func Returned(k catalog.Kata, dir, private string) (Target, error) {
	t := Target{Kata: k, Dir: k.Exercise, Overlay: map[string]string{}, Shown: map[string]string{}}
	for _, tests := range []bool{true, false} {
		own, err := gofiles.List(k.Exercise, tests)
		if err != nil {
			return t, err
		}
		for _, f := range slices.Concat(own.Files, own.Dangling) {
			t.Overlay[f] = ""
		}
		for _, o := range own.Odd {
			t.Overlay[o.Path] = ""
		}
	}
	refused, err := gofiles.Copy(dir, private)
	if err != nil {
		return t, err
	}
	for _, r := range refused {
		t.Refused = append(t.Refused, gate.Finding{File: r.Path, Rule: gate.RuleForbidden,
			Message: r.Why + ": returned work is graded from regular files only, each at most " + sizeText(gofiles.MaxFile)})
	}
	copies, err := gofiles.Regular(private, false)
	if err != nil {
		return t, err
	}
	for _, f := range copies {
		t.Overlay[filepath.Join(k.Exercise, filepath.Base(f))] = f
		t.Shown[f] = filepath.Join(dir, filepath.Base(f))
	}
	return t, t.overlayHidden(k)
}

// sizeText is a size of a MiB or more, in MiB.
func sizeText(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

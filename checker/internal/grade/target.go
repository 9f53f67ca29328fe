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
	hidden, err := HiddenFiles(k)
	if err != nil {
		return t, err
	}
	for _, f := range hidden {
		t.Overlay[filepath.Join(k.Exercise, filepath.Base(f))] = f
	}
	return t, nil
}

// Reference grades the reference solution as it is.
func Reference(k catalog.Kata) Target {
	return Target{Kata: k, Dir: k.Solution, Overlay: map[string]string{}}
}

// Replacement grades one file (a mutant, a fixture) in place of the
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
func (t Target) Sources() (map[string]string, error) {
	files, err := goFiles(t.Dir, false)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, f := range files {
		m[f] = f
	}
	for dst, src := range t.Overlay {
		if strings.HasSuffix(dst, "_test.go") {
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
	files, err := HiddenFiles(k)
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	var names []string
	item := map[string]string{}
	hasMain := false
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil {
				continue
			}
			if m := testNameRE.FindStringSubmatch(fd.Name.Name); m != nil {
				names = append(names, fd.Name.Name)
				item[fd.Name.Name] = m[1]
			}
			hasMain = hasMain || fd.Name.Name == "TestMain"
		}
	}
	if !hasMain {
		// Without it the run never proves that it ended, and nothing passes.
		return nil, nil, fmt.Errorf("kata %s: the hidden tests have no TestMain; add main_test.go with func TestMain(m *testing.M) { katatest.Main(m) }", k.Slug)
	}
	return names, item, nil
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

package verify

import (
	"bufio"
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
)

// LibraryModFile is the go.mod, relative to the repository root, that
// builds the library adapters: the module's own requirements plus the
// libraries, at versions that build with the Go release the README
// promises. The go.sum beside it is complete, since every go command runs
// with -mod=readonly. It lives apart so that neither a learner's check nor
// a kit ever downloads a library.
const LibraryModFile = "tools/libraries/go.mod"

// Adapter is the kata's API built on a well-known library, kept in
// solutions/NN-slug/testdata/libraries, and what the hidden tests say of
// it: the WHY's comparison with the library, checked by running it.
type Adapter struct {
	Name    string
	Path    string
	Library string   // "Library:" header: module path and version, "golang.org/x/sync v0.22.0"
	Fails   []string // "Fails:" the exact set of failing items; "none" in the header for none
	Why     string   // "Why:" what in the library's contract makes them fail
	CPU     string   // "GOMAXPROCS:" the value the verdict holds for, when the library's behaviour depends on it; "" for any
	// Sometimes ("Sometimes:") are the items the library fails on some
	// schedules only, which the hidden tests cannot force (its own
	// goroutines race); Why says how. They may fail or pass.
	Sometimes []string
}

// ParseAdapter reads an adapter's header comment.
func ParseAdapter(path string) (Adapter, error) {
	a := Adapter{Name: strings.TrimSuffix(filepath.Base(path), ".go"), Path: path}
	h, err := Header(path)
	if err != nil {
		return a, err
	}
	a.Library, a.Why, a.CPU = h["Library"], h["Why"], h["GOMAXPROCS"]
	fails := h["Fails"]
	if fails != "none" {
		a.Fails = strings.Fields(fails)
	}
	sort.Strings(a.Fails)
	a.Sometimes = strings.Fields(h["Sometimes"])
	for _, id := range a.Sometimes {
		if slices.Contains(a.Fails, id) {
			return a, fmt.Errorf("library adapter %s: %s is in both Fails: and Sometimes:", a.Name, id)
		}
	}
	if len(strings.Fields(a.Library)) != 2 || fails == "" || a.Why == "" {
		return a, fmt.Errorf("library adapter %s: its header needs Library: (module and version), Fails: (items, or none) and Why: lines", a.Name)
	}
	if a.CPU != "" {
		if n, err := strconv.Atoi(a.CPU); err != nil || n < 1 {
			return a, fmt.Errorf("library adapter %s: GOMAXPROCS: wants one number, got %q", a.Name, a.CPU)
		}
	}
	return a, nil
}

// Adapters lists a kata's library adapters.
func Adapters(k catalog.Kata) ([]Adapter, error) {
	paths, err := filepath.Glob(filepath.Join(k.Solution, "testdata", "libraries", "*.go"))
	if err != nil {
		return nil, err
	}
	var as []Adapter
	for _, p := range paths {
		a, err := ParseAdapter(p)
		if err != nil {
			return nil, err
		}
		as = append(as, a)
	}
	return as, nil
}

// libraryModules reads the requirements of the adapters' go.mod: module
// path → version.
func libraryModules(root string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(root, LibraryModFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	mods := map[string]string{}
	sc := bufio.NewScanner(f)
	block := false
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 2 && fields[0] == "require" && fields[1] == "(":
			block = true
		case block && len(fields) == 1 && fields[0] == ")":
			block = false
		case block && len(fields) == 2:
			mods[fields[0]] = fields[1]
		case len(fields) == 3 && fields[0] == "require":
			mods[fields[1]] = fields[2]
		}
	}
	return mods, sc.Err()
}

// adapterImports lists the imports of the adapter that come from another
// module (a dot in the first path element): the library packages that the
// gate must let through for this file.
func adapterImports(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			out = append(out, p)
		}
	}
	return out, nil
}

// adapter grades a library adapter, built with LibraryModFile, like a
// mutant: it must fail exactly the items its header lists, in every run,
// and the library it names must be the version the go.mod pins. An
// adapter whose library sizes itself by GOMAXPROCS runs at the value its
// header names, whatever --cpu says: its verdict holds only there.
func adapter(ctx context.Context, tc *grade.Toolchain, root string, k catalog.Kata, a Adapter, opt grade.Options) (line, error) {
	name := fmt.Sprintf("library %s (%s)", a.Name, a.Library)
	mods, err := libraryModules(root)
	if err != nil {
		return line{}, err
	}
	mod, version, _ := strings.Cut(a.Library, " ")
	if got := mods[mod]; got != version {
		return line{false, fmt.Sprintf("%s: %s requires %s %s, the header says %s", name, LibraryModFile, mod, got, version)}, nil
	}
	imports, err := adapterImports(a.Path)
	if err != nil {
		return line{}, err
	}
	k.Imports = append(slices.Clone(k.Imports), imports...)
	t, err := grade.Replacement(k, a.Path)
	if err != nil {
		return line{}, err
	}
	t.ModFile = filepath.Join(root, LibraryModFile)
	if a.CPU != "" {
		opt.CPU = a.CPU
		name = fmt.Sprintf("library %s (%s, GOMAXPROCS=%s)", a.Name, a.Library, a.CPU)
	}
	r, err := grade.Grade(ctx, tc, root, t, opt)
	if err != nil {
		return line{}, err
	}
	var problems []string
	for _, f := range r.Gate {
		problems = append(problems, "gate: "+f.String())
	}
	if r.Build != nil {
		problems = append(problems, "does not build: "+strings.Join(r.Build.Lines, "; "))
	}
	var failed []string
	for _, it := range r.Items {
		if it.Passed() {
			continue
		}
		if slices.Contains(a.Sometimes, it.ID) {
			continue // it may fail or pass
		}
		failed = append(failed, it.ID)
		if it.Passes > 0 {
			problems = append(problems, fmt.Sprintf("%s fails in only %d of %d runs: the verdict depends on scheduling", it.ID, it.Runs-it.Passes, it.Runs))
		}
	}
	sort.Strings(failed)
	if r.Build == nil && !slices.Equal(failed, a.Fails) {
		problems = append(problems, fmt.Sprintf("fails [%s], its header says [%s] (%s)",
			strings.Join(failed, " "), strings.Join(a.Fails, " "), r))
	}
	if len(problems) > 0 {
		return line{false, name + ":\n      " + strings.Join(problems, "\n      ")}, nil
	}
	if len(a.Fails) == 0 {
		return line{true, fmt.Sprintf("%s: passes all %d%s", name, len(r.Items), inRuns(r, opt))}, nil
	}
	sometimes := ""
	if len(a.Sometimes) > 0 {
		sometimes = fmt.Sprintf(" (and %s on some schedules)", strings.Join(a.Sometimes, " "))
	}
	return line{true, fmt.Sprintf("%s fails %s%s%s: %s", name, strings.Join(a.Fails, " "), sometimes, inRuns(r, opt), a.Why)}, nil
}

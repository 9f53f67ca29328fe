// Package gate is the static check run on the learner's code before it is
// built: the code may import only the packages on an allowlist (generous
// for pure computation, plus what a kata's kata.json adds), time must come
// from the injected clock, the calls that end the process (os.Exit,
// log.Fatal) are refused, a file that does not parse is refused, never
// skipped, and so are the non-Go source files the go command would compile
// into the package (assembly, C, .syso objects).
//
// The hidden tests are compiled into the learner's package, so the gate
// also refuses what would change their meaning from there: a package-level
// declaration of a predeclared name (a func len of the package's own is
// the len the hidden tests call), and //line directives (they make errors
// and stacks name other files). A reference to a name only the hidden
// tests declare is refused by package grade, which type-checks the
// learner's package without them.
//
// It stops accidents and casual cheating; it is not a sandbox.
package gate

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"path"
	"slices"
	"strconv"
	"strings"

	"gokata/checker/internal/bundle"
)

// Finding is one violation.
type Finding struct {
	File    string // as given to Check
	Line    int    // 0 for the file as a whole
	Rule    string // RuleRealClock, RuleForbidden or RuleSyntax
	Message string
	Allowed string // for a refused import: what the code may import, to show once
}

func (f Finding) String() string {
	if f.Line == 0 {
		return fmt.Sprintf("%s: %s", f.File, f.Message)
	}
	return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Message)
}

// Blocking reports whether the code must not be run at all. Real-clock and
// vet findings fail the kata but let the tests run.
func (f Finding) Blocking() bool {
	return f.Rule != RuleRealClock && f.Rule != RuleTimerReset && f.Rule != RuleVet
}

// The rules.
const (
	RuleRealClock = "real-clock"
	RuleForbidden = "forbidden"
	RuleVet       = "vet"    // a finding of go vet's concurrency analyzers (package grade runs them)
	RuleSyntax    = "syntax" // the file does not parse: it cannot compile either
	// RuleTimerReset: Reset called on a timer of the injected clock, which
	// every clocked kata's README rules out.
	RuleTimerReset = "timer-reset"
)

// defaultImports is what every kata's code may import: the standard
// library's packages for computing, collections, text, errors, contexts,
// synchronisation, logging for debugging (log and log/slog), runtime and
// runtime/debug (GOMAXPROCS, NumGoroutine, a panic's stack), time (its
// types and constants; the clock rules below still apply) and the clock
// library. Nothing that reaches files, the network, other processes,
// signals, the test framework or raw memory.
var defaultImports = []string{
	"bytes", "cmp", "container/heap", "container/list", "container/ring", "context", "errors", "fmt",
	"hash", "hash/fnv", "hash/maphash", "io", "iter", "log", "log/slog", "maps",
	"math", "math/big", "math/bits", "math/cmplx", "math/rand", "math/rand/v2",
	"runtime", "runtime/debug", "slices", "sort", "strconv", "strings", "sync", "sync/atomic",
	"time", "unicode", "unicode/utf16", "unicode/utf8",
	"github.com/benbjohnson/clock",
}

// why explains the refusal of imports people reach for.
var why = map[string]string{
	"C":       "cgo code is not graded",
	"syscall": "it can end the process behind the grader's back",
	"unsafe":  "it can rewrite memory the grader relies on",
	"reflect": "it reaches code by name, where the gate cannot see it",
	"testing": "the code under test must not take part in testing",
	"os":      "it reaches files, other processes and the test's command line (to debug, print with fmt or log)",
	"os/exec": "the code under test must not start programs",
	"plugin":  "the code under test must not load code",
}

// libraries are the modules that do what the katas teach, by module path:
// a learner who reaches for one is told that the kata is the exercise of
// building it, and that the WHY shown after a pass compares the two.
var libraries = []string{
	"golang.org/x/sync", "golang.org/x/time",
	"github.com/cenkalti/backoff", "github.com/sourcegraph/conc", "github.com/sony/gobreaker",
	"github.com/failsafe-go/failsafe-go", "github.com/avast/retry-go", "github.com/alitto/pond",
}

// library names the package of a library import path refers to
// ("golang.org/x/sync/errgroup" → "errgroup"), or "" when path is not in
// one of the libraries.
func library(path string) string {
	for _, mod := range libraries {
		if path == mod || strings.HasPrefix(path, mod+"/") {
			name := path[strings.LastIndex(path, "/")+1:]
			if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" && strings.Contains(path, "/") {
				// a major-version suffix: github.com/cenkalti/backoff/v4 is backoff
				rest := path[:strings.LastIndex(path, "/")]
				name = rest[strings.LastIndex(rest, "/")+1:]
			}
			return name
		}
	}
	return ""
}

// isModule reports whether path belongs to a module other than the
// standard library's: its first element has a dot.
func isModule(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return strings.Contains(first, ".")
}

// realClock lists the package time functions that read or wait on the real
// clock, the context helpers built on them, and the clock package's own way
// to the real clock.
var realClock = map[string]map[string]string{
	"github.com/benbjohnson/clock": {"New": "the clk you were given"},
	"time": {
		"Sleep": "clk.Sleep, or better a clk.Timer in a select with ctx.Done()",
		"After": "clk.After or clk.Timer", "AfterFunc": "clk.AfterFunc",
		"NewTimer": "clk.Timer", "NewTicker": "clk.Ticker", "Tick": "clk.Ticker",
		"Now": "clk.Now", "Since": "clk.Since", "Until": "clk.Until",
	},
	"context": {
		"WithTimeout": "a clk.Timer in a select with ctx.Done()", "WithTimeoutCause": "a clk.Timer",
		"WithDeadline": "a clk.Timer in a select with ctx.Done()", "WithDeadlineCause": "a clk.Timer",
	},
}

// realClockInTests is realClock's advice for a test file (a learner's
// own tests, which catch runs): a test drives the code's mock clock and
// waits on the bubble, as docs/catch.md teaches.
var realClockInTests = map[string]map[string]string{
	"github.com/benbjohnson/clock": {"New": "give the code a clock.NewMock() and move it with clk.Add(d)"},
	"time": {
		"Sleep":     "to wait for goroutines, call synctest.Wait() (it returns once every other goroutine of the bubble is blocked) or receive from a channel the code closes; to let time pass for the code, synctest.Wait() then clk.Add(d) on its mock clock",
		"After":     "give the code a clock.NewMock() and move it with synctest.Wait(); clk.Add(d); inside synctest.Test a goroutine blocked for good fails the test, no time limit needed",
		"AfterFunc": "give the code a clock.NewMock() and move it with synctest.Wait(); clk.Add(d)",
		"NewTimer":  "give the code a clock.NewMock() and move it with synctest.Wait(); clk.Add(d); inside synctest.Test a goroutine blocked for good fails the test, no time limit needed",
		"NewTicker": "give the code a clock.NewMock() and move it with synctest.Wait(); clk.Add(d)",
		"Tick":      "give the code a clock.NewMock() and move it with synctest.Wait(); clk.Add(d)",
		"Now":       "read the mock clock you gave the code: clk.Now()", "Since": "clk.Since on the mock clock you gave the code", "Until": "clk.Until on the mock clock you gave the code",
	},
	"context": {
		"WithTimeout":       "use t.Context() inside synctest.Test, and cancel it yourself (context.WithCancel) once clk.Add has moved the mock clock past the deadline",
		"WithTimeoutCause":  "cancel the context yourself (context.WithCancelCause) once clk.Add has moved the mock clock past the deadline",
		"WithDeadline":      "use t.Context() inside synctest.Test, and cancel it yourself (context.WithCancel) once clk.Add has moved the mock clock past the deadline",
		"WithDeadlineCause": "cancel the context yourself (context.WithCancelCause) once clk.Add has moved the mock clock past the deadline",
	},
}

// realClockNoClock is realClock's advice for code of a kata that takes no
// clock (none of its files imports one): the caller's ctx is its only time.
var realClockNoClock = map[string]string{
	"time":    "this kata takes no clock: time reaches the code only through the caller's ctx, so wait on ctx.Done() and what the calls return",
	"context": "this kata takes no clock: give the calls the caller's ctx, whose deadline is the only one the README allows",
}

// IsTest reports whether the file called name is a test file: the gate's
// advice for it is written for tests.
func IsTest(name string) bool { return strings.HasSuffix(name, "_test.go") }

// forbiddenCalls end the process or write its memory out, even from an
// allowed package.
var forbiddenCalls = map[string]map[string]string{
	"os":            {"Exit": "it ends the whole test process; return an error instead"},
	"log":           {"Fatal": "it ends the whole test process; return an error instead", "Fatalf": "it ends the whole test process; return an error instead", "Fatalln": "it ends the whole test process; return an error instead"},
	"runtime/debug": {"WriteHeapDump": "it writes the process's memory out", "SetCrashOutput": "it redirects the process's crash reports"},
}

// Source is one file to check: the name to report and its content.
type Source struct {
	Name string
	Data []byte
}

// Allowlist is what code may import: whole packages by path ("sync"), or
// single names of a package ("os.Signal": the package may be imported, and
// only that name used).
type Allowlist struct {
	pkgs  map[string]bool
	names map[string][]string // package path → the names allowed from it
	shown string              // the list as messages show it
}

// NewAllowlist is defaultImports plus the kata's extras (kata.json's
// "imports").
func NewAllowlist(extra []string) Allowlist {
	a := Allowlist{pkgs: map[string]bool{}, names: map[string][]string{}}
	for _, p := range append(slices.Clone(defaultImports), extra...) {
		a.pkgs[p] = true
		dir, last := path.Split(p)
		if pkg, name, ok := strings.Cut(last, "."); ok {
			a.names[dir+pkg] = append(a.names[dir+pkg], name)
		}
	}
	shown := slices.Clone(defaultImports)
	slices.Sort(shown)
	a.shown = strings.Join(shown, ", ")
	if len(extra) > 0 {
		a.shown += "; and for this kata: " + strings.Join(extra, ", ")
	}
	return a
}

// Check inspects the files under the allowlist. A file that does not parse
// gets a RuleSyntax finding with the parser's error.
func Check(files []Source, allow Allowlist) []Finding {
	var out []Finding
	fset := token.NewFileSet()
	parsed := make([]*ast.File, len(files))
	clocked := false // the code imports the clock: the kata injects one
	for i, src := range files {
		f, err := parser.ParseFile(fset, src.Name, src.Data, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			out = append(out, syntaxFindings(src.Name, err)...)
			continue
		}
		parsed[i] = f
		for _, imp := range f.Imports {
			clocked = clocked || (!IsTest(src.Name) && imp.Path.Value == `"github.com/benbjohnson/clock"`)
		}
	}
	timers := timerNames(files, parsed)
	for i, f := range parsed {
		if f != nil {
			out = append(out, checkFile(fset, files[i].Name, f, allow, clocked)...)
			if !IsTest(files[i].Name) {
				out = append(out, timerResets(fset, files[i].Name, f, timers)...)
			}
		}
	}
	return out
}

const clockPath = "github.com/benbjohnson/clock"

// timerNames are the names the code gives timers of the injected clock,
// across its files (the gate has no types, so it goes by declarations): a
// variable, field or parameter of type clock.Timer or *clock.Timer, and
// whatever is assigned the result of a Timer or AfterFunc call in a file
// that imports the clock.
func timerNames(files []Source, parsed []*ast.File) map[string]bool {
	names := map[string]bool{}
	add := func(e ast.Expr) {
		switch e := e.(type) {
		case *ast.Ident:
			names[e.Name] = true
		case *ast.SelectorExpr:
			names[e.Sel.Name] = true
		}
	}
	for i, f := range parsed {
		if f == nil || IsTest(files[i].Name) {
			continue
		}
		clk := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == strconv.Quote(clockPath) {
				clk = path.Base(clockPath)
				if imp.Name != nil {
					clk = imp.Name.Name
				}
			}
		}
		if clk == "" {
			continue
		}
		isTimer := func(t ast.Expr) bool {
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			sel, ok := t.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Timer" {
				return false
			}
			id, ok := sel.X.(*ast.Ident)
			return ok && id.Name == clk
		}
		makesTimer := func(e ast.Expr) bool {
			call, ok := e.(*ast.CallExpr)
			if !ok {
				return false
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			return ok && (sel.Sel.Name == "Timer" || sel.Sel.Name == "AfterFunc")
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				if isTimer(n.Type) {
					for _, id := range n.Names {
						add(id)
					}
				}
			case *ast.ValueSpec:
				for j, id := range n.Names {
					if (n.Type != nil && isTimer(n.Type)) || (j < len(n.Values) && makesTimer(n.Values[j])) {
						add(id)
					}
				}
			case *ast.AssignStmt:
				if len(n.Lhs) == len(n.Rhs) {
					for j, rhs := range n.Rhs {
						if makesTimer(rhs) {
							add(n.Lhs[j])
						}
					}
				}
			}
			return true
		})
	}
	return names
}

// timerResets finds the calls of Reset on the timers of timerNames.
func timerResets(fset *token.FileSet, name string, f *ast.File, timers map[string]bool) []Finding {
	var out []Finding
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Reset" {
			return true
		}
		var who string
		switch x := sel.X.(type) {
		case *ast.Ident:
			who = x.Name
		case *ast.SelectorExpr:
			who = x.Sel.Name
		}
		if timers[who] {
			out = append(out, Finding{File: name, Line: fset.PositionFor(call.Pos(), false).Line, Rule: RuleTimerReset,
				Message: fmt.Sprintf("%s.Reset: never Reset a timer of the injected clock (the README's Time decision): "+
					"on a mock timer that fired and was not received from, the old tick stays in its channel, so the "+
					"next receive returns at once; make a fresh clk.Timer for each wait and Stop it on every way out", who)})
		}
		return true
	})
	return out
}

// syntaxFindings reports a parse error as the compiler would, file:line.
func syntaxFindings(name string, err error) []Finding {
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		return []Finding{{File: name, Rule: RuleSyntax, Message: err.Error()}}
	}
	var out []Finding
	for _, e := range list {
		out = append(out, Finding{File: name, Line: e.Pos.Line, Rule: RuleSyntax, Message: e.Msg})
	}
	return out
}

// fileCheck gathers the findings of one file.
type fileCheck struct {
	fset  *token.FileSet
	name  string
	allow Allowlist
	local map[string]string // local import name → path
	// clocked: some file of the code imports the clock, so the kata
	// injects one and the real clock's advice names it
	clocked bool
	out     []Finding
}

// add records a finding at pos, on the file's own line, whatever //line
// directives say.
func (c *fileCheck) add(pos token.Pos, rule, format string, args ...any) {
	c.out = append(c.out, Finding{File: c.name, Line: c.fset.PositionFor(pos, false).Line, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// checkFile lists what file f, called name, uses that the allowlist does
// not allow: imports, calls, directives and predeclared names it shadows.
func checkFile(fset *token.FileSet, name string, f *ast.File, allow Allowlist, clocked bool) []Finding {
	c := &fileCheck{fset: fset, name: name, allow: allow, local: map[string]string{}, clocked: clocked}
	for _, imp := range f.Imports {
		c.importSpec(imp)
	}
	ast.Inspect(f, c.selector)
	c.directives(f.Comments)
	for _, d := range f.Decls {
		c.predeclared(d)
	}
	return c.out
}

// importSpec checks one import: refused if the kata does not allow its
// package, or imported with a dot where its calls need checking; else
// its local name is remembered for the calls.
func (c *fileCheck) importSpec(imp *ast.ImportSpec) {
	path, _ := strconv.Unquote(imp.Path.Value)
	if !c.allow.pkgs[path] && c.allow.names[path] == nil {
		c.add(imp.Pos(), RuleForbidden, "%s", refusal(path))
		who := "the code"
		if IsTest(c.name) {
			who = "your tests"
		}
		c.out[len(c.out)-1].Allowed = who + " may import only " + c.allow.shown
		return
	}
	name := path[strings.LastIndex(path, "/")+1:]
	if imp.Name != nil {
		name = imp.Name.Name
	}
	if name == "." && (realClock[path] != nil || forbiddenCalls[path] != nil || !c.allow.pkgs[path]) {
		c.add(imp.Pos(), RuleForbidden, "dot import of %q is not allowed: name the package so its calls can be checked", path)
		return
	}
	c.local[name] = path
}

// refusal is why the kata does not allow importing path: a library that
// does the kata's work, a package from another module, or one the katas
// do not need.
func refusal(path string) string {
	reason := why[path]
	if reason == "" && strings.HasPrefix(path, "testing/") {
		reason = why["testing"]
	}
	if lib := library(path); lib != "" && reason == "" {
		return fmt.Sprintf("import %q is not allowed in this kata: it asks you to build what %s does yourself", path, lib) +
			bundle.KitOr("", "; once you pass, make solution compares your design with it")
	}
	if reason == "" && isModule(path) {
		reason = "packages from other modules are not in the kata's go.mod (only the clock is); write it with the standard library"
	}
	if reason == "" {
		reason = "it is not on the list of packages the katas need"
	}
	return fmt.Sprintf("import %q is not allowed: %s", path, reason)
}

// selector checks a use of an imported package's name (pkg.Name), for
// ast.Inspect: one of the real clock, a forbidden call, or a name the
// kata does not allow from that package.
func (c *fileCheck) selector(n ast.Node) bool {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok {
		return true
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return true
	}
	path, ok := c.local[id.Name]
	if !ok {
		return true
	}
	if use, ok := realClock[path][sel.Sel.Name]; ok {
		switch {
		case IsTest(c.name):
			c.add(sel.Pos(), RuleRealClock, "%s.%s uses the real clock, so the test's answer depends on the machine's speed: %s", path, sel.Sel.Name, realClockInTests[path][sel.Sel.Name])
		case !c.clocked && realClockNoClock[path] != "":
			c.add(sel.Pos(), RuleRealClock, "%s.%s uses the real clock: %s", path, sel.Sel.Name, realClockNoClock[path])
		default:
			c.add(sel.Pos(), RuleRealClock, "%s.%s uses the real clock: use the injected clock instead (%s)", path, sel.Sel.Name, use)
		}
	}
	if reason, ok := forbiddenCalls[path][sel.Sel.Name]; ok {
		c.add(sel.Pos(), RuleForbidden, "%s.%s is not allowed: %s", path, sel.Sel.Name, reason)
	} else if names := c.allow.names[path]; !c.allow.pkgs[path] && !slices.Contains(names, sel.Sel.Name) {
		c.add(sel.Pos(), RuleForbidden, "%s.%s is not allowed: from package %s this kata allows only %s", path, sel.Sel.Name, path, strings.Join(names, ", "))
	}
	return true
}

// directives refuses the comments that change how the code is compiled or
// reported: //go:linkname and //line.
func (c *fileCheck) directives(groups []*ast.CommentGroup) {
	for _, cg := range groups {
		for _, cm := range cg.List {
			switch {
			case strings.HasPrefix(cm.Text, "//go:linkname"):
				c.add(cm.Pos(), RuleForbidden, "//go:linkname is not allowed: it reaches into other packages' internals")
			case lineDirective(cm.Text):
				c.add(cm.Pos(), RuleForbidden, "a //line directive is not allowed: it makes compiler errors and stacks name another file than yours; remove it")
			}
		}
	}
}

// predeclared refuses a package-level name in d that shadows one of Go's
// predeclared names.
func (c *fileCheck) predeclared(d ast.Decl) {
	for _, id := range declared(d) {
		if types.Universe.Lookup(id.Name) != nil {
			c.add(id.Pos(), RuleForbidden, "declaring %s here replaces Go's predeclared %s in the whole package, the hidden tests included: give yours another name", id.Name, id.Name)
		}
	}
}

// declared lists the package-level names declaration d declares: funcs
// (not methods), types, vars and consts.
func declared(d ast.Decl) []*ast.Ident {
	var ids []*ast.Ident
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			ids = append(ids, d.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				ids = append(ids, s.Name)
			case *ast.ValueSpec:
				ids = append(ids, s.Names...)
			}
		}
	}
	return ids
}

// lineDirective reports whether comment text is a line directive the
// compiler obeys: //line or /*line, then a file name, a colon and a line.
func lineDirective(text string) bool {
	rest, ok := strings.CutPrefix(text, "//line ")
	if !ok {
		rest, ok = strings.CutPrefix(text, "/*line ")
	}
	return ok && strings.Contains(rest, ":")
}

// nonGo are the extensions of the files besides .go that the go command
// compiles or links into a package (go help filetype; .syso objects).
var nonGo = []string{".c", ".cc", ".cxx", ".cpp", ".m", ".h", ".hh", ".hpp", ".hxx",
	".f", ".F", ".for", ".f90", ".s", ".S", ".sx", ".swig", ".swigcxx", ".syso"}

// Foreign refuses the files among names (the package directory's files,
// as they are to be reported) that the go command would build into the
// package although they are not Go: assembly can end the process, and none
// of it can be checked. Like the go command, it ignores names that begin
// with "." or "_".
func Foreign(names []string) []Finding {
	var out []Finding
	for _, n := range names {
		base := path.Base(strings.ReplaceAll(n, "\\", "/"))
		if strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || !slices.Contains(nonGo, path.Ext(base)) {
			continue
		}
		out = append(out, Finding{File: n, Rule: RuleForbidden,
			Message: "non-Go source files are not allowed in the exercise (go build would compile or link it into your package): write Go, and delete or rename this file"})
	}
	return out
}

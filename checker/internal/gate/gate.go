// Package gate is the static check run on the learner's code before it is
// built: time must come from the injected clock, and the escape hatches that
// could fake a verdict (syscall, unsafe, testing, os/exec, cgo, os.Exit,
// log.Fatal) are refused.
//
// It stops accidents and casual cheating; it is not a sandbox.
package gate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
)

// Finding is one violation.
type Finding struct {
	File    string // as given to Check
	Line    int
	Rule    string // "real-clock" or "forbidden"
	Message string
}

func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Message) }

// Blocking reports whether the code must not be run at all.
func (f Finding) Blocking() bool { return f.Rule == RuleForbidden }

// The rules.
const (
	RuleRealClock = "real-clock"
	RuleForbidden = "forbidden"
	RuleVet       = "vet" // a finding of go vet's concurrency analyzers (package grade runs them)
)

var forbiddenImports = map[string]string{
	"syscall":   "it can end the process behind the grader's back",
	"unsafe":    "it can rewrite memory the grader relies on",
	"testing":   "the code under test must not take part in testing",
	"os/exec":   "the code under test must not start programs",
	"C":         "cgo code is not graded",
	"plugin":    "the code under test must not load code",
	"os/signal": "signals belong to the program's main, not to a library",
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

var forbiddenCalls = map[string]map[string]bool{
	"os":  {"Exit": true},
	"log": {"Fatal": true, "Fatalf": true, "Fatalln": true},
}

// Source is one file to check: the name to report and its content.
type Source struct {
	Name string
	Data []byte
}

// Check inspects the files. A file that does not parse is skipped: the
// compiler reports it better.
func Check(files []Source) []Finding {
	var out []Finding
	fset := token.NewFileSet()
	for _, src := range files {
		f, err := parser.ParseFile(fset, src.Name, src.Data, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			continue
		}
		out = append(out, checkFile(fset, src.Name, f)...)
	}
	return out
}

func checkFile(fset *token.FileSet, name string, f *ast.File) []Finding {
	var out []Finding
	add := func(pos token.Pos, rule, format string, args ...any) {
		out = append(out, Finding{File: name, Line: fset.Position(pos).Line, Rule: rule, Message: fmt.Sprintf(format, args...)})
	}
	local := map[string]string{} // local import name → path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if why, bad := forbiddenImports[path]; bad || strings.HasPrefix(path, "testing/") {
			if why == "" {
				why = forbiddenImports["testing"]
			}
			add(imp.Pos(), RuleForbidden, "import %q is not allowed: %s", path, why)
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." && (path == "time" || path == "context" || path == "os" || path == "log") {
			add(imp.Pos(), RuleForbidden, "dot import of %q is not allowed: name the package so its calls can be checked", path)
			continue
		}
		local[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		path := local[id.Name]
		if use, ok := realClock[path][sel.Sel.Name]; ok {
			add(sel.Pos(), RuleRealClock, "%s.%s uses the real clock: use the injected clock instead (%s)", path, sel.Sel.Name, use)
		}
		if forbiddenCalls[path][sel.Sel.Name] {
			add(sel.Pos(), RuleForbidden, "%s.%s is not allowed: it ends the whole test process; return an error instead", path, sel.Sel.Name)
		}
		return true
	})
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:linkname") {
				add(c.Pos(), RuleForbidden, "//go:linkname is not allowed: it reaches into other packages' internals")
			}
		}
	}
	return out
}

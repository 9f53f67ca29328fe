package hunt

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"slices"
	"strings"

	"gokata/checker/internal/mutant"
)

// Level is how hard a hunt is, from its mutant's // Level: line.
type Level string

// The levels, easiest first.
const (
	OneLine   Level = "one-line"  // the fix changes one line
	Reasoning Level = "reasoning" // a fix of a few lines, or one line whose consequence needs thought
	Schedule  Level = "schedule"  // the mistake shows only on some interleavings or timings
	Wild      Level = "wild"      // the pattern of a real bug of a well-known project (// From:), reported as it was
)

// Levels are the levels, easiest first.
var Levels = []Level{OneLine, Reasoning, Schedule, Wild}

// MaxFix is how many lines of code a hunt's fix may change: a mistake
// whose fix is longer is a rewrite, not a hunt (NoHunt).
const MaxFix = 15

// ParseLevel reads a level's name.
func ParseLevel(s string) (Level, error) {
	if l := Level(s); slices.Contains(Levels, l) {
		return l, nil
	}
	return "", fmt.Errorf("no level %q; the levels are %s", s, levelNames())
}

// levelNames lists the levels as a message shows them: a, b, c or d.
func levelNames() string { return LevelNames("or") }

// LevelNames lists the levels joined as a sentence does: "a, b, c or d"
// with "or".
func LevelNames(conj string) string {
	names := make([]string, len(Levels))
	for i, l := range Levels {
		names[i] = string(l)
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + conj + " " + names[len(names)-1]
}

// Means says what the level promises, for the learner.
func (l Level) Means() string {
	switch l {
	case OneLine:
		return "the fix changes one line"
	case Reasoning:
		return "the fix is a few lines, or one line whose consequence needs thought across the code"
	case Schedule:
		return "the mistake shows only on some interleavings or timings of concurrent callers"
	case Wild:
		return "the pattern of a real bug of a well-known Go project, reported as its users saw it"
	}
	return ""
}

// rank orders the levels, easiest first; -1 for none.
func (l Level) rank() int { return slices.Index(Levels, l) }

// Progressive is the level a hunt on a kata is picked at when none is
// asked: the lowest level that has hunts among bs and at which no hunt
// was solved (solved holds the levels of the kata's solved hunts); ""
// (any level) once every level was.
func Progressive(bs []Bug, solved []Level) Level {
	hs := Huntable(bs)
	for _, l := range Levels {
		if !slices.Contains(solved, l) && slices.ContainsFunc(hs, func(b Bug) bool { return b.Level == l }) {
			return l
		}
	}
	return ""
}

// FixSize counts the lines of code the fix of b changes: the planted code
// against the reference, comments and blank lines aside.
func FixSize(dir string, b Bug) (int, error) {
	planted, err := Plant(dir, b)
	if err != nil {
		return 0, err
	}
	ref, err := Reference(dir)
	if err != nil {
		return 0, err
	}
	for _, files := range []map[string][]byte{planted, ref} {
		for name, data := range files {
			if files[name], err = codeOnly(name, data); err != nil {
				return 0, fmt.Errorf("mutant %s: %w", b.Name, err)
			}
		}
	}
	return mutant.Changed(ref, planted), nil
}

// codeOnly is a Go file without its comments, formatted.
func codeOnly(name string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	if err := format.Node(&b, fset, f); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// declared lists the names the Go files declare: functions, methods,
// types, fields, constants, variables, parameters and results, type
// parameters, labels, and the variables of := and range.
func declared(files map[string][]byte) map[string]bool {
	names := map[string]bool{}
	add := func(ids ...*ast.Ident) {
		for _, id := range ids {
			if id != nil && id.Name != "_" {
				names[id.Name] = true
			}
		}
	}
	fset := token.NewFileSet()
	for name, data := range files {
		f, err := parser.ParseFile(fset, name, data, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				add(n.Name)
			case *ast.TypeSpec:
				add(n.Name)
			case *ast.ValueSpec:
				add(n.Names...)
			case *ast.Field:
				add(n.Names...)
			case *ast.LabeledStmt:
				add(n.Label)
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					for _, e := range n.Lhs {
						id, _ := e.(*ast.Ident)
						add(id)
					}
				}
			case *ast.RangeStmt:
				if n.Tok == token.DEFINE {
					k, _ := n.Key.(*ast.Ident)
					v, _ := n.Value.(*ast.Ident)
					add(k, v)
				}
			}
			return true
		})
	}
	return names
}

// Resembles reports whether data, the content of a file called name, is
// that file of one of versions (name → content) changed in at most MaxFix
// lines of code, and in at most a quarter of them, comments aside: the
// code of a hunt, as planted, fixed or half fixed, whatever comments were
// added or dropped.
func Resembles(name string, data []byte, versions ...map[string][]byte) bool {
	code, err := codeOnly(name, data)
	if err != nil {
		return false
	}
	lines := mutant.Changed(nil, map[string][]byte{name: code})
	for _, v := range versions {
		other, ok := v[name]
		if !ok {
			continue
		}
		oc, err := codeOnly(name, other)
		if err != nil {
			continue
		}
		if n := mutant.Changed(map[string][]byte{name: oc}, map[string][]byte{name: code}); n <= MaxFix && 4*n <= lines {
			return true
		}
	}
	return false
}

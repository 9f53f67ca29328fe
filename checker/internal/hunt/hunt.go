// Package hunt is the bug hunt: a kata's reference solution with one of its
// mutants planted in it (a real mistake, proven to be caught by the hidden
// tests), for the learner to find from a user's bug report and fix.
//
// A mutant's header (package mutant) says what a hunt needs:
//
//	// Mistake: pauses with clk.Sleep, so a cancel has to wait until the pause is over.
//	// Symptom: after the customer closed the tab, the request still waited out its backoff.
//	// Why: clk.Sleep
//	// Level: reasoning
//	// NoHunt: the symptom names the fix
//	// From: Kubernetes#62464, a read lock taken twice while a writer waits
//	// Study: blocking/rwmutex
//
// Symptom, exactly one, is the bug report: what a user saw, never the
// cause. Why, optional, names the paragraph of the kata's WHY.md that
// explains the mistake, by the bold words it starts with. Level says how
// hard a hunt it is (one-line, reasoning, schedule, wild): a learner picks
// a level, or climbs them kata by kata. NoHunt, optional, takes the mutant
// out of hunts, with the reason; a hunt-able mutant needs a Level. From
// cites the real bug whose pattern the mistake is (project#issue and what
// went wrong); a hunt at level wild needs one. Study, optional, names the
// category of real Go concurrency bugs the mistake falls in (package
// study).
//
// Everything is read from a kata's solution directory, so hunts work the
// same in the repository and in a practice kit (whose checker carries the
// reference and the mutants, see package bundle). An interview kit carries
// neither: its hunts are planted when it is packed (Packed).
package hunt

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/study"
)

// Bug is a mutant as a bug hunt sees it.
type Bug struct {
	Name    string   // the mutant's name: clksleep
	Mistake string   // what is wrong, revealed once the hunt is over
	Symptom string   // the bug report
	Why     string   // the bold words WHY.md's paragraph starts with; "" for none
	NoHunt  string   // why it is no good hunt; "" when it is one
	Level   Level    // how hard a hunt it is; "" for a NoHunt one without a Level line
	From    string   // the real bug it is the pattern of; "" for none
	Study   string   // its category of real concurrency bugs; "" for none
	Fails   []string // the items it fails: R4, B1
	Patch   *mutant.Mutant
}

// Read reads what a hunt needs from a mutant's header: exactly one
// Symptom, at most one Why and one NoHunt, each with a text, and, unless
// NoHunt, exactly one valid Level.
func Read(m *mutant.Mutant) (Bug, error) {
	b := Bug{Name: m.Name, Patch: m}
	lines := map[string][]string{}
	for _, l := range strings.Split(m.Header, "\n") {
		l, ok := strings.CutPrefix(l, "// ")
		if !ok {
			continue
		}
		if k, v, ok := strings.Cut(l, ":"); ok && !strings.Contains(k, " ") {
			lines[k] = append(lines[k], strings.TrimSpace(v))
		}
	}
	switch s := lines["Symptom"]; {
	case len(s) == 0:
		return b, fmt.Errorf("mutant %s: its header needs a // Symptom: line, the bug as a user reports it (what they saw, never the cause)", m.Name)
	case len(s) > 1:
		return b, fmt.Errorf("mutant %s: its header has %d // Symptom: lines; give it exactly one", m.Name, len(s))
	case s[0] == "":
		return b, fmt.Errorf("mutant %s: its // Symptom: line is empty", m.Name)
	}
	for _, key := range []string{"Why", "NoHunt", "Level", "From", "Study"} {
		switch v := lines[key]; {
		case len(v) > 1:
			return b, fmt.Errorf("mutant %s: its header has %d // %s: lines; give it at most one", m.Name, len(v), key)
		case len(v) == 1 && v[0] == "":
			return b, fmt.Errorf("mutant %s: its // %s: line is empty; say why", m.Name, key)
		}
	}
	b.Symptom = lines["Symptom"][0]
	if v := lines["Why"]; len(v) == 1 {
		b.Why = v[0]
	}
	if v := lines["NoHunt"]; len(v) == 1 {
		b.NoHunt = v[0]
	}
	if v := lines["Level"]; len(v) == 1 {
		l, err := ParseLevel(v[0])
		if err != nil && b.NoHunt == "" {
			return b, fmt.Errorf("mutant %s: // Level: %w", m.Name, err)
		}
		b.Level = l
	} else if b.NoHunt == "" {
		return b, fmt.Errorf("mutant %s: its header needs a // Level: line (%s), or a // NoHunt: line", m.Name, levelNames())
	}
	if v := lines["From"]; len(v) == 1 {
		b.From = v[0]
	}
	if b.Level == Wild && b.From == "" {
		return b, fmt.Errorf("mutant %s: a hunt at level %s needs a // From: line citing the real bug (project#issue, what went wrong)", m.Name, Wild)
	}
	if v := lines["Study"]; len(v) == 1 {
		if _, err := study.Find(v[0]); err != nil {
			return b, fmt.Errorf("mutant %s: // Study: %w", m.Name, err)
		}
		b.Study = v[0]
	}
	if v := lines["Mistake"]; len(v) > 0 {
		b.Mistake = v[0]
	}
	if v := lines["Fails"]; len(v) > 0 {
		b.Fails = strings.Fields(v[0])
	}
	return b, nil
}

// Bugs reads the mutants of the kata whose solution directory is dir,
// sorted by name.
func Bugs(dir string) ([]Bug, error) {
	ms, err := mutant.All(dir)
	if err != nil {
		return nil, err
	}
	var bs []Bug
	for _, m := range ms {
		b, err := Read(m)
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	return bs, nil
}

// Huntable keeps the bugs that make good hunts.
func Huntable(bs []Bug) []Bug {
	var out []Bug
	for _, b := range bs {
		if b.NoHunt == "" {
			out = append(out, b)
		}
	}
	return out
}

// ErrNoHunt: a kata has no mutant fit for a hunt.
var ErrNoHunt = errors.New("no mutant of this kata makes a bug hunt")

// Pick chooses a hunt-able bug at level (any level when "") at random
// (intn(n) returns a number in [0, n)), never last, the mutant of the
// kata's previous hunt, unless it is the only one there.
func Pick(bs []Bug, level Level, last string, intn func(n int) int) (Bug, error) {
	hs := Huntable(bs)
	if len(hs) == 0 {
		return Bug{}, ErrNoHunt
	}
	if level != "" {
		hs = slices.DeleteFunc(hs, func(b Bug) bool { return b.Level != level })
		if len(hs) == 0 {
			return Bug{}, fmt.Errorf("no hunt at level %s in this kata; it has %s", level, Count(bs))
		}
	}
	if len(hs) > 1 {
		hs = slices.DeleteFunc(hs, func(b Bug) bool { return b.Name == last })
	}
	return hs[intn(len(hs))], nil
}

// Count says how many hunts bs has at each level: "3 one-line, 5
// reasoning".
func Count(bs []Bug) string {
	var parts []string
	for _, l := range Levels {
		n := 0
		for _, b := range Huntable(bs) {
			if b.Level == l {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, l))
		}
	}
	return strings.Join(parts, ", ")
}

// Find returns the bug named name, or an error listing the hunt-able ones.
func Find(bs []Bug, name string) (Bug, error) {
	var names []string
	for _, b := range Huntable(bs) {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	for _, b := range bs {
		if b.Name == name {
			return Bug{}, fmt.Errorf("mutant %s is not used for bug hunts (%s); pick one of: %s", name, b.NoHunt, strings.Join(names, " "))
		}
	}
	return Bug{}, fmt.Errorf("no mutant %q; pick one of: %s", name, strings.Join(names, " "))
}

// Plant returns the files a hunt writes into the exercise (name → content):
// every reference file of the solution directory dir, with bug applied to
// those it changes. The mutant's header is left out, and so is every
// comment inside a function body: a comment there explains the
// reference's code and would contradict, and so point at, the planted
// change. Doc comments stay: they state the contract the code must keep.
// The files are gofmt-clean.
func Plant(dir string, b Bug) (map[string][]byte, error) {
	refs, err := mutant.Reference(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, r := range refs {
		files[r.Name] = r.Data
	}
	srcs, err := b.Patch.Apply(dir)
	if err != nil {
		return nil, err
	}
	for i, s := range srcs {
		data := s.Data
		if i == 0 {
			if _, data, err = mutant.SplitHeader(data); err != nil {
				return nil, fmt.Errorf("mutant %s: %w", b.Name, err)
			}
		}
		files[s.Name] = data
	}
	for name, data := range files {
		clean, err := dropBodyComments(name, data)
		if err != nil {
			return nil, fmt.Errorf("mutant %s: %w", b.Name, err)
		}
		files[name] = clean
	}
	return files, nil
}

// Reference returns the reference's files as Plant writes them, without
// a bug: what a planted program is compared with.
func Reference(dir string) (map[string][]byte, error) {
	refs, err := mutant.Reference(dir)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, r := range refs {
		if files[r.Name], err = dropBodyComments(r.Name, r.Data); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// API lists the exported names the files declare, sorted, methods as
// Type.Method: what a bug report says the code offers.
func API(files map[string][]byte) []string {
	var names []string
	fset := token.NewFileSet()
	for name, data := range files {
		f, err := parser.ParseFile(fset, name, data, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					names = append(names, d.Name.Name)
				} else if t := recvType(d.Recv.List[0].Type); ast.IsExported(t) {
					names = append(names, t+"."+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() {
							names = append(names, sp.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// recvType is the name of a method's receiver type: *Service[T] → Service.
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// dropBodyComments removes the comments inside function bodies (function
// literals included) and formats the file.
func dropBodyComments(name string, src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	type span struct{ from, to token.Pos }
	var bodies []span
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			if n.Body != nil {
				bodies = append(bodies, span{n.Body.Lbrace, n.Body.Rbrace})
			}
		case *ast.FuncLit:
			bodies = append(bodies, span{n.Body.Lbrace, n.Body.Rbrace})
		}
		return true
	})
	// Cut from the source, not from the syntax tree, so that a comment on
	// a line of its own leaves no empty line behind.
	var cuts [][2]int // byte ranges, in order
	for _, g := range f.Comments {
		if !slices.ContainsFunc(bodies, func(s span) bool { return g.Pos() > s.from && g.End() <= s.to }) {
			continue
		}
		for _, c := range g.List {
			from, to := fset.Position(c.Pos()).Offset, fset.Position(c.End()).Offset
			start := bytes.LastIndexByte(src[:from], '\n') + 1
			end := to + bytes.IndexByte(src[to:], '\n')
			if end < to { // the last line has no newline
				end = len(src)
			}
			if len(bytes.TrimSpace(src[start:from])) == 0 && len(bytes.TrimSpace(src[to:end])) == 0 {
				from, to = start, min(end+1, len(src)) // the whole line
			}
			cuts = append(cuts, [2]int{from, to})
		}
	}
	var out []byte
	last := 0
	for _, c := range cuts {
		out = append(out, src[last:c[0]]...)
		last = c[1]
	}
	out = append(out, src[last:]...)
	clean, err := format.Source(out)
	if err != nil {
		return nil, fmt.Errorf("%s without the comments in its functions: %w", name, err)
	}
	return clean, nil
}

// Fixed reports whether r, a grade of the planted code, shows the bug
// fixed: every requirement passes, every gate holds, and so does every
// bonus item the bug fails.
func Fixed(b Bug, r *grade.Result) bool {
	if !r.Passed() {
		return false
	}
	for _, it := range r.Items {
		if slices.Contains(b.Fails, it.ID) && !it.Passed() {
			return false
		}
	}
	return true
}

// Unfixed is the first item of r, a grade of the planted code, that shows
// the bug still there: a requirement that failed, or a bonus item the bug
// fails; nil when none does.
func Unfixed(b Bug, r *grade.Result) *grade.ItemResult {
	for i, it := range r.Items {
		if !it.Passed() && (!it.Bonus || slices.Contains(b.Fails, it.ID)) {
			return &r.Items[i]
		}
	}
	return nil
}

// Why returns the paragraph of the kata's WHY.md (in the solution
// directory dir) that b's Why line names: the paragraph whose bold
// opening words start with it, compared without Markdown marks or case.
// It is "" when b has no Why line, and an error when WHY.md has no such
// paragraph.
func Why(dir string, b Bug) (string, error) {
	if b.Why == "" {
		return "", nil
	}
	data, err := gofiles.ReadRegular(filepath.Join(dir, "WHY.md"))
	if err != nil {
		return "", err
	}
	want := plain(b.Why)
	for _, para := range strings.Split(string(data), "\n\n") {
		para = strings.TrimSpace(para)
		rest, ok := strings.CutPrefix(para, "**")
		if !ok {
			continue
		}
		lead, _, ok := strings.Cut(rest, "**")
		if ok && strings.HasPrefix(plain(lead), want) {
			return para, nil
		}
	}
	return "", fmt.Errorf("mutant %s: // Why: %q names no paragraph of WHY.md (one that starts with those words in bold)", b.Name, b.Why)
}

// plain is text without Markdown's * and ` marks, trailing punctuation or
// case.
func plain(s string) string {
	s = strings.NewReplacer("*", "", "`", "").Replace(s)
	return strings.ToLower(strings.TrimRight(strings.TrimSpace(s), ".:"))
}

// Names lists the bugs' names, sorted.
func Names(bs []Bug) []string {
	var ns []string
	for _, b := range bs {
		ns = append(ns, b.Name)
	}
	sort.Strings(ns)
	return ns
}

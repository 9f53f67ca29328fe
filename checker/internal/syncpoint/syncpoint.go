// Package syncpoint rewrites the source of a package so that the code
// yields, when the harness asks for it, right after each of its
// synchronization points (see package gokata/internal/katatest/shake).
//
// A call of shake.Point is added after every statement that locks or
// unlocks, waits, sends, receives, closes a channel, cancels, starts a
// goroutine or calls sync/atomic, and first thing in every select case,
// and in the body of an if, for or switch whose header does one of
// these (and after such an if when it has no else: its check is a window
// whichever way it goes). One is also added before every statement that takes a lock
// (Lock, RLock), sends or selects: a check made under one critical section and
// acted on under the next is a window even when the first unlock is
// deferred, and so is a check of a channel's len before a send. A
// deferred synchronizing call (defer wg.Done(), defer mu.Unlock()) gets
// one too, deferred just before it, so that it runs right after the call
// as the function returns: what a function does after wg.Done() is a
// window for whoever Wait wakes. Each call
// goes on the line of the statement it follows or precedes, and the
// import goes on the line of the package clause, so every line keeps its
// number: compile errors, panics and race reports name the lines of the
// original. Nothing else in the file changes.
//
// The rewrite is safe for a package that compiles: a call statement is
// added only where a statement list allows one, after a statement that
// does not end its function (a terminating statement is never a sync
// point here) or first in a list; it declares nothing; and the package is
// imported under a name that no identifier of the package's files uses,
// so the name is neither taken nor shadowed where the calls are.
package syncpoint

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ShakePath is the import path of the package whose Point is called.
const ShakePath = "gokata/internal/katatest/shake"

// alias is the name the import starts from; an underscore is added until
// no identifier of the package uses it.
const alias = "kata_shake"

// syncMethods are the methods whose call is a synchronization point:
// sync's Mutex, RWMutex, WaitGroup, Cond, Once and Map, the atomic
// types, and errgroup's Group. A method of another type with one of these
// names gets a point too, which costs a yield and changes nothing else.
var syncMethods = map[string]bool{
	"Lock": true, "Unlock": true, "RLock": true, "RUnlock": true, "TryLock": true, "TryRLock": true,
	"Wait": true, "Add": true, "Done": true, "Go": true, "Signal": true, "Broadcast": true, "Do": true,
	"Load": true, "Store": true, "Swap": true, "CompareAndSwap": true, "And": true, "Or": true,
	"LoadOrStore": true, "LoadAndDelete": true, "CompareAndDelete": true, "Delete": true, "Range": true, "Clear": true,
}

// Rewrite returns the files of one package (name → source) that change,
// with their new source. A file that does not parse, that has a //line
// directive (its positions are someone else's) or that has no
// synchronization point is left out: it is built as it is. others are
// the package's files that are built as they are (its tests): the import's
// name is chosen among the names none of them uses either.
func Rewrite(files, others map[string][]byte) map[string][]byte {
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	used := map[string]bool{}
	for _, set := range []map[string][]byte{files, others} {
		for name, src := range set {
			f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					used[id.Name] = true
				}
				return true
			})
			if _, mine := files[name]; mine && !hasLineDirective(f) {
				parsed[name] = f
			}
		}
	}
	name := alias
	for used[name] {
		name += "_"
	}
	out := map[string][]byte{}
	for file, f := range parsed {
		if src, ok := rewrite(fset, f, files[file], name, file); ok {
			out[file] = src
		}
	}
	return out
}

// hasLineDirective reports whether a comment of f is a //line or /*line
// directive, which would make the compiler name other lines than f's.
func hasLineDirective(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//line ") || strings.HasPrefix(c.Text, "/*line ") {
				return true
			}
		}
	}
	return false
}

// insertion is text to splice in at a byte offset of the source.
type insertion struct {
	at   int
	text string
}

// rewrite inserts the points into one file.
func rewrite(fset *token.FileSet, f *ast.File, src []byte, name, file string) ([]byte, bool) {
	w := walker{fset: fset, atomic: atomicNames(f), pkg: name, file: filepath.Base(file), src: src, before: name + ".Point(); ", deferred: "defer " + name + ".Point(); "}
	after := "; " + name + ".Point()" // after a statement, on its line
	first := " " + name + ".Point();" // first in a list, on the line of its { or :
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			w.list(n.List, after)
		case *ast.CaseClause:
			w.list(n.Body, after)
		case *ast.CommClause:
			w.add(n.Colon+1, first)
			w.list(n.Body, after)
		case *ast.IfStmt:
			if w.syncs(n.Init) || w.syncs(n.Cond) {
				w.add(n.Body.Lbrace+1, first)
				if b, ok := n.Else.(*ast.BlockStmt); ok {
					w.add(b.Lbrace+1, first)
				}
			}
		case *ast.ForStmt:
			if w.syncs(n.Init) || w.syncs(n.Cond) || w.syncs(n.Post) {
				w.add(n.Body.Lbrace+1, first)
			}
		case *ast.SwitchStmt:
			if w.syncs(n.Init) || w.syncs(n.Tag) {
				for _, c := range n.Body.List {
					w.add(c.(*ast.CaseClause).Colon+1, first)
				}
			}
		}
		return true
	})
	if len(w.ins) == 0 {
		return nil, false
	}
	w.add(f.Name.End(), "; import "+name+" "+strconv.Quote(ShakePath))
	sort.SliceStable(w.ins, func(i, j int) bool { return w.ins[i].at < w.ins[j].at })
	var buf bytes.Buffer
	last := 0
	for _, in := range w.ins {
		buf.Write(src[last:in.at])
		buf.WriteString(in.text)
		last = in.at
	}
	buf.Write(src[last:])
	return buf.Bytes(), true
}

// atomicNames returns the names file f gives package sync/atomic ("." for
// a dot import).
func atomicNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != "sync/atomic" {
			continue
		}
		switch {
		case imp.Name == nil:
			names["atomic"] = true
		case imp.Name.Name != "_":
			names[imp.Name.Name] = true
		}
	}
	return names
}

type walker struct {
	fset   *token.FileSet
	atomic map[string]bool
	ins    []insertion
	before string // added before a statement that takes a lock, sends or selects, on its line
	// deferred is added before a defer of a synchronizing call (defer
	// wg.Done(), defer mu.Unlock()): deferred calls run last in, first
	// out, so the point runs right after that call, when the function
	// returns.
	deferred string
	pkg      string // the name the shake package is imported under
	file     string // the file's name in its package, for the lock notes
	src      []byte // the file, to copy a lock's expression from
}

func (w *walker) add(pos token.Pos, text string) {
	w.ins = append(w.ins, insertion{w.fset.Position(pos).Offset, text})
}

// list adds a point after each statement of a statement list that is a
// synchronization point, and one before each that takes a lock, sends or selects.
func (w *walker) list(stmts []ast.Stmt, after string) {
	for _, s := range stmts {
		if acts(s) {
			w.add(s.Pos(), w.before)
		}
		if d, ok := s.(*ast.DeferStmt); ok && w.syncCall(d.Call) {
			w.add(s.Pos(), w.deferred)
		}
		w.noteLock(s)
		if w.isPoint(s) || w.checks(s) {
			w.add(s.End(), after)
		}
	}
}

// noteLock adds the notes of package shake's lock table around a
// statement that locks or unlocks (X.Lock(), defer X.RUnlock()): Locking
// before a Lock or RLock and Locked after it, Unlocked after an Unlock or
// RUnlock, deferred just before a deferred one so that it runs right
// after it. X must be a name or a chain of field selections (s.mu,
// m.ls.mu), whose address &X can be taken; a lock reached otherwise (an
// index, a call) gets no notes.
func (w *walker) noteLock(s ast.Stmt) {
	var call *ast.CallExpr
	deferred := false
	switch s := s.(type) {
	case *ast.ExprStmt:
		call, _ = s.X.(*ast.CallExpr)
	case *ast.DeferStmt:
		call, deferred = s.Call, true
	}
	if call == nil || len(call.Args) != 0 {
		return
	}
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || !addressable(sel.X) {
		return
	}
	x := string(w.src[w.fset.Position(sel.X.Pos()).Offset:w.fset.Position(sel.X.End()).Offset])
	if strings.ContainsAny(x, "\n/") {
		return // a copy would shift the lines after it, or carry a comment
	}
	args := "(&" + x + ", " + strconv.FormatBool(strings.HasPrefix(sel.Sel.Name, "R")) + ")"
	at := fmt.Sprintf("(&%s, %t, %q, %d)", x, strings.HasPrefix(sel.Sel.Name, "R"), w.file, w.fset.Position(s.Pos()).Line)
	switch sel.Sel.Name {
	case "Lock", "RLock":
		if !deferred {
			w.add(s.Pos(), w.pkg+".Locking"+at+"; ")
			w.add(s.End(), "; "+w.pkg+".Locked"+at)
		}
	case "Unlock", "RUnlock":
		if deferred {
			w.add(s.Pos(), "defer "+w.pkg+".Unlocked"+args+"; ")
		} else {
			w.add(s.End(), "; "+w.pkg+".Unlocked"+args)
		}
	}
}

// addressable reports whether e is a name other than _, or a chain of
// selections from one, on one line: an expression whose address can be
// taken wherever a method with a pointer receiver can be called on it.
func addressable(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name != "_"
	case *ast.SelectorExpr:
		return addressable(e.X)
	}
	return false
}

// checks reports whether s is an if without an else whose header
// synchronizes (if n := c.Load(); n > limit {…}): when the condition is
// false no point runs in its body, and the check is still a window, so one
// follows the statement. An if without an else never ends its function,
// so a statement may follow it.
func (w *walker) checks(s ast.Stmt) bool {
	ifs, ok := s.(*ast.IfStmt)
	return ok && ifs.Else == nil && (w.syncs(ifs.Init) || w.syncs(ifs.Cond))
}

// acts reports whether statement s sends on a channel, selects, or calls a
// Lock or RLock method (m.Lock(), s.mu.RLock()): the act that may follow a
// check. A select is one because which of its ready cases it takes depends
// on what became ready just before it (a stop racing an item).
func acts(s ast.Stmt) bool {
	switch s.(type) {
	case *ast.SendStmt, *ast.SelectStmt:
		return true
	}
	e, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	c, ok := e.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr)
	return ok && (sel.Sel.Name == "Lock" || sel.Sel.Name == "RLock")
}

// isPoint reports whether statement s synchronizes: it sends, starts a
// goroutine, or is a simple statement (an expression, an assignment, a
// var declaration) that calls or receives as syncs describes. A deferred
// call runs later, and a return or a panic leaves: none gets a point
// after it.
func (w *walker) isPoint(s ast.Stmt) bool {
	switch s := s.(type) {
	case *ast.SendStmt, *ast.GoStmt:
		return true
	case *ast.LabeledStmt:
		return w.isPoint(s.Stmt)
	case *ast.ExprStmt:
		if c, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok && id.Name == "panic" {
				return false // it may end its function: nothing may follow it
			}
		}
		return w.syncs(s)
	case *ast.AssignStmt, *ast.DeclStmt:
		return w.syncs(s)
	}
	return false
}

// syncs reports whether n (outside the function literals in it) receives
// from a channel, closes one, calls a method of syncMethods, a function
// of sync/atomic, or a function or method whose name says it cancels.
func (w *walker) syncs(n ast.Node) bool {
	if n == nil {
		return false
	}
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.UnaryExpr:
			found = n.Op == token.ARROW
		case *ast.CallExpr:
			found = w.syncCall(n)
		}
		return !found
	})
	return found
}

func (w *walker) syncCall(c *ast.CallExpr) bool {
	switch fun := ast.Unparen(c.Fun).(type) {
	case *ast.Ident:
		return fun.Name == "close" || cancels(fun.Name) || w.atomic["."] && isAtomicFunc(fun.Name)
	case *ast.SelectorExpr:
		if x, ok := fun.X.(*ast.Ident); ok && w.atomic[x.Name] {
			return true
		}
		return syncMethods[fun.Sel.Name] || cancels(fun.Sel.Name)
	}
	return false
}

// cancels reports whether a function's name says it cancels a context
// (cancel, cancelFn, c.cancelAll, stopCancel).
func cancels(name string) bool { return strings.Contains(strings.ToLower(name), "cancel") }

// isAtomicFunc reports whether name is a function of sync/atomic.
func isAtomicFunc(name string) bool {
	for _, p := range []string{"Load", "Store", "Add", "Swap", "CompareAndSwap", "And", "Or"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

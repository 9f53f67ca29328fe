package grade

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// APIFile is the name, in a kata's solution directory, of the stub's
// exported API (API, as JSON) where the reference is not there to read it
// from: in a kit that carries no answer. It says how a learner's API
// differs from the stub's.
const APIFile = "api.json"

// apiOf returns the exported API declared by files: identifier → a
// description independent of parameter names and formatting.
func apiOf(files []string) map[string]string {
	srcs := map[string][]byte{}
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			srcs[f] = data
		}
	}
	return API(srcs)
}

// stubAPI is the API the kata whose solution directory is dir declares:
// its reference's (ref, the reference's files), or else its APIFile's;
// nil when neither is there.
func stubAPI(dir string, ref []string) map[string]string {
	if len(ref) > 0 {
		return apiOf(ref)
	}
	data, err := os.ReadFile(filepath.Join(dir, APIFile))
	if err != nil {
		return nil
	}
	var api map[string]string
	if json.Unmarshal(data, &api) != nil {
		return nil
	}
	return api
}

// API returns the exported API declared by the Go files srcs (name →
// content): identifier → a description independent of parameter names
// and formatting. A file that does not parse declares nothing.
func API(srcs map[string][]byte) map[string]string {
	api := map[string]string{}
	fset := token.NewFileSet()
	for name, src := range srcs {
		af, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil {
					recv := recvName(d.Recv.List[0].Type)
					if !ast.IsExported(recv) {
						continue // the hidden tests cannot name it
					}
					name = recv + "." + name
				}
				api[name] = "func" + typeParams(d.Type.TypeParams) + signature(d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							api[s.Name.Name] = "type" + typeParams(s.TypeParams) + " " + typeString(s.Type)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								api[n.Name] = d.Tok.String()
							}
						}
					}
				}
			}
		}
	}
	return api
}

// apiDiff explains how got differs from want, one line per identifier.
func apiDiff(want, got map[string]string) []string {
	var out []string
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s is missing; the stub declares it as `%s`", name, w))
		case g != w:
			out = append(out, fmt.Sprintf("%s differs: the stub has `%s`, yours is `%s`", name, w, g))
		}
	}
	sort.Strings(out)
	return out
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return types.ExprString(e)
}

func typeParams(fl *ast.FieldList) string {
	if fl == nil {
		return ""
	}
	var ps []string
	for _, f := range fl.List {
		for _, n := range f.Names {
			ps = append(ps, n.Name+" "+types.ExprString(f.Type))
		}
	}
	return "[" + strings.Join(ps, ", ") + "]"
}

// signature prints a func type without parameter names.
func signature(ft *ast.FuncType) string {
	s := "(" + fieldTypes(ft.Params) + ")"
	if ft.Results != nil {
		r := fieldTypes(ft.Results)
		if len(ft.Results.List) == 1 && len(ft.Results.List[0].Names) <= 1 {
			s += " " + r
		} else {
			s += " (" + r + ")"
		}
	}
	return s
}

func fieldTypes(fl *ast.FieldList) string {
	var ts []string
	for _, f := range fl.List {
		n := max(1, len(f.Names))
		for range n {
			ts = append(ts, typeString(f.Type))
		}
	}
	return strings.Join(ts, ", ")
}

// typeString prints a type; for structs only the exported fields count,
// since the hidden tests can use nothing else.
func typeString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.FuncType:
		return "func" + signature(e)
	case *ast.StructType:
		var fs []string
		for _, f := range e.Fields.List {
			for _, n := range f.Names {
				if n.IsExported() {
					fs = append(fs, n.Name+" "+typeString(f.Type))
				}
			}
			if len(f.Names) == 0 {
				fs = append(fs, typeString(f.Type))
			}
		}
		return "struct{" + strings.Join(fs, "; ") + "}"
	}
	return types.ExprString(e)
}

package pack

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"gokata/checker/internal/catalog"
)

// A kit is not a second-class copy of the repository: every make target
// that the checker's messages or the kit's own files name is a target of
// the kit's Makefile, every guide they name is in the kit, and the script
// kit_make runs each target of the kit's Makefile with make in a packed kit.
//
// The messages are found mechanically: every string literal in the
// checker's source, but for the code that runs only in the repository
// (repoOnly) and the repository's side of a bundle.KitOr. A new message
// that names a target or a guide the kit lacks fails here.
func TestKitHasWhatItsMessagesName(t *testing.T) {
	root := repoRoot(t)
	repo := parseMakefile(read(t, filepath.Join(root, "Makefile")))
	kit := Kit{Katas: []catalog.Kata{{Num: 6, Slug: "06-retry"}}}
	own := parseMakefile(makefile(kit))

	texts := checkerStrings(t, root)
	texts["the kit's README.md"] = []string{readme(kit)}
	texts["the kit's Makefile"] = []string{makefile(kit)}
	texts["an interview kit's README.md"] = []string{readme(Kit{Katas: kit.Katas, Interview: true})}
	texts["a bug-hunt interview kit's README.md"] = []string{readme(Kit{Katas: kit.Katas, Interview: true, Bughunt: true})}
	for _, d := range Docs {
		texts["the kit's "+d] = []string{read(t, filepath.Join(root, filepath.FromSlash(d)))}
	}
	makeTarget := regexp.MustCompile(`\bmake ([a-z]+)\b`)
	guide := regexp.MustCompile(`\bdocs/[\w-]+\.md\b`)
	named := map[string]bool{}
	for where, ss := range texts {
		for _, s := range ss {
			for _, m := range makeTarget.FindAllStringSubmatchIndex(s, -1) {
				target := s[m[2]:m[3]]
				if _, ok := repo.recipes[target]; !ok {
					continue // English: "make the test deterministic"
				}
				named[target] = true
				assert.Contains(t, own.targets, target, "%s names make %s, which the kit's Makefile lacks: %q", where, target, lineAt(s, m[0]))
			}
			for _, m := range guide.FindAllStringIndex(s, -1) {
				d := s[m[0]:m[1]]
				assert.Contains(t, Docs, d, "%s names %s, which the kit lacks (pack.Docs): %q", where, d, lineAt(s, m[0]))
			}
		}
	}
	for _, target := range []string{"check", "catch", "hint", "bughunt", "doctor", "serve"} {
		assert.True(t, named[target], "the scan finds no message naming make %s: is it still reading the messages?", target)
	}
	for _, d := range Docs {
		assert.FileExists(t, filepath.Join(root, filepath.FromSlash(d)))
	}

	// Each target of the kit's Makefile is run in a packed kit.
	script := read(t, filepath.Join(root, "checker", "internal", "cli", "testdata", "script", "kit_make.txtar"))
	for _, target := range own.targets {
		ran := regexp.MustCompile(`(?m)^!? ?exec .*\bmake (-n )?` + target + `\b`)
		assert.Regexp(t, ran, script, "kit_make.txtar does not run make %s", target)
	}
}

// The kit's Makefile takes the same make variables as the repository's:
// each of its targets is one of the repository's, with the same recipe
// (but for building the checker, which a kit has built), and every
// variable a recipe reads is declared.
func TestKitMakefileMatchesTheRepository(t *testing.T) {
	repo := parseMakefile(read(t, filepath.Join(repoRoot(t), "Makefile")))
	own := parseMakefile(makefile(Kit{Katas: []catalog.Kata{{Num: 6, Slug: "06-retry"}}}))
	require.NotEmpty(t, own.targets)
	runs := regexp.MustCompile(`^@(\$\(PUSHING\) )?\$\(CHECKER\) `)
	for _, target := range own.targets {
		theirs, ok := repo.recipes[target]
		if !assert.True(t, ok, "make %s is in the kit's Makefile only", target) {
			continue
		}
		for _, line := range own.recipes[target] {
			assert.Contains(t, theirs, line, "make %s runs what the repository's does not", target)
		}
		for _, line := range theirs {
			if runs.MatchString(line) {
				assert.Contains(t, own.recipes[target], line, "make %s in the kit differs from the repository's", target)
			}
		}
	}
	ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
	var used []string
	for _, lines := range own.recipes {
		for _, l := range lines {
			for _, m := range ref.FindAllStringSubmatch(l, -1) {
				used = append(used, m[1])
			}
		}
	}
	for i := 0; i < len(used); i++ {
		v := used[i]
		if v == "MAKEFILE_LIST" {
			continue
		}
		value, ok := own.vars[v]
		if !assert.True(t, ok, "the kit's Makefile reads $(%s) but does not declare it", v) {
			continue
		}
		for _, m := range ref.FindAllStringSubmatch(value, -1) {
			if !slices.Contains(used, m[1]) {
				used = append(used, m[1])
			}
		}
	}
}

// lineAt is the line of s that holds byte i.
func lineAt(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}

// makefileParts is what the parity tests read of a Makefile: its targets
// in order, each one's recipe lines, and its variables' values.
type makefileParts struct {
	targets []string
	recipes map[string][]string
	vars    map[string]string
}

func parseMakefile(text string) makefileParts {
	p := makefileParts{recipes: map[string][]string{}, vars: map[string]string{}}
	rule := regexp.MustCompile(`^([a-z]+):`)
	variable := regexp.MustCompile(`^([A-Z_]+)\s*(\?=|:=|=)\s*(.*)$`)
	exported := regexp.MustCompile(`^export ([A-Z_]+)\s*:=\s*(.*)$`)
	current := ""
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "\t") && current != "":
			p.recipes[current] = append(p.recipes[current], strings.TrimSpace(line))
		case rule.MatchString(line):
			current = rule.FindStringSubmatch(line)[1]
			p.targets = append(p.targets, current)
			p.recipes[current] = nil
		default:
			current = ""
			if m := variable.FindStringSubmatch(line); m != nil {
				p.vars[m[1]] = m[3]
			} else if m := exported.FindStringSubmatch(line); m != nil {
				p.vars[m[1]] = m[2]
			}
		}
	}
	return p
}

// repoOnly is the checker's code that never runs in a kit: the verbs a
// kit's checker does not have (verb.kitless) and what only they use, and
// the maintainers' benchmark.
var repoOnly = []string{
	"checker/internal/bench/",
	"checker/internal/verify/",         // verify, mutant
	"checker/internal/cli/solution.go", // a kit does not show the reference
	"checker/internal/cli/mutant.go",
	"checker/internal/cli/pack.go",
	"checker/internal/pack/make.go",
	"checker/internal/pack/pack.go",
	"checker/internal/pack/hunt.go",
}

// checkerStrings is every string literal of the checker's code that can
// run in a kit, by file; of a bundle.KitOr, only the kit's side.
func checkerStrings(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join(root, "checker"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		rel := filepath.ToSlash(p[len(root)+1:])
		if slices.ContainsFunc(repoOnly, func(prefix string) bool { return strings.HasPrefix(rel, prefix) }) {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		var visit func(ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "KitOr" && len(n.Args) == 2 {
					ast.Inspect(n.Args[0], visit)
					return false
				}
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					s, err := strconv.Unquote(n.Value)
					require.NoError(t, err)
					out[rel] = append(out[rel], s)
				}
			}
			return true
		}
		ast.Inspect(f, visit)
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, out)
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := catalog.FindRoot(".")
	require.NoError(t, err)
	return root
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

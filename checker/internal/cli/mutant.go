package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/exercise"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/verify"
)

var mutantVerb = verb{
	name: "mutant", args: "NN [NAME]", section: maintainers, needs: needCatalog,
	kitless: "mutant is for the katas' maintainers: run it in the kata repository",
	summary: "the mutants of kata NN, or mutant NAME as a source file: the\nreference with its patch applied, the header on top",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		save := fs.Bool("save", false, "store each FILE.go after NN as testdata/mutants/FILE.patch")
		refresh := fs.Bool("refresh", false, "write every patch of the katas named (all without NN) again\nagainst the reference")
		return func(c *call) (int, error) { return mutants(c.cat, c.args, *save, *refresh, c.env) }
	},
}

// mutants shows a kata's mutants, prints one as a source file, stores
// edited sources as patches (save), or writes every patch again against
// the current reference (refresh).
func mutants(cat *catalog.Catalog, pos []string, save, refresh bool, env Env) (int, error) {
	switch {
	case save && refresh:
		return 0, &usageError{"--save and --refresh do not go together", "checker mutant --refresh 06"}
	case refresh:
		katas, err := named(cat, pos)
		if err != nil {
			return 0, err
		}
		return refreshMutants(katas, env)
	case len(pos) == 0:
		return 0, &usageError{"which kata? name one of: " + cat.Names(), "checker mutant 06"}
	}
	k, err := find(cat, pos[0])
	if err != nil {
		return 0, err
	}
	switch {
	case save:
		if len(pos) < 2 {
			return 0, &usageError{"--save needs the mutant source files to store", "checker mutant --save 06 sleepy.go"}
		}
		return saveMutants(cat, k, pos[1:], env)
	case len(pos) == 1:
		return listMutants(cat, k, env)
	case len(pos) == 2:
		return showMutant(cat, k, pos[1], env)
	}
	return 0, &usageError{"name one mutant", "checker mutant 06 clksleep"}
}

// listMutants prints each mutant's name and mistake.
func listMutants(cat *catalog.Catalog, k catalog.Kata, env Env) (int, error) {
	ms, err := kataMutants(cat, k)
	if err != nil {
		return 0, err
	}
	for _, m := range ms {
		fmt.Fprintf(env.Stdout, "%-22s %s\n", m.Name, m.Fields()["Mistake"])
	}
	return ExitPass, nil
}

// showMutant prints the mutant's source: the reference with the patch
// applied, its header on top.
func showMutant(cat *catalog.Catalog, k catalog.Kata, name string, env Env) (int, error) {
	path := filepath.Join(mutant.Dir(k.Solution), name+mutant.Ext)
	if _, err := os.Stat(path); err != nil || strings.ContainsAny(name, `/\`) {
		ms, _ := kataMutants(cat, k)
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
		}
		return 0, &usageError{fmt.Sprintf("kata %s has no mutant %q; its mutants are: %s", k.Slug, name, strings.Join(names, ", ")),
			"checker mutant " + k.Slug[:2]}
	}
	m, err := mutant.Load(path)
	if err != nil {
		return 0, &usageError{err.Error(), "checker verify " + k.Slug[:2]}
	}
	srcs, err := m.Apply(k.Solution)
	if err != nil {
		return 0, &usageError{err.Error(), "edit the patch's ' ' and '-' lines to the reference's new text, or see docs/authoring.md, Step 6"}
	}
	for _, s := range srcs {
		if len(srcs) > 1 {
			fmt.Fprintf(env.Stdout, "==> %s <==\n", s.Name)
		}
		env.Stdout.Write(s.Data)
	}
	return ExitPass, nil
}

// saveMutants stores each source file (a mutant with its header, in place
// of the kata's one reference file) as NAME.patch.
func saveMutants(cat *catalog.Catalog, k catalog.Kata, files []string, env Env) (int, error) {
	refs, err := gofiles.Regular(k.Solution, false)
	if err != nil {
		return 0, err
	}
	if len(refs) != 1 {
		return 0, fmt.Errorf("kata %s has %d reference files; --save takes a copy of one of them, so write the patch with diff -u", k.Slug, len(refs))
	}
	refName := filepath.Base(refs[0])
	refData, err := os.ReadFile(refs[0])
	if err != nil {
		return 0, err
	}
	for _, f := range files {
		path := f
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Dir, f)
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return 0, &usageError{fmt.Sprintf("cannot read %s: %v", f, errors.Unwrap(err)), "checker mutant --save 06 sleepy.go"}
		}
		name := strings.TrimSuffix(filepath.Base(f), ".go")
		if name == filepath.Base(f) || name == "" || strings.HasPrefix(name, ".") {
			return 0, &usageError{fmt.Sprintf("%s: a mutant source is NAME.go, and NAME names the mutant", f), "checker mutant --save 06 sleepy.go"}
		}
		patch, err := mutant.Format(map[string][]byte{refName: refData}, []mutant.Source{{Name: refName, Data: src}})
		if err != nil {
			return 0, &usageError{fmt.Sprintf("%s: %v", f, err), "checker mutant 06 clksleep > clksleep.go, edit it, then checker mutant --save 06 clksleep.go"}
		}
		p, err := mutant.Parse(name, patch)
		if err != nil {
			return 0, err
		}
		if _, err := verify.NewMutant(p); err != nil {
			return 0, &usageError{fmt.Sprintf("%s: %v", f, err), "start the file with // Mistake: …, // Fails: R4, // Expect: (?i)…, then an empty line"}
		}
		out := filepath.Join(mutant.Dir(k.Solution), name+mutant.Ext)
		if err := exercise.ReplaceFile(out, patch); err != nil {
			return 0, err
		}
		fmt.Fprintf(env.Stdout, "saved %s (%d lines)\n", filepath.ToSlash(rel(cat.Root, out)), strings.Count(string(patch), "\n"))
	}
	return ExitPass, nil
}

// refreshMutants writes each patch again against the current reference,
// when it changed: hunks that now apply at an offset get their exact line
// numbers back. A patch that no longer applies is reported and left as it
// is.
func refreshMutants(katas []catalog.Kata, env Env) (int, error) {
	code, refreshed, total := ExitPass, 0, 0
	for _, k := range katas {
		paths, err := mutant.Paths(k.Solution)
		if err != nil {
			return 0, err
		}
		for _, p := range paths {
			total++
			old, err := os.ReadFile(p)
			if err != nil {
				return 0, err
			}
			m, err := mutant.Parse(strings.TrimSuffix(filepath.Base(p), mutant.Ext), old)
			var fresh []byte
			if err == nil {
				fresh, err = m.Refresh(k.Solution)
			}
			if err != nil {
				fmt.Fprintf(env.Stdout, "%s: %v\n", k.Slug, err)
				code = ExitFail
				continue
			}
			if string(fresh) == string(old) {
				continue
			}
			if err := exercise.ReplaceFile(p, fresh); err != nil {
				return 0, err
			}
			refreshed++
			fmt.Fprintf(env.Stdout, "%s: refreshed %s\n", k.Slug, m.Name)
		}
	}
	fmt.Fprintf(env.Stdout, "mutant: %d of %d patches refreshed\n", refreshed, total)
	return code, nil
}

// kataMutants reads a kata's patch files.
func kataMutants(cat *catalog.Catalog, k catalog.Kata) ([]*mutant.Mutant, error) {
	paths, err := mutant.Paths(k.Solution)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, &usageError{fmt.Sprintf("kata %s has no mutants in %s", k.Slug, filepath.ToSlash(rel(cat.Root, mutant.Dir(k.Solution)))),
			"run it in the kata repository (a candidate kit has no solutions)"}
	}
	var ms []*mutant.Mutant
	for _, p := range paths {
		m, err := mutant.Load(p)
		if err != nil {
			return nil, &usageError{err.Error(), "checker verify " + k.Slug[:2]}
		}
		ms = append(ms, m)
	}
	return ms, nil
}

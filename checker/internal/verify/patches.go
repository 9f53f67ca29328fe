package verify

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/exercise"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/study"
	"gokata/checker/internal/usage"
)

// UsageError is a request that cannot be done as made (usage.Error).
type UsageError = usage.Error

// ListMutants writes each of kata k's mutants to w, one a line: its name
// and its Mistake. root is the repository checkout.
func ListMutants(root string, k catalog.Kata, w io.Writer) error {
	ms, err := patches(root, k)
	if err != nil {
		return err
	}
	for _, m := range ms {
		fmt.Fprintf(w, "%-22s %s\n", m.Name, m.Fields()["Mistake"])
	}
	return nil
}

// ShowMutant writes mutant name of kata k to w as the source verify
// grades: the reference with the patch applied, the header on top. A
// kata with several files gets a "==> retry.go <==" line before each.
func ShowMutant(root string, k catalog.Kata, name string, w io.Writer) error {
	path := filepath.Join(mutant.Dir(k.Solution), name+mutant.Ext)
	if _, err := os.Stat(path); err != nil || strings.ContainsAny(name, `/\`) {
		ms, _ := patches(root, k)
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
		}
		return &UsageError{Msg: fmt.Sprintf("kata %s has no mutant %q; its mutants are: %s", k.Slug, name, strings.Join(names, ", ")), Try: "checker mutant " + k.Slug[:2]}
	}
	m, err := mutant.Load(path)
	if err != nil {
		return &UsageError{Msg: err.Error(), Try: "checker verify " + k.Slug[:2]}
	}
	srcs, err := m.Apply(k.Solution)
	if err != nil {
		return &UsageError{Msg: err.Error(), Try: "edit the patch's ' ' and '-' lines to the reference's new text, or see docs/authoring.md, Step 6"}
	}
	for _, s := range srcs {
		if len(srcs) > 1 {
			fmt.Fprintf(w, "==> %s <==\n", s.Name)
		}
		w.Write(s.Data)
	}
	return nil
}

// SaveMutants stores each of files (a mutant with its header, in place
// of kata k's one reference file, named NAME.go) as the patch NAME.patch,
// and says so on w. A relative file name is read from dir.
func SaveMutants(root, dir string, k catalog.Kata, files []string, w io.Writer) error {
	refs, err := gofiles.Regular(k.Solution, false)
	if err != nil {
		return err
	}
	if len(refs) != 1 {
		return fmt.Errorf("kata %s has %d reference files; --save takes a copy of one of them, so write the patch with diff -u", k.Slug, len(refs))
	}
	refName := filepath.Base(refs[0])
	refData, err := os.ReadFile(refs[0])
	if err != nil {
		return err
	}
	for _, f := range files {
		name, patch, err := savedPatch(dir, f, refName, refData)
		if err != nil {
			return err
		}
		out := filepath.Join(mutant.Dir(k.Solution), name+mutant.Ext)
		if err := exercise.ReplaceFile(out, patch); err != nil {
			return err
		}
		fmt.Fprintf(w, "saved %s (%d lines)\n", filepath.ToSlash(rel(root, out)), strings.Count(string(patch), "\n"))
	}
	return nil
}

// savedPatch reads mutant source f and makes its patch against the
// reference file refName: the mutant's name and the patch, its header
// checked.
func savedPatch(dir, f, refName string, refData []byte) (string, []byte, error) {
	path := f
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, f)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return "", nil, &UsageError{Msg: fmt.Sprintf("cannot read %s: %v", f, errors.Unwrap(err)), Try: "checker mutant --save 06 sleepy.go"}
	}
	name := strings.TrimSuffix(filepath.Base(f), ".go")
	if name == filepath.Base(f) || name == "" || strings.HasPrefix(name, ".") {
		return "", nil, &UsageError{Msg: fmt.Sprintf("%s: a mutant source is NAME.go, and NAME names the mutant", f), Try: "checker mutant --save 06 sleepy.go"}
	}
	patch, err := mutant.Format(map[string][]byte{refName: refData}, []mutant.Source{{Name: refName, Data: src}})
	if err != nil {
		return "", nil, &UsageError{Msg: fmt.Sprintf("%s: %v", f, err), Try: "checker mutant 06 NAME > NAME.go, edit it, then checker mutant --save 06 NAME.go"}
	}
	p, err := mutant.Parse(name, patch)
	if err != nil {
		return "", nil, err
	}
	if _, err := NewMutant(p); err != nil {
		return "", nil, &UsageError{Msg: fmt.Sprintf("%s: %v", f, err), Try: "start the file with // Mistake: …, // Fails: R4, // Expect: (?i)…, then an empty line"}
	}
	return name, patch, nil
}

// RefreshMutants writes each patch of katas again against the current
// reference, when it changed: hunks that now apply at an offset get their
// exact line numbers back. A patch that no longer applies is reported on
// w and left as it is, and RefreshMutants then returns false.
func RefreshMutants(katas []catalog.Kata, w io.Writer) (bool, error) {
	ok, written, total := true, 0, 0
	for _, k := range katas {
		paths, err := mutant.Paths(k.Solution)
		if err != nil {
			return false, err
		}
		for _, p := range paths {
			total++
			done, err := refresh(k, p, w)
			switch {
			case err != nil:
				return false, err
			case done == refreshFailed:
				ok = false
			case done == refreshWritten:
				written++
			}
		}
	}
	fmt.Fprintf(w, "mutant: %d of %d patches refreshed\n", written, total)
	return ok, nil
}

// refreshed is what refresh did with one patch.
type refreshed int

const (
	refreshSame    refreshed = iota // it was up to date
	refreshWritten                  // it was written again
	refreshFailed                   // it no longer applies: reported
)

// refresh writes the patch at path of kata k again against the reference,
// when it changed, and says so on w.
func refresh(k catalog.Kata, path string, w io.Writer) (refreshed, error) {
	old, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	m, err := mutant.Parse(strings.TrimSuffix(filepath.Base(path), mutant.Ext), old)
	var fresh []byte
	if err == nil {
		fresh, err = m.Refresh(k.Solution)
	}
	if err != nil {
		fmt.Fprintf(w, "%s: %v\n", k.Slug, err)
		return refreshFailed, nil
	}
	if string(fresh) == string(old) {
		return refreshSame, nil
	}
	if err := exercise.ReplaceFile(path, fresh); err != nil {
		return 0, err
	}
	fmt.Fprintf(w, "%s: refreshed %s\n", k.Slug, m.Name)
	return refreshWritten, nil
}

// patches reads kata k's patch files.
func patches(root string, k catalog.Kata) ([]*mutant.Mutant, error) {
	paths, err := mutant.Paths(k.Solution)
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, &UsageError{Msg: fmt.Sprintf("kata %s has no mutants in %s", k.Slug, filepath.ToSlash(rel(root, mutant.Dir(k.Solution)))), Try: "run it in the kata repository (a candidate kit has no solutions)"}
	}
	var ms []*mutant.Mutant
	for _, p := range paths {
		m, err := mutant.Load(p)
		if err != nil {
			return nil, &UsageError{Msg: err.Error(), Try: "checker verify " + k.Slug[:2]}
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// rel is path relative to root, when it lies inside it.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// StudyTable writes the coverage table of the katas' mutants (package
// study): each category of real Go concurrency bugs, its share of them,
// and the mutants, hunts and mistakes from the wild in it.
func StudyTable(katas []catalog.Kata, w io.Writer) error {
	var ms []study.Mutant
	for _, k := range katas {
		bs, err := hunt.Bugs(k.Solution)
		if err != nil {
			return err
		}
		for _, b := range bs {
			ms = append(ms, study.Mutant{Kata: k.ID(), Name: b.Name, Study: b.Study, Hunt: b.NoHunt == "", Wild: b.From != ""})
		}
	}
	_, err := io.WriteString(w, study.Table(ms))
	return err
}

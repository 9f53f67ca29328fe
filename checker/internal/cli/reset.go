package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/pristine"
	"gokata/checker/internal/record"
	"gokata/checker/internal/state"
)

// reset puts a kata's stub back, read from git history, after copying the
// learner's .go files to a backup under .kata/backup, and forgets the
// kata's progress in the state file (grades, hints, give-up), so that the
// next candidate starts afresh. It asks first unless --force.
var resetVerb = verb{
	name: "reset", args: "NN", section: learning, needs: needKata,
	summary: "put the untouched stub back, from git history, and forget the\nkata's progress (hints, give-up); your .go files are kept in\n.kata/backup",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		force := fs.Bool("force", false, "do not ask before resetting")
		return func(c *call) (int, error) { return reset(c.ctx, c.cat, c.kata, *force, c.env) }
	},
}

func reset(ctx context.Context, cat *catalog.Catalog, k catalog.Kata, force bool, env Env) (int, error) {
	stub, err := pristine.Read(ctx, env.Vars, k)
	if errors.Is(err, pristine.ErrNoHistory) {
		return 0, &usageError{fmt.Sprintf("cannot find the stub of %s in git history (%v)", k.Slug, err),
			"reset works in a git clone of the katas; elsewhere, copy the stub from a fresh clone"}
	}
	if err != nil {
		return 0, err
	}
	mine, restore, remove, err := stubChanges(k, stub)
	if err != nil {
		return 0, err
	}
	_, hasProgress := progress(cat.Root, env).Katas[k.Slug]
	if len(restore)+len(remove) == 0 && !hasProgress {
		fmt.Fprintf(env.Stdout, "%s is already its untouched stub, with no progress: nothing to reset.\n", k.Slug)
		return ExitPass, nil
	}
	backup, what := backupName(cat.Root, k, env)
	fmt.Fprintf(env.Stdout, "Reset %s to its stub:\n", k.Slug)
	for _, n := range restore {
		fmt.Fprintf(env.Stdout, "  restore %s\n", n)
	}
	for _, n := range remove {
		fmt.Fprintf(env.Stdout, "  remove  %s (yours)\n", n)
	}
	if hasProgress {
		fmt.Fprintf(env.Stdout, "  forget  its progress: grades, hints shown, decisions read, give-up\n")
	}
	if len(restore)+len(remove) > 0 {
		fmt.Fprintf(env.Stdout, "A copy of your .go files goes to %s/%s.\n", rel(cat.Root, backup), what)
	}
	if !force && !confirm(env, "Go ahead? [y/N] ") {
		fmt.Fprintln(env.Stdout, "Nothing changed. (Answer y, or use --force.)")
		return ExitFail, nil
	}
	if len(restore)+len(remove) > 0 {
		if backup, err = backUp(backup, mine); err != nil {
			return 0, fmt.Errorf("back up %s: %w", k.Slug, err)
		}
	}
	for _, n := range restore {
		if err := replaceFile(filepath.Join(k.Exercise, n), stub.Files[n]); err != nil {
			return 0, err
		}
	}
	for _, n := range remove {
		if err := os.Remove(filepath.Join(k.Exercise, n)); err != nil {
			return 0, err
		}
	}
	// The next candidate starts afresh: no grade, no hint shown, no
	// give-up that would open the reference without a pass.
	saveProgress(cat.Root, env, func(s *state.State) { delete(s.Katas, k.Slug) })
	if len(restore)+len(remove) == 0 {
		fmt.Fprintf(env.Stdout, "Done: %s is the stub, with no progress.\n", k.Slug)
		return ExitPass, nil
	}
	fmt.Fprintf(env.Stdout, "Done: %s is the stub again; your files are in %s/.\n", k.Slug, rel(cat.Root, backup))
	return ExitPass, nil
}

// backupName is where reset keeps the learner's files: named after the
// interview whose record ends with this very code, when there is one
// (what says so), else after the kata and the time.
func backupName(root string, k catalog.Kata, env Env) (dir, what string) {
	dir = filepath.Join(root, state.Dir, "backup", k.Slug+"-"+env.clock().Now().Format("20060102-150405"))
	fp, err := fingerprint.Code(k.Exercise)
	if err != nil {
		return dir, ""
	}
	recs, _ := filepath.Glob(filepath.Join(root, state.Dir, "interviews", "*.json"))
	sort.Sort(sort.Reverse(sort.StringSlice(recs))) // the newest first: names start with the time
	for _, p := range recs {
		rec, err := record.Load(p)
		if err != nil || rec.Kata != k.Slug {
			continue
		}
		if g := rec.Final; g != nil && g.Fingerprint.Code == fp {
			name := strings.TrimSuffix(filepath.Base(p), ".json")
			return filepath.Join(root, state.Dir, "backup", name), fmt.Sprintf(": the final code of the interview in %s", rel(root, p))
		}
	}
	return dir, ""
}

// stubChanges compares kata k's exercise with its stub: the learner's .go
// files, the stub's files that differ or are missing (restore), and the
// learner's files the stub does not have (remove).
func stubChanges(k catalog.Kata, stub pristine.Stub) (mine, restore, remove []string, err error) {
	mine, err = sourceEntries(k.Exercise)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, name := range stub.Names() {
		if !sameContent(filepath.Join(k.Exercise, name), stub.Files[name]) {
			restore = append(restore, name)
		}
	}
	for _, p := range mine {
		if _, ok := stub.Files[filepath.Base(p)]; !ok {
			remove = append(remove, filepath.Base(p))
		}
	}
	sort.Strings(remove)
	return mine, restore, remove, nil
}

// untouched reports whether kata k's exercise is still its stub; false
// when that cannot be told (no git history).
func untouched(ctx context.Context, env Env, k catalog.Kata) bool {
	stub, err := pristine.Read(ctx, env.Vars, k)
	if err != nil {
		return false
	}
	_, restore, remove, err := stubChanges(k, stub)
	return err == nil && len(restore)+len(remove) == 0
}

// confirm asks a yes/no question on stdin; no answer is no.
func confirm(env Env, question string) bool {
	fmt.Fprint(env.Stdout, question)
	if env.Stdin == nil {
		fmt.Fprintln(env.Stdout)
		return false
	}
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	if !strings.HasSuffix(line, "\n") {
		fmt.Fprintln(env.Stdout)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

// backUp copies files into a new directory named dir (or dir-2, dir-3 …
// when it exists) and returns its name.
func backUp(dir string, files []string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	name := dir
	for i := 2; ; i++ {
		err := os.Mkdir(name, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) {
			return "", err
		}
		name = fmt.Sprintf("%s-%d", dir, i)
	}
	for _, f := range files {
		dst := filepath.Join(name, filepath.Base(f))
		fi, err := os.Lstat(f)
		if err != nil {
			return "", err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0: // kept as the link it is
			target, err := os.Readlink(f)
			if err == nil {
				err = os.Symlink(target, dst)
			}
			if err != nil {
				return "", err
			}
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(f)
			if err != nil {
				return "", err
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				return "", err
			}
		} // a named pipe or a device has no content to keep
	}
	return name, nil
}

// sourceEntries lists the .go entries of an exercise that go build would
// read, whatever they are (files, links, pipes): names starting with "."
// or "_" (an editor's lock file) are not the learner's sources.
func sourceEntries(dir string) ([]string, error) {
	all, err := filepath.Glob(filepath.Join(dir, "*.go"))
	var out []string
	for _, p := range all {
		if b := filepath.Base(p); !strings.HasPrefix(b, ".") && !strings.HasPrefix(b, "_") {
			out = append(out, p)
		}
	}
	return out, err
}

// sameContent reports whether p is a regular file (not a link) holding
// data. Only a regular file is opened: a named pipe would block.
func sameContent(p string, data []byte) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	cur, err := os.ReadFile(p)
	return err == nil && bytes.Equal(cur, data)
}

// replaceFile puts a new regular file at p (a reset stub, a saved mutant):
// written beside it, then renamed over it, so that a link at p is
// replaced, never written through into the file it points at, and no one
// ever reads half a file.
func replaceFile(p string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(p), ".checker-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

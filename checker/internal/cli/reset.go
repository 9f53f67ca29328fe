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
	ch, err := changesTo(k, stub.Files)
	if err != nil {
		return 0, err
	}
	_, hasProgress := progress(cat.Root, env).Katas[k.Slug]
	if ch.none() && !hasProgress {
		fmt.Fprintf(env.Stdout, "%s is already its untouched stub, with no progress: nothing to reset.\n", k.Slug)
		return ExitPass, nil
	}
	var notes []string
	if hasProgress {
		notes = append(notes, "  forget  its progress: grades, hints shown, decisions read, give-up, bug hunts")
	}
	fmt.Fprintf(env.Stdout, "Reset %s to its stub:\n", k.Slug)
	backup, ok, err := ch.apply(cat, k, "restore", stub.Files, notes, force, env)
	if err != nil || !ok {
		return ExitFail, err
	}
	// The next candidate starts afresh: no grade, no hint shown, no
	// give-up that would open the reference without a pass, no hunt.
	saved(env, state.Progress{Root: cat.Root}.Reset(k.Slug))
	if ch.none() {
		fmt.Fprintf(env.Stdout, "Done: %s is the stub, with no progress.\n", k.Slug)
		return ExitPass, nil
	}
	fmt.Fprintf(env.Stdout, "Done: %s is the stub again; your files are in %s/.\n", k.Slug, rel(cat.Root, backup))
	return ExitPass, nil
}

// change is how a kata's exercise differs from the files a verb puts
// there (reset's stub, a bug hunt's planted code).
type change struct {
	mine    []string // the learner's .go files, to back up
	restore []string // the files to write: missing, or with other content
	remove  []string // the learner's files the new set does not have
}

func (c change) none() bool { return len(c.restore)+len(c.remove) == 0 }

// apply shows the change (what is written, as verb, what is removed, then
// notes), asks unless force, copies the learner's .go files to a new
// directory under .kata/backup (see backupName), then writes files into
// the exercise. It returns the backup's directory ("" when nothing
// changes), and ok false when the learner said no.
func (c change) apply(cat *catalog.Catalog, k catalog.Kata, verb string, files map[string][]byte, notes []string, force bool, env Env) (string, bool, error) {
	backup, what := backupName(cat.Root, k, env)
	for _, n := range c.restore {
		fmt.Fprintf(env.Stdout, "  %-7s %s\n", verb, n)
	}
	for _, n := range c.remove {
		fmt.Fprintf(env.Stdout, "  remove  %s (yours)\n", n)
	}
	for _, n := range notes {
		fmt.Fprintln(env.Stdout, n)
	}
	if !c.none() {
		fmt.Fprintf(env.Stdout, "A copy of your .go files goes to %s/%s.\n", rel(cat.Root, backup), what)
	}
	if !force && !confirm(env, "Go ahead? [y/N] ") {
		fmt.Fprintln(env.Stdout, "Nothing changed. (Answer y, or use --force.)")
		return "", false, nil
	}
	if c.none() {
		return "", true, nil
	}
	backup, err := backUp(backup, c.mine)
	if err != nil {
		return "", false, fmt.Errorf("back up %s: %w", k.Slug, err)
	}
	for _, n := range c.restore {
		if err := replaceFile(filepath.Join(k.Exercise, n), files[n]); err != nil {
			return "", false, err
		}
	}
	for _, n := range c.remove {
		if err := os.Remove(filepath.Join(k.Exercise, n)); err != nil {
			return "", false, err
		}
	}
	return backup, true, nil
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

// changesTo compares kata k's exercise with files (name → content): the
// learner's .go files, the files that differ or are missing (restore),
// and the learner's files that files does not have (remove).
func changesTo(k catalog.Kata, files map[string][]byte) (change, error) {
	var c change
	var err error
	if c.mine, err = sourceEntries(k.Exercise); err != nil {
		return c, err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if !sameContent(filepath.Join(k.Exercise, name), files[name]) {
			c.restore = append(c.restore, name)
		}
	}
	for _, p := range c.mine {
		if _, ok := files[filepath.Base(p)]; !ok {
			c.remove = append(c.remove, filepath.Base(p))
		}
	}
	sort.Strings(c.remove)
	return c, nil
}

// untouched reports whether kata k's exercise is still its stub; false
// when that cannot be told (no git history).
func untouched(ctx context.Context, env Env, k catalog.Kata) bool {
	stub, err := pristine.Read(ctx, env.Vars, k)
	if err != nil {
		return false
	}
	c, err := changesTo(k, stub.Files)
	return err == nil && c.none()
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

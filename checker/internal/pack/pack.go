// Package pack builds a candidate kit: a directory a candidate can grade
// their work in without the reference solutions or the hidden tests lying
// among its files.
//
// The kit holds exercises/ (each kata's task, metadata and untouched stub,
// read from git history so that no one's edits travel along; an interview
// kit's tasks keep their Decisions back), the harness
// under internal/ that the hidden tests import (without its own tests),
// go.mod and go.sum, a README for the candidate, a Makefile, and
// bin/checker: the checker built with the hidden tests packed inside it
// (package bundle), each kata's decisions and hints, and its own copies of
// the harness, go.mod and go.sum, which it grades with instead of the
// kit's files. A practice kit's checker carries each kata's reference,
// WHY.md and mutants too (for bug hunts and catch); an interview kit's
// carries no answer at all: no reference, no WHY.md, no mutant, only the
// stub's exported API, for telling a candidate how theirs differs. The
// kit has no solutions/ directory, no _test.go file and no reference code
// as a file. The checker is built for this machine's system or another
// one (Kit.OS, Kit.Arch; bin/checker.exe for Windows), without cgo, which
// it does not need.
//
// An interview kit can start each kata as a bug hunt (Kit.Bughunt): a
// mutant is planted at pack time, the planted code is the kata's starting
// file, and the kit's checker knows only the bug report, the level and the
// bonus items the mistake breaks (hunt.Packed). The mistake, the fix and
// the WHY.md paragraph go to a file next to the kit (Kit.AnswersFile), for
// the interviewer.
//
// Grading needs Go and a C compiler on the candidate's machine, as in the
// repository, and grades exactly as the repository does.
//
// The kit's checker unpacks what was packed into it (Scratch, Packed).
package pack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
	"gokata/checker/internal/pristine"
)

// Kit describes the kit to build.
type Kit struct {
	Root  string         // the repository checkout
	Out   string         // the kit's directory: must not exist, or be empty
	Katas []catalog.Kata // the katas it carries
	Env   []string       // environment of the go and git commands

	// Interview: each README's Decisions section is replaced by a line
	// saying how they are revealed; the decisions are then only in the
	// kit's checker, which carries no reference, WHY.md or mutant.
	Interview bool

	// Bughunt (with Interview) starts every kata of the kit as a bug
	// hunt: a mutant planted now, Pick by name (one kata only) or at
	// random at Level (any level when ""). What was planted is written to
	// AnswersFile, outside the kit.
	Bughunt bool
	Pick    string
	Level   hunt.Level

	// Witness and WitnessToken, when set, are the interviewer's witness
	// (checker serve): the kit's Makefile sends every check and watch
	// there, and its README says so.
	Witness, WitnessToken string

	// The system the kit's checker runs on (GOOS and GOARCH values, as
	// `go tool dist list` prints them); empty: this machine's.
	OS, Arch string

	// Log, when set, gets a line as each stage of Build starts: plain
	// lines, for a terminal and a log file alike.
	Log io.Writer
}

// Docs are the guides a kit carries, as they are in the repository: the
// ones its checker's messages and its README name.
var Docs = []string{"docs/catch.md"}

// stage says on kit.Log what Build is about to do.
func (kit Kit) stage(format string, args ...any) {
	if kit.Log != nil {
		fmt.Fprintf(kit.Log, "checker: pack: "+format+"…\n", args...)
	}
}

// Platform is the system the kit's checker is built for, "darwin/arm64".
func (kit Kit) Platform() string {
	goos, goarch := kit.OS, kit.Arch
	if goos == "" {
		goos = runtime.GOOS
	}
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return goos + "/" + goarch
}

// Binary is the kit's checker, relative to the kit: bin/checker, or
// bin/checker.exe for Windows.
func (kit Kit) Binary() string {
	if strings.HasPrefix(kit.Platform(), "windows/") {
		return "bin/checker.exe"
	}
	return "bin/checker"
}

// ErrNotEmpty: the kit's directory already has files; Build never
// overwrites.
var ErrNotEmpty = errors.New("the kit's directory is not empty")

// ErrAnswersExist: the file the answers of the kit's bug hunts would go
// to is there already; Build never overwrites.
var ErrAnswersExist = errors.New("the answers file is there already")

// Build writes the kit, its ManifestFile, and with Bughunt its
// AnswersFile.
func Build(ctx context.Context, kit Kit) error {
	if err := mustBeEmpty(kit.Out); err != nil {
		return err
	}
	hunts, err := kit.pickHunts()
	if err != nil {
		return err
	}
	if len(hunts) > 0 {
		if _, err := os.Lstat(kit.AnswersFile()); err == nil {
			return fmt.Errorf("%w: %s", ErrAnswersExist, kit.AnswersFile())
		}
	}
	kit.stage("copying the tasks and stubs of %s, as committed", plural(len(kit.Katas), "kata"))
	hidden := map[string][]byte{}
	for _, k := range kit.Katas {
		if err := kit.exercise(ctx, k, hidden); err != nil {
			return fmt.Errorf("kata %s: %w", k.Slug, err)
		}
	}
	if len(hunts) > 0 {
		kit.stage("planting the bug hunts; what was planted goes to %s", kit.AnswersFile())
		if err := kit.plant(hunts, hidden); err != nil {
			return err
		}
	}
	if kit.Interview {
		kit.stage("packing the hidden tests (no reference, no known mistake: an interview kit)")
	} else {
		kit.stage("packing the hidden tests, references and known mistakes")
	}
	for _, k := range kit.Katas {
		if err := kit.hideKata(hidden, k); err != nil {
			return err
		}
	}
	settings, err := json.Marshal(bundle.Settings{Interview: kit.Interview})
	if err != nil {
		return err
	}
	hidden[bundle.SettingsFile] = settings
	kit.stage("writing the harness, go.mod, README.md, Makefile and %s", strings.Join(Docs, ", "))
	for _, f := range []string{"go.mod", "go.sum", "LICENSE"} {
		if err := copyFile(filepath.Join(kit.Root, f), filepath.Join(kit.Out, f)); err != nil && f != "LICENSE" {
			return err
		}
	}
	for _, f := range Docs {
		if err := copyFile(filepath.Join(kit.Root, filepath.FromSlash(f)), filepath.Join(kit.Out, filepath.FromSlash(f))); err != nil {
			return err
		}
	}
	if err := kit.hideModule(hidden); err != nil {
		return err
	}
	for name, content := range map[string]string{
		"README.md":  readme(kit),
		"Makefile":   makefile(kit),
		".gitignore": "/.kata/\n/bin/\n",
	} {
		if err := os.WriteFile(filepath.Join(kit.Out, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	slow := ""
	if kit.Platform() != runtime.GOOS+"/"+runtime.GOARCH {
		slow = "; the first build for another system takes a few minutes"
	}
	kit.stage("building the kit's checker for %s with them inside (go build%s)", kit.Platform(), slow)
	if err := kit.checker(ctx, hidden); err != nil {
		return err
	}
	if err := kit.commit(ctx); err != nil {
		return err
	}
	if err := kit.writeManifest(time.Now().UTC().Truncate(time.Second)); err != nil {
		return fmt.Errorf("the kit's manifest: %w", err)
	}
	if len(hunts) == 0 {
		return nil
	}
	return kit.writeAnswers(hunts)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// mustBeEmpty fails with ErrNotEmpty when directory out has files; a
// directory not there yet is empty.
func mustBeEmpty(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case err == nil && len(entries) > 0:
		return fmt.Errorf("%w: %s", ErrNotEmpty, out)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return nil
}

// hideKata adds to hidden what of kata k travels inside the checker only:
// its hidden tests, what it may import, what is revealed on request, and
// what bug hunts and catch need, unless it is an interview kit.
func (kit Kit) hideKata(hidden map[string][]byte, k catalog.Kata) error {
	tests, err := grade.HiddenFiles(k)
	if err != nil {
		return err
	}
	for _, f := range tests {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		hidden[k.Slug+"/"+filepath.Base(f)] = data
	}
	// What the kata may import travels with its tests: the kit's
	// kata.json is the candidate's to edit.
	imports, err := json.Marshal(slices.Clip(k.Imports))
	if err != nil {
		return err
	}
	hidden[k.Slug+"/"+bundle.ImportsFile] = imports
	// What is revealed on request travels inside the checker too.
	reveal, err := json.Marshal(k.Reveal)
	if err != nil {
		return err
	}
	hidden[k.Slug+"/"+catalog.RevealFile] = reveal
	if kit.Interview {
		return nil // no answer: the stub's API is there (exercise), no more
	}
	if err := solution(hidden, k); err != nil {
		return fmt.Errorf("kata %s: %w", k.Slug, err)
	}
	return nil
}

// hideModule adds to hidden the harness, go.mod and go.sum. The kit's
// checker grades with its own copies of them: the kit's files are there
// for reading, and editing them changes nothing.
func (kit Kit) hideModule(hidden map[string][]byte) error {
	harness, err := kit.harness()
	if err != nil {
		return err
	}
	for _, rel := range append(harness, "go.mod", "go.sum") {
		data, err := os.ReadFile(filepath.Join(kit.Root, rel))
		if err != nil {
			return err
		}
		hidden[filepath.ToSlash(rel)] = data
	}
	return nil
}

// solution adds to files what bug hunts need, laid out as in solutions/:
// the reference, WHY.md and the mutants. They travel inside the checker
// only, never as files of the kit.
func solution(files map[string][]byte, k catalog.Kata) error {
	refs, err := mutant.Reference(k.Solution)
	if err != nil {
		return err
	}
	for _, r := range refs {
		files[k.Slug+"/"+r.Name] = r.Data
	}
	why, err := os.ReadFile(filepath.Join(k.Solution, "WHY.md"))
	if err != nil {
		return err
	}
	files[k.Slug+"/WHY.md"] = why
	patches, err := mutant.Paths(k.Solution)
	if err != nil {
		return err
	}
	for _, p := range patches {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[k.Slug+"/"+bundle.MutantsDir+"/"+filepath.Base(p)] = data
	}
	return nil
}

// exercise writes a kata's task and metadata, and its stub from git; in
// an interview kit, whose checker carries no reference, the stub's API
// goes into hidden, for telling a candidate how theirs differs.
func (kit Kit) exercise(ctx context.Context, k catalog.Kata, hidden map[string][]byte) error {
	stub, err := pristine.Read(ctx, kit.Env, k)
	if err != nil {
		return fmt.Errorf("%w (commit the kata, or name the katas to pack)", err)
	}
	dir := filepath.Join(kit.Out, "exercises", k.Slug)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := copyFile(filepath.Join(k.Exercise, "kata.json"), filepath.Join(dir, "kata.json")); err != nil {
		return err
	}
	task, err := os.ReadFile(filepath.Join(k.Exercise, "README.md"))
	if err != nil {
		return err
	}
	if kit.Interview {
		task = KeepDecisionsBack(task, k)
		api, err := json.Marshal(grade.API(stub.Files))
		if err != nil {
			return err
		}
		hidden[k.Slug+"/"+grade.APIFile] = api
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), task, 0o644); err != nil {
		return err
	}
	for name, data := range stub.Files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// harness copies the non-test Go and assembly files of internal/ (the
// packages the hidden tests import) and returns their paths relative to
// the root.
func (kit Kit) harness() ([]string, error) {
	src := filepath.Join(kit.Root, "internal")
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".s")) || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(kit.Root, p)
		files = append(files, rel)
		return copyFile(p, filepath.Join(kit.Out, rel))
	})
	return files, err
}

// checker builds bin/checker with the hidden tests packed in, by laying a
// generated data.go over package bundle's.
func (kit Kit) checker(ctx context.Context, hidden map[string][]byte) error {
	src, err := bundle.Source(hidden)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "kata-pack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	data := filepath.Join(tmp, "data.go")
	if err := os.WriteFile(data, src, 0o600); err != nil {
		return err
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {
		filepath.Join(kit.Root, "checker", "internal", "bundle", "data.go"): data,
	}})
	if err != nil {
		return err
	}
	ov := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		return err
	}
	bin, err := filepath.Abs(filepath.Join(kit.Out, filepath.FromSlash(kit.Binary())))
	if err != nil {
		return err
	}
	// The checker needs no cgo (the race detector is for the tests it
	// builds, with the candidate's own C compiler), so it cross-builds
	// without a C toolchain and runs on any version of the system's C
	// library.
	goos, goarch, _ := strings.Cut(kit.Platform(), "/")
	env := grade.WithEnv(kit.Env, "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if err := run(ctx, kit.Root, env, "go", "build", "-trimpath", "-overlay", ov, "-o", bin, "./checker"); err != nil {
		return fmt.Errorf("build the kit's checker for %s: %w", kit.Platform(), err)
	}
	return nil
}

// commit makes the kit a git repository of one commit, so that reset
// finds the stubs there too. Without git the kit still grades.
func (kit Kit) commit(ctx context.Context) error {
	if _, err := exec.LookPath("git"); err != nil {
		return nil
	}
	kit.stage("committing the kit's files, so that reset finds the stubs")
	env := append(slices.Clip(kit.Env), "GIT_AUTHOR_NAME=checker pack", "GIT_AUTHOR_EMAIL=pack@localhost",
		"GIT_COMMITTER_NAME=checker pack", "GIT_COMMITTER_EMAIL=pack@localhost")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "Candidate kit"}} {
		if err := run(ctx, kit.Out, env, "git", args...); err != nil {
			return err
		}
	}
	return nil
}

func run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return nil
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

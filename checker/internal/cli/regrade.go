package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/escape"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/record"
	"gokata/checker/internal/report"
	"gokata/checker/internal/session"
)

// regrade grades work that came back: a kit's exercise folder, or a whole
// returned kit, with this checkout's hidden tests, and prints the
// fingerprints to compare with what the candidate's record or check
// --json says. Nothing is recorded in the state file: it is not this
// checkout's learner's grade.
var regradeVerb = verb{
	name: "regrade", args: "DIR", section: workshops, needs: needCatalog | needToolchain,
	summary: "grade a returned exercise folder (a kit's exercises/NN-slug) or a\nwhole returned kit with the real hidden tests, and print the\nfingerprints of the code and the tests to compare with the record",
	setup: func(fs *flag.FlagSet) func(*call) (int, error) {
		asJSON := fs.Bool("json", false, "print the grade as JSON, as check --json does")
		against := fs.String("against", "", "compare the fingerprints with those in `FILE`: an interview's\nrecord (its final grade), or the candidate's check --json")
		colorFlag(fs)
		timeoutFlag(fs)
		fs.Int("repeat", session.DefaultRepeat, "run every test `N` times at each --cpu value, as an\ninterview's final grade does")
		cpuFlag(fs)
		return func(c *call) (int, error) { return regrade(c, *asJSON, *against) }
	},
}

func regrade(c *call, asJSON bool, against string) (int, error) {
	if len(c.args) != 1 {
		return 0, &usageError{"regrade takes one folder: a kit's exercises/NN-slug, or the kit", "checker regrade ../returned/exercises/06-retry"}
	}
	var claimed map[string]fingerprint.Pair
	if against != "" {
		var err error
		if claimed, err = claimedFingerprints(absPath(c.env.Dir, against)); err != nil {
			return 0, &usageError{fmt.Sprintf("--against=%s: %v", against, err), ""}
		}
	}
	dir := absPath(c.env.Dir, c.args[0])
	folders, err := returned(c.cat, dir, c.args[0])
	if err != nil {
		return 0, err
	}
	code := ExitPass
	for i, f := range folders {
		r, fp, err := regradeOne(c, f.kata, f.dir)
		if err != nil {
			return 0, err
		}
		if !r.Passed() {
			code = ExitFail
		}
		if asJSON {
			meta := report.Meta{Time: c.env.clock().Now().Truncate(time.Second), Fingerprint: fp}
			if err := report.JSON(c.env.Stdout, r, meta); err != nil {
				return 0, err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(c.env.Stdout)
		}
		fmt.Fprintf(c.env.Stdout, "Regrading %s as %s\n\n", rel(c.env.Dir, f.dir), f.kata.Slug)
		report.Text(c.env.Stdout, r, c.style)
		fmt.Fprintf(c.env.Stdout, "\nFingerprints, to compare with the record or check --json:\n  code   %s\n  tests  %s\n", fp.Code, fp.Tests)
		if claimed != nil && !compare(c.env.Stdout, against, f.kata.Slug, fp, claimed) {
			code = ExitFail
		}
	}
	return code, nil
}

// claimedFingerprints reads the fingerprints a file claims, by kata: an
// interview's record (of its final grade, else its last), or a stream of
// check --json grades.
func claimedFingerprints(path string) (map[string]fingerprint.Pair, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if rec, err := record.Parse(data); err == nil {
		g := rec.Final
		if gs := rec.Grades(); g == nil && len(gs) > 0 {
			g = gs[len(gs)-1].Grade
		}
		if g == nil {
			return nil, errors.New("the record has no grade")
		}
		return map[string]fingerprint.Pair{rec.Kata: g.Fingerprint}, nil
	}
	out := map[string]fingerprint.Pair{}
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var g struct {
			Kata        string           `json:"kata"`
			Fingerprint fingerprint.Pair `json:"fingerprint"`
		}
		if err := dec.Decode(&g); err != nil {
			return nil, fmt.Errorf("neither an interview record nor check --json output: %v", err)
		}
		if g.Kata == "" || g.Fingerprint.Code == "" {
			return nil, errors.New("neither an interview record nor check --json output with fingerprints")
		}
		out[g.Kata] = g.Fingerprint
	}
	return out, nil
}

// compare says whether the regraded fingerprints are those claimed in
// file; false when they differ or the file says nothing of the kata.
func compare(w io.Writer, file, slug string, fp fingerprint.Pair, claimed map[string]fingerprint.Pair) bool {
	want, ok := claimed[slug]
	switch {
	case !ok:
		fmt.Fprintf(w, "✘ %s says nothing of %s.\n", file, slug)
		return false
	case want == fp:
		fmt.Fprintf(w, "✔ The same code and the same hidden tests as in %s.\n", file)
		return true
	}
	// What the file names is shown, never obeyed: anyone can write one.
	if want.Code != fp.Code {
		fmt.Fprintf(w, "✘ Not the code of %s: it names code %s.\n", file, escape.Line(want.Code))
	}
	if want.Tests != fp.Tests {
		fmt.Fprintf(w, "✘ Not the hidden tests of %s: it names tests %s (another version of the katas).\n", file, escape.Line(want.Tests))
	}
	return false
}

// folder is a returned exercise and the kata it is.
type folder struct {
	kata catalog.Kata
	dir  string
}

// returned finds the exercise folders of dir (shown as given): dir itself
// when it is named after a kata (06-retry), else each folder of
// dir/exercises that is.
func returned(cat *catalog.Catalog, dir, shown string) ([]folder, error) {
	try := "checker regrade ../returned/exercises/06-retry (or the returned kit's folder)"
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &usageError{fmt.Sprintf("regrade: %s does not exist", shown), try}
	case err != nil:
		return nil, &usageError{fmt.Sprintf("regrade: %v", err), try}
	case !fi.IsDir():
		return nil, &usageError{fmt.Sprintf("regrade: %s is not a folder", shown), try}
	}
	// The returned folders are read only as they are, never through a
	// link: one could lead into this checkout's own solutions.
	link := func(p, shown string) error {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			return &usageError{fmt.Sprintf("regrade: %s is a symbolic link (to %s): returned work is read from its own folders only", shown, target), "copy the returned folder itself, not a link to it"}
		}
		return nil
	}
	if k, ok := cat.Find(filepath.Base(dir)); ok && k.Slug == filepath.Base(dir) {
		if err := link(dir, shown); err != nil {
			return nil, err
		}
		return []folder{{k, dir}}, nil
	}
	var out []folder
	for _, k := range cat.Katas {
		d := filepath.Join(dir, "exercises", k.Slug)
		for _, p := range []string{filepath.Dir(d), d} {
			if err := link(p, filepath.Join(shown, strings.TrimPrefix(p, dir))); err != nil {
				return nil, err
			}
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, folder{k, d})
		}
	}
	if len(out) == 0 {
		return nil, &usageError{fmt.Sprintf("regrade: %s is neither a kata's exercise folder (named like 06-retry) nor a kit with exercises/", shown), try}
	}
	return out, nil
}

// regradeOne grades the files of dir as kata k, checking first that the
// grader's own files are as committed.
func regradeOne(c *call, k catalog.Kata, dir string) (*grade.Result, fingerprint.Pair, error) {
	var fp fingerprint.Pair
	if c.tc.Kit == nil {
		if err := asCommitted(c.ctx, c.cat.Root, k, c.env); err != nil {
			return nil, fp, err
		}
	}
	// Returned work is hostile input: its files are copied into a
	// directory of this run's before anything reads them (grade.Returned),
	// and the copies are what is fingerprinted and graded.
	private, err := c.env.scratch.dir()
	if err != nil {
		return nil, fp, err
	}
	t, err := grade.Returned(k, dir, private)
	if err != nil {
		return nil, fp, err
	}
	code, err := fingerprint.Code(private)
	if err != nil {
		return nil, fp, err
	}
	fp = fingerprint.Pair{Code: code, Tests: session.TestsFingerprint(k)}
	opt := c.opt
	opt.RequireRace = true // the interviewer's word on the work: no pass that a race could have made
	opt.Building = func() func() { return buildNotice(c.env, k.Slug, c.tc.Race).start() }
	r, err := grade.Grade(c.ctx, c.tc, c.cat.Root, t, opt)
	return r, fp, err
}

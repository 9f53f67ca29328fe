package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gokata/checker/internal/escape"
	"gokata/checker/internal/pack"
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
		var o regradeOptions
		fs.BoolVar(&o.asJSON, "json", false, "print the grade as JSON, as check --json does")
		fs.StringVar(&o.against, "against", "", "compare the fingerprints with those in `FILE`: an interview's\nrecord (its final grade), or the candidate's check --json; exit 4\nwhen they differ, or when the record was changed since it was\nwritten")
		fs.StringVar(&o.packed, "packed", "", "name the files of the returned kit that differ from what was\npacked, by the kit's manifest `FILE` (pack writes it beside the kit:\nKIT.manifest.json); the exercises' .go files are the candidate's work")
		o.witness = defineWitness(fs, "say whether the witness of a take-home saw the returned code\ngraded: its server's `URL`, or the server's directory of rooms")
		colorFlag(fs)
		timeoutFlag(fs)
		fs.Int("repeat", session.DefaultRepeat, "run every test `N` times at each --cpu value, as an\ninterview's final grade does")
		cpuFlag(fs)
		return func(c *call) (int, error) { return regrade(c, o) }
	},
}

// regradeOptions are regrade's flags (--timeout, --repeat and --cpu go to
// the call's grade.Options, --color to its style).
type regradeOptions struct {
	asJSON  bool
	against string // a record or a check --json whose fingerprints to compare
	packed  string // the kit's manifest, to name the files that changed
	witness witnessFlags
}

func regrade(c *call, o regradeOptions) (int, error) {
	if len(c.args) != 1 {
		return 0, &usageError{Msg: "regrade takes one folder: a kit's exercises/NN-slug, or the kit", Try: "checker regrade ../returned/exercises/06-retry"}
	}
	var claims *session.Claims
	if o.against != "" {
		var err error
		if claims, err = session.ReadClaims(absPath(c.env.Dir, o.against)); err != nil {
			return 0, &usageError{Msg: fmt.Sprintf("--against=%s: %v", o.against, err), Try: ""}
		}
	}
	folders, err := session.Returned(c.cat, absPath(c.env.Dir, c.args[0]), c.args[0])
	if err != nil {
		return 0, err
	}
	var changes []pack.Change
	if o.packed != "" {
		if changes, err = packedChanges(absPath(c.env.Dir, o.packed), absPath(c.env.Dir, c.args[0])); err != nil {
			return 0, &usageError{Msg: fmt.Sprintf("--packed=%s: %v", o.packed, err), Try: ""}
		}
	}
	g := grader(c.tc, c.cat.Root, c.opt, c.env, screen(c.env, report.Style{}))
	code, mismatch := ExitPass, false
	var rows []summaryRow // a whole kit's: one per kata, for the summary at the end
	var seen []regraded   // for the witness
	for i, f := range folders {
		private, err := c.env.scratch.Dir()
		if err != nil {
			return 0, err
		}
		r, fp, err := g.Regrade(c.ctx, f, private)
		if err != nil {
			return 0, err
		}
		if !r.Passed() {
			code = ExitFail
		}
		seen = append(seen, regraded{f.Kata.Slug, fp.Code})
		var score session.Score
		score.Required, score.RequiredTotal, score.Bonus, score.BonusTotal = r.Score()
		passed := map[string]bool{}
		for _, it := range r.Items {
			passed[it.ID] = it.Passed()
		}
		if o.asJSON {
			meta := report.Meta{Time: c.env.clock().Now().Truncate(time.Second), Fingerprint: fp}
			if err := report.JSON(c.env.Stdout, r, meta); err != nil {
				return 0, err
			}
			// The JSON is for programs; what FILE claims goes to stderr, and the exit code says it.
			if claims != nil && !compare(c.env.Stderr, o.against, f.Kata.Slug, score, claims.Compare(f.Kata.Slug, fp, score, passed)) {
				mismatch = true
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(c.env.Stdout)
		}
		fmt.Fprintf(c.env.Stdout, "Regrading %s as %s\n\n", rel(c.env.Dir, f.Dir), f.Kata.Slug)
		style := c.style
		style.Review = true
		report.Text(c.env.Stdout, r, style)
		fmt.Fprintf(c.env.Stdout, "\nFingerprints, to compare with the record or check --json:\n  code   %s\n  tests  %s\n", fp.Code, fp.Tests)
		row := summaryRow{kata: f.Kata.Slug, score: score, passed: r.Passed(), same: true}
		if claims != nil && !compare(c.env.Stdout, o.against, f.Kata.Slug, score, claims.Compare(f.Kata.Slug, fp, score, passed)) {
			mismatch, row.same = true, false
		}
		rows = append(rows, row)
	}
	if len(rows) > 1 {
		writeSummary(c.env.Stdout, rows, o.against)
	}
	w := c.env.Stdout // the JSON is for programs: these go to stderr
	if o.asJSON {
		w = c.env.Stderr
	}
	if *o.witness.url != "" {
		if err := witnessedGrades(c, w, o.witness, absPath(c.env.Dir, c.args[0]), seen); err != nil {
			return 0, err
		}
	}
	if o.packed != "" {
		writeChanges(w, changes, o.packed)
	}
	if claims != nil && claims.Chain != nil {
		w := c.env.Stdout
		if o.asJSON {
			w = c.env.Stderr
		}
		if !chainHolds(w, o.against, *claims.Chain) {
			mismatch = true
		}
	}
	if mismatch {
		return ExitMismatch, nil // what FILE claims weighs more than a grade that fell short
	}
	return code, nil
}

// packedChanges are the files of the returned kit at dir (the kit, or one
// of its exercises/NN-slug folders) that differ from the manifest at path.
func packedChanges(path, dir string) ([]pack.Change, error) {
	m, err := pack.ReadManifest(path)
	if err != nil {
		return nil, err
	}
	root, prefix := dir, ""
	if fi, err := os.Stat(filepath.Join(dir, "exercises")); err != nil || !fi.IsDir() {
		if filepath.Base(filepath.Dir(dir)) != "exercises" {
			return nil, errors.New("it names the files of a whole kit: give the returned kit, or one of its exercises/NN-slug folders")
		}
		root, prefix = filepath.Dir(filepath.Dir(dir)), "exercises/"+filepath.Base(dir)+"/"
	}
	return m.Differences(root, prefix)
}

// writeChanges names the kit files that differ from what was packed
// (manifest, --packed).
func writeChanges(w io.Writer, changes []pack.Change, manifest string) {
	if len(changes) == 0 {
		fmt.Fprintf(w, "\n✔ Every file of the kit is as packed (%s), the exercises' .go files aside: they are the candidate's work.\n", manifest)
		return
	}
	files := fmt.Sprintf("%d files of the kit differ", len(changes))
	if len(changes) == 1 {
		files = "1 file of the kit differs"
	}
	fmt.Fprintf(w, "\n⚠ %s from what was packed (%s); the exercises' .go files, the candidate's work, are not listed:\n", files, manifest)
	for _, ch := range changes {
		fmt.Fprintf(w, "  %-8s %s\n", ch.How, escape.Line(ch.Path))
	}
}

// summaryRow is one kata of a whole kit's regrade.
type summaryRow struct {
	kata   string
	score  session.Score
	passed bool
	same   bool // what --against claims for it holds (true without --against)
}

// writeSummary ends a whole kit's regrade with a line per kata: its
// score, and whether it matches what file (--against) claims.
func writeSummary(w io.Writer, rows []summaryRow, file string) {
	fmt.Fprintf(w, "\nSummary of the kit (%d katas):\n", len(rows))
	for _, r := range rows {
		mark := map[bool]string{true: "✔", false: "✘"}[r.passed]
		against := ""
		switch {
		case file == "":
		case r.same:
			against = "  as " + file + " claims"
		default:
			against = "  ✘ not as " + file + " claims (see above)"
		}
		fmt.Fprintf(w, "  %s %-20s %s%s\n", mark, r.kata, r.score, against)
	}
}

// chainHolds says what the hash chain of the record in file says; false
// when the record was changed after the interview wrote it: then its
// fingerprints prove nothing.
func chainHolds(w io.Writer, file string, c record.Chain) bool {
	switch c.State {
	case record.ChainChanged:
		fmt.Fprintf(w, "✘ %s is not as the interview wrote it (%s): its fingerprints prove nothing.\n", file, c)
		return false
	case record.ChainIntact:
		fmt.Fprintf(w, "Record %s: %s; only a witness can vouch for it, and none saw the interview.\n", file, c)
	default:
		fmt.Fprintf(w, "Note: %s.\n", c)
	}
	return true
}

// compare says whether the regraded fingerprints, and the score and each
// item's verdict graded here, are those claimed in file; false when they
// differ or the file says nothing of the kata.
func compare(w io.Writer, file, slug string, score session.Score, m session.Match) bool {
	switch {
	case !m.Known:
		fmt.Fprintf(w, "✘ %s says nothing of %s.\n", file, slug)
		return false
	case m.SameCode && m.SameTests:
		fmt.Fprintf(w, "✔ The same code and the same hidden tests as in %s.\n", file)
		if !m.SameScore {
			fmt.Fprintf(w, "✘ But %s claims %s; the same code scores %s here: the file was edited, or a requirement passes only on some runs.\n", file, m.Score, score)
		}
		if len(m.Differ) > 0 {
			fmt.Fprintf(w, "✘ %s and this grade differ on %s: the file was edited, or a requirement passes only on some runs.\n", file, strings.Join(m.Differ, ", "))
		}
		return m.SameScore && len(m.Differ) == 0
	}
	if !m.SameCode {
		fmt.Fprintf(w, "✘ Not the code of %s: it names code %s.\n", file, m.Code)
	}
	if !m.SameTests {
		fmt.Fprintf(w, "✘ Not the hidden tests of %s: it names tests %s (another version of the katas).\n", file, m.Tests)
	}
	return false
}

package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/escape"
	"gokata/checker/internal/fingerprint"
	"gokata/checker/internal/grade"
	"gokata/checker/internal/record"
	"gokata/internal/failure"
)

// Folder is a returned exercise folder and the kata it is.
type Folder struct {
	Kata catalog.Kata
	Dir  string
}

// Returned finds the exercise folders of dir (shown as given): dir itself
// when it is named after a kata (06-retry), else each folder of
// dir/exercises that is. The folders are read only as they are, never
// through a link: one could lead into this checkout's own solutions.
func Returned(cat *catalog.Catalog, dir, shown string) ([]Folder, error) {
	try := "checker regrade ../returned/exercises/06-retry (or the returned kit's folder)"
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &UsageError{Msg: fmt.Sprintf("regrade: %s does not exist", shown), Try: try}
	case err != nil:
		return nil, &UsageError{Msg: fmt.Sprintf("regrade: %v", err), Try: try}
	case !fi.IsDir():
		return nil, &UsageError{Msg: fmt.Sprintf("regrade: %s is not a folder", shown), Try: try}
	}
	if k, ok := cat.Find(filepath.Base(dir)); ok && k.Slug == filepath.Base(dir) {
		if err := notLink(dir, shown); err != nil {
			return nil, err
		}
		return []Folder{{k, dir}}, nil
	}
	var out []Folder
	for _, k := range cat.Katas {
		d := filepath.Join(dir, "exercises", k.Slug)
		for _, p := range []string{filepath.Dir(d), d} {
			if err := notLink(p, filepath.Join(shown, strings.TrimPrefix(p, dir))); err != nil {
				return nil, err
			}
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, Folder{k, d})
		}
	}
	if len(out) == 0 {
		return nil, &UsageError{Msg: fmt.Sprintf("regrade: %s is neither a kata's exercise folder (named like 06-retry) nor a kit with exercises/", shown), Try: try}
	}
	return out, nil
}

// notLink refuses p (shown as shown) when it is a symbolic link.
func notLink(p, shown string) error {
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(p)
		return &UsageError{Msg: fmt.Sprintf("regrade: %s is a symbolic link (to %s): returned work is read from its own folders only", shown, target), Try: "copy the returned folder itself, not a link to it"}
	}
	return nil
}

// Regrade grades returned folder f with the hidden tests, after Check,
// and returns the fingerprints of the code and the tests. Returned work
// is hostile input: its files are copied into private, an empty
// directory of this run's, before anything reads them (grade.Returned),
// and the copies are what is fingerprinted and graded. The grade needs
// the race detector, and nothing is recorded in the state file: it is
// not this checkout's learner's grade.
func (g *Grader) Regrade(ctx context.Context, f Folder, private string) (*grade.Result, fingerprint.Pair, error) {
	var fp fingerprint.Pair
	k := f.Kata
	if g.Check != nil {
		if err := g.Check(ctx, k); err != nil {
			return nil, fp, err
		}
	}
	t, err := grade.Returned(k, f.Dir, private)
	if err != nil {
		return nil, fp, err
	}
	code, err := fingerprint.Code(private)
	if err != nil {
		return nil, fp, err
	}
	fp = fingerprint.Pair{Code: code, Tests: TestsFingerprint(k)}
	opt := g.Options
	opt.RequireRace = true // the interviewer's word on the work: no pass that a race could have made
	r, err := grade.GradeShowing(ctx, g.Toolchain, g.Root, t, opt, g.building(k))
	return r, fp, err
}

// Claims are the fingerprints a file claims, by kata, and what the hash
// chain of an interview's record says of it.
type Claims struct {
	Fingerprints map[string]fingerprint.Pair
	Scores       map[string]Score // the score the file claims for each kata
	// Passed is, for each kata, whether the file claims each item passed
	// (by its id); none for a file that does not list its items.
	Passed map[string]map[string]bool
	Chain  *record.Chain // nil for check --json output, which has none
}

// Score is a grade's score: requirements and bonus passed, of how many.
type Score struct {
	Required      int `json:"required"`
	RequiredTotal int `json:"requiredTotal"`
	Bonus         int `json:"bonus"`
	BonusTotal    int `json:"bonusTotal"`
}

// String reads "5/6 required, bonus 1/2".
func (s Score) String() string {
	return fmt.Sprintf("%d/%d required, bonus %d/%d", s.Required, s.RequiredTotal, s.Bonus, s.BonusTotal)
}

// ReadClaims reads the fingerprints a file claims: an interview's record
// (of its final grade, else its last), or a stream of check --json
// grades. A file too large for a record is not read.
func ReadClaims(path string) (*Claims, error) {
	data, err := record.Read(path)
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
		c := rec.Chain()
		score := Score{Required: g.Required, RequiredTotal: g.RequiredTotal, Bonus: g.Bonus, BonusTotal: g.BonusTotal}
		passed := map[string]bool{}
		for _, v := range g.Items {
			passed[v.ID] = v.Passed
		}
		return &Claims{Fingerprints: map[string]fingerprint.Pair{rec.Kata: g.Fingerprint},
			Scores: map[string]Score{rec.Kata: score}, Passed: map[string]map[string]bool{rec.Kata: passed}, Chain: &c}, nil
	}
	out := &Claims{Fingerprints: map[string]fingerprint.Pair{}, Scores: map[string]Score{}, Passed: map[string]map[string]bool{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var g struct {
			Kata        string           `json:"kata"`
			Fingerprint fingerprint.Pair `json:"fingerprint"`
			Score       Score            `json:"score"`
			Items       []struct {
				ID   string `json:"id"`
				Kind string `json:"kind"`
			} `json:"items"`
		}
		if err := dec.Decode(&g); err != nil {
			return nil, fmt.Errorf("neither an interview record nor check --json output: %s", escape.Line(err.Error()))
		}
		if g.Kata == "" || g.Fingerprint.Code == "" {
			return nil, errors.New("neither an interview record nor check --json output with fingerprints")
		}
		out.Fingerprints[g.Kata] = g.Fingerprint
		out.Scores[g.Kata] = g.Score
		passed := map[string]bool{}
		for _, it := range g.Items {
			passed[it.ID] = it.Kind == string(failure.Pass)
		}
		out.Passed[g.Kata] = passed
	}
	return out, nil
}

// Match is how regraded fingerprints compare with those a file claims.
type Match struct {
	Known               bool   // the file claims fingerprints for the kata
	SameCode, SameTests bool   // it claims those found
	Code, Tests         string // what it claims, made safe to print
	SameScore           bool   // it claims the score found
	Score               Score  // the score it claims
	// Differ are the items it claims passed that fail here, or the other
	// way round: "R3 (✔ there, ✘ here)", made safe to print.
	Differ []string
}

// Compare compares fp and score, found for kata slug, and whether each
// item passed here, with what the file claims. What the file names is
// shown, never obeyed, for anyone can write one: Code and Tests are made
// safe to print (escape.Line).
func (c *Claims) Compare(slug string, fp fingerprint.Pair, score Score, passed map[string]bool) Match {
	want, ok := c.Fingerprints[slug]
	claimed := c.Scores[slug]
	m := Match{Known: ok, SameCode: want.Code == fp.Code, SameTests: want.Tests == fp.Tests,
		Code: escape.Line(want.Code), Tests: escape.Line(want.Tests),
		SameScore: claimed == score, Score: claimed}
	mark := map[bool]string{true: "✔", false: "✘"}
	ids := slices.Sorted(maps.Keys(c.Passed[slug]))
	for _, id := range ids {
		there := c.Passed[slug][id]
		if here, ok := passed[id]; ok && here != there {
			m.Differ = append(m.Differ, fmt.Sprintf("%s (%s there, %s here)", escape.Line(id), mark[there], mark[here]))
		}
	}
	return m
}

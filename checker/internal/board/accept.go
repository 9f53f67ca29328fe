package board

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"gokata/checker/internal/room"
)

// Caps on what a grade may say. A grade the checker prints is well within
// them; the board refuses a name or a field it cannot check, and cuts the
// free texts it keeps.
const (
	maxText  = 300 // bytes of a gate's message or of noRace kept
	maxGates = 50  // gates kept
	maxRuns  = 100000
)

var (
	kindRE = regexp.MustCompile(`^[a-z][a-z-]{0,19}$`) // an item's verdict: "assertion", "mutex-hang"
	ruleRE = regexp.MustCompile(`^[a-z][a-z-]{0,39}$`) // a gate's rule: "real-clock"
	hexRE  = regexp.MustCompile(`^([0-9a-f]{64})?$`)   // a fingerprint, or none
)

// accept checks a pushed grade against the room's catalog and returns
// what the board keeps of it, stamped with the time it was received, and
// the line to store. Only what the catalog knows is kept: the kata and
// every item must be the catalog's, the texts shown are the catalog's,
// and fields the board does not read are dropped.
func (s *Server) accept(data []byte) (room.Grade, []byte, error) {
	gr, err := room.ParseGrade(data)
	if err != nil {
		return gr, nil, fmt.Errorf("not a grade from checker check --json: %v", err)
	}
	if gr, err = s.checkGrade(gr); err != nil {
		return gr, nil, err
	}
	gr.Received = s.cfg.Now().Truncate(time.Second)
	line, err := json.Marshal(gr) // compact: one line
	if err != nil {
		return gr, nil, err
	}
	return gr, append(line, '\n'), nil
}

// checkGrade checks gr as accept does, and as replay does a stored line:
// it returns gr with its name normalized and its texts the catalog's.
func (s *Server) checkGrade(gr room.Grade) (room.Grade, error) {
	k, ok := s.kata(gr.Kata)
	if !ok {
		return gr, fmt.Errorf("this room has no kata %.40q", gr.Kata)
	}
	name, err := checkName(gr.Participant)
	if err != nil {
		return gr, err
	}
	gr.Participant = name
	gr.Title = k.Title
	if err := s.checkFields(gr, k); err != nil {
		return gr, err
	}
	gr.NoRace = cut(gr.NoRace, maxText)
	if err := checkGates(&gr); err != nil {
		return gr, err
	}
	if err := checkItems(&gr, k); err != nil {
		return gr, err
	}
	return gr, nil
}

// checkName is the participant's name normalized, refused when empty, too
// long, or mixing scripts.
func checkName(participant string) (string, error) {
	name := room.Name(participant)
	switch n := utf8.RuneCountInString(name); {
	case name == "":
		return "", errors.New("the grade names no participant: push with --name (or KATA_NAME)")
	case n > room.MaxName:
		return "", fmt.Errorf("the participant's name is over %d characters: push with a shorter --name (or KATA_NAME)", room.MaxName)
	}
	if mix := room.MixedScript(name); mix != "" {
		return "", fmt.Errorf("the participant's name mixes %s letters, which can pass for another name: type it in one script", mix)
	}
	return name, nil
}

// checkFields checks the fields of gr with a fixed form: fingerprints,
// time, runs and build kind; and, on a board that takes only verified
// grades, that the board's hidden tests of kata k graded it.
func (s *Server) checkFields(gr room.Grade, k room.Kata) error {
	switch {
	case !hexRE.MatchString(gr.Fingerprint.Code) || !hexRE.MatchString(gr.Fingerprint.Tests):
		return errors.New("its fingerprints are not SHA-256 hex")
	case gr.Time != "" && !validTime(gr.Time):
		return fmt.Errorf("its time %.40q is not RFC 3339", gr.Time)
	case gr.Runs < 0 || gr.Runs > maxRuns:
		return fmt.Errorf("runs %d is out of range", gr.Runs)
	case gr.Build != nil && gr.Build.Kind != "compile" && gr.Build.Kind != "api":
		return fmt.Errorf("build kind %.20q is neither compile nor api", gr.Build.Kind)
	case s.cfg.VerifiedOnly && k.Tests != "" && gr.Fingerprint.Tests != k.Tests:
		return fmt.Errorf("graded by other hidden tests than the board's %s: update the checkout (git pull) and check again", k.Slug)
	}
	return nil
}

// checkGates keeps the first maxGates gates of gr, each with a rule the
// checker writes and its message cut to maxText.
func checkGates(gr *room.Grade) error {
	if len(gr.Gates) > maxGates {
		gr.Gates = gr.Gates[:maxGates]
	}
	for i, g := range gr.Gates {
		if !ruleRE.MatchString(g.Rule) {
			return fmt.Errorf("gate rule %.40q is not one the checker writes", g.Rule)
		}
		gr.Gates[i].Message = cut(g.Message, maxText)
	}
	return nil
}

// checkItems checks that gr lists every item of k once, with the
// catalog's bonus flag, and that its score and its "passed" are what its
// items say; the items' texts become the catalog's.
func checkItems(gr *room.Grade, k room.Kata) error {
	want := map[string]bool{} // id → bonus
	text := map[string]string{}
	for _, it := range k.Requirements {
		want[it.ID], text[it.ID] = false, it.Text
	}
	for _, it := range k.Bonus {
		want[it.ID], text[it.ID] = true, it.Text
	}
	seen := map[string]bool{}
	var req, bonus int
	for i, it := range gr.Items {
		b, ok := want[it.ID]
		switch {
		case !ok:
			return fmt.Errorf("%s has no requirement %.20q", k.Slug, it.ID)
		case seen[it.ID]:
			return fmt.Errorf("it lists %s twice", it.ID)
		case b != it.Bonus:
			return fmt.Errorf("%s is %s bonus follow-up", it.ID, map[bool]string{true: "a", false: "not a"}[b])
		case !kindRE.MatchString(it.Kind):
			return fmt.Errorf("%s's verdict %.20q is not one the checker writes", it.ID, it.Kind)
		}
		seen[it.ID] = true
		gr.Items[i].Text = text[it.ID]
		if it.Kind == "pass" {
			if b {
				bonus++
			} else {
				req++
			}
		}
	}
	if len(seen) != len(want) {
		return fmt.Errorf("it lists %d of the %d requirements and bonus follow-ups of %s", len(seen), len(want), k.Slug)
	}
	sc := gr.Score
	if sc.Required != req || sc.RequiredTotal != len(k.Requirements) || sc.Bonus != bonus || sc.BonusTotal != len(k.Bonus) {
		return fmt.Errorf("its score %d/%d (bonus %d/%d) is not what its items say, %d/%d (bonus %d/%d)",
			sc.Required, sc.RequiredTotal, sc.Bonus, sc.BonusTotal, req, len(k.Requirements), bonus, len(k.Bonus))
	}
	if gr.Passed && (req != len(k.Requirements) || gr.Build != nil || len(gr.Gates) > 0) {
		return errors.New("it says passed, but not every requirement passed and every gate held")
	}
	return nil
}

func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil && len(s) <= 40
}

// cut cuts s to at most n bytes, at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// kata is the catalog's kata slug.
func (s *Server) kata(slug string) (room.Kata, bool) {
	for _, k := range s.cfg.Catalog {
		if k.Slug == slug {
			return k, true
		}
	}
	return room.Kata{}, false
}

// onAgenda reports whether slug is one of the board's columns.
func (s *Server) onAgenda(slug string) bool {
	for _, k := range s.cfg.Katas {
		if k.Slug == slug {
			return true
		}
	}
	return false
}

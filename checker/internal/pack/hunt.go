package pack

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/gofiles"
	"gokata/checker/internal/hunt"
	"gokata/checker/internal/mutant"
)

// plantedHunt is a bug hunt chosen for a kata of the kit.
type plantedHunt struct {
	kata catalog.Kata
	bug  hunt.Bug
}

// AnswersFile is where Build writes what it planted: beside the kit's
// directory, never inside it ("../kit" → "../kit.answers.md").
func (kit Kit) AnswersFile() string {
	out, err := filepath.Abs(kit.Out)
	if err != nil {
		out = kit.Out
	}
	return filepath.Clean(out) + ".answers.md"
}

// pickHunts chooses the mistake each kata of the kit starts with: none
// without Bughunt. A request that cannot be met is a UsageError.
func (kit Kit) pickHunts() ([]plantedHunt, error) {
	const try = "checker pack --out DIR --interview --bughunt 06"
	switch {
	case !kit.Bughunt && (kit.Pick != "" || kit.Level != ""):
		return nil, &UsageError{Msg: "--pick and --level choose the mistake of --bughunt: add --bughunt", Try: try}
	case !kit.Bughunt:
		return nil, nil
	case !kit.Interview:
		return nil, &UsageError{Msg: "--bughunt plants its mistake in an interview kit, the kind that carries no answer: add --interview", Try: try}
	case kit.Pick != "" && kit.Level != "":
		return nil, &UsageError{Msg: "a hunt is chosen by its name (--pick) or by its level (--level), not both", Try: try}
	case kit.Pick != "" && len(kit.Katas) != 1:
		return nil, &UsageError{Msg: fmt.Sprintf("--pick names the mistake of one kata, and this kit has %d: name the one kata to pack", len(kit.Katas)), Try: try + " --pick " + kit.Pick}
	}
	var out []plantedHunt
	for _, k := range kit.Katas {
		bugs, err := hunt.Bugs(k.Solution)
		if err != nil {
			return nil, fmt.Errorf("kata %s: %w", k.Slug, err)
		}
		var b hunt.Bug
		if kit.Pick != "" {
			b, err = hunt.Find(bugs, kit.Pick)
		} else {
			b, err = hunt.Pick(bugs, kit.Level, "", rand.IntN)
		}
		if err != nil {
			return nil, &UsageError{Msg: fmt.Sprintf("--bughunt in %s: %v", k.Slug, err), Try: try}
		}
		out = append(out, plantedHunt{k, b})
	}
	return out, nil
}

// plant writes each hunt's planted code over its kata's stub in the kit,
// and adds to hidden what the kit's checker needs to grade it
// (hunt.Packed): nothing that names or shows the mistake.
func (kit Kit) plant(hunts []plantedHunt, hidden map[string][]byte) error {
	for _, h := range hunts {
		k := h.kata
		files, err := hunt.Plant(k.Solution, h.bug)
		if err != nil {
			return fmt.Errorf("kata %s: %w", k.Slug, err)
		}
		dir := filepath.Join(kit.Out, "exercises", k.Slug)
		stub, err := gofiles.Regular(dir, false)
		if err != nil {
			return err
		}
		for _, f := range stub { // a stub file the reference does not have would clash
			if _, ok := files[filepath.Base(f)]; !ok {
				if err := os.Remove(f); err != nil {
					return err
				}
			}
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				return err
			}
		}
		var bonus []string
		for _, it := range k.Bonus {
			bonus = append(bonus, it.ID)
		}
		packed, err := json.Marshal(hunt.Pack(h.bug, bonus))
		if err != nil {
			return err
		}
		hidden[k.Slug+"/"+hunt.PackedFile] = packed
	}
	return nil
}

// writeAnswers writes AnswersFile: for each hunt, the mistake, the
// requirements it fails, the bug report, the fix as a diff from the
// planted code to the reference, and WHY.md's paragraph about it. It
// never overwrites a file.
func (kit Kit) writeAnswers(hunts []plantedHunt) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# What was planted in the kit %s\n\n", filepath.Base(kit.Out))
	b.WriteString("Keep this file away from the candidate: the kit holds none of it, not even\ninside its checker. A hunt counts as fixed once every requirement passes,\nand every bonus item the mistake fails.\n")
	for _, h := range hunts {
		k, bug := h.kata, h.bug
		planted, err := hunt.Plant(k.Solution, bug)
		if err != nil {
			return err
		}
		ref, err := hunt.Reference(k.Solution)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n## %s · %s\n\n", k.Slug, k.Title)
		fmt.Fprintf(&b, "- **Planted mistake:** `%s` (level %s): %s\n", bug.Name, bug.Level, bug.Mistake)
		fmt.Fprintf(&b, "- **Fails:** %s\n", strings.Join(bug.Fails, " "))
		fmt.Fprintf(&b, "- **Bug report the candidate gets:** %s\n", bug.Symptom)
		fmt.Fprintf(&b, "\nThe fix, from the planted code to the reference:\n\n```diff\n%s```\n", mutant.Diff(planted, ref))
		why, err := hunt.Why(k.Solution, bug)
		if err != nil {
			return err
		}
		if why != "" {
			fmt.Fprintf(&b, "\nWhy it matters, from WHY.md:\n\n%s\n", why)
		}
	}
	f, err := os.OpenFile(kit.AnswersFile(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%w: %s", ErrAnswersExist, kit.AnswersFile())
	}
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package hunt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// A packed hunt is one planted when an interview kit was packed (checker
// pack --interview --bughunt): the planted code is the kata's starting
// file in the kit, and the kit's checker knows only what grading the
// hunt needs, in PackedFile in the kata's solution directory: the level,
// the bug report and the bonus items the mistake breaks. The mistake's
// name, its text and the reference stay with whoever packed the kit.

// PackedFile is the name, in a kata's solution directory, of its packed
// hunt (Packed, as JSON).
const PackedFile = "hunt.json"

// PackedName stands for a packed hunt's mutant wherever a name is kept
// (the state file): the kit does not know the real one.
const PackedName = "packed"

// Packed is a hunt planted when the kit was packed, as the kit's checker
// knows it.
type Packed struct {
	Level   Level  `json:"level"`
	Symptom string `json:"symptom"`
	// Bonus are the bonus items the mistake breaks, which a fix must
	// pass too (every requirement must pass anyway).
	Bonus []string `json:"bonus"`
}

// Pack is what a kit's checker keeps of bug b: not its name, its
// mistake or its code. bonus lists the kata's bonus items.
func Pack(b Bug, bonus []string) Packed {
	p := Packed{Level: b.Level, Symptom: b.Symptom, Bonus: []string{}}
	for _, f := range b.Fails {
		if slices.Contains(bonus, f) {
			p.Bonus = append(p.Bonus, f)
		}
	}
	return p
}

// ReadPacked reads the packed hunt of the kata whose solution directory is
// dir: nil when it has none.
func ReadPacked(dir string) (*Packed, error) {
	data, err := os.ReadFile(filepath.Join(dir, PackedFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p Packed
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", PackedFile, err)
	}
	if p.Symptom == "" {
		return nil, fmt.Errorf("%s: no bug report", PackedFile)
	}
	return &p, nil
}

// Bug is the packed hunt as a hunt sees it: named PackedName, with no
// mistake text, no WHY.md paragraph and no patch.
func (p Packed) Bug() Bug {
	return Bug{Name: PackedName, Symptom: p.Symptom, Level: p.Level, Fails: slices.Clone(p.Bonus)}
}

package pack

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Manifest is what a kit held when it was packed: every file's SHA-256,
// by its slash path in the kit. Build writes it beside the kit, never
// inside it ("../kit" → "../kit.manifest.json"), for regrade --packed to
// name the files of a returned kit that differ.
type Manifest struct {
	Schema int               `json:"schema"`
	Packed time.Time         `json:"packed"`
	Files  map[string]string `json:"files"`
}

// MaxManifest is the largest manifest ReadManifest reads.
const MaxManifest = 16 << 20

// ManifestFile is where Build writes the kit's Manifest.
func (kit Kit) ManifestFile() string {
	return strings.TrimSuffix(kit.AnswersFile(), ".answers.md") + ".manifest.json"
}

// writeManifest writes the manifest of the kit as it is now.
func (kit Kit) writeManifest(now time.Time) error {
	files, err := sums(kit.Out)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(Manifest{Schema: 1, Packed: now, Files: files}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(kit.ManifestFile(), append(data, '\n'), 0o644)
}

// skipped reports whether the kit file at slash path p is left out of a
// manifest's comparison: git's and the checker's own directories, which
// change as the kit is used, and the exercises' .go files, which are the
// candidate's work.
func skipped(p string) bool {
	first, rest, _ := strings.Cut(p, "/")
	switch first {
	case ".git", ".kata":
		return true
	case "exercises":
		return strings.Count(rest, "/") >= 1 && path.Ext(p) == ".go"
	}
	return false
}

// sums is the SHA-256 of every regular file under dir that a manifest
// compares, by slash path; a link is refused.
func sums(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == ".git" || rel == ".kata" {
				return filepath.SkipDir
			}
			return nil
		}
		if skipped(rel) {
			return nil
		}
		if !d.Type().IsRegular() {
			out[rel] = "not a regular file"
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		out[rel] = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	return out, err
}

// ReadManifest reads a kit's manifest from path.
func ReadManifest(path string) (*Manifest, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, errors.New("not a regular file")
	case fi.Size() > MaxManifest:
		return nil, fmt.Errorf("%d MiB, more than a kit's manifest can be", fi.Size()>>20)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil || m.Schema != 1 || m.Files == nil {
		return nil, errors.New("not a kit's manifest (pack writes it beside the kit, as KIT.manifest.json)")
	}
	return &m, nil
}

// Change is a kit file that differs from its manifest: "changed",
// "added" or "missing".
type Change struct{ Path, How string }

// Differences are the files of the returned kit at root, under prefix
// (a slash path such as "exercises/06-retry/", or "" for all), that
// differ from m, by path; the exercises' .go files aside.
func (m *Manifest) Differences(root, prefix string) ([]Change, error) {
	now, err := sums(filepath.Join(root, filepath.FromSlash(prefix)))
	if err != nil {
		return nil, err
	}
	var out []Change
	for p, sum := range now {
		p = prefix + p
		switch was, ok := m.Files[p]; {
		case skipped(p):
		case !ok:
			out = append(out, Change{p, "added"})
		case was != sum:
			out = append(out, Change{p, "changed"})
		}
	}
	for p := range m.Files {
		if _, ok := now[strings.TrimPrefix(p, prefix)]; strings.HasPrefix(p, prefix) && !ok {
			out = append(out, Change{p, "missing"})
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

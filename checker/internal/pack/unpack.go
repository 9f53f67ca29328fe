package pack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/catalog"
	"gokata/checker/internal/grade"
)

// The other end of a kit: its checker unpacks the files packed into it
// (package bundle), so that it grades like the repository's. Scratch holds
// one command's temporary directories, the hidden tests unpacked there
// among them; a kata's solution directory then points into it, and the go
// command builds with the grader's own copies of the harness, go.mod and
// go.sum. In the repository's checker nothing is packed and nothing
// changes.

// Packed reports whether this checker carries hidden tests: it is a kit's.
func Packed() bool { return bundle.Packed() }

// Scratch holds the temporary directories of one command, removed by
// Clean, and in a kit the grader's own files unpacked there and how the
// kit was packed. The zero Scratch is ready to use.
type Scratch struct {
	dirs     []string
	kit      *grade.Kit
	settings bundle.Settings
}

// Dir makes a new temporary directory, removed by Clean.
func (s *Scratch) Dir() (string, error) {
	d, err := os.MkdirTemp("", "kata-hidden-")
	if err == nil {
		s.dirs = append(s.dirs, d)
	}
	return d, err
}

// Clean removes the directories Dir made.
func (s *Scratch) Clean() {
	for _, d := range s.dirs {
		os.RemoveAll(d)
	}
}

// Interview reports whether this is a kit packed with --interview, whose
// READMEs keep the decisions back. A nil Scratch is not.
func (s *Scratch) Interview() bool { return s != nil && s.settings.Interview }

// Detect finds the go command (grade.Detect, from the environment vars);
// in a kit, the build then uses the grader's own copies of the harness,
// go.mod and go.sum.
func (s *Scratch) Detect(ctx context.Context, vars []string) (*grade.Toolchain, error) {
	tc, err := grade.Detect(ctx, vars)
	if err == nil && s != nil {
		tc.Kit = s.kit
	}
	return tc, err
}

// Unpack makes a kit's checker grade like the repository's: the hidden
// tests packed into the binary are written to a directory of s, which then
// stands in for each kata's solutions/ directory in cat; each kata's
// decisions, hints and allowed imports come from there too, not from the
// kit's files. In the repository nothing is packed and nothing changes.
func (s *Scratch) Unpack(cat *catalog.Catalog) error {
	files, err := bundle.Files()
	if err != nil || len(files) == 0 {
		return err
	}
	if s == nil {
		return fmt.Errorf("unpack the hidden tests: no scratch space")
	}
	dir, err := s.Dir()
	if err != nil {
		return err
	}
	if err := write(dir, files); err != nil {
		return err
	}
	if data, ok := files[bundle.SettingsFile]; ok {
		if err := json.Unmarshal(data, &s.settings); err != nil {
			return fmt.Errorf("unpack the hidden tests: %s: %w", bundle.SettingsFile, err)
		}
	}
	if err := repoint(cat, dir, files); err != nil {
		return err
	}
	if files["go.mod"] == nil {
		return nil // a kit packed before the harness travelled along
	}
	s.kit, err = overlay(cat.Root, dir, files)
	return err
}

// write writes files, keyed by slash-separated names, under dir.
func write(dir string, files map[string][]byte) error {
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// repoint makes each kata of cat that has hidden tests in dir take its
// solution directory, decisions, hints and allowed imports from there.
func repoint(cat *catalog.Catalog, dir string, files map[string][]byte) error {
	for i, k := range cat.Katas {
		if _, err := os.Stat(filepath.Join(dir, k.Slug)); err == nil {
			cat.Katas[i].Solution = filepath.Join(dir, k.Slug)
		}
		// The decisions and hints come from the kit's checker, as the
		// tests do: the kit's own files do not hold them.
		if err := catalog.ReadReveal(&cat.Katas[i]); err != nil {
			return fmt.Errorf("unpack the hidden tests: %s: %w", k.Slug, err)
		}
		// The imports the kata allows come from the kit's checker, not
		// from the kata.json the candidate can edit.
		if data, ok := files[k.Slug+"/"+bundle.ImportsFile]; ok {
			cat.Katas[i].Imports = nil
			if err := json.Unmarshal(data, &cat.Katas[i].Imports); err != nil {
				return fmt.Errorf("unpack the hidden tests: %s: %w", k.Slug, err)
			}
		}
	}
	return nil
}

// overlay lays the grader's copies of the harness, unpacked in dir, over
// the kit's internal/ under root: each of its files is replaced by the
// copy, and every other file in those directories (one the candidate
// added) is left out.
func overlay(root, dir string, files map[string][]byte) (*grade.Kit, error) {
	kit := &grade.Kit{Overlay: map[string]string{}, ModFile: filepath.Join(dir, "go.mod"), Dir: dir}
	dirs := map[string]bool{}
	for name := range files {
		if strings.HasPrefix(name, "internal/") {
			kit.Overlay[filepath.Join(root, filepath.FromSlash(name))] = filepath.Join(dir, filepath.FromSlash(name))
			dirs[path.Dir(name)] = true
		}
	}
	for d := range dirs {
		entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(d)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			p := filepath.Join(root, filepath.FromSlash(d), e.Name())
			if _, ours := kit.Overlay[p]; !ours && !e.IsDir() {
				kit.Overlay[p] = ""
			}
		}
	}
	return kit, nil
}

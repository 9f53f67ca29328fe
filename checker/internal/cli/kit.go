package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"gokata/checker/internal/bundle"
	"gokata/checker/internal/catalog"
)

// scratch holds the temporary directories of one Run, removed at its end.
type scratch struct{ dirs []string }

func (s *scratch) dir() (string, error) {
	d, err := os.MkdirTemp("", "kata-hidden-")
	if err == nil {
		s.dirs = append(s.dirs, d)
	}
	return d, err
}

func (s *scratch) clean() {
	for _, d := range s.dirs {
		os.RemoveAll(d)
	}
}

// unpackHidden makes a candidate kit's checker grade like the repository's:
// the hidden tests packed into the binary (package bundle) are written to a
// temporary directory for this command, which then stands in for each
// kata's solutions/ directory. In the repository nothing is packed and
// nothing changes.
func unpackHidden(cat *catalog.Catalog, env Env) error {
	files, err := bundle.Files()
	if err != nil || len(files) == 0 {
		return err
	}
	if env.scratch == nil {
		return fmt.Errorf("unpack the hidden tests: no scratch space")
	}
	dir, err := env.scratch.dir()
	if err != nil {
		return err
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
	for i, k := range cat.Katas {
		if _, err := os.Stat(filepath.Join(dir, k.Slug)); err == nil {
			cat.Katas[i].Solution = filepath.Join(dir, k.Slug)
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

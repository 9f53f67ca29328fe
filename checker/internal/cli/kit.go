package cli

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

// scratch holds the temporary directories of one Run, removed at its end,
// and in a kit the grader's own files unpacked there and how the kit was
// packed.
type scratch struct {
	dirs     []string
	kit      *grade.Kit
	settings bundle.Settings
}

// interviewKit reports whether this is a kit packed with --interview,
// whose READMEs keep the decisions back.
func (e Env) interviewKit() bool { return e.scratch != nil && e.scratch.settings.Interview }

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
	if data, ok := files[bundle.SettingsFile]; ok {
		if err := json.Unmarshal(data, &env.scratch.settings); err != nil {
			return fmt.Errorf("unpack the hidden tests: %s: %w", bundle.SettingsFile, err)
		}
	}
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
	if files["go.mod"] == nil {
		return nil // a kit packed before the harness travelled along
	}
	kit, err := kitFiles(cat.Root, dir, files)
	env.scratch.kit = kit
	return err
}

// kitFiles lays the grader's copies of the harness over the kit's
// internal/: each of its files is replaced by the copy, and every other
// file in those directories (one the candidate added) is left out.
func kitFiles(root, dir string, files map[string][]byte) (*grade.Kit, error) {
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

// detect finds the go command; in a kit, the build then uses the grader's
// own copies of the harness, go.mod and go.sum.
func detect(ctx context.Context, env Env) (*grade.Toolchain, error) {
	tc, err := grade.Detect(ctx, env.Vars)
	if err == nil && env.scratch != nil {
		tc.Kit = env.scratch.kit
	}
	return tc, err
}

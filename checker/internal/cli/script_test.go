package cli_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"gokata/checker/internal/catalog"
	"gokata/checker/internal/cli"
	"gokata/checker/internal/tmproot"
)

// The scripts in testdata/script are the catalogue of broken and hostile
// submissions: each edits a kata the way a learner (or a cheat) might, runs
// the checker as a separate process, and says what the grade must be.
// Besides the standard testscript commands they can use:
//
//	solve NN                  copy kata NN's reference over its stub
//	replace FILE OLD NEW      replace the one occurrence of OLD in FILE (escapes: \n \t \\)
//	grades ID=KIND…           the last stdout is a --json grade with these verdicts;
//	                          "others=KIND" covers the items not named
//	size FILE MAX             FILE (or stdout) has at most MAX bytes
//	snapshot NAME             record every exercise file, its content and time, in NAME
//	fifo NAME / await NAME    make a named pipe / wait (at most a minute) until a writer opens it
//	sparse NAME MIB           make a file of MIB mebibytes that takes no room on disk (nothing written)
//	killpid FILE              kill the process whose id FILE holds (a leftover a script made)
//	[!] noprocs               no process is running a program from inside $WORK
//	[!] emptydir DIR          DIR has no entries
//	checkersource             copy the checker's source and the guides into $WORK, so that pack can build a kit
//	samefingerprints A B      the --json grades in files A and B name the same code and tests
//	unbundle BIN DIR          write the files packed into the kit's checker BIN (package bundle) under DIR
func TestMain(m *testing.M) {
	os.Exit(testscript.RunMain(m, map[string]func() int{"checker": func() int { return tmproot.Run("checker", cli.Main) }}))
}

func TestScripts(t *testing.T) {
	t.Parallel() // beside TestDocs: the slots stay full to the end
	root, err := catalog.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		Setup: func(e *testscript.Env) error {
			if err := copyCheckout(root, e.WorkDir); err != nil {
				return err
			}
			for k, v := range goEnv(t) {
				e.Setenv(k, v)
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"solve":            cmdSolve,
			"replace":          cmdReplace,
			"grades":           cmdGrades,
			"size":             cmdSize,
			"snapshot":         cmdSnapshot,
			"fifo":             cmdFifo,
			"sparse":           cmdSparse,
			"await":            cmdAwait,
			"noprocs":          cmdNoProcs,
			"killpid":          cmdKillPid,
			"emptydir":         cmdEmptyDir,
			"samefingerprints": cmdSameFingerprints,
			"unbundle":         cmdUnbundle,
			"checkersource": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 0 {
					ts.Fatalf("usage: checkersource")
				}
				ts.Check(copyPackSource(root, ts.MkAbs(".")))
			},
		},
	})
}

var (
	goEnvOnce sync.Once
	goEnvVars map[string]string
)

// goEnv is what the go command needs in a script's environment, whose HOME
// does not exist: the caches of this machine.
func goEnv(t *testing.T) map[string]string {
	goEnvOnce.Do(func() {
		out, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
		if err != nil {
			t.Fatalf("go env: %v", err)
		}
		if err := json.Unmarshal(out, &goEnvVars); err != nil {
			t.Fatalf("go env: %v", err)
		}
	})
	return goEnvVars
}

func scriptKata(ts *testscript.TestScript, name string) catalog.Kata {
	cat, err := catalog.Load(ts.Getenv("WORK"))
	ts.Check(err)
	k, ok := cat.Find(name)
	if !ok {
		ts.Fatalf("no kata %q", name)
	}
	return k
}

func cmdSolve(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: solve NN")
	}
	k := scriptKata(ts, args[0])
	files, err := filepath.Glob(filepath.Join(k.Solution, "*.go"))
	ts.Check(err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		ts.Check(err)
		ts.Check(os.WriteFile(filepath.Join(k.Exercise, filepath.Base(f)), data, 0o644))
	}
}

var escapes = strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t")

func cmdReplace(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: replace FILE OLD NEW")
	}
	path := ts.MkAbs(args[0])
	data, err := os.ReadFile(path)
	ts.Check(err)
	old, repl := escapes.Replace(args[1]), escapes.Replace(args[2])
	if n := strings.Count(string(data), old); n != 1 {
		ts.Fatalf("%s has %d occurrences of %q, want 1", args[0], n, old)
	}
	ts.Check(os.WriteFile(path, []byte(strings.Replace(string(data), old, repl, 1)), 0o644))
}

func cmdGrades(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: grades ID=KIND… [others=KIND]")
	}
	var g struct {
		Items []struct{ ID, Kind string }
	}
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &g); err != nil {
		ts.Fatalf("stdout is not a --json grade: %v", err)
	}
	want := map[string]string{}
	for _, a := range args {
		id, kind, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("grades: %q is not ID=KIND", a)
		}
		want[id] = kind
	}
	var bad []string
	for _, it := range g.Items {
		w, ok := want[it.ID]
		if !ok {
			w = want["others"]
		}
		delete(want, it.ID)
		if it.Kind != w {
			bad = append(bad, fmt.Sprintf("%s is %s, want %s", it.ID, it.Kind, w))
		}
	}
	delete(want, "others")
	for id := range want {
		bad = append(bad, id+" is not in the grade")
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		ts.Fatalf("grades:\n%s", strings.Join(bad, "\n"))
	}
}

func cmdSize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: size FILE MAX")
	}
	limit, err := strconv.Atoi(args[1])
	ts.Check(err)
	if n := len(ts.ReadFile(args[0])); n > limit {
		ts.Fatalf("%s has %d bytes, want at most %d", args[0], n, limit)
	}
}

func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: snapshot NAME")
	}
	dir := ts.MkAbs("exercises")
	var lines []string
	ts.Check(filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		lines = append(lines, fmt.Sprintf("%s %x %s %v", rel, sha256.Sum256(data), info.ModTime().Format(time.RFC3339Nano), info.Mode()))
		return nil
	}))
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
}

func cmdFifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fifo NAME")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o600))
}

func cmdSparse(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sparse NAME MIB")
	}
	mib, err := strconv.Atoi(args[1])
	ts.Check(err)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(f.Truncate(int64(mib) << 20))
	ts.Check(f.Close())
}

// cmdAwait returns once a writer has opened the named pipe: the code under
// test has reached the point that opens it. A minute is a bound against a
// broken script, not a timing assumption.
func cmdAwait(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: await NAME")
	}
	opened := make(chan error, 1)
	go func() {
		f, err := os.Open(ts.MkAbs(args[0])) // blocks until a writer opens it
		if err == nil {
			f.Close()
		}
		opened <- err
	}()
	select {
	case err := <-opened:
		ts.Check(err)
	case <-time.After(time.Minute):
		ts.Fatalf("nothing opened %s for writing within a minute", args[0])
	}
}

func cmdKillPid(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: killpid FILE")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(args[0])))
	ts.Check(err)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		ts.Fatalf("kill %d: %v", pid, err)
	}
}

func cmdNoProcs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 0 {
		ts.Fatalf("usage: noprocs")
	}
	work := ts.Getenv("WORK")
	var found []string
	// A process killed because its parent died may take a moment to go:
	// look again for a while before calling it left running.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		found = nil
		procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
		ts.Check(err)
		for _, p := range procs {
			data, err := os.ReadFile(p)
			if err != nil {
				continue // it ended meanwhile
			}
			args := strings.Split(string(data), "\x00")
			if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, work) }) {
				found = append(found, strings.Join(args, " "))
			}
		}
		if neg || len(found) == 0 || time.Now().After(deadline) {
			break
		}
	}
	switch {
	case neg && len(found) == 0:
		ts.Fatalf("no process runs a program from inside $WORK")
	case !neg && len(found) > 0:
		ts.Fatalf("still running:\n%s", strings.Join(found, "\n"))
	}
}

func cmdEmptyDir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: emptydir DIR")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	if neg && len(entries) == 0 {
		ts.Fatalf("%s is empty", args[0])
	}
	if !neg && len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		ts.Fatalf("%s is not empty: %s", args[0], strings.Join(names, " "))
	}
}

func cmdSameFingerprints(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: samefingerprints A B")
	}
	type grade struct{ Fingerprint struct{ Code, Tests string } }
	var fps [2]grade
	for i, a := range args {
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(a)), &fps[i]))
		if len(fps[i].Fingerprint.Code) != 64 || len(fps[i].Fingerprint.Tests) != 64 {
			ts.Fatalf("%s: fingerprints %+v are not two SHA-256 sums", a, fps[i].Fingerprint)
		}
	}
	if fps[0] != fps[1] {
		ts.Fatalf("%s has fingerprints %+v, %s has %+v", args[0], fps[0].Fingerprint, args[1], fps[1].Fingerprint)
	}
}

// cmdUnbundle finds what pack packed into a kit's checker (package bundle:
// a gzip-compressed tar, base64-encoded in a string constant) and writes
// its files under DIR, so that a script can grep them as it greps the
// kit's files: text compressed inside the binary is out of grep's sight.
// A binary with nothing packed in it fails.
func cmdUnbundle(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: unbundle BIN DIR")
	}
	bin, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	magic := []byte("H4sI") // gzip's first bytes, 1f 8b 08, in base64
	for i := bytes.Index(bin, magic); i >= 0; {
		if files, err := unbundle(bin[i:]); err == nil && len(files) > 0 {
			dir := ts.MkAbs(args[1])
			for name, data := range files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
				ts.Check(os.WriteFile(p, data, 0o644))
			}
			return
		}
		next := bytes.Index(bin[i+1:], magic)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	ts.Fatalf("%s: no packed files found", args[0])
}

// unbundle decodes the bundle that starts at data; whatever follows the
// base64 text (the binary's next bytes) is never read past the tar's end.
func unbundle(data []byte) (map[string][]byte, error) {
	end := bytes.IndexFunc(data, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=')
	})
	if end >= 0 {
		data = data[:end]
	}
	zr, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(data)))
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		name := path.Clean(h.Name)
		if path.IsAbs(name) || strings.HasPrefix(name, "../") {
			return nil, fmt.Errorf("packed file %q is outside the bundle", h.Name)
		}
		if files[name], err = io.ReadAll(tr); err != nil {
			return nil, err
		}
	}
}

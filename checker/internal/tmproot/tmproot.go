// Package tmproot gives one checker process one temporary directory, under
// which it and every program it starts (the go command, the test binary)
// put their temporary files, so that one removal cleans up after all of
// them, even when the checker has to leave in a hurry.
//
// A checker killed outright (SIGKILL) cannot clean up: its directory is
// named after its process id, and the next checker removes the
// directories of processes that no longer exist.
package tmproot

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const prefix = "kata-run-"

// New removes the leftovers of checkers that died (see the package doc)
// and makes this process's directory under parent.
func New(parent string) (string, error) {
	Sweep(parent)
	return os.MkdirTemp(parent, fmt.Sprintf("%s%d-", prefix, os.Getpid()))
}

// Sweep removes the directories under parent of checker processes that no
// longer run, when they belong to this user.
func Sweep(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || alive(pid) || !mine(filepath.Join(parent, e.Name())) {
			continue
		}
		os.RemoveAll(filepath.Join(parent, e.Name()))
	}
}

package pack

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"

	"gokata/checker/internal/catalog"
)

// The kit's README says which system its checker runs on and where the
// race detector's C compiler comes from there; a Windows kit's checker is
// checker.exe, and its README says what to type without make.
func TestKitDocsNameTheSystem(t *testing.T) {
	katas := []catalog.Kata{{Num: 6, Slug: "06-retry", Meta: catalog.Meta{Title: "Retry"}}}

	mac := Kit{Katas: katas, OS: "darwin", Arch: "arm64"}
	assert.Equal(t, "bin/checker", mac.Binary())
	assert.Contains(t, readme(mac), "`bin/checker` runs on macOS on Apple silicon (darwin/arm64)")
	assert.Contains(t, readme(mac), "xcode-select --install")
	assert.NotContains(t, readme(mac), "On Windows")
	assert.Contains(t, makefile(mac), "CHECKER := bin/checker\n")

	win := Kit{Katas: katas, OS: "windows", Arch: "amd64"}
	assert.Equal(t, "bin/checker.exe", win.Binary())
	r := readme(win)
	assert.Contains(t, r, "`bin\\checker.exe` runs on Windows on x86-64 (windows/amd64)")
	assert.Contains(t, r, "MinGW-w64")
	assert.Contains(t, r, "## On Windows")
	assert.Contains(t, r, "type `bin\\checker.exe check 06` for\n`make check EX=06`")
	assert.NotContains(t, r, "bin/checker", "Windows paths take a backslash")
	assert.NotContains(t, r, "NN", "every example names a kata of the kit")
	assert.Contains(t, makefile(win), "CHECKER := bin/checker.exe\n")

	here := Kit{Katas: katas}
	assert.Equal(t, runtime.GOOS+"/"+runtime.GOARCH, here.Platform(), "by default, this machine's system")
	odd := Kit{Katas: katas, OS: "freebsd", Arch: "riscv64"}
	assert.Contains(t, readme(odd), "`bin/checker` runs on freebsd/riscv64;")
}

// A take-home kit packed with a witness sends every check there: its
// Makefile names the witness by default, and its README tells the
// candidate so. Without one, neither does.
func TestKitWithAWitness(t *testing.T) {
	katas := []catalog.Kata{{Num: 6, Slug: "06-retry", Meta: catalog.Meta{Title: "Retry"}}}
	plain := Kit{Katas: katas}
	assert.Contains(t, makefile(plain), "\nWITNESS ?=\nWITNESS_TOKEN ?=\n")
	assert.NotContains(t, readme(plain), "Your checks are shared")

	kit := Kit{Katas: katas, Witness: "http://10.0.0.2:8080", WitnessToken: "takehome-2030"}
	assert.Contains(t, makefile(kit), "\nWITNESS ?= http://10.0.0.2:8080\nWITNESS_TOKEN ?= takehome-2030\n")
	assert.Contains(t, readme(kit), "## Your checks are shared\n\nEvery `make check` and `make watch` sends its grade, with the code it\ngraded, to your interviewer's server at http://10.0.0.2:8080")
}

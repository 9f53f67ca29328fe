package pack

import (
	"fmt"
	"strings"

	"gokata/checker/internal/catalog"
)

// readme is the kit's README.md, for the candidate; its examples name the
// kit's first kata, and it says which system its checker runs on. An
// interview kit's says where the decisions are.
func readme(kit Kit) string {
	katas := kit.Katas
	var b strings.Builder
	b.WriteString(`# Go concurrency katas

Exercises on the concurrency failures that hurt real services. Each kata is a
directory in ` + "`exercises/`" + `: read its README.md, write your code in its .go
files, and grade it. The grader checks your code requirement by requirement,
under the race detector, on fake time, and looks for leaked goroutines.

| kata | difficulty | time |
| --- | --- | --- |
`)
	for _, k := range katas {
		fmt.Fprintf(&b, "| %s · %s | %s | %d min |\n", k.ID(), k.Title, k.Difficulty, k.Minutes)
	}
	b.WriteString(`
## What you need

` + "`bin/checker`" + ` runs on ` + PlatformName(kit.Platform()) + `; on another
system, ask for a kit built for yours.

Go 1.25 or newer and a C compiler for the race detector (` + compilerFor(kit.Platform()) + `).
Run ` + "`make doctor`" + ` once: it checks both, fetches the Go modules and warms
the build, which takes about a minute the first time; after that a check
takes about a second.
` + windowsSection(kit) + `
## The loop

| command | what it does |
| --- | --- |
| ` + "`make list`" + ` | the katas and where you stand |
| ` + "`make check EX=NN`" + ` | grade that kata: every requirement ✔ or ✘, with the reason |
| ` + "`make watch EX=NN`" + ` | grade again each time you save |
| ` + "`make hint EX=NN`" + ` | the next hint |
| ` + "`make decisions EX=NN`" + ` | the decisions: the answers the hidden tests assume |
| ` + "`make reset EX=NN`" + ` | put the untouched stub back (your files are kept in .kata/backup) |
| ` + "`make bughunt EX=NN`" + ` | a working solution with one real mistake planted in it replaces your code (kept in .kata/backup), with a user's bug report: find and fix it |

` + "`bin/checker help`" + ` lists everything the checker does.
`)
	if kit.Interview {
		b.WriteString(`
This kit is for an interview: each task's Decisions, the answers to its
Ask-first questions, are kept back. ` + "`bin/checker interview NN`" + ` shows them once
you have asked your questions; ` + "`make decisions EX=NN`" + ` shows them at any time,
and the interview's scorecard notes that you read them first.
`)
	}
	b.WriteString(`
## About the hidden tests

The tests that grade you are packed inside ` + "`bin/checker`" + `, compressed, and
unpacked into a temporary directory only while it grades. That keeps them out
of sight, not secret: anyone determined can get them out. Reading them would
only spoil the exercise. The reference solutions and their known mistakes
travel the same way, for bug hunts only.
`)
	first := firstKata(katas)
	text := strings.NewReplacer("EX=NN", "EX="+first, " NN`", " "+first+"`").Replace(b.String())
	bin := kit.Binary()
	if strings.HasPrefix(kit.Platform(), "windows/") {
		bin = strings.ReplaceAll(bin, "/", `\`) // as PowerShell and cmd take it
	}
	return strings.ReplaceAll(text, "`bin/checker", "`"+bin)
}

// platformName names a GOOS/GOARCH pair for people: "macOS on Apple
// silicon (darwin/arm64)".
func PlatformName(platform string) string {
	names := map[string]string{
		"darwin/arm64": "macOS on Apple silicon", "darwin/amd64": "macOS on Intel",
		"windows/amd64": "Windows on x86-64", "windows/arm64": "Windows on ARM64",
		"linux/amd64": "Linux on x86-64", "linux/arm64": "Linux on ARM64",
	}
	if n, ok := names[platform]; ok {
		return n + " (" + platform + ")"
	}
	return platform
}

// compilerFor says where the race detector's C compiler comes from.
func compilerFor(platform string) string {
	switch goos, _, _ := strings.Cut(platform, "/"); goos {
	case "darwin":
		return "the Xcode command line tools: `xcode-select --install`"
	case "windows":
		return "gcc from MinGW-w64, for instance through MSYS2"
	}
	return "gcc, from your system's packages"
}

// windowsSection tells a Windows candidate what to type: make is rare
// there, and every make command is a checker verb.
func windowsSection(kit Kit) string {
	if !strings.HasPrefix(kit.Platform(), "windows/") {
		return ""
	}
	return `
## On Windows

Every ` + "`make`" + ` command below is a verb of the checker, which you can run
directly in PowerShell or cmd: type ` + "`bin\\checker.exe check NN`" + ` for
` + "`make check EX=NN`" + `, ` + "`bin\\checker.exe hint NN`" + ` for ` + "`make hint EX=NN`" + `,
` + "`bin\\checker.exe doctor`" + ` for ` + "`make doctor`" + `; ` + "`bin\\checker.exe help`" + ` lists them all.
In Git Bash with make installed, the make commands work as shown.
`
}

// makefile is the kit's Makefile; its examples name the kit's first kata.
func makefile(kit Kit) string {
	text := strings.ReplaceAll(makefileTemplate, "EX=NN", "EX="+firstKata(kit.Katas))
	return strings.ReplaceAll(text, "CHECKER := bin/checker", "CHECKER := "+kit.Binary())
}

func firstKata(katas []catalog.Kata) string {
	if len(katas) == 0 {
		return "01"
	}
	return fmt.Sprintf("%02d", katas[0].Num)
}

const makefileTemplate = `# Go concurrency katas. ` + "`make help`" + ` lists the targets.

EX      ?=
N       ?=
FORCE   ?=
NAME    ?=
GIVEUP  ?=
CHECKER := bin/checker

export GOFLAGS     := -mod=readonly
export GOTOOLCHAIN := local
export GORACE      := atexit_sleep_ms=0

.DEFAULT_GOAL := help
.PHONY: help list check watch hint decisions reset bughunt doctor

help: ## list the targets
	@echo "Go concurrency katas"
	@grep -hE '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z]+):.*## /  make \1\t/' | expand -t 22

list: ## the katas and where you stand
	@$(CHECKER) list

check: ## grade a kata: make check EX=NN (every kata without EX)
	@$(CHECKER) check $(EX)

watch: ## grade again on every save: make watch EX=NN
	@$(CHECKER) watch $(EX)

hint: ## the next hint: make hint EX=NN (N=1 to read the first again)
	@$(CHECKER) hint $(EX) $(N)

decisions: ## the answers the hidden tests assume: make decisions EX=NN
	@$(CHECKER) decisions $(EX)

reset: ## back to the untouched stub: make reset EX=NN (FORCE=1: do not ask)
	@$(CHECKER) reset $(EX) $(if $(FORCE),--force)

bughunt: ## find and fix a real mistake planted in a working solution: make bughunt EX=NN (FORCE=1; GIVEUP=1 shows it)
	@$(CHECKER) bughunt $(EX) $(if $(FORCE),--force) $(if $(NAME),--pick "$(NAME)") $(if $(GIVEUP),--give-up)

doctor: ## check Go and gcc, and warm the build (about a minute the first time)
	@$(CHECKER) doctor
`

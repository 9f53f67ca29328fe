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
` + windowsSection(kit) + witnessSection(kit) + `
## The loop

| command | what it does |
| --- | --- |
| ` + "`make list`" + ` | the katas and where you stand |
| ` + "`make check EX=NN`" + ` | grade that kata: every requirement ✔ or ✘, with the reason (` + "`REPEAT=20`" + ` runs it 20 times, ` + "`V=1`" + ` shows what your code printed, ` + "`SEED=S`" + ` replays a failure) |
| ` + "`make watch EX=NN`" + ` | grade again each time you save |
| ` + "`make hint EX=NN`" + ` | the next hint |
| ` + "`make decisions EX=NN`" + ` | the decisions: the answers the hidden tests assume |
| ` + "`make reset EX=NN`" + ` | put the untouched stub back (your files are kept in .kata/backup) |
` + practiceRows(kit) + `
` + "`make help`" + ` lists every target with its variables, ` + "`bin/checker help`" + `
everything the checker does. This kit does not show the reference
solutions: ask whoever gave it to you for them.
`)
	if kit.Interview {
		b.WriteString(`
This kit is for an interview: each task's Decisions, the answers to its
Ask-first questions, are kept back. ` + "`bin/checker interview NN`" + ` shows them once
you have asked your questions; ` + "`make decisions EX=NN`" + ` shows them at any time,
and the interview's scorecard notes that you read them first.
`)
	}
	if kit.Bughunt {
		b.WriteString(`
Each kata here is a bug hunt: its .go files are not a stub but a working
solution with one real mistake planted in it. ` + "`make bughunt EX=NN`" + ` shows
the user's bug report; find the mistake and fix it, and ` + "`make check EX=NN`" + `
says when the hunt is solved. ` + "`make reset EX=NN`" + ` brings the planted code
back.
`)
	}
	b.WriteString(`
## About the hidden tests

The tests that grade you are packed inside ` + "`bin/checker`" + `, compressed, and
unpacked into a temporary directory only while it grades. That keeps them out
of sight, not secret: anyone determined can get them out. Reading them would
only spoil the exercise. ` + answersText(kit) + `
`)
	first := firstKata(katas)
	text := strings.NewReplacer("EX=NN", "EX="+first, " NN`", " "+first+"`").Replace(b.String())
	bin := kit.Binary()
	if strings.HasPrefix(kit.Platform(), "windows/") {
		bin = strings.ReplaceAll(bin, "/", `\`) // as PowerShell and cmd take it
	}
	return strings.ReplaceAll(text, "`bin/checker", "`"+bin)
}

// practiceRows are the rows of the README's table for what a practice kit
// does with the reference and the known mistakes it carries; an interview
// kit carries neither.
func practiceRows(kit Kit) string {
	if kit.Interview {
		return ""
	}
	return `| ` + "`make bughunt EX=NN`" + ` | a working solution with one real mistake planted in it replaces your code (kept in .kata/backup), with a user's bug report: find and fix it (` + "`LEVEL=one-line`" + `, ` + "`reasoning`" + ` or ` + "`schedule`" + ` picks how hard) |
| ` + "`make catch EX=NN`" + ` | your own tests, run against the reference and every known mistake: which mistakes they catch; docs/catch.md shows how to write them |
`
}

// answersText says what the kit's checker carries besides the tests.
func answersText(kit Kit) string {
	if kit.Interview {
		return "This kit carries no reference solution and no known\nmistake, not even inside its checker."
	}
	return "The reference solutions and their known mistakes\ntravel the same way, for bug hunts and catch only."
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
	text = strings.ReplaceAll(text, "exercises/NN-name", "exercises/"+firstSlug(kit.Katas))
	if kit.Witness != "" {
		text = strings.Replace(text, "WITNESS ?=\n", "WITNESS ?= "+kit.Witness+"\n", 1)
		text = strings.Replace(text, "WITNESS_TOKEN ?=\n", "WITNESS_TOKEN ?= "+kit.WitnessToken+"\n", 1)
	}
	return strings.ReplaceAll(text, "CHECKER := bin/checker", "CHECKER := "+kit.Binary())
}

func firstSlug(katas []catalog.Kata) string {
	if len(katas) == 0 {
		return "01-name"
	}
	return katas[0].Slug
}

func firstKata(katas []catalog.Kata) string {
	if len(katas) == 0 {
		return "01"
	}
	return fmt.Sprintf("%02d", katas[0].Num)
}

// makefileTemplate is the kit's Makefile: a target for each verb of the
// kit's checker that the repository's Makefile has one for, with the same
// recipe and so the same variables (TestKitMakefileMatchesTheRepository),
// and no build of the checker, which is already built.
const makefileTemplate = `# Go concurrency katas. ` + "`make help`" + ` lists the targets.
#
# Every target runs the kit's checker, $(CHECKER), and keeps its exit codes:
# 0 passed, 1 fell short, 2 usage error, 3 checker error.

EX      ?=
N       ?=
REPEAT  ?=
SEED    ?=
V       ?=
GIVEUP  ?=
FORCE   ?=
NAME    ?=
LEVEL   ?=
DIR     ?=
MINUTES ?=
FRESH   ?=
BUGHUNT ?=
FILE    ?=
TEXT    ?=
Q       ?=
PUSH    ?=
TOKEN   ?=
CODE    ?=
ADDR    ?=
KATAS   ?=
WITNESS ?=
WITNESS_TOKEN ?=
CHECKER := bin/checker
# BUGHUNT=1 starts a bug hunt with a random mistake, BUGHUNT=name
# with that one (NAME= is the candidate's name in an interview).
HUNTING  = $(if $(BUGHUNT),--bughunt $(if $(filter-out 1,$(BUGHUNT)),--pick "$(BUGHUNT)"))
# PUSH= and TOKEN= send each grade of check and watch to a room board
# (make serve), CODE= with the participant's join code if the room has
# codes; the token and the code go in the environment, not on the command line.
PUSHING  = $(if $(PUSH),KATA_PUSH="$(PUSH)") $(if $(TOKEN),KATA_TOKEN="$(TOKEN)") $(if $(NAME),KATA_NAME="$(NAME)") $(if $(CODE),KATA_CODE="$(CODE)")
# WITNESS= and WITNESS_TOKEN= name the interviewer's witness (make serve
# prints both): an interview sends it each event as it happens, and a
# scorecard compares the record with its copy.
WITNESSING = $(if $(WITNESS),KATA_WITNESS="$(WITNESS)") $(if $(WITNESS_TOKEN),KATA_WITNESS_TOKEN="$(WITNESS_TOKEN)")

export GOFLAGS     := -mod=readonly
export GOTOOLCHAIN := local
export GORACE      := atexit_sleep_ms=0

.DEFAULT_GOAL := help
.PHONY: help list check watch hint decisions reset bughunt catch doctor interview note asked scorecard replay regrade report serve

help: ## list the targets
	@echo "Go concurrency katas"
	@grep -hE '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z]+):.*## /  make \1\t/' | expand -t 22

list: ## the katas and where you stand
	@$(CHECKER) list

check: ## grade a kata: make check EX=NN (every kata without EX; REPEAT=20 for pass rates; SEED=S replays a failure's scenarios; V=1 shows what your code printed; PUSH=URL TOKEN=T NAME=… to a room board; WITNESS=URL WITNESS_TOKEN=T to a take-home's witness)
	@$(PUSHING) $(WITNESSING) $(CHECKER) check $(EX) $(if $(REPEAT),--repeat=$(REPEAT)) $(if $(SEED),--seed=$(SEED)) $(if $(V),-v)

watch: ## grade again on every save: make watch EX=NN (Ctrl-C stops; V=1 shows what your code printed; PUSH= TOKEN= WITNESS= WITNESS_TOKEN= as for check)
	@$(PUSHING) $(WITNESSING) $(CHECKER) watch $(EX) $(if $(V),-v)

hint: ## the next hint: make hint EX=NN (N=1 to read the first again)
	@$(CHECKER) hint $(EX) $(N)

decisions: ## the answers the hidden tests assume: make decisions EX=NN
	@$(CHECKER) decisions $(EX)

reset: ## back to the untouched stub, your files backed up: make reset EX=NN (FORCE=1: no question)
	@$(CHECKER) reset $(EX) $(if $(FORCE),--force)

bughunt: ## find and fix a real mistake planted in a working solution: make bughunt EX=NN (LEVEL=one-line, reasoning, schedule or wild: how hard; FORCE=1: no question; NAME=name picks the mistake; GIVEUP=1 shows it)
	@$(CHECKER) bughunt $(EX) $(if $(FORCE),--force) $(if $(NAME),--pick "$(NAME)") $(if $(LEVEL),--level "$(LEVEL)") $(if $(GIVEUP),--give-up)

catch: ## your own tests against the reference and every known mistake: make catch EX=NN (REPEAT=20: more runs to show a flaky test; docs/catch.md shows how)
	@$(CHECKER) catch $(EX) $(if $(REPEAT),--repeat=$(REPEAT))

doctor: ## first run: check Go and gcc, fetch the modules, warm the race build (about a minute)
	@$(CHECKER) doctor

interview: ## a timed interview with a record and scorecard: make interview EX=NN NAME=Ada (MINUTES=25; REPEAT=20 runs of the final grade; FRESH=1 resets the kata first; BUGHUNT=1 starts from a planted mistake, BUGHUNT=name picks it; WITNESS=URL WITNESS_TOKEN=T sends it to a witness)
	@$(WITNESSING) $(CHECKER) interview $(EX) $(if $(NAME),--name "$(NAME)") $(if $(MINUTES),--minutes=$(MINUTES)) $(if $(REPEAT),--repeat=$(REPEAT)) $(if $(FRESH),--fresh) $(HUNTING)

note: ## an interviewer's note for the record of the interview under way, from another terminal: make note EX=NN TEXT="asked about jitter"
	@$(CHECKER) note $(EX) "$(TEXT)"

asked: ## tick the Ask-first questions the candidate asked, from another terminal: make asked EX=NN Q=1,3 (TEXT="…" notes another question they asked; neither lists them)
	@$(CHECKER) asked $(EX) $(Q) $(if $(TEXT),"$(TEXT)")

scorecard: ## an interview's scorecard, rendered again from its record: make scorecard FILE=.kata/interviews/X.json (WITNESS=URL WITNESS_TOKEN=T, or WITNESS=DIR of make serve: compared with the witness's copy)
	@$(if $(WITNESS_TOKEN),KATA_WITNESS_TOKEN="$(WITNESS_TOKEN)") $(CHECKER) scorecard $(if $(WITNESS),--witness "$(WITNESS)") "$(FILE)"

replay: ## step through an interview's record, grade by grade: make replay FILE=.kata/interviews/X.json
	@$(CHECKER) replay --step "$(FILE)"

regrade: ## grade returned work with the real hidden tests, with fingerprints: make regrade DIR=../returned/exercises/NN-name (WITNESS=URL WITNESS_TOKEN=T, or WITNESS=DIR of make serve: did a take-home's witness see that code graded)
	@$(if $(WITNESS_TOKEN),KATA_WITNESS_TOKEN="$(WITNESS_TOKEN)") $(CHECKER) regrade $(if $(WITNESS),--witness "$(WITNESS)") "$(DIR)"

report: ## workshop room grid from participants' JSON: make report DIR=results
	@$(CHECKER) report $(DIR)

serve: ## the live room board for a workshop, and the witness of interviews: make serve (ADDR=:8080 DIR=.kata/room TOKEN=… KATAS=01,06; Ctrl-C stops)
	@$(CHECKER) serve $(if $(ADDR),--addr "$(ADDR)") $(if $(DIR),--dir "$(DIR)") $(if $(TOKEN),--token "$(TOKEN)") $(if $(KATAS),--katas "$(KATAS)")
`

// witnessSection tells the candidate that the kit's checks are sent to
// the interviewer's witness, when it was packed with one.
func witnessSection(kit Kit) string {
	if kit.Witness == "" {
		return ""
	}
	return `
## Your checks are shared

Every ` + "`make check`" + ` and ` + "`make watch`" + ` sends its grade, with the code it
graded, to your interviewer's server at ` + kit.Witness + ` (` + "`WITNESS`" + ` in the
Makefile), and with it the hints you read. Nothing else leaves your machine.
`
}

package pack

import (
	"fmt"
	"strings"

	"gokata/checker/internal/catalog"
)

// readme is the kit's README.md, for the candidate; its examples name the
// kit's first kata. An interview kit's says where the decisions are.
func readme(katas []catalog.Kata, interview bool) string {
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

Go 1.25 or newer and gcc (the race detector needs cgo). Run ` + "`make doctor`" + ` once:
it checks both, fetches the Go modules and warms the build, which takes
about a minute the first time; after that a check takes about a second.

## The loop

| command | what it does |
| --- | --- |
| ` + "`make list`" + ` | the katas and where you stand |
| ` + "`make check EX=NN`" + ` | grade that kata: every requirement ✔ or ✘, with the reason |
| ` + "`make watch EX=NN`" + ` | grade again each time you save |
| ` + "`make hint EX=NN`" + ` | the next hint |
| ` + "`make decisions EX=NN`" + ` | the decisions: the answers the hidden tests assume |
| ` + "`make reset EX=NN`" + ` | put the untouched stub back (your files are kept in .kata/backup) |

` + "`bin/checker help`" + ` lists everything the checker does.
`)
	if interview {
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
only spoil the exercise. The reference solutions are not in this kit.
`)
	return strings.NewReplacer("EX=NN", "EX="+firstKata(katas), "interview NN", "interview "+firstKata(katas)).Replace(b.String())
}

// makefile is the kit's Makefile; its examples name the kit's first kata.
func makefile(katas []catalog.Kata) string {
	return strings.ReplaceAll(makefileTemplate, "EX=NN", "EX="+firstKata(katas))
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
CHECKER := bin/checker

export GOFLAGS     := -mod=readonly
export GOTOOLCHAIN := local
export GORACE      := atexit_sleep_ms=0

.DEFAULT_GOAL := help
.PHONY: help list check watch hint decisions reset doctor

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

doctor: ## check Go and gcc, and warm the build (about a minute the first time)
	@$(CHECKER) doctor
`

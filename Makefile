# Go concurrency katas. `make help` lists the targets.
#
# The checker is built to bin/checker and run from there: make and `go run`
# both rewrite exit codes, and its own (0 pass, 1 fell short, 2 usage,
# 3 checker error) are worth keeping for scripts.

GO      ?= go
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
OUT     ?=
OS      ?=
ARCH    ?=
INTERVIEW ?=
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
SHARE   ?=
WITNESS ?=
WITNESS_TOKEN ?=
CHECKER := bin/checker
# BUGHUNT=1 starts a bug hunt with a random mistake, BUGHUNT=clksleep
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
.PHONY: help check list watch hint decisions solution reset bughunt catch doctor interview note asked scorecard replay regrade report serve pack verify mutant docs test bench stress mutate $(CHECKER)

help: ## list the targets
	@echo "Go concurrency katas"
	@grep -hE '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z]+):.*## /  make \1\t/' | expand -t 22

$(CHECKER):
	@$(GO) build -o $(CHECKER) ./checker

check: $(CHECKER) ## grade a kata: make check EX=06 (every kata without EX; REPEAT=20 for pass rates; SEED=S replays a failure's scenarios; V=1 shows what your code printed; PUSH=URL TOKEN=T NAME=… to a room board; WITNESS=URL WITNESS_TOKEN=T to a take-home's witness)
	@$(PUSHING) $(WITNESSING) $(CHECKER) check $(EX) $(if $(REPEAT),--repeat=$(REPEAT)) $(if $(SEED),--seed=$(SEED)) $(if $(V),-v)

list: $(CHECKER) ## the katas and where you stand
	@$(CHECKER) list

watch: $(CHECKER) ## grade again on every save: make watch EX=06 (Ctrl-C stops; V=1 shows what your code printed; PUSH= TOKEN= WITNESS= WITNESS_TOKEN= as for check)
	@$(PUSHING) $(WITNESSING) $(CHECKER) watch $(EX) $(if $(V),-v)

hint: $(CHECKER) ## the next hint: make hint EX=06 (N=1 to read the first again)
	@$(CHECKER) hint $(EX) $(N)

decisions: $(CHECKER) ## the answers the tests assume (an interview kit keeps them back): make decisions EX=06
	@$(CHECKER) decisions $(EX)

solution: $(CHECKER) ## the reference and its WHY after a pass: make solution EX=06 (GIVEUP=1 before)
	@$(CHECKER) solution $(EX) $(if $(GIVEUP),--give-up)

reset: $(CHECKER) ## back to the untouched stub, your files backed up: make reset EX=06 (FORCE=1: no question)
	@$(CHECKER) reset $(EX) $(if $(FORCE),--force)

bughunt: $(CHECKER) ## find and fix a real mistake planted in a working solution: make bughunt EX=06 (LEVEL=one-line, reasoning, schedule or wild: how hard; FORCE=1: no question; NAME=clksleep picks the mistake; GIVEUP=1 shows it)
	@$(CHECKER) bughunt $(EX) $(if $(FORCE),--force) $(if $(NAME),--pick "$(NAME)") $(if $(LEVEL),--level "$(LEVEL)") $(if $(GIVEUP),--give-up)

catch: $(CHECKER) ## your own tests against the reference and every known mistake: make catch EX=06 (REPEAT=20: more runs to show a flaky test)
	@$(CHECKER) catch $(EX) $(if $(REPEAT),--repeat=$(REPEAT))

doctor: ## first run: check Go, gcc and modules, warm the race build (about a minute)
	@echo "Building the checker (the first time, this also fetches the Go modules)..."
	@$(GO) build -o $(CHECKER) ./checker
	@$(CHECKER) doctor

interview: $(CHECKER) ## a timed interview with a record and scorecard: make interview EX=06 NAME=Ada (MINUTES=25; REPEAT=20 runs of the final grade; FRESH=1 resets the kata first; BUGHUNT=1 starts from a planted mistake, BUGHUNT=clksleep picks it; WITNESS=URL WITNESS_TOKEN=T sends it to a witness)
	@$(WITNESSING) $(CHECKER) interview $(EX) $(if $(NAME),--name "$(NAME)") $(if $(MINUTES),--minutes=$(MINUTES)) $(if $(REPEAT),--repeat=$(REPEAT)) $(if $(FRESH),--fresh) $(HUNTING)

note: $(CHECKER) ## an interviewer's note for the record of the interview under way, from another terminal: make note EX=06 TEXT="asked about jitter"
	@$(CHECKER) note $(EX) "$(TEXT)"

asked: $(CHECKER) ## tick the Ask-first questions the candidate asked, from another terminal: make asked EX=06 Q=1,3 (TEXT="…" notes another question they asked; neither lists them)
	@$(CHECKER) asked $(EX) $(Q) $(if $(TEXT),"$(TEXT)")

scorecard: $(CHECKER) ## an interview's scorecard, rendered again from its record: make scorecard FILE=.kata/interviews/X.json (WITNESS=URL WITNESS_TOKEN=T, or WITNESS=DIR of make serve: compared with the witness's copy)
	@$(if $(WITNESS_TOKEN),KATA_WITNESS_TOKEN="$(WITNESS_TOKEN)") $(CHECKER) scorecard $(if $(WITNESS),--witness "$(WITNESS)") "$(FILE)"

replay: $(CHECKER) ## step through an interview's record, grade by grade: make replay FILE=.kata/interviews/X.json
	@$(CHECKER) replay --step "$(FILE)"

regrade: $(CHECKER) ## grade returned work with the real hidden tests, with fingerprints: make regrade DIR=../returned/exercises/06-retry (WITNESS=URL WITNESS_TOKEN=T, or WITNESS=DIR of make serve: did a take-home's witness see that code graded)
	@$(if $(WITNESS_TOKEN),KATA_WITNESS_TOKEN="$(WITNESS_TOKEN)") $(CHECKER) regrade $(if $(WITNESS),--witness "$(WITNESS)") "$(DIR)"

report: $(CHECKER) ## workshop room grid from participants' JSON: make report DIR=results
	@$(CHECKER) report $(DIR)

serve: $(CHECKER) ## the live room board for a workshop, and the witness of interviews: make serve (ADDR=:8080 DIR=.kata/room TOKEN=… KATAS=01,06; Ctrl-C stops)
	@$(CHECKER) serve $(if $(ADDR),--addr "$(ADDR)") $(if $(DIR),--dir "$(DIR)") $(if $(TOKEN),--token "$(TOKEN)") $(if $(KATAS),--katas "$(KATAS)")

# OS and ARCH count only on make's command line: Windows sets OS in the
# environment of every program.
pack: $(CHECKER) ## candidate kit without solutions: make pack OUT=../kit (EX=06 for one kata; INTERVIEW=1 keeps the decisions back and carries no answer; with it BUGHUNT=1 starts each kata as a bug hunt, BUGHUNT=clksleep with that mistake, LEVEL=reasoning at that level; OS=darwin ARCH=arm64 for a Mac; WITNESS=URL WITNESS_TOKEN=T: every check of the kit goes to your witness)
	@$(CHECKER) pack --out "$(OUT)" $(if $(WITNESS),--witness "$(WITNESS)" --witness-token "$(WITNESS_TOKEN)") $(if $(INTERVIEW),--interview) $(HUNTING) $(if $(LEVEL),--level "$(LEVEL)") $(if $(filter command line,$(origin OS)),--os "$(OS)") $(if $(filter command line,$(origin ARCH)),--arch "$(ARCH)") $(EX)

verify: $(CHECKER) ## maintainers: stubs fail, references pass, mutants are caught (SHARE=1/3: only that share of the mutants, as CI)
	@$(CHECKER) verify $(if $(SHARE),--share "$(SHARE)")

mutant: $(CHECKER) ## maintainers: a kata's mutants, or one as a Go file: make mutant EX=06 NAME=clksleep
	@$(CHECKER) mutant $(EX) $(NAME)

docs: ## run the commands the guides show and compare their output
	$(GO) test -count=1 -run TestDocs ./checker/internal/cli/

# The compiler and the linker collect garbage a quarter as often in the
# maintainers' long runs: about a tenth less CPU, for some 50 MB more each.
# (The checker does the same for the builds it runs; the test binaries it
# grades keep the learner's GOGC.)
test mutate: export GOGC = 400

# The checker's own tests grade whole katas, hundreds of builds: about eight
# minutes on a quiet machine, past go test's default 10m limit when other
# builds share the cores. -timeout=30m is only the outer guard against a
# hang; every test run inside a grade has its own limit (--timeout, 5s).
# verify (fourteen minutes: 560 mutants, each a race build of its own) is
# the maintainers' slower check; CI runs it after this one with a third of
# the mutants (.ci/run); mutate is the maintainers' own.
# REFERENCES= leaves out the plain go test of the references: CI does, as
# its verify grades each of them under -race with every item required.
REFERENCES ?= ./solutions/...
test: $(CHECKER) ## vet, format, unit and end-to-end tests, the references, the guides' commands (CI then runs verify)
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) test -race -count=1 -timeout=30m ./internal/... $$($(GO) list ./checker/... | grep -v /cli$$) $(REFERENCES)
	cd tools && $(GO) test -count=1 ./mutate # equivalent.txt still points at its operators
	$(GO) test -race -count=1 -timeout=30m -skip '^(TestScripts|TestDocs)$$' ./checker/internal/cli/ # in process: sessions, watch, interview
	$(GO) test -count=1 -timeout=30m -run '^(TestScripts|TestDocs)$$' ./checker/internal/cli/ # end to end: the checker as a process, as users run it; the guides' commands

bench: ## measure: warm check vs plain go test -race, hidden-test run time, watch save-to-verdict, the room board's pushes/s
	@$(GO) run ./checker/internal/bench
	$(GO) test -run '^$$' -bench . -benchtime 1x ./checker/internal/board/

stress: $(CHECKER) ## references and alternatives 50x, mutants 20x, under -race at -cpu 1,2,4, shuffled (EX=06 for one kata)
	$(GO) test -race -count=50 -cpu 1,2,4 -shuffle=on -timeout=60m $(if $(EX),./solutions/$(EX)-*/,./solutions/...)
	$(CHECKER) verify --repeat 20 --repeat-correct 50 --cpu 1,2,4 $(EX)

mutate: ## maintainers: mutation testing of every reference (EX=06 for one); survivors must be in testdata/equivalent.txt
	cd tools && $(GO) test -count=1 ./mutate && $(GO) run ./mutate -root .. $(EX)

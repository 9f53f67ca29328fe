# Go concurrency katas. `make help` lists the targets.
#
# The checker is built to bin/checker and run from there: make and `go run`
# both rewrite exit codes, and its own (0 pass, 1 fell short, 2 usage,
# 3 checker error) are worth keeping for scripts.

GO      ?= go
EX      ?=
N       ?=
REPEAT  ?=
CHECKER := bin/checker

export GOFLAGS     := -mod=readonly
export GOTOOLCHAIN := local
export GORACE      := atexit_sleep_ms=0

.DEFAULT_GOAL := help
.PHONY: help check list hint verify test bench stress $(CHECKER)

help: ## list the targets
	@echo "Go concurrency katas"
	@grep -hE '^[a-z]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z]+):.*## /  make \1\t/' | expand -t 22

$(CHECKER):
	@$(GO) build -o $(CHECKER) ./checker

check: $(CHECKER) ## grade a kata: make check EX=06 (every kata without EX; REPEAT=20 for pass rates)
	@$(CHECKER) check $(EX) $(if $(REPEAT),--repeat=$(REPEAT))

list: $(CHECKER) ## list the katas
	@$(CHECKER) list

hint: $(CHECKER) ## show a hint: make hint EX=06 (then N=2, N=3)
	@$(CHECKER) hint $(EX) $(N)

verify: $(CHECKER) ## maintainers: stubs fail, references pass, mutants are caught
	@$(CHECKER) verify

test: $(CHECKER) ## everything CI checks: vet, format, unit and end-to-end tests, references, verify
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v /testdata/)); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) test -race -count=1 ./internal/... $$($(GO) list ./checker/... | grep -v /cli$$) ./solutions/...
	$(GO) test -count=1 ./checker/internal/cli/ # end to end: runs the checker as a process, as users do
	$(CHECKER) verify

bench: ## measure: warm check vs plain go test -race, and hidden-test run time
	@$(GO) run ./checker/internal/bench

stress: $(CHECKER) ## references 50x and mutants 20x under -race at -cpu 1,2,4, shuffled
	$(GO) test -race -count=50 -cpu 1,2,4 -shuffle=on ./solutions/...
	$(CHECKER) verify --repeat 20 --cpu 1,2,4

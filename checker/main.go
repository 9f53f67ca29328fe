// Command checker grades the Go concurrency katas.
//
//	checker list              the katas and your status
//	checker check 06          grade kata 06 (make check EX=06)
//	checker watch 06          grade again on every save
//	checker hint 06 [N]       the next hint, or hint N
//	checker solution 06       the reference and its WHY, after a pass (--give-up: before)
//	checker reset 06          the untouched stub again, from git; your files backed up, progress forgotten
//	checker interview 06      a timed interview ending in a JSON record and its Markdown scorecard
//	checker replay RECORD     an interview's record, grade by grade, with the code's diffs
//	checker regrade DIR       returned work graded with the real hidden tests, with fingerprints
//	checker report DIR        a workshop's room grid from participants' --json grades
//	checker pack --out DIR    a candidate kit: no solutions, hidden tests inside the binary
//	checker doctor            check Go, gcc and modules; warm the race build
//	checker verify            maintainers: stubs fail, references and alternatives pass, mutants are caught
//	checker mutant 06 [NAME]  maintainers: the mutants (patches against the reference), one as a Go file
//
// `checker help` gives the flags. Progress (last grades, hints shown) is
// kept in .kata/state.json, which git ignores; only reset writes the
// learner's files.
//
// Exit codes: 0 passed; 1 a kata fell short or verify found a problem;
// 2 usage error (such as a kata that does not exist); 3 the checker itself
// failed; 4 regrade --against FILE found other code or other tests than
// FILE names; 130 interrupted. Run it through the Makefile or as bin/checker:
// make and `go run` both rewrite exit codes.
package main

import (
	"os"

	"gokata/checker/internal/cli"
	"gokata/checker/internal/tmproot"
)

func main() {
	os.Exit(tmproot.Run("checker", cli.Main))
}

// Command checker grades the Go concurrency katas.
//
//	checker list            the katas
//	checker check 06        grade kata 06 (make check EX=06)
//	checker hint 06 [N]     show a hint
//	checker verify          maintainers: stubs fail, references pass, mutants are caught
//
// Exit codes: 0 passed; 1 a kata fell short or verify found a problem;
// 2 usage error (such as a kata that does not exist); 3 the checker itself
// failed; 130 interrupted. Run it through the Makefile or as bin/checker:
// make and `go run` both rewrite exit codes.
package main

import (
	"os"

	"gokata/checker/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}

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
	"context"
	"os"
	"os/signal"
	"syscall"

	"gokata/checker/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	dir, _ := os.Getwd()
	fi, _ := os.Stdout.Stat()
	code := cli.Run(ctx, os.Args[1:], cli.Env{
		Dir: dir, Vars: os.Environ(), Stdout: os.Stdout, Stderr: os.Stderr,
		IsTerminal: fi != nil && fi.Mode()&os.ModeCharDevice != 0,
	})
	stop()
	os.Exit(code)
}

package tmproot

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// The exit codes Run returns itself.
const (
	ExitInternal    = 3   // the directory could not be made
	ExitInterrupted = 130 // a second signal, or a cleanup that took too long
)

// exitGrace bounds the cleanup after a signal: stopping the test process
// and removing files take milliseconds.
const exitGrace = 5 * time.Second

// Run runs main in this process's directory (New under os.TempDir), set
// as TMPDIR for the process and every program it starts, and removes the
// directory when main returns. A signal (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT)
// cancels main's context; a second one, or a cleanup that takes longer
// than exitGrace, ends the process at once, after removing the directory.
// prog names the program in the messages Run prints on stderr.
func Run(prog string, main func(ctx context.Context) int) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tmp, err := New(os.TempDir())
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: internal error: %v\n", prog, err)
		return ExitInternal
	}
	defer os.RemoveAll(tmp)
	os.Setenv("TMPDIR", tmp)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		cancel()
		select {
		case <-sigs:
		case <-time.After(exitGrace):
		}
		os.RemoveAll(tmp)
		fmt.Fprintf(os.Stderr, "%s: interrupted\n", prog)
		os.Exit(ExitInterrupted)
	}()
	return main(ctx)
}

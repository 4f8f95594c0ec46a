package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
)

// Exit statuses of `tierbench run`. A status says what a reader may do
// with the table: publish all of it (0), part of it (3) or none (4).
const (
	ExitOK       = 0 // every planned cell is in the table
	ExitFailed   = 1 // a row or the run failed with an error; --resume retries
	ExitUsage    = 2 // bad flags or configuration; nothing was started
	ExitExcluded = 3 // finished, but some cells are kept out of the table (listed)
	ExitNothing  = 4 // nothing publishable: every cell kept out, or the run refused to measure
	ExitSIGINT   = 130
	ExitSIGTERM  = 143
)

// ErrExcluded is returned by a finished run whose table lacks some of the
// planned cells; ErrNothingPublishable by one whose table has none.
var (
	ErrExcluded           = errors.New("orchestrator: some cells are kept out of the table")
	ErrNothingPublishable = errors.New("orchestrator: no cell is publishable")
)

// InterruptedError says a signal stopped the run.
type InterruptedError struct {
	Signal syscall.Signal
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("orchestrator: stopped by %s", signalName(e.Signal))
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// ExitCode maps the error Run returned to the process exit status.
func ExitCode(err error) int {
	var sig *InterruptedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &sig):
		return 128 + int(sig.Signal)
	case errors.Is(err, fault.ErrConfig):
		return ExitUsage
	case errors.Is(err, ErrNothingPublishable), errors.Is(err, fault.ErrRefused):
		return ExitNothing
	case errors.Is(err, ErrExcluded):
		return ExitExcluded
	}
	return ExitFailed
}

// ExitCodesHelp documents the exit statuses for --help and the README.
const ExitCodesHelp = `Exit status:
  0    every planned cell is in the table
  1    the run or a row failed with an error (logs/ and report.md say why; --resume retries)
  2    bad flags or configuration: nothing was started or created
  3    finished, but some cells are kept out of the table (listed on stderr and in report.md)
  4    nothing publishable: every cell kept out, or the run refused to measure the server
       (a --server-pid that does not own the socket, nothing listening, a partial load,
       a sampled GET that missed)
  130  stopped by SIGINT; 143 stopped by SIGTERM (the finished passes stay for --resume)
`

// notifySignals returns a context cancelled by SIGINT or SIGTERM whose
// cause is an *InterruptedError naming the signal.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			sig, _ := s.(syscall.Signal)
			cancel(&InterruptedError{Signal: sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interrupted wraps err with the signal that cancelled ctx, if one did.
func interrupted(ctx context.Context, err error) error {
	var sig *InterruptedError
	if err == nil || errors.As(err, &sig) || !errors.As(context.Cause(ctx), &sig) {
		return err
	}
	return fmt.Errorf("%w: %w", sig, err)
}

// outcome judges a finished run from its results: nil when every planned
// cell is in the table, else ErrExcluded or ErrNothingPublishable with
// the cells kept out and why.
func outcome(res results.Results) error {
	kept, shown := report.KeptOut(res)
	switch {
	case len(kept) == 0:
		return nil
	case shown == 0 && len(kept) == 1:
		return fmt.Errorf("%w: the only cell is kept out: %s", ErrNothingPublishable, kept[0])
	case shown == 0:
		return fmt.Errorf("%w: all %d cells are kept out: %s", ErrNothingPublishable, len(kept), strings.Join(kept, "; "))
	}
	return fmt.Errorf("%w: %d of %d cells are kept out: %s", ErrExcluded, len(kept), len(res.Cells), strings.Join(kept, "; "))
}

package orchestrator

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

// The tierbench binary as a child the end-to-end tests run: to its end
// (runBinary), or in the background while they watch its bundle and stop
// it (startBackground).

type result struct {
	stdout, stderr string
	code           int
}

func runBinary(t *testing.T, bin string, args ...string) result {
	t.Helper()
	return runBinaryIn(t, "", nil, bin, args...)
}

// runBinaryIn runs the binary to its end in the directory dir ("" is this
// one) with env added to this process's environment.
func runBinaryIn(t *testing.T, dir string, env []string, bin string, args ...string) result {
	t.Helper()
	stdout, stderr, code := testenv.Run(t, dir, env, bin, args...)
	return result{stdout, stderr, code}
}

// background is a `tierbench run` running while the test watches it.
type background struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan error // its Wait error, once it exits
}

// startBackground starts the binary with args; it is killed when the
// test ends.
func startBackground(t *testing.T, bin string, args ...string) *background {
	t.Helper()
	b := &background{cmd: exec.Command(bin, args...), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan error, 1)}
	b.cmd.Stdout, b.cmd.Stderr = b.stdout, b.stderr
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.done <- b.cmd.Wait() }()
	t.Cleanup(func() { b.cmd.Process.Kill() })
	return b
}

// waitPasses waits until the bundle out holds n pass records; a run that
// ends before that fails the test at once with what it said.
func (b *background) waitPasses(t *testing.T, out string, n int) {
	t.Helper()
	b.waitUntil(t, fmt.Sprintf("%d passes", n), 90*time.Second, func() bool {
		recs, _, _ := results.ReadCells(out)
		return len(recs) >= n
	})
}

// waitExitOK waits, up to 5 minutes, for the run to end, and fails the
// test with what it said unless it exited 0.
func (b *background) waitExitOK(t *testing.T) {
	t.Helper()
	select {
	case err := <-b.done:
		if exitCode(err) != 0 {
			t.Fatalf("the run exited %d:\n%s", exitCode(err), b.stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("the run did not end within 5 minutes:\n%s", b.stderr.String())
	}
}

// waitUntil waits until reached says the run got to what; a run that ends
// before that, or does not get there within limit, fails the test at once
// with what it said.
func (b *background) waitUntil(t *testing.T, what string, limit time.Duration, reached func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		if reached() {
			return
		}
		select {
		case err := <-b.done:
			if reached() {
				b.done <- err // it ended just after getting there
				return
			}
			t.Fatalf("the run ended (exit %d) before %s:\n%s", exitCode(err), what, b.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v:\n%s", what, limit, b.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// interrupt stops the run with SIGINT and waits for it to exit as a run
// stopped so exits.
func (b *background) interrupt(t *testing.T) {
	t.Helper()
	b.Stop(t, syscall.SIGINT)
}

// Stop sends the run sig (SIGINT or SIGTERM) and waits for it to exit with
// the status of a run stopped by it.
func (b *background) Stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	want := map[syscall.Signal]int{syscall.SIGINT: ExitSIGINT, syscall.SIGTERM: ExitSIGTERM}[sig]
	b.cmd.Process.Signal(sig)
	select {
	case err := <-b.done:
		if code := exitCode(err); code != want {
			t.Errorf("run stopped by %s exited %d (%v), want %d:\n%s", signalName(sig), code, err, want, b.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("run did not stop within 60 s of %s:\n%s", signalName(sig), b.stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer a child's output goroutine writes while
// the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// exitCode is a finished child's exit status from its Wait error.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

package testenv

import (
	"os/exec"
	"runtime"
)

// startHeld starts cmd from a thread that lives until cmd has exited and
// been reaped, and returns a channel closed then. The kernel sends a
// child's Pdeathsig when the thread that forked it ends, not the process
// (Go issue 27505), and a Go thread ends when a goroutine locked to it
// returns (as tests that enter a network namespace on a thread of their own
// may do): started from an ordinary goroutine, a test's redis-server or
// dockerd could be killed in the middle of the test by someone else's
// thread ending.
func startHeld(cmd *exec.Cmd) (<-chan struct{}, error) {
	exited := make(chan struct{})
	started := make(chan error, 1)
	go func() {
		// Locked and never unlocked: the thread ends with this goroutine,
		// after the child has.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}

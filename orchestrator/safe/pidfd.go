package safe

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Child is a process the run started, known by its pidfd rather than by
// its number: a number is reused once its process is reaped, a pidfd
// never names another process. Go's os.Process holds a pidfd of its own
// and signals through it (Signal returns os.ErrProcessDone once reaped),
// but a process group has no pidfd: kill(-pid) names the group by its
// leader's number. So the child is reaped only under mu, once its pidfd
// says it exited; while reaped is false under mu the leader is at worst a
// zombie, whose number (and group id) no other process can have, and the
// group may be signalled by it.
type Child struct {
	cmd   *exec.Cmd
	pidfd int // ours, -1 once reaped; Go's os.Process holds its own copy
	Done  chan struct{}

	mu     sync.Mutex
	reaped bool
	Err    error // Wait's, once done is closed
}

// StartChild starts cmd (whose SysProcAttr is set) and tracks it by its
// pidfd.
func StartChild(cmd *exec.Cmd) (*Child, error) {
	fd := -1
	cmd.SysProcAttr.PidFD = &fd
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("orchestrator: start %s: %w", strings.Join(cmd.Args, " "), err)
	}
	c := &Child{cmd: cmd, pidfd: fd, Done: make(chan struct{})}
	go c.reap()
	return c, nil
}

// reap waits for the child to exit without reaping it (WNOWAIT), then
// reaps it under mu.
func (c *Child) reap() {
	if c.pidfd >= 0 {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PIDFD, c.pidfd, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
	}
	c.mu.Lock()
	c.Err = c.cmd.Wait()
	c.reaped = true
	if c.pidfd >= 0 {
		unix.Close(c.pidfd)
		c.pidfd = -1
	}
	c.mu.Unlock()
	close(c.Done)
}

func (c *Child) Pid() int { return c.cmd.Process.Pid }

// WhileUnreaped runs f with the child not reaped, so that its pid and the
// group it leads are still its own, and reports whether it ran.
func (c *Child) WhileUnreaped(f func(pid int)) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		return false
	}
	f(c.Pid())
	return true
}

// Kill sends SIGKILL to the child's process group and, through its pidfd,
// to the child, unless it is reaped: then there is nothing of it to kill
// and its number may be another process's.
func (c *Child) Kill() {
	c.WhileUnreaped(func(pid int) {
		syscall.Kill(-pid, syscall.SIGKILL)
		unix.PidfdSendSignal(c.pidfd, unix.SIGKILL, nil, 0)
	})
}

// Wait waits for the child to be reaped and returns Wait's error.
func (c *Child) Wait() error {
	<-c.Done
	return c.Err
}

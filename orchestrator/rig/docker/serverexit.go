package docker

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// exitLines is how many of its last log lines a server that exited
// before it answered is reported with, as the process runtime does.
const exitLines = 10

// containerExit follows a server container from its start to its exit by
// the engine's wait, which answers through the same API for this host's
// engine and another host's, so a server that exits before it answers is
// said at once rather than after the whole wait for its port.
type containerExit struct {
	done   chan struct{} // closed once the engine said the container stopped
	status int64         // its exit status, set before done closes
	msg    string        // the engine's error about the exit, if any
	cancel context.CancelFunc
}

// watchExit starts waiting for container id to stop. It must be called
// once the container has started: "not running" is answered at once for
// one that has already exited.
func (d *Driver) watchExit(id string) *containerExit {
	// Not the caller's context: the wait lasts as long as the server, and
	// ends when Stop cancels it.
	ctx, cancel := context.WithCancel(context.Background())
	e := &containerExit{done: make(chan struct{}), cancel: cancel}
	w := d.Engine.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	go func() {
		select {
		case r := <-w.Result:
			e.status = r.StatusCode
			if r.Error != nil {
				e.msg = r.Error.Message
			}
			close(e.done)
		case <-w.Error:
			// The wait itself failed (cancelled by Stop, or the engine's
			// connection lost): no exit seen, so done stays open and the
			// run waits for the port as it would without a watch.
		}
	}()
	return e
}

// exitedWithin reports whether the container stopped, waiting up to d for
// the engine's answer.
func (e *containerExit) exitedWithin(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-e.done:
		return true
	case <-t.C:
		return false
	}
}

// Exited is closed once the server's container stopped.
func (s *dockerServer) Exited() <-chan struct{} { return s.exit.done }

// ExitReport says how the server's container exited and what the server
// last wrote (its stdout and stderr as the engine keeps them; the whole
// log is saved to the row's log file when the container is removed).
func (s *dockerServer) ExitReport() error {
	<-s.exit.done
	status := "exit status " + strconv.FormatInt(s.exit.status, 10)
	if s.exit.msg != "" {
		status += " (" + s.exit.msg + ")"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return fmt.Errorf("the server's container %s stopped, %s, before it answered; the last lines of its log %s:\n%s",
		short(s.id), status, s.log, s.d.lastLines(ctx, s.id, exitLines))
}

// lastLines is the last n lines container id wrote to stdout and stderr,
// in the order it wrote them, indented.
func (d *Driver) lastLines(ctx context.Context, id string, n int) string {
	rc, err := d.Engine.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(n)})
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	defer rc.Close()
	var all bytes.Buffer
	if _, err := stdcopy.StdCopy(&all, &all, rc); err != nil {
		return "  (" + err.Error() + ")"
	}
	text := strings.TrimRight(all.String(), "\n")
	if text == "" {
		return "  (empty)"
	}
	return "  " + strings.ReplaceAll(text, "\n", "\n  ")
}

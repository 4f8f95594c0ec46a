package docker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// A data dir on a server host elsewhere is held as one on this machine
// is (package safe): flocked for the run's life and marked with its id, so
// that two runs driving one host never share a data dir. The flock is
// taken by `hostprobe --hold --hold-data` in a container of its own on
// that host, which mounts the directory, says "held" once it has it, and
// keeps it until its standard input closes — when the run's attach
// connection drops, however the run ends, as the lease does (lease.go).

// roleDataHold is the data-hold container's role label.
const roleDataHold = "datahold"

// dataHeld is what hostprobe --hold-data prints once it holds the dir.
const dataHeld = "held"

// ErrDataInUse is wrapped by the refusal of a data dir another run holds.
var ErrDataInUse = errors.New("orchestrator: data dir in use")

// HoldData is hostprobe --hold --hold-data: it takes dir for the run the
// marker names, prints dataHeld, and keeps it until stdin closes; then it
// removes the marker and lets go. A dir another run holds, or one holding
// files tierbench did not make, is refused at once.
func HoldData(dir string, runID string, pid int, stdin io.Reader, stdout io.Writer) error {
	c, err := safe.LockDataDir(dir, safe.MarkerRecord{RunID: runID, PID: pid, Started: time.Now().UTC()})
	if err != nil {
		return err
	}
	defer c.Release()
	fmt.Fprintln(stdout, dataHeld)
	io.Copy(io.Discard, stdin)
	return nil
}

// HoldData holds dir on this engine's host for the run: it starts the
// data-hold container with dir mounted, waits for it to say it holds it,
// and keeps its stdin open until close. A dir another run holds is
// refused (ErrConfig) with the holder hostprobe names.
func (d *Driver) HoldData(ctx context.Context, dir string) error {
	pid := d.Owner[:strings.IndexByte(d.Owner+":", ':')]
	cmd := []string{"hostprobe", "--hold", "--hold-data", rig.ContainerDataDir, "--run-id", d.RunID, "--run-pid", pid}
	cfg := &container.Config{Image: d.Image, Cmd: cmd, Labels: d.labels(roleDataHold),
		OpenStdin: true, StdinOnce: true, AttachStdin: true, AttachStdout: true, AttachStderr: true}
	host := &container.HostConfig{NetworkMode: "none", Binds: []string{dir + ":" + rig.ContainerDataDir}}
	resp, err := d.Engine.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: fmt.Sprintf("tierbench-%s-%s-%d", d.RunID, roleDataHold, time.Now().UnixNano())})
	if err != nil {
		return fmt.Errorf("orchestrator: host %s: create the data dir's hold: %w", d.Endpoint.Name, err)
	}
	d.mu.Lock()
	d.ids[resp.ID] = ""
	d.mu.Unlock()
	hijack, err := d.Engine.ContainerAttach(ctx, resp.ID, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("orchestrator: host %s: attach to the data dir's hold: %w", d.Endpoint.Name, err)
	}
	// The container's stdout and stderr, demultiplexed, line by line.
	pr, pw := io.Pipe()
	go func() { _, err := stdcopy.StdCopy(pw, pw, hijack.Reader); pw.CloseWithError(err) }()
	if _, err := d.Engine.ContainerStart(ctx, resp.ID, client.ContainerStartOptions{}); err != nil {
		hijack.Close()
		return fmt.Errorf("orchestrator: host %s: start the data dir's hold: %w", d.Endpoint.Name, err)
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(pr).ReadString('\n')
		line <- strings.TrimSpace(s)
		io.Copy(io.Discard, pr)
	}()
	var said string
	select {
	case said = <-line:
	case <-time.After(60 * time.Second):
		said = "no answer within 60 s"
	case <-ctx.Done():
		hijack.Close()
		return ctx.Err()
	}
	if said != dataHeld {
		hijack.Close()
		said = strings.TrimPrefix(said, "tierbench hostprobe: ")
		if strings.Contains(said, "is in use by") || strings.Contains(said, "did not make") {
			return fmt.Errorf("%w: %w: host %s: %s", fault.ErrConfig, ErrDataInUse, d.Endpoint.Name, said)
		}
		return fmt.Errorf("orchestrator: host %s: hold the data dir %s: %s", d.Endpoint.Name, dir, said)
	}
	d.mu.Lock()
	d.holds = append(d.holds, dataHold{conn: &hijack.HijackedResponse, id: resp.ID})
	d.mu.Unlock()
	return nil
}

// dataHold is one data dir held on an engine's host: the attach
// connection whose closing lets it go, and its container.
type dataHold struct {
	conn *client.HijackedResponse
	id   string
}

// dropHolds lets go of the data dirs this engine's host holds for the run
// and waits (briefly) until each hold has removed its marker and exited,
// so that removing its container cannot cut that short.
func (d *Driver) dropHolds(ctx context.Context) {
	d.mu.Lock()
	holds := d.holds
	d.holds = nil
	d.mu.Unlock()
	for _, h := range holds {
		h.conn.Close()
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, h := range holds {
		w := d.Engine.ContainerWait(wctx, h.id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
		waitC, errC := w.Result, w.Error
		select {
		case <-waitC:
		case <-errC:
		}
	}
}

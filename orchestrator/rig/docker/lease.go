package docker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/orchestrator/safe"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// A run's lease on an engine. The stale-container sweep must tell a
// container whose run is gone from one whose run is alive on another
// machine driving the same engine, where this machine's /proc says nothing.
// So each run keeps one lease container per engine: `hostprobe --hold`,
// which exits when its standard input closes, attached to the run's
// process for its life. When the run ends, however it ends, the attach
// connection drops, the engine closes the container's stdin (StdinOnce)
// and the lease exits: the engine's own view of whether the run is alive.
//
// Invariants: a run takes its lease before it creates any other container
// on that engine, and every container carries its owner label; the sweep
// removes a container only when its owner's lease is not running (or,
// for containers of runs that took no lease, when the owner process named
// in the label is gone from this machine).

// roleLease is the lease container's role label.
const roleLease = "lease"

// TakeLease starts the run's lease container and holds its stdin.
func (d *Driver) TakeLease(ctx context.Context) error {
	cfg := &container.Config{Image: d.Image, Cmd: []string{"hostprobe", "--hold"}, Labels: d.labels(roleLease),
		OpenStdin: true, StdinOnce: true, AttachStdin: true}
	// Named by the owner's nonce: a resumed run shares the run id with
	// the run it completes, whose exited lease may still be there.
	nonce := d.Owner[strings.LastIndexByte(d.Owner, ':')+1:]
	cname := fmt.Sprintf("tierbench-%s-%s-%s", d.RunID, roleLease, nonce)
	resp, err := d.Engine.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: &container.HostConfig{NetworkMode: "none"}, Name: cname})
	if err != nil {
		return fmt.Errorf("orchestrator: host %s: create the run's lease container: %w", d.Endpoint.Name, err)
	}
	d.mu.Lock()
	d.ids[resp.ID] = ""
	d.mu.Unlock()
	hijack, err := d.Engine.ContainerAttach(ctx, resp.ID, client.ContainerAttachOptions{Stream: true, Stdin: true})
	if err != nil {
		return fmt.Errorf("orchestrator: host %s: attach to the run's lease container: %w", d.Endpoint.Name, err)
	}
	if _, err := d.Engine.ContainerStart(ctx, resp.ID, client.ContainerStartOptions{}); err != nil {
		hijack.Close()
		return fmt.Errorf("orchestrator: host %s: start the run's lease container: %w", d.Endpoint.Name, err)
	}
	d.lease, d.leaseID = &hijack.HijackedResponse, resp.ID
	return nil
}

// DropLease lets go of the lease and waits (briefly) for the container to
// exit, so that a sweep after it sees the run as gone.
func (d *Driver) DropLease(ctx context.Context) {
	if d.lease == nil {
		return
	}
	d.lease.Close()
	d.lease = nil
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	w := d.Engine.ContainerWait(wctx, d.leaseID, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	waitC, errC := w.Result, w.Error
	select {
	case <-waitC:
	case <-errC:
	}
}

// staleContainers picks, from the labelled containers of an engine, those
// whose run is gone.
func staleContainers(list []container.Summary) []container.Summary {
	leased := map[string]bool{}   // owner → its lease is running
	hasLease := map[string]bool{} // owner → it took a lease
	for _, c := range list {
		if c.Labels[LabelRole] == roleLease {
			owner := c.Labels[labelOwner]
			hasLease[owner] = true
			leased[owner] = leased[owner] || c.State == "running"
		}
	}
	var stale []container.Summary
	for _, c := range list {
		owner := c.Labels[labelOwner]
		switch {
		case leased[owner]:
			continue // its run holds its lease, here or on another machine
		case !hasLease[owner] && ownerAlive(owner):
			continue // a run without a lease: this machine's /proc decides
		}
		stale = append(stale, c)
	}
	return stale
}

// ownerAlive reads a "pid:starttime[:nonce]" owner label against this
// machine's /proc.
func ownerAlive(owner string) bool {
	f := strings.Split(owner, ":")
	if len(f) < 2 {
		return false
	}
	var pid int
	var start uint64
	if _, err := fmt.Sscanf(f[0]+" "+f[1], "%d %d", &pid, &start); err != nil {
		return false
	}
	return safe.Alive(pid, start)
}

package docker

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"time"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

type dockerServer struct {
	d    *Driver
	id   string
	p    int
	pl   results.Placement
	log  string
	acc  rig.Access     // how the run's probes reach it
	exit *containerExit // the engine's wait for its container to stop
}

func (d *Driver) StartServer(ctx context.Context, s rig.ServerSpec) (rig.ServerHandle, error) {
	return d.StartImage(ctx, s.Image, s)
}

// StartImage starts the server s as a container of img, with the same
// cpusets, binds and labels whatever the image.
func (d *Driver) StartImage(ctx context.Context, img rig.ImageRun, s rig.ServerSpec) (*dockerServer, error) {
	// A server with a directory of its own sees only that one, at the
	// path it has below the data dir: whatever --data's mode, the user the
	// image runs as reaches it, and nothing else of the data dir.
	bind := s.DataDir + ":" + rig.ContainerDataDir
	if s.OwnDir != "" {
		bind = s.OwnDir + ":" + path.Join(rig.ContainerDataDir, filepath.Base(s.OwnDir))
	}
	id, err := d.createOf(ctx, containerSpec{img: img, role: "server", name: s.Name, args: s.Args, cpus: s.CPUs, mems: s.Mems, privileged: true,
		binds: []string{bind}, logPath: s.LogPath, ownDir: s.OwnDir})
	if err != nil {
		if id != "" {
			d.Remove(context.Background(), id)
		}
		return nil, err
	}
	srv := &dockerServer{d: d, id: id, log: s.LogPath, acc: s.Access, exit: d.watchExit(id)}
	d.mu.Lock()
	d.serverID = id
	d.mu.Unlock()
	fail := func(err error) (*dockerServer, error) {
		srv.exit.cancel()
		d.Remove(context.Background(), id)
		return nil, err
	}
	// exitedOr is err, or, when the container has stopped, how the server
	// exited and its last lines: a server that exits at once is said as
	// such, not as a container that "is not running".
	exitedOr := func(err error) error {
		if srv.exit.exitedWithin(5 * time.Second) {
			return fmt.Errorf("orchestrator: %w", srv.ExitReport())
		}
		return err
	}
	if srv.p, err = d.hostPID(ctx, id); err != nil {
		return fail(exitedOr(err))
	}
	var pl results.Placement
	if d.Endpoint.local() {
		pl, err = d.proc.Placement(srv.p)
	} else {
		// Another host's pids mean nothing here: its /proc is read there.
		srv.p = 0
		var a rig.ProbeAnswer
		if a, err = d.Probe(ctx, id, rig.ProbeRequest{PID: 1}); err == nil && a.Placement != nil {
			pl = *a.Placement
		}
	}
	pl.WantCPUs, pl.WantMems = s.CPUs, s.Mems
	if err != nil {
		// Its /proc, or the probe in its container, is gone with it.
		err = exitedOr(err)
	} else {
		err = rig.CheckPlacement("server", pl)
	}
	srv.pl = pl
	if err != nil {
		return fail(err)
	}
	return srv, nil
}

func (s *dockerServer) Pid() int { return s.p }

// FindServer takes the process of the container that owns the socket
// listening on addr as the server from then on: its entrypoint, or the
// real server a launcher in the image started. On another host's engine
// the container's processes are read there, by the probe.
func (s *dockerServer) FindServer(ctx context.Context, addr string, timeout time.Duration) error {
	if !s.d.Endpoint.local() {
		return nil
	}
	root := s.p
	return rig.WaitFor(ctx, timeout, func(context.Context) error {
		pid, err := procfs.Root(s.d.proc).ListenerInTree(root, addr)
		if err == nil {
			s.p = pid
		}
		return err
	})
}

func (s *dockerServer) Mode() string { return s.d.Mode() }

func (s *dockerServer) Placement() results.Placement { return s.pl }

// Probe reads the server's /proc here for the local engine; for another
// host's, through hostprobe in the server's own container.
func (s *dockerServer) Probe(addr string) rig.ServerProbe {
	if s.d.Endpoint.local() {
		return rig.LocalProbe{Addr: addr, Pid: s.p, Proc: s.d.proc, Acc: s.acc}
	}
	return remoteProbe{d: s.d, id: s.id, addr: addr, auth: s.acc.Auth, tls: s.acc.TLS != nil}
}

// Stop stops the server (SIGTERM, 30 s, SIGKILL, as the reference does),
// keeps its log and removes the container.
func (s *dockerServer) Stop(ctx context.Context) error {
	grace := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < grace {
		grace = max(time.Until(dl), time.Second)
	}
	// Fresh contexts: the caller's may be about to expire, and the
	// container must go whatever happens.
	sctx, cancel := context.WithTimeout(context.Background(), grace+30*time.Second)
	defer cancel()
	timeout := int(grace / time.Second)
	_, err := s.d.Engine.ContainerStop(sctx, s.id, client.ContainerStopOptions{Timeout: &timeout})
	err = errors.Join(err, s.d.Remove(sctx, s.id))
	s.exit.cancel()
	return err
}

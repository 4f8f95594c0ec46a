package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/tierbench/tierbench/images"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/diskstats"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// HostsDriver runs the server on one host's engine and the clients on the
// engines of the client hosts (--server-host, --client-hosts). Every
// engine gets the image, the run's labels and its own sweep; everything a
// run asks of a host — its server's /proc, its data dir, its addresses —
// is answered by tierbench itself in a container there.
type HostsDriver struct {
	Server  *Driver
	Clients []*Driver // in --client-hosts order; may hold server
	Engines []*Driver // each engine once, server first
	// NetChecked says the hosts' network preflight ran: once a run.
	NetChecked bool
	// Lead is how far ahead a phase's shared start is set: clientLeadTime,
	// doubled each time a client was not ready in time (runClients).
	Lead time.Duration
}

// NewHostsDriver connects to every host and builds the image on each.
func NewHostsDriver(ctx context.Context, server Endpoint, clients []Endpoint, binary, runID string, warn func(string, ...any)) (*HostsDriver, error) {
	h := &HostsDriver{}
	byHost := map[string]*Driver{}
	connect := func(ep Endpoint) (*Driver, error) {
		if d, ok := byHost[ep.Host]; ok {
			return d, nil
		}
		warn("host %s: connecting to %s, building the image\n", ep.Name, ep.Display())
		d, err := NewDriver(ctx, ep, binary, runID)
		if err != nil {
			return nil, err
		}
		if err := d.TakeLease(ctx); err != nil {
			d.Close(context.Background())
			return nil, err
		}
		d.Warn = warn
		byHost[ep.Host] = d
		h.Engines = append(h.Engines, d)
		return d, nil
	}
	var err error
	if h.Server, err = connect(server); err != nil {
		return nil, err
	}
	for _, ep := range clients {
		d, err := connect(ep)
		if err != nil {
			h.Close(context.Background())
			return nil, err
		}
		h.Clients = append(h.Clients, d)
	}
	return h, nil
}

func (h *HostsDriver) Name() string           { return plan.RuntimeDocker }
func (h *HostsDriver) Host() rig.ServerHost   { return h.Server.Host() }
func (h *HostsDriver) DataPath(string) string { return rig.ContainerDataDir }

// Give copies files into every container on every host.
// Capabilities: the server engine's.
func (h *HostsDriver) Capabilities() rig.Capabilities { return h.Server.Capabilities() }

func (h *HostsDriver) Give(files map[string][]byte) {
	for _, d := range h.Engines {
		d.Give(files)
	}
}

func (h *HostsDriver) StartServer(ctx context.Context, s rig.ServerSpec) (rig.ServerHandle, error) {
	srv, err := h.Server.StartServer(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("host %s: start the server: %w", h.Server.Endpoint.Name, err)
	}
	return srv, nil
}

func (h *HostsDriver) RunClient(ctx context.Context, s rig.ClientSpec) ([]byte, results.Placement, error) {
	if s.Host < 0 || s.Host >= len(h.Clients) {
		return nil, results.Placement{}, fmt.Errorf("orchestrator: client host %d of %d", s.Host, len(h.Clients))
	}
	d := h.Clients[s.Host]
	out, pl, err := d.RunClient(ctx, s)
	if err != nil {
		err = fmt.Errorf("host %s: %w", d.Endpoint.Name, err)
	}
	return out, pl, err
}

func (h *HostsDriver) PreflightAt(ctx context.Context, srv rig.ServerHandle, dataDir string, args []string) ([]byte, error) {
	out, err := h.Server.PreflightAt(ctx, srv, dataDir, args)
	if err != nil {
		err = fmt.Errorf("host %s: %w", h.Server.Endpoint.Name, err)
	}
	return out, err
}

// Close removes every container of the run on every engine, even when
// one of them does not answer.
func (h *HostsDriver) Close(ctx context.Context) error {
	var errs []error
	for _, d := range h.Engines {
		if err := d.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("host %s: %w", d.Endpoint.Name, err))
		}
	}
	return errors.Join(errs...)
}

// RemoveStale sweeps every engine; a container of another run whose owner
// still lives is left alone.
func (h *HostsDriver) RemoveStale(ctx context.Context) []string {
	var did []string
	for _, d := range h.Engines {
		for _, s := range d.RemoveStale(ctx) {
			did = append(did, "host "+d.Endpoint.Name+": "+s)
		}
	}
	return did
}

// exec runs the binary with args inside a running container and returns
// its stdout, stderr and exit code; err is set only when the exec itself
// could not be done.
func (d *Driver) exec(ctx context.Context, id string, args []string) (stdout, stderr []byte, code int, err error) {
	fail := func(err error) ([]byte, []byte, int, error) {
		return nil, nil, 0, fmt.Errorf("orchestrator: exec %s in container %s: %w", args[0], short(id), err)
	}
	ex, err := d.Engine.ExecCreate(ctx, id, client.ExecCreateOptions{
		Cmd:          append([]string{"/" + images.BinaryName}, args...),
		AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return fail(err)
	}
	att, err := d.Engine.ExecAttach(ctx, ex.ID, client.ExecAttachOptions{})
	if err != nil {
		return fail(err)
	}
	defer att.Close()
	var out, errOut bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errOut, att.Reader); err != nil {
		return fail(err)
	}
	in, err := d.Engine.ExecInspect(ctx, ex.ID, client.ExecInspectOptions{})
	if err != nil {
		return fail(err)
	}
	return out.Bytes(), errOut.Bytes(), in.ExitCode, nil
}

func short(id string) string { return id[:min(12, len(id))] }

// Probe runs `tierbench hostprobe` inside a running container.
func (d *Driver) Probe(ctx context.Context, id string, req rig.ProbeRequest) (rig.ProbeAnswer, error) {
	out, stderr, code, err := d.exec(ctx, id, rig.ProbeArgs(req))
	if err == nil && code != 0 {
		err = fmt.Errorf("exited %d: %s", code, bytes.TrimSpace(stderr))
	}
	if err != nil {
		return rig.ProbeAnswer{}, fmt.Errorf("orchestrator: host %s: hostprobe: %w", d.Endpoint.Name, err)
	}
	return rig.ParseProbe(out)
}

// ProbeOnce runs `tierbench hostprobe` in a container of its own on the
// host network, with binds, and removes it.
func (d *Driver) ProbeOnce(ctx context.Context, name string, req rig.ProbeRequest, binds []string) (rig.ProbeAnswer, error) {
	out, status, err := d.RunOnce(ctx, "probe", name, rig.ProbeArgs(req), false, binds, "")
	if err == nil && status != 0 {
		err = fmt.Errorf("exited %d: %s", status, rig.Clip(out))
	}
	if err != nil {
		return rig.ProbeAnswer{}, fmt.Errorf("orchestrator: host %s: hostprobe: %w", d.Endpoint.Name, err)
	}
	return rig.ParseProbe(out)
}

// RunOnce runs one container to completion, returns its stdout and exit
// status, keeps its log at logPath (if any) and removes it.
func (d *Driver) RunOnce(ctx context.Context, role, name string, args []string, privileged bool, binds []string, logPath string) ([]byte, int64, error) {
	id, err := d.Create(ctx, role, name, args, "", "", privileged, binds, logPath)
	if id != "" {
		defer d.Remove(context.Background(), id)
	}
	if err != nil {
		return nil, 0, err
	}
	return d.Wait(ctx, id, name, logPath)
}

// Wait waits for a container to stop and returns its stdout and status.
func (d *Driver) Wait(ctx context.Context, id, name, logPath string) ([]byte, int64, error) {
	w := d.Engine.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNotRunning})
	waitC, errC := w.Result, w.Error
	var status int64
	select {
	case w := <-waitC:
		status = w.StatusCode
		if w.Error != nil {
			return nil, status, fmt.Errorf("orchestrator: %s: %s", name, w.Error.Message)
		}
	case err := <-errC:
		return nil, 0, fmt.Errorf("orchestrator: wait for %s: %w", name, err)
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
	stdout, err := d.saveLogs(ctx, id, logPath)
	return stdout, status, err
}

// remoteProbe answers the runner's questions about a server through
// hostprobe in the server's own container: RESP commands on the address
// it listens on, and /proc/1 — the server is the container's first
// process — for its device reads and placement.
type remoteProbe struct {
	d    *Driver
	id   string
	addr string
	auth string
	tls  bool // the server has a TLS port: hostprobe dials it with the run's files
}

// req is a ProbeRequest to the server's address with the run's access.
func (p remoteProbe) req() rig.ProbeRequest {
	r := rig.ProbeRequest{Addr: p.addr, Auth: p.auth}
	if p.tls {
		r.TLSDir = rig.ContainerTLSDir
	}
	return r
}

func (p remoteProbe) Do(ctx context.Context, args ...string) (any, error) {
	req := p.req()
	req.Command = args
	a, err := p.d.Probe(ctx, p.id, req)
	if err != nil {
		return nil, err
	}
	if f, ok := a.Reply.(float64); ok {
		return int64(f), nil // JSON numbers; DBSIZE fits
	}
	return a.Reply, nil
}

func (p remoteProbe) Counts() bool { return true }

func (p remoteProbe) CPUTicks(ctx context.Context) (rig.ProcTicks, error) {
	a, err := p.d.Probe(ctx, p.id, rig.ProbeRequest{PID: 1})
	if err == nil && (a.CPUTicks == nil || a.CPUSystemTicks == nil || *a.CPUSystemTicks > *a.CPUTicks) {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --pid 1 gave no CPU ticks, or more system ticks than in all", p.d.Endpoint.Name)
	}
	if err != nil {
		return rig.ProcTicks{}, err
	}
	return rig.ProcTicks{User: *a.CPUTicks - *a.CPUSystemTicks, System: *a.CPUSystemTicks}, nil
}

func (p remoteProbe) Evidence(ctx context.Context) (int64, results.Placement, error) {
	a, err := p.d.Probe(ctx, p.id, rig.ProbeRequest{PID: 1})
	if err != nil {
		return 0, results.Placement{}, err
	}
	if a.ReadBytes == nil || a.Placement == nil {
		return 0, results.Placement{}, fmt.Errorf("orchestrator: host %s: hostprobe --pid 1 gave no read_bytes or placement", p.d.Endpoint.Name)
	}
	return *a.ReadBytes, *a.Placement, nil
}

// WriteBytes is not read on a server host elsewhere (hostprobe reports
// read_bytes only): a pass there records no written bytes.
func (p remoteProbe) WriteBytes(context.Context) (int64, error) {
	return 0, fmt.Errorf("orchestrator: host %s: write_bytes is not read across hosts", p.d.Endpoint.Name)
}

func (p remoteProbe) Prove(ctx context.Context) (results.OwnerProof, error) {
	req := p.req()
	req.PID, req.Prove = 1, true
	a, err := p.d.Probe(ctx, p.id, req)
	if err != nil {
		return results.OwnerProof{Addr: p.addr}, err
	}
	if a.Proof == nil {
		return results.OwnerProof{Addr: p.addr}, fmt.Errorf("orchestrator: host %s: hostprobe --prove gave no proof", p.d.Endpoint.Name)
	}
	return *a.Proof, nil
}

func (p remoteProbe) Witness(ctx context.Context) (rig.ServerWitness, error) {
	req := p.req()
	req.Witness = true
	a, err := p.d.Probe(ctx, p.id, req)
	if err == nil && a.Witness == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --witness gave no witness", p.d.Endpoint.Name)
	}
	if err != nil {
		return rig.ServerWitness{}, err
	}
	return *a.Witness, nil
}

func (p remoteProbe) Sample(ctx context.Context, cfg plan.Config, keys []uint64) (results.SampleCheck, error) {
	if keys != nil {
		// Only a cluster's nodes are given their keys, and clusters run
		// on this machine (validate refuses --shards across hosts).
		return results.SampleCheck{}, fmt.Errorf("orchestrator: host %s: a sampled GET check of given keys is not run through hostprobe", p.d.Endpoint.Name)
	}
	req := p.req()
	req.Sample = &rig.SampleRequest{DBSize: cfg.DBSize, KeyLength: cfg.KeyLength, ValueLength: cfg.ValueLength}
	a, err := p.d.Probe(ctx, p.id, req)
	if err == nil && a.Sample == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --sample gave no result", p.d.Endpoint.Name)
	}
	if err != nil {
		return results.SampleCheck{}, err
	}
	return *a.Sample, nil
}

// remoteHost is a server host reached through its Docker engine: the data
// dir is handled in a hostprobe container of its own that mounts it, and
// the disks' counters are read by hostprobe inside the row's server
// container, which runs on that host's kernel.
type remoteHost struct{ d *Driver }

func (h remoteHost) Where() string { return " on host " + h.d.Endpoint.Name }

func (h remoteHost) WipeData(ctx context.Context, dir string) error {
	d := h.d
	out, status, err := d.RunOnce(ctx, "probe", "wipe", rig.ProbeArgs(rig.ProbeRequest{Wipe: rig.ContainerDataDir}), false, []string{dir + ":" + rig.ContainerDataDir}, "")
	switch {
	case err != nil:
		return fmt.Errorf("orchestrator: host %s: hostprobe: %w", d.Endpoint.Name, err)
	case status == rig.ProbeRefused:
		return fmt.Errorf("%w: %w: --data %s on host %s holds files tierbench did not make and never deletes; give an empty or new directory there",
			fault.ErrConfig, safe.ErrForeignData, dir, d.Endpoint.Name)
	case status != 0:
		return fmt.Errorf("orchestrator: host %s: hostprobe: exited %d: %s", d.Endpoint.Name, status, rig.Clip(out))
	}
	return nil
}

func (h remoteHost) DataDisks(ctx context.Context, dir string) ([]string, error) {
	a, err := h.d.ProbeOnce(ctx, "disks", rig.ProbeRequest{DataDisks: rig.ContainerDataDir}, []string{dir + ":" + rig.ContainerDataDir})
	return a.DataDisks, err
}

func (h remoteHost) DiskSample(ctx context.Context, disks []string) (diskstats.Sample, error) {
	a, err := h.inServer(ctx, rig.ProbeRequest{DiskStats: disks})
	if err == nil && a.DiskStats == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --diskstats gave no counters", h.d.Endpoint.Name)
	}
	if err != nil {
		return diskstats.Sample{}, err
	}
	return *a.DiskStats, nil
}

func (h remoteHost) CPUSample(ctx context.Context) (cpustat.Sample, error) {
	a, err := h.inServer(ctx, rig.ProbeRequest{CPUStat: true})
	if err == nil && a.CPUStat == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --cpustat gave no counters", h.d.Endpoint.Name)
	}
	if err != nil {
		return cpustat.Sample{}, err
	}
	return *a.CPUStat, nil
}

// inServer asks hostprobe inside the server container running now.
func (h remoteHost) inServer(ctx context.Context, req rig.ProbeRequest) (rig.ProbeAnswer, error) {
	h.d.mu.Lock()
	id := h.d.serverID
	h.d.mu.Unlock()
	if id == "" {
		return rig.ProbeAnswer{}, fmt.Errorf("orchestrator: host %s: no server container is running to read its counters in", h.d.Endpoint.Name)
	}
	return h.d.Probe(ctx, id, req)
}

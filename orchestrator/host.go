package orchestrator

import (
	"context"
	"fmt"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/safe"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/diskstats"
)

// serverHost is the one door to the machine a row's servers run on, for
// what the run does or observes there besides RESP: emptying the data
// dir, finding the disks below it, and sampling those disks' counters and
// the host's CPU time counters around every GET phase (the server
// process's own counters are its serverProbe's). The driver hands it
// out (driver.host): this machine for processes and the local engine, and
// `tierbench hostprobe` in containers on the engine of a server host
// elsewhere, so nothing of the server's machine is ever read here by
// mistake.
type serverHost interface {
	// where names the host in progress lines: "" for this machine.
	where() string
	wipeData(ctx context.Context, dir string) error
	dataDisks(ctx context.Context, dir string) ([]string, error)
	diskSample(ctx context.Context, disks []string) (diskstats.Sample, error)
	// cpuSample reads the host's /proc/stat CPU time counters.
	cpuSample(ctx context.Context) (cpustat.Sample, error)
}

// localHost is this machine.
type localHost struct{}

func (localHost) where() string                                { return "" }
func (localHost) wipeData(_ context.Context, dir string) error { return safe.WipeDir(dir) }

func (localHost) dataDisks(_ context.Context, dir string) ([]string, error) {
	return hostcheck.DataDisks(dir)
}

func (localHost) diskSample(_ context.Context, disks []string) (diskstats.Sample, error) {
	return diskstats.Read("/", disks)
}

func (localHost) cpuSample(context.Context) (cpustat.Sample, error) { return cpustat.Read("/") }

// remoteHost is a server host reached through its Docker engine: the data
// dir is handled in a hostprobe container of its own that mounts it, and
// the disks' counters are read by hostprobe inside the row's server
// container, which runs on that host's kernel.
type remoteHost struct{ d *dockerDriver }

func (h remoteHost) where() string { return " on host " + h.d.ep.Name }

func (h remoteHost) wipeData(ctx context.Context, dir string) error {
	d := h.d
	out, status, err := d.runOnce(ctx, "probe", "wipe", probeArgs(ProbeRequest{Wipe: containerDataDir}), false, []string{dir + ":" + containerDataDir}, "")
	switch {
	case err != nil:
		return fmt.Errorf("orchestrator: host %s: hostprobe: %w", d.ep.Name, err)
	case status == ProbeRefused:
		return fmt.Errorf("%w: %w: --data %s on host %s holds files tierbench did not make and never deletes; give an empty or new directory there",
			fault.ErrConfig, safe.ErrForeignData, dir, d.ep.Name)
	case status != 0:
		return fmt.Errorf("orchestrator: host %s: hostprobe: exited %d: %s", d.ep.Name, status, clip(out))
	}
	return nil
}

func (h remoteHost) dataDisks(ctx context.Context, dir string) ([]string, error) {
	a, err := h.d.probeOnce(ctx, "disks", ProbeRequest{DataDisks: containerDataDir}, []string{dir + ":" + containerDataDir})
	return a.DataDisks, err
}

func (h remoteHost) diskSample(ctx context.Context, disks []string) (diskstats.Sample, error) {
	a, err := h.inServer(ctx, ProbeRequest{DiskStats: disks})
	if err == nil && a.DiskStats == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --diskstats gave no counters", h.d.ep.Name)
	}
	if err != nil {
		return diskstats.Sample{}, err
	}
	return *a.DiskStats, nil
}

func (h remoteHost) cpuSample(ctx context.Context) (cpustat.Sample, error) {
	a, err := h.inServer(ctx, ProbeRequest{CPUStat: true})
	if err == nil && a.CPUStat == nil {
		err = fmt.Errorf("orchestrator: host %s: hostprobe --cpustat gave no counters", h.d.ep.Name)
	}
	if err != nil {
		return cpustat.Sample{}, err
	}
	return *a.CPUStat, nil
}

// inServer asks hostprobe inside the server container running now.
func (h remoteHost) inServer(ctx context.Context, req ProbeRequest) (ProbeAnswer, error) {
	h.d.mu.Lock()
	id := h.d.serverID
	h.d.mu.Unlock()
	if id == "" {
		return ProbeAnswer{}, fmt.Errorf("orchestrator: host %s: no server container is running to read its counters in", h.d.ep.Name)
	}
	return h.d.probe(ctx, id, req)
}

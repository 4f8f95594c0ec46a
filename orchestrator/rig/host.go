package rig

import (
	"context"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/diskstats"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// ServerHost is the one door to the machine a row's servers run on, for
// what the run does or observes there besides RESP: emptying the data
// dir, finding the disks below it, and sampling those disks' counters and
// the host's CPU time counters around every GET phase (the server
// process's own counters are its serverProbe's). The driver hands it
// out (driver.host): this machine for processes and the local engine, and
// `tierbench hostprobe` in containers on the engine of a server host
// elsewhere, so nothing of the server's machine is ever read here by
// mistake.
type ServerHost interface {
	// Where names the host in progress lines: "" for this machine.
	Where() string
	WipeData(ctx context.Context, dir string) error
	DataDisks(ctx context.Context, dir string) ([]string, error)
	DiskSample(ctx context.Context, disks []string) (diskstats.Sample, error)
	// CPUSample reads the host's /proc/stat CPU time counters.
	CPUSample(ctx context.Context) (cpustat.Sample, error)
}

// LocalHost is this machine.
type LocalHost struct{}

func (LocalHost) Where() string                                { return "" }
func (LocalHost) WipeData(_ context.Context, dir string) error { return safe.WipeDir(dir) }

func (LocalHost) DataDisks(_ context.Context, dir string) ([]string, error) {
	return hostcheck.DataDisks(dir)
}

func (LocalHost) DiskSample(_ context.Context, disks []string) (diskstats.Sample, error) {
	return diskstats.Read("/", disks)
}

func (LocalHost) CPUSample(context.Context) (cpustat.Sample, error) { return cpustat.Read("/") }

package orchestrator

import (
	"context"

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

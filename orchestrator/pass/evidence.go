package pass

import (
	"context"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/diskstats"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// diskReading is the data disks' and the CPUs' counters read just before
// a GET phase, on the server's host.
type diskReading struct {
	disk   diskstats.Sample
	err    error
	cpu    cpustat.Sample
	cpuErr error
}

// diskBefore reads the data disks' and the CPUs' counters where the
// server runs.
func (r *Runner) diskBefore(ctx context.Context) diskReading {
	var s diskReading
	host := r.env.Host()
	if len(r.disks) > 0 {
		s.disk, s.err = host.DiskSample(ctx, r.disks)
	}
	s.cpu, s.cpuErr = host.CPUSample(ctx)
	return s
}

// serverSteal is the steal of the server's CPUs (its placement's
// Cpus_allowed_list; every CPU when that is unknown) between two readings
// of its host; nil when it cannot be told, which leaves the pass without
// it rather than failing it.
func serverSteal(before, after cpustat.Sample, cpus string) *float64 {
	if cpus == "" {
		return cpustat.Between(before, after, nil)
	}
	set, err := cpulist.Parse(cpus)
	if err != nil {
		return nil
	}
	return cpustat.Between(before, after, set)
}

// recordDisks reads the disks' counters again after the phase and puts
// the change into rec's evidence. A counter that cannot be read leaves a
// note instead of failing the pass.
func (r *Runner) recordDisks(ctx context.Context, before diskReading, rec *results.PassRecord) {
	ev := &rec.PassEvidence
	host := r.env.Host()
	if before.cpuErr == nil {
		if after, err := host.CPUSample(ctx); err == nil {
			ev.ServerStealShare = serverSteal(before.cpu, after, rec.Server.CPUs)
		}
	}
	switch {
	case len(r.disks) == 0:
		ev.DiskNote = r.note
	case before.err != nil:
		ev.DiskNote = before.err.Error()
	default:
		after, err := host.DiskSample(ctx, r.disks)
		var d diskstats.Delta
		if err == nil {
			d, err = after.Since(before.disk)
		}
		if err != nil {
			ev.DiskNote = err.Error()
			break
		}
		ev.DiskDevices = r.disks
		ev.DiskReads, ev.DiskWeightedMs, ev.DiskWindowSeconds = d.ReadsCompleted, d.WeightedMs, d.Seconds
	}
}

// ResolveDisks finds the physical disks below dir, where the servers'
// data lives, once per run, before its first pass. The target source
// says where that is; "" where it is not known (an external server whose
// data dir the user did not name), and then no disk is sampled: any
// other disk would be a stranger's evidence.
func (r *Runner) ResolveDisks(ctx context.Context, dir string) {
	cfg := r.env.Config()
	if cfg.Spec().InRAM {
		r.note = "--scenario " + cfg.ScenarioName() + " keeps the data in RAM"
		r.printf("evidence: no disk counters (%s); the server's CPU is still sampled\n", r.note)
		return
	}
	if dir == "" {
		r.note = "the external server's data dir was not named (--data)"
		r.printf("evidence: no disk counters (%s); the server's CPU is still sampled\n", r.note)
		return
	}
	host := r.env.Host()
	disks, err := host.DataDisks(ctx, dir)
	if err != nil {
		r.note = err.Error()
		r.printf("%sevidence: no disk counters: %v\n", r.env.HostPrefix(), err)
		return
	}
	r.disks = disks
	there := ""
	if host.Where() != "" {
		there = ", read there"
	}
	r.printf("%sevidence: /proc/diskstats of %s (below %s) and the server's /proc/<pid>/stat around every GET phase%s\n", r.env.HostPrefix(), strings.Join(disks, "+"), dir, there)
}

// evidenceLine is the progress line's account of one pass's evidence.
func evidenceLine(rec results.PassRecord) string {
	var s string
	if len(rec.DiskDevices) > 0 {
		s += fmt.Sprintf(", disk %s r/s at depth %.0f", human.Ops(rec.DiskReadsPerSec), rec.DiskQueueDepth)
	}
	if rec.ServerCPUs > 0 {
		s += fmt.Sprintf(", server CPU %.0f %% of %d", 100*rec.ServerCPUShare, rec.ServerCPUs)
	}
	if rec.ServerCPUBound {
		s += " [server-cpu-bound]"
	}
	return s
}

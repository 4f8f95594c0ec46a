package ladder

import (
	"context"
	"fmt"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// The fio rung is measured again in every round of the lower layers,
// between Device and KV, instead of being taken only from the preflight:
// the preflight ran minutes before the rungs, and a disk's speed can drift
// within minutes (a quick ladder's Device rung once read well below the
// preflight's fio while the RESP cell above it read more than the rung, and
// the ladder named a device-side gap that was the disk's drift;
// docs/notes/2026-12-07-comment-figures.md has the figures). fio runs at
// the ceiling's best point (its jobs × iodepth, engine, registration and
// CPUs) over the Device rung's own file, read-only: the same disk, the same
// moment, no file of its own to lay out.

// fioAgain runs one round of the fio rung over file; the layer's error
// says why it could not.
func (r *run) fioAgain(ctx context.Context, base *hostcheck.FIOBaseline, place rungPlace, file string) results.LadderLayer {
	layer := results.LadderLayer{Layer: LayerFio}
	best, ok := base.Best()
	if !ok {
		layer.Error = "the fio curve has no points"
		return layer
	}
	// Read-only 512 B reads as the ceiling's sweep read (see
	// hostcheck.FIOBaseline.ReadJob).
	job := base.ReadJob()
	job.Filenames, job.ReadOnly, job.BlockBytes, job.Jobs, job.IODepth = []string{file}, true, 512, best.Jobs, best.IODepth
	job.RuntimeSeconds = r.ladderSeconds()
	res, err := fio.Run(ctx, job)
	if err != nil {
		layer.Error = err.Error()
		return layer
	}
	where := "free on the host"
	if base.CPUs != "" {
		where = "on the server's CPUs " + base.CPUs
	}
	c := res.CPU(place.cpuCount)
	layer.OpsPerSec, layer.CPUMicrosPerOp = res.IOPS, c.MicrosPerRead
	layer.Detail = fmt.Sprintf("fio %s at the ceiling's best point, %d × %d in flight, 512 B random reads over the Device rung's file (read-only), %s", base.Engine, best.Jobs, best.IODepth, where)
	if c.Bound {
		layer.Detail += fmt.Sprintf(", cpu-bound (%.0f %% of its CPUs)", 100*c.Share)
	}
	return layer
}

// fioRung is the ladder's fio rung: its rounds' median (measured) beside
// what the preflight said (pre); pre itself, saying why, when the rounds
// failed.
func fioRung(pre, measured results.LadderLayer) results.LadderLayer {
	if measured.Error != "" {
		pre.Detail += "; measured again beside the other layers: failed (" + measured.Error + "), so the preflight's figure stands"
		return pre
	}
	measured.Detail += fmt.Sprintf("; the preflight's ceiling was %s IOPS", human.Ops(pre.OpsPerSec))
	return measured
}

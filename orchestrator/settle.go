package orchestrator

import (
	"context"
	"strings"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/settle"
	"github.com/tierbench/tierbench/results"
)

// After a load, before the warm-up and the passes, the disk is probed
// until it reads at its ceiling again (results.DiskSettle says why, and
// package settle holds the rule). The probe is the ceiling's best point
// (its jobs × iodepth, its CPUs) over the server's own files, read-only,
// with the server idle: what the passes will read, at the depth the disk
// does best.

// settleDisk probes the disk after row's load; nil where there is nothing
// to hold the disk against (no fio ceiling, a dataset in RAM, a cluster's
// several data dirs, --no-fio) or no file to read.
func (r *runner) settleDisk(ctx context.Context, row results.Row, tgt rowTarget) *results.DiskSettle {
	base := r.rowBaseline(row)
	if base == nil || r.cfg.NoFio || tgt.cluster || !ceilingApplies(r.cfg) {
		return nil
	}
	best, ok := base.Best()
	files, _, _ := serverFiles(r.cfg.DataDir)
	if !ok || len(files) == 0 {
		return nil
	}
	return r.awaitDisk(ctx, titleCase(row.Backend)+" "+row.Label+": disk after the load", best.IOPS,
		readJob(base, files, best.Jobs, best.IODepth))
}

// awaitDisk runs job (its runtime aside) as settle.ProbeSeconds probes until
// settle.Verdict ends the wait, printing each probe after what.
func (r *runner) awaitDisk(ctx context.Context, what string, ceilingIOPS float64, job fio.Job) *results.DiskSettle {
	job.RuntimeSeconds = settle.ProbeSeconds
	s := &results.DiskSettle{ProbeSeconds: settle.ProbeSeconds, Jobs: job.Jobs, IODepth: job.IODepth, CeilingIOPS: ceilingIOPS}
	o, err := settle.Await(ceilingIOPS, func() (float64, error) {
		res, err := fio.Run(ctx, job)
		return res.IOPS, err
	}, func(iops float64) {
		r.printf("%s: %s IOPS (%.0f %% of the %s ceiling)\n", what, FormatOps(iops), 100*iops/ceilingIOPS, FormatOps(ceilingIOPS))
	})
	s.ProbeIOPS, s.Seconds, s.Settled, s.Why = o.Probes, o.Seconds, o.Settled, o.Why
	if err != nil {
		s.Why = "fio failed: " + err.Error()
	}
	if !s.Settled {
		r.printf("%s: not back to %.0f %% of the ceiling (%s); measuring anyway\n", what, 100*results.SettleShare, strings.TrimPrefix(s.Why, "fio failed: "))
	}
	return s
}

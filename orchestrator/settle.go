package orchestrator

import (
	"context"
	"strings"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/settle"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// After a load, before the warm-up and the passes, the disk is probed
// until it reads at its ceiling again (results.DiskSettle says why, and
// package settle holds the rule). The probe is the ceiling's best point
// (its jobs × iodepth, its CPUs) over the server's own files, read-only,
// with the server idle: what the passes will read, at the depth the disk
// does best.

// ceilingProbe is fio at row's ceiling's best point (its jobs × iodepth,
// its CPUs) over the server's own files, read-only, with the ceiling's
// IOPS; ok is false where there is nothing to hold the disk against (no
// fio ceiling, a dataset in RAM, a cluster's several data dirs, --no-fio)
// or no file to read.
func (r *runner) ceilingProbe(row results.Row, tgt target.Server) (job fio.Job, ceilingIOPS float64, ok bool) {
	base := r.rowBaseline(row)
	if base == nil || r.cfg.NoFio || tgt.Cluster || !plan.CeilingApplies(r.cfg) {
		return fio.Job{}, 0, false
	}
	best, ok := base.Best()
	files, _, _ := serverFiles(r.cfg.DataDir)
	if !ok || len(files) == 0 {
		return fio.Job{}, 0, false
	}
	return readJob(base, files, best.Jobs, best.IODepth), best.IOPS, true
}

// settleDisk probes the disk after row's load; nil where ceilingProbe has
// nothing.
func (r *runner) settleDisk(ctx context.Context, row results.Row, tgt target.Server) *results.DiskSettle {
	job, ceiling, ok := r.ceilingProbe(row, tgt)
	if !ok {
		return nil
	}
	return r.awaitDisk(ctx, titleCase(row.Backend)+" "+row.Label+": disk after the load", ceiling, job)
}

// fioBeside runs the ceiling's probe for results.BesideSeconds right after
// a pass, its server idle, and returns its IOPS: the pass is then also
// held against fio side by side, not only against a ceiling measured
// before any row ran (this disk's speed swings by a third in phases of
// tens of seconds: a row that ran in a slow phase read 72-77 % of a
// ceiling taken in a fast one while fio right after it read less than the
// server). 0 where ceilingProbe has nothing, or fio failed (said, not
// fatal: the pass stands against its ceiling).
func (r *runner) fioBeside(ctx context.Context, row results.Row, tgt target.Server) float64 {
	job, _, ok := r.ceilingProbe(row, tgt)
	if !ok {
		return 0
	}
	job.RuntimeSeconds = results.BesideSeconds
	res, err := fio.Run(ctx, job)
	if err != nil {
		if ctx.Err() == nil {
			r.printf("  fio beside the pass failed (the pass stands against its ceiling alone): %v\n", err)
		}
		return 0
	}
	return res.IOPS
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

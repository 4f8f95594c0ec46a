package ceiling

import (
	"context"
	"strings"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/settle"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// After a load, before the warm-up and the passes, the disk is probed
// until it reads at its ceiling again (results.DiskSettle says why, and
// package settle holds the rule). The probe is the ceiling's best point
// (its jobs × iodepth, its CPUs) over the server's own files, read-only,
// with the server idle: what the passes will read, at the depth the disk
// does best.

// probe is fio at row's ceiling's best point (its jobs × iodepth,
// its CPUs) over the server's own files, read-only, with the ceiling's
// IOPS; ok is false where there is nothing to hold the disk against (no
// fio ceiling, a dataset in RAM, a cluster's several data dirs, --no-fio)
// or no file to read.
func probe(env Env, row results.Row, tgt target.Server) (job fio.Job, ceilingIOPS float64, ok bool) {
	base := RowBaseline(env.Bundle, row)
	if base == nil || !env.FioPlanned || tgt.Cluster {
		return fio.Job{}, 0, false
	}
	best, ok := base.Best()
	files, _, _ := serverFiles(env.Config.DataDir)
	if !ok || len(files) == 0 {
		return fio.Job{}, 0, false
	}
	return readJob(base, files, best.Jobs, best.IODepth), best.IOPS, true
}

// SettleDisk probes the disk after row's load; nil where probe has
// nothing.
func SettleDisk(ctx context.Context, env Env, row results.Row, tgt target.Server) *results.DiskSettle {
	job, ceiling, ok := probe(env, row, tgt)
	if !ok {
		return nil
	}
	return AwaitDisk(ctx, env, human.Title(row.Backend)+" "+row.Label+": disk after the load", ceiling, job)
}

// Beside runs the ceiling's probe for results.BesideSeconds right after
// a pass, its server idle, and returns its IOPS: the pass is then also
// held against fio side by side, not only against a ceiling measured
// before any row ran (this disk's speed swings in phases of tens of
// seconds: a row that ran in a slow phase read well below a ceiling taken
// in a fast one while fio right after it read less than the server). 0
// where probe has nothing, or fio failed (said, not fatal: the pass stands
// against its ceiling).
func Beside(ctx context.Context, env Env, row results.Row, tgt target.Server) float64 {
	job, _, ok := probe(env, row, tgt)
	if !ok {
		return 0
	}
	job.RuntimeSeconds = results.BesideSeconds
	res, err := fio.Run(ctx, job)
	if err != nil {
		if ctx.Err() == nil {
			env.Printf("  fio beside the pass failed (the pass stands against its ceiling alone): %v\n", err)
		}
		return 0
	}
	return res.IOPS
}

// AwaitDisk runs job (its runtime aside) as settle.ProbeSeconds probes until
// settle.Verdict ends the wait, printing each probe after what.
func AwaitDisk(ctx context.Context, env Env, what string, ceilingIOPS float64, job fio.Job) *results.DiskSettle {
	job.RuntimeSeconds = settle.ProbeSeconds
	s := &results.DiskSettle{ProbeSeconds: settle.ProbeSeconds, Jobs: job.Jobs, IODepth: job.IODepth, CeilingIOPS: ceilingIOPS}
	o, err := settle.Await(ceilingIOPS, func() (float64, error) {
		res, err := fio.Run(ctx, job)
		return res.IOPS, err
	}, func(iops float64) {
		env.Printf("%s: %s IOPS (%.0f %% of the %s ceiling)\n", what, human.Ops(iops), 100*iops/ceilingIOPS, human.Ops(ceilingIOPS))
	})
	s.ProbeIOPS, s.Seconds, s.Settled, s.Why = o.Probes, o.Seconds, o.Settled, o.Why
	if err != nil {
		s.Why = "fio failed: " + err.Error()
	}
	if !s.Settled {
		env.Printf("%s: not back to %.0f %% of the ceiling (%s); measuring anyway\n", what, 100*results.SettleShare, strings.TrimPrefix(s.Why, "fio failed: "))
	}
	return s
}

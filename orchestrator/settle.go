package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/results"
)

// After a load, before the warm-up and the passes, the disk is probed
// until it reads at its ceiling again (results.DiskSettle says why). The
// probe is the ceiling's best point (its jobs × iodepth, its CPUs) over
// the server's own files, read-only, with the server idle: what the
// passes will read, at the depth the disk does best.
const (
	settleProbeSeconds = 2
	// settleMaxWait bounds the wait; the passes then start anyway and the
	// bundle says the disk had not settled.
	settleMaxWait = 3 * time.Minute
	// A probe must beat the fastest so far by settleGrowth to count as
	// the disk still recovering; settleFlatProbes probes in a row that do
	// not end the wait below the ceiling (a disk slower today than at
	// preflight, or shared).
	settleGrowth     = 0.05
	settleFlatProbes = 3
)

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
	return r.settle(ctx, titleCase(row.Backend)+" "+row.Label+": disk after the load", best.IOPS,
		fio.Job{Filenames: files, ReadOnly: true, BlockBytes: 512, Jobs: best.Jobs, IODepth: best.IODepth,
			Engine: base.Engine, CPUs: base.CPUs, Mems: base.Mems, Registered: base.Registered})
}

// settle runs job (its runtime aside) as settleProbeSeconds probes until
// settleVerdict ends the wait, printing each probe after what.
func (r *runner) settle(ctx context.Context, what string, ceilingIOPS float64, job fio.Job) *results.DiskSettle {
	job.RuntimeSeconds = settleProbeSeconds
	s := &results.DiskSettle{ProbeSeconds: settleProbeSeconds, Jobs: job.Jobs, IODepth: job.IODepth, CeilingIOPS: ceilingIOPS}
	start := time.Now()
	for {
		res, err := fio.Run(ctx, job)
		if err != nil {
			s.Why = "fio failed: " + err.Error()
			break
		}
		s.ProbeIOPS = append(s.ProbeIOPS, res.IOPS)
		r.printf("%s: %s IOPS (%.0f %% of the %s ceiling)\n", what, FormatOps(res.IOPS), 100*res.IOPS/ceilingIOPS, FormatOps(ceilingIOPS))
		var done bool
		if done, s.Settled, s.Why = settleVerdict(s.ProbeIOPS, ceilingIOPS, time.Since(start)); done {
			break
		}
	}
	s.Seconds = time.Since(start).Seconds()
	if !s.Settled {
		r.printf("%s: not back to %.0f %% of the ceiling (%s); measuring anyway\n", what, 100*results.SettleShare, strings.TrimPrefix(s.Why, "fio failed: "))
	}
	return s
}

// settleVerdict says whether the probes so far end the wait: settled once
// the last reads results.SettleShare of the ceiling; else ended, with why,
// after settleFlatProbes probes in a row that did not beat the fastest
// before them by settleGrowth, or after settleMaxWait.
func settleVerdict(probeIOPS []float64, ceilingIOPS float64, waited time.Duration) (done, settled bool, why string) {
	last := probeIOPS[len(probeIOPS)-1]
	if last >= results.SettleShare*ceilingIOPS {
		return true, true, ""
	}
	fastest, flat := 0.0, 0
	for _, v := range probeIOPS {
		if v > fastest*(1+settleGrowth) {
			fastest, flat = v, 0
		} else {
			flat++
		}
	}
	if flat >= settleFlatProbes {
		return true, false, fmt.Sprintf("%d probes in a row no faster than %s IOPS", flat, FormatOps(fastest))
	}
	if waited >= settleMaxWait {
		return true, false, fmt.Sprintf("still below it after %v", settleMaxWait)
	}
	return false, false, ""
}

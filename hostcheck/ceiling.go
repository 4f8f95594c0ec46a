package hostcheck

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierbench/tierbench/internal/fio"
)

// FIOBaseline is the fio random-read ceiling: a depth sweep at 512 B whose
// highest IOPS is the ceiling, and one 4 KiB run at that depth. Jobs and
// IODepth are the best point's; Sweep keeps the whole curve.
type FIOBaseline struct {
	Version        string      `json:"version"`
	Engine         string      `json:"engine"`
	Jobs           int         `json:"jobs"`
	IODepth        int         `json:"iodepth"`
	Files          int         `json:"files"`
	FileBytes      int64       `json:"file_bytes"`
	RuntimeSeconds int         `json:"runtime_seconds"` // per step
	Results        []FIOResult `json:"results"`

	// MaxDepth is the depth the sweep had to reach: the reads in flight
	// the server keeps at most (its throttle limit).
	MaxDepth int `json:"max_depth"`
	// Sweep is the 512 B depth curve in the order measured.
	Sweep        []FIOPoint `json:"sweep"`
	StoppedEarly bool       `json:"stopped_early"`
	SweepNote    string     `json:"sweep_note,omitempty"`
	// Footprint says what fio read (FootprintFioFiles here) and
	// FootprintBytes how much: a ceiling measured on a smaller footprint
	// than the server reads is too high (caches), on a larger one too low.
	Footprint      string `json:"footprint"`
	FootprintBytes int64  `json:"footprint_bytes"`
}

// FIOPoint is one depth of the sweep.
type FIOPoint struct {
	Depth   int `json:"depth"` // jobs × iodepth reads in flight
	Jobs    int `json:"jobs"`
	IODepth int `json:"iodepth"`
	FIOResult
}

// FootprintFioFiles: the baseline read fio's own files, sized by
// --fio-files × --fio-size (the orchestrator makes them as large as the
// dataset).
const FootprintFioFiles = "fio-files"

// Sweep stopping rule: a step must beat the best IOPS so far by more than
// sweepMinGrowth to count as growth, and sweepFlatSteps steps in a row
// without growth end the sweep (unless Config.FIOFullSweep).
const (
	sweepMinGrowth = 0.02
	sweepFlatSteps = 2
)

// PointOf turns one measured sweep step into its preflight.json form.
func PointOf(p fio.Point) FIOPoint {
	return FIOPoint{Depth: p.Depth(), Jobs: p.Jobs, IODepth: p.IODepth, FIOResult: resultOf(p.Result)}
}

func resultOf(r fio.Result) FIOResult {
	fr := FIOResult{BlockBytes: r.BlockBytes, IOPS: r.IOPS, BandwidthKiBps: r.BandwidthKiBps, UsrCPU: r.UsrCPU, SysCPU: r.SysCPU}
	fr.ClatUs.P50, fr.ClatUs.P99, fr.ClatUs.P999 = r.ClatUs.P50, r.ClatUs.P99, r.ClatUs.P999
	return fr
}

// runBaseline sweeps depth at 512 B over job's files, measures 4 KiB at
// the best depth, and removes fio's files after.
func runBaseline(ctx context.Context, run func(context.Context, fio.Job) (fio.Result, error), job fio.Job, maxDepth, maxJobs int, full bool) (*FIOBaseline, error) {
	defer func() {
		for i := range job.Files {
			os.Remove(filepath.Join(job.Dir, fmt.Sprintf("tierbench-fio.%d", i)))
		}
	}()
	sw := fio.Sweep{Job: job, Steps: fio.DepthLadder(maxDepth, maxJobs), MinGrowth: sweepMinGrowth, Run: run}
	if !full {
		sw.FlatSteps = sweepFlatSteps
	}
	sw.Job.BlockBytes = 512
	res, err := sw.Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("fio %s random read at 512 B: %w", job.Engine, err)
	}
	best := res.BestPoint()
	base := &FIOBaseline{Version: best.Result.Version, Engine: job.Engine, Jobs: best.Jobs, IODepth: best.IODepth, Files: job.Files,
		FileBytes: job.FileBytes, RuntimeSeconds: job.RuntimeSeconds, MaxDepth: maxDepth,
		StoppedEarly: res.StoppedEarly, SweepNote: res.Note,
		Footprint: FootprintFioFiles, FootprintBytes: int64(job.Files) * job.FileBytes}
	for _, p := range res.Points {
		pt := PointOf(p)
		pt.BlockBytes = 512
		base.Sweep = append(base.Sweep, pt)
	}
	r512 := resultOf(best.Result)
	r512.BlockBytes = 512
	job.BlockBytes, job.Jobs, job.IODepth = 4096, best.Jobs, best.IODepth
	r4k, err := run(ctx, job)
	if err != nil {
		return nil, fmt.Errorf("fio %s random read at 4096 B: %w", job.Engine, err)
	}
	fr := resultOf(r4k)
	fr.BlockBytes = 4096
	base.Results = []FIOResult{r512, fr}
	return base, nil
}

func baselineCheck(base *FIOBaseline, err error) Check {
	c := Check{Name: CheckFIO}
	if errors.Is(err, fio.ErrNotInstalled) {
		c.Status, c.Detail = Warn, "fio is not installed: apt-get install fio (or scripts/install-deps.sh); no random-read ceiling measured"
		return c
	}
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		return c
	}
	var curve []string
	for _, p := range base.Sweep {
		curve = append(curve, fmt.Sprintf("%d: %s", p.Depth, countLabel(p.IOPS)))
	}
	var parts []string
	for _, r := range base.Results {
		parts = append(parts, fmt.Sprintf("%s %s IOPS (%.0f KiB/s, clat p50 %.0f µs p99 %.0f µs p99.9 %.0f µs)",
			blockLabel(r.BlockBytes), countLabel(r.IOPS), r.BandwidthKiBps, r.ClatUs.P50, r.ClatUs.P99, r.ClatUs.P999))
	}
	c.Status = Pass
	c.Detail = fmt.Sprintf("%s, %s, %d files × %s, %d s per step; 512 B depth sweep (reads in flight: IOPS) %s; ceiling at %d jobs × QD%d: %s",
		base.Version, base.Engine, base.Files, humanBytes(base.FileBytes), base.RuntimeSeconds,
		strings.Join(curve, ", "), base.Jobs, base.IODepth, strings.Join(parts, "; "))
	if base.SweepNote != "" {
		c.Detail += "; " + base.SweepNote
	}
	return c
}

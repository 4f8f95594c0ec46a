package ceiling

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
)

// FootprintSegmentFiles: fio read the server's own segment files,
// read-only, after its row's passes.
const FootprintSegmentFiles = "segment-files"

// Baselines reads the preflight fio baselines of the bundle in dir: the
// host's and the one pinned to the pinned server's CPUs (nil when not
// measured).
func Baselines(dir string) (host, pinned *hostcheck.FIOBaseline) {
	raw, err := os.ReadFile(filepath.Join(dir, results.FilePreflight))
	if err != nil {
		return nil, nil
	}
	return report.FIOBaseline(raw), report.FIOPinned(raw)
}

// RowBaseline is the fio curve row is held against, from the bundle in
// dir: the one on the pinned server's CPUs for a pinned row, when
// measured, else the host's; nil without a host baseline.
func RowBaseline(dir string, row results.Row) *hostcheck.FIOBaseline {
	host, pinned := Baselines(dir)
	if host == nil || len(host.Results) == 0 {
		return nil
	}
	if row.Pin == plan.PinPinned && pinned != nil && len(pinned.Results) > 0 {
		return pinned
	}
	return host
}

// Recheck runs after a row's passes, with its server idle: every
// cell whose median exceeds results.AboveCeilingTolerance × the ceiling gets one
// fio run at its observed depth over the server's segment files. A fio
// that fails is recorded, not fatal: the cell is then marked without it.
func Recheck(ctx context.Context, env Env, row results.Row) error {
	base := RowBaseline(env.Bundle, row)
	if base == nil || !env.FioPlanned {
		return nil
	}
	ceiling := base.Results[0].IOPS
	passes, _, err := results.ReadCells(env.Bundle)
	if err != nil {
		return err
	}
	done, err := results.ReadCeilings(env.Bundle)
	if err != nil {
		return err
	}
	for _, t := range env.Config.Threads {
		var ops, depth []float64
		for _, p := range passes {
			if p.Row == row && p.Threads == t {
				results.JudgeEvidence(&p)
				ops = append(ops, p.OpsPerSec)
				if len(p.DiskDevices) > 0 {
					depth = append(depth, p.DiskQueueDepth)
				}
			}
		}
		med, _, _ := results.Median(ops)
		if med <= results.AboveCeilingTolerance*ceiling || slices.ContainsFunc(done, func(c results.CeilingRecord) bool { return c.Row == row && c.Threads == t }) {
			continue
		}
		d, _, _ := results.Median(depth)
		rec := remeasure(ctx, env, base, row, t, med, ceiling, d)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := results.AppendJSONL(env.Bundle, results.FileCeilings, rec); err != nil {
			return err
		}
	}
	return nil
}

// remeasure runs fio once at the cell's depth over the segment files, on
// the CPUs (and memory node) of base, the ceiling the cell is held
// against.
func remeasure(ctx context.Context, env Env, base *hostcheck.FIOBaseline, row results.Row, threads int, cellOps, ceiling, depth float64) results.CeilingRecord {
	rec := results.CeilingRecord{Kind: "ceiling", Schema: results.SchemaVersion, Row: row, Threads: threads, CellOpsPerSec: cellOps, BaseIOPS: ceiling,
		Depth: int(math.Ceil(depth)), DepthSource: "disk", BlockBytes: 512, Engine: base.Engine, RuntimeSeconds: base.RuntimeSeconds,
		CPUs: base.CPUs, FioCost: results.FioCost{Time: time.Now().UTC()}}
	if rec.Depth < 1 {
		rec.Depth, rec.DepthSource = device.DefaultThrottleLimit, "throttle"
	}
	var files []string
	files, rec.Footprint, rec.FootprintBytes = serverFiles(env.Config.DataDir)
	rec.Files = len(files)
	step := depthStep(base, rec.Depth)
	rec.Jobs, rec.IODepth = step.Jobs, step.IODepth
	env.Printf("%s %s t=%d: %s ops/s is %.1f %% of the %s IOPS ceiling; fio again at its depth (%d in flight, %s: %d jobs × %d) on the server's %d files (%s), read-only\n",
		human.Title(row.Backend), row.Label, threads, human.Ops(cellOps), 100*cellOps/ceiling, human.Ops(ceiling), rec.Depth, rec.DepthSource,
		rec.Jobs, rec.IODepth, rec.Files, human.Bytes(rec.FootprintBytes))
	if len(files) == 0 {
		rec.Error = fmt.Sprintf("no segment files, and no other file of at least 1 MiB, in %s", env.Config.DataDir)
		env.Printf("  fio not run: %s\n", rec.Error)
		return rec
	}
	res, cpu, steal, err := fioAtDepth(ctx, base, rec.Engine, step, files)
	rec.StealShare = steal
	if err != nil {
		rec.Error = err.Error()
		env.Printf("  fio failed: %v\n", err)
		return rec
	}
	rec.IOPS, rec.ClatP50Us, rec.ClatP99Us = res.IOPS, res.ClatUs.P50, res.ClatUs.P99
	rec.SetCPU(cpu)
	env.Printf("  fio: %s IOPS at %d in flight; the cell is %.1f %% of it\n", human.Ops(res.IOPS), rec.Depth, 100*cellOps/max(res.IOPS, ceiling))
	return rec
}

// depthStep splits depth reads in flight over fio jobs as the curve of
// base does, one job a CPU it could run on.
func depthStep(base *hostcheck.FIOBaseline, depth int) fio.Step {
	return fio.StepFor(depth, baseCPUs(base))
}

// baseCPUs is how many CPUs the jobs of base could run on.
func baseCPUs(base *hostcheck.FIOBaseline) int {
	if base.CPUCount > 0 {
		return base.CPUCount
	}
	return min(runtime.NumCPU(), 32)
}

// readJob is a read-only 512 B fio job over files at jobs × iodepth that
// reads as base's sweep did (see hostcheck.FIOBaseline.ReadJob).
func readJob(base *hostcheck.FIOBaseline, files []string, jobs, iodepth int) fio.Job {
	job := base.ReadJob()
	job.Filenames, job.ReadOnly, job.BlockBytes, job.Jobs, job.IODepth = files, true, 512, jobs, iodepth
	return job
}

// fioAtDepth runs fio once, read-only over files, at step through engine,
// on the CPUs and memory node of base (registered files and buffers where
// base had them and the engine has them), and says what it cost: its CPU
// and the hypervisor's steal while it ran.
func fioAtDepth(ctx context.Context, base *hostcheck.FIOBaseline, engine string, step fio.Step, files []string) (fio.Result, fio.CPU, *float64, error) {
	stolen := cpustat.StartWatch("/")
	job := readJob(base, files, step.Jobs, step.IODepth)
	job.Engine, job.RuntimeSeconds = engine, base.RuntimeSeconds
	res, err := fio.Run(ctx, job)
	steal := stolen.StealShare()
	if err != nil {
		return res, fio.CPU{}, steal, err
	}
	return res, res.CPU(baseCPUs(base)), steal, nil
}

// FootprintServerFiles: fio read the files of an external server's data
// dir (every regular file of at least 1 MiB below --data), read-only.
const FootprintServerFiles = "server-files"

// minServerFileBytes keeps small files (configs, pid files, logs) out of
// an external server's footprint.
const minServerFileBytes = 1 << 20

// serverFiles lists what the server in dir reads: tierbench's segment
// files, or, for another server, every regular file below dir of at least
// minServerFileBytes whose name fio can take. A link is never one: a
// server's own directory belongs to the user its image runs as, and fio
// must not be sent through a link it planted.
func serverFiles(dir string) (files []string, footprint string, totalBytes int64) {
	segs, _ := filepath.Glob(filepath.Join(dir, "segment.*"))
	for _, f := range segs {
		if st, err := os.Lstat(f); err == nil && st.Mode().IsRegular() {
			files, totalBytes = append(files, f), totalBytes+st.Size()
		}
	}
	if len(files) > 0 {
		return files, FootprintSegmentFiles, totalBytes
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.Contains(path, ":") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.Size() >= minServerFileBytes {
			files, totalBytes = append(files, path), totalBytes+info.Size()
		}
		return nil
	})
	return files, FootprintServerFiles, totalBytes
}

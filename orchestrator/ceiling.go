package orchestrator

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/report"
	"github.com/tierbench/tierbench/results"
)

// fioFiles is how many files the preflight ceiling spreads the dataset's
// footprint over, as the reference's fio does (8 files shared by all jobs).
const fioFiles = 8

// fioFootprintBytes is what the server reads (results.Workload.DatasetBytes).
func fioFootprintBytes(c plan.Config) int64 { return c.Record().DatasetBytes() }

// fioArgs are preflight's fio flags for this run: files as large as the
// dataset in total, a sweep up to the server's throttle limit, every depth
// for the reference profile and an early stop otherwise.
func (r *runner) fioArgs() []string {
	per := (fioFootprintBytes(r.cfg) + fioFiles - 1) / fioFiles
	per = max((per+(1<<20)-1)&^((1<<20)-1), 1<<20) // whole MiB
	args := []string{"--fio", "--fio-files", strconv.Itoa(fioFiles), "--fio-size", strconv.FormatInt(per, 10),
		"--fio-max-depth", strconv.Itoa(device.DefaultThrottleLimit)}
	if r.cfg.FioSeconds > 0 {
		args = append(args, "--fio-runtime", strconv.Itoa(r.cfg.FioSeconds))
	}
	if r.cfg.Profile == plan.ProfileReference {
		args = append(args, "--fio-full-sweep")
	}
	return args
}

// pinnedFioArgs asks preflight for a second sweep with fio on the pinned
// server's own CPUs, when the run has a pinned row: that row's share is
// taken against fio with the same CPU budget, not fio on every CPU of the
// host. Its memory node is bound too where there is more than one node
// (on one node the binding changes nothing, and needs a fio built with
// libnuma).
func (r *runner) pinnedFioArgs() []string {
	p := r.local.pinning
	if !slices.Contains(r.cfg.Pins, plan.PinPinned) || p.ServerCPUs == "" {
		return nil
	}
	args := []string{"--fio-cpus", p.ServerCPUs}
	if len(r.local.topo.Nodes) >= 2 && p.ServerMems != "" {
		args = append(args, "--fio-mems", p.ServerMems)
	}
	return args
}

// FootprintSegmentFiles: fio read the server's own segment files,
// read-only, after its row's passes.
const FootprintSegmentFiles = "segment-files"

// baselines reads the bundle's preflight fio baselines: the host's and
// the one pinned to the pinned server's CPUs (nil when not measured).
func (r *runner) baselines() (host, pinned *hostcheck.FIOBaseline) {
	raw, err := os.ReadFile(filepath.Join(r.out, results.FilePreflight))
	if err != nil {
		return nil, nil
	}
	return report.FIOBaseline(raw), report.FIOPinned(raw)
}

// rowBaseline is the fio curve row is held against: the one on the pinned
// server's CPUs for a pinned row, when measured, else the host's; nil
// without a host baseline.
func (r *runner) rowBaseline(row results.Row) *hostcheck.FIOBaseline {
	host, pinned := r.baselines()
	if host == nil || len(host.Results) == 0 {
		return nil
	}
	if row.Pin == plan.PinPinned && pinned != nil && len(pinned.Results) > 0 {
		return pinned
	}
	return host
}

// recheckCeiling runs after a row's passes, with its server idle: every
// cell whose median exceeds results.AboveCeilingTolerance × the ceiling gets one
// fio run at its observed depth over the server's segment files. A fio
// that fails is recorded, not fatal: the cell is then marked without it.
func (r *runner) recheckCeiling(ctx context.Context, row results.Row) error {
	base := r.rowBaseline(row)
	if base == nil || !plan.CeilingApplies(r.cfg) {
		return nil
	}
	ceiling := base.Results[0].IOPS
	passes, _, err := results.ReadCells(r.out)
	if err != nil {
		return err
	}
	done, err := results.ReadCeilings(r.out)
	if err != nil {
		return err
	}
	for _, t := range r.cfg.Threads {
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
		rec := r.remeasure(ctx, base, row, t, med, ceiling, d)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := appendCeiling(r.out, rec); err != nil {
			return err
		}
	}
	return nil
}

// remeasure runs fio once at the cell's depth over the segment files, on
// the CPUs (and memory node) of base, the ceiling the cell is held
// against.
func (r *runner) remeasure(ctx context.Context, base *hostcheck.FIOBaseline, row results.Row, threads int, cellOps, ceiling, depth float64) results.CeilingRecord {
	rec := results.CeilingRecord{Kind: "ceiling", Schema: results.SchemaVersion, Row: row, Threads: threads, CellOpsPerSec: cellOps, BaseIOPS: ceiling,
		Depth: int(math.Ceil(depth)), DepthSource: "disk", BlockBytes: 512, Engine: base.Engine, RuntimeSeconds: base.RuntimeSeconds,
		CPUs: base.CPUs, FioCost: results.FioCost{Time: time.Now().UTC()}}
	if rec.Depth < 1 {
		rec.Depth, rec.DepthSource = device.DefaultThrottleLimit, "throttle"
	}
	var files []string
	files, rec.Footprint, rec.FootprintBytes = serverFiles(r.cfg.DataDir)
	rec.Files = len(files)
	step := depthStep(base, rec.Depth)
	rec.Jobs, rec.IODepth = step.Jobs, step.IODepth
	r.printf("%s %s t=%d: %s ops/s is %.1f %% of the %s IOPS ceiling; fio again at its depth (%d in flight, %s: %d jobs × %d) on the server's %d files (%s), read-only\n",
		titleCase(row.Backend), row.Label, threads, FormatOps(cellOps), 100*cellOps/ceiling, FormatOps(ceiling), rec.Depth, rec.DepthSource,
		rec.Jobs, rec.IODepth, rec.Files, humanBytes(rec.FootprintBytes))
	if len(files) == 0 {
		rec.Error = fmt.Sprintf("no segment files, and no other file of at least 1 MiB, in %s", r.cfg.DataDir)
		r.printf("  fio not run: %s\n", rec.Error)
		return rec
	}
	res, cpu, steal, err := fioAtDepth(ctx, base, rec.Engine, step, files)
	rec.StealShare = steal
	if err != nil {
		rec.Error = err.Error()
		r.printf("  fio failed: %v\n", err)
		return rec
	}
	rec.IOPS, rec.ClatP50Us, rec.ClatP99Us = res.IOPS, res.ClatUs.P50, res.ClatUs.P99
	rec.SetCPU(cpu)
	r.printf("  fio: %s IOPS at %d in flight; the cell is %.1f %% of it\n", FormatOps(res.IOPS), rec.Depth, 100*cellOps/max(res.IOPS, ceiling))
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
// minServerFileBytes whose name fio can take.
func serverFiles(dir string) (files []string, footprint string, totalBytes int64) {
	segs, _ := filepath.Glob(filepath.Join(dir, "segment.*"))
	for _, f := range segs {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
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

func appendCeiling(dir string, rec results.CeilingRecord) error {
	return results.AppendJSONL(dir, results.FileCeilings, rec)
}

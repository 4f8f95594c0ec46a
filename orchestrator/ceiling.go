package orchestrator

import (
	"context"
	"encoding/json"
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
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/results"
)

// fioFiles is how many files the preflight ceiling spreads the dataset's
// footprint over, as the reference's fio does (8 files shared by all jobs).
const fioFiles = 8

// fioFootprintBytes is what the server reads (results.Workload.DatasetBytes).
func (c Config) fioFootprintBytes() int64 { return c.workload().DatasetBytes() }

// fioArgs are preflight's fio flags for this run: files as large as the
// dataset in total, a sweep up to the server's throttle limit, every depth
// for the reference profile and an early stop otherwise.
func (r *runner) fioArgs() []string {
	per := (r.cfg.fioFootprintBytes() + fioFiles - 1) / fioFiles
	per = max((per+(1<<20)-1)&^((1<<20)-1), 1<<20) // whole MiB
	args := []string{"--fio", "--fio-files", strconv.Itoa(fioFiles), "--fio-size", strconv.FormatInt(per, 10),
		"--fio-max-depth", strconv.Itoa(device.DefaultThrottleLimit)}
	if r.cfg.FioSeconds > 0 {
		args = append(args, "--fio-runtime", strconv.Itoa(r.cfg.FioSeconds))
	}
	if r.cfg.Profile == ProfileReference {
		args = append(args, "--fio-full-sweep")
	}
	return args
}

// preflightBaseline is the fio baseline of a bundle's preflight.json; nil
// when preflight ran without fio or failed.
func preflightBaseline(preRaw []byte) *hostcheck.FIOBaseline {
	var rep hostcheck.Report
	if len(preRaw) == 0 || json.Unmarshal(preRaw, &rep) != nil {
		return nil
	}
	return rep.FIO
}

// footprintPhrase says what fio read, for the report.
func footprintPhrase(f *hostcheck.FIOBaseline, c results.Workload) string {
	if f.Footprint == hostcheck.FootprintFioFiles || f.Footprint == "" {
		s := fmt.Sprintf("%d fio files × %s = %s", f.Files, humanBytes(f.FileBytes), humanBytes(int64(f.Files)*f.FileBytes))
		data := c.DatasetBytes()
		switch {
		case int64(f.Files)*f.FileBytes >= data:
			s += fmt.Sprintf(", as large as the dataset (%d × %d B = %s)", c.DBSize, recordBytes(c.KeyLength, c.ValueLength), humanBytes(data))
		default:
			s += fmt.Sprintf(", **smaller than the dataset** (%s): caches may serve part of fio's reads, so the ceiling may be too high", humanBytes(data))
		}
		return s
	}
	return fmt.Sprintf("%s (%s)", f.Footprint, humanBytes(f.FootprintBytes))
}

// renderCurve writes the fio depth curve of the preflight baseline.
func renderCurve(b *strings.Builder, f *hostcheck.FIOBaseline, c results.Workload) {
	if f == nil || len(f.Sweep) == 0 {
		return
	}
	fmt.Fprintf(b, "fio depth curve (%s, %s, 512 B random read, O_DIRECT, %d s per step) over %s. The ceiling is the highest IOPS of the sweep; the server keeps up to %d reads in flight.\n\n",
		f.Version, f.Engine, f.RuntimeSeconds, footprintPhrase(f, c), f.MaxDepth)
	b.WriteString("| reads in flight | jobs × iodepth | IOPS | MiB/s | clat p50 µs | clat p99 µs | |\n|--:|--:|--:|--:|--:|--:|:--|\n")
	best := 0
	for i, p := range f.Sweep {
		if p.IOPS > f.Sweep[best].IOPS {
			best = i
		}
	}
	for i, p := range f.Sweep {
		mark := ""
		if i == best {
			mark = "ceiling"
		}
		fmt.Fprintf(b, "| %d | %d × %d | %s | %.1f | %.0f | %.0f | %s |\n", p.Depth, p.Jobs, p.IODepth, FormatOps(p.IOPS),
			p.BandwidthKiBps/1024, p.ClatUs.P50, p.ClatUs.P99, mark)
	}
	b.WriteString("\n")
	if f.StoppedEarly {
		fmt.Fprintf(b, "The sweep %s (the quick profile's early stop; the reference profile measures every depth).\n\n", f.SweepNote)
	} else if last := f.Sweep[len(f.Sweep)-1].Depth; last < f.MaxDepth {
		fmt.Fprintf(b, "**The sweep ended at %d reads in flight, below the server's %d.**\n\n", last, f.MaxDepth)
	}
}

// FootprintSegmentFiles: fio read the server's own segment files,
// read-only, after its row's passes.
const FootprintSegmentFiles = "segment-files"

// baseline reads the bundle's preflight fio baseline.
func (r *runner) baseline() *hostcheck.FIOBaseline {
	raw, err := os.ReadFile(filepath.Join(r.out, filePreflight))
	if err != nil {
		return nil
	}
	return preflightBaseline(raw)
}

// recheckCeiling runs after a row's passes, with its server idle: every
// cell whose median exceeds aboveCeilingTolerance × the ceiling gets one
// fio run at its observed depth over the server's segment files. A fio
// that fails is recorded, not fatal: the cell is then marked without it.
func (r *runner) recheckCeiling(ctx context.Context, row Row) error {
	base := r.baseline()
	if base == nil || len(base.Results) == 0 || !ceilingApplies(r.cfg) {
		return nil
	}
	ceiling := base.Results[0].IOPS
	passes, _, err := readCells(r.out)
	if err != nil {
		return err
	}
	done, err := readCeilings(r.out)
	if err != nil {
		return err
	}
	for _, t := range r.cfg.Threads {
		var ops, depth []float64
		for _, p := range passes {
			if p.Row == row && p.Threads == t {
				judgeEvidence(&p)
				ops = append(ops, p.OpsPerSec)
				if len(p.DiskDevices) > 0 {
					depth = append(depth, p.DiskQueueDepth)
				}
			}
		}
		med, _, _ := median(ops)
		if med <= aboveCeilingTolerance*ceiling || slices.ContainsFunc(done, func(c CeilingRecord) bool { return c.Row == row && c.Threads == t }) {
			continue
		}
		d, _, _ := median(depth)
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

// remeasure runs fio once at the cell's depth over the segment files.
func (r *runner) remeasure(ctx context.Context, base *hostcheck.FIOBaseline, row Row, threads int, cellOps, ceiling, depth float64) CeilingRecord {
	rec := CeilingRecord{Kind: "ceiling", Schema: SchemaVersion, Row: row, Threads: threads, CellOpsPerSec: cellOps, BaseIOPS: ceiling,
		Depth: int(math.Ceil(depth)), DepthSource: "disk", BlockBytes: 512, Engine: base.Engine, RuntimeSeconds: base.RuntimeSeconds,
		Time: time.Now().UTC()}
	if rec.Depth < 1 {
		rec.Depth, rec.DepthSource = device.DefaultThrottleLimit, "throttle"
	}
	step := fio.StepFor(rec.Depth, min(runtime.NumCPU(), 32))
	rec.Jobs, rec.IODepth = step.Jobs, step.IODepth
	var files []string
	files, rec.Footprint, rec.FootprintBytes = serverFiles(r.cfg.DataDir)
	rec.Files = len(files)
	r.printf("%s %s t=%d: %s ops/s is %.1f %% of the %s IOPS ceiling; fio again at its depth (%d in flight, %s: %d jobs × %d) on the server's %d files (%s), read-only\n",
		titleCase(row.Backend), row.Label, threads, FormatOps(cellOps), 100*cellOps/ceiling, FormatOps(ceiling), rec.Depth, rec.DepthSource,
		rec.Jobs, rec.IODepth, rec.Files, humanBytes(rec.FootprintBytes))
	if len(files) == 0 {
		rec.Error = fmt.Sprintf("no segment files, and no other file of at least 1 MiB, in %s", r.cfg.DataDir)
		r.printf("  fio not run: %s\n", rec.Error)
		return rec
	}
	res, err := fio.Run(ctx, fio.Job{Filenames: files, ReadOnly: true, BlockBytes: rec.BlockBytes, Jobs: rec.Jobs, IODepth: rec.IODepth,
		Engine: rec.Engine, RuntimeSeconds: rec.RuntimeSeconds})
	if err != nil {
		rec.Error = err.Error()
		r.printf("  fio failed: %v\n", err)
		return rec
	}
	rec.IOPS, rec.ClatP50Us, rec.ClatP99Us = res.IOPS, res.ClatUs.P50, res.ClatUs.P99
	r.printf("  fio: %s IOPS at %d in flight; the cell is %.1f %% of it\n", FormatOps(res.IOPS), rec.Depth, 100*cellOps/max(res.IOPS, ceiling))
	return rec
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

func appendCeiling(dir string, rec CeilingRecord) error { return appendJSONL(dir, fileCeilings, rec) }

// shareText is a cell's share of its ceiling with its marks.
func shareText(c Cell) string {
	s := fmt.Sprintf("%.1f %%", 100*c.FioShare)
	if m := evidenceMarks(c); m != "" {
		s += " (" + m + ")"
	}
	return s
}

// renderRemeasures lists the fio re-measurements under the share table.
func renderRemeasures(b *strings.Builder, res Results) {
	if len(res.Ceilings) == 0 {
		fmt.Fprintf(b, "No cell exceeded %.0f %% of the ceiling, so fio was not measured again.\n\n", 100*aboveCeilingTolerance)
		return
	}
	fmt.Fprintf(b, "A cell above %.0f %% of the ceiling makes fio measure again right after its row, with the server idle, at the cell's observed disk depth over the server's own files (read-only: tierbench's segment files, or an external server's files below --data); the cell is then divided by the higher of the two:\n\n", 100*aboveCeilingTolerance)
	for _, c := range res.Ceilings {
		fmt.Fprintf(b, "- %s %s t=%d (%s ops/s, %.1f %% of %s): ", titleCase(c.Row.Backend), c.Row.Label, c.Threads, FormatOps(c.CellOpsPerSec),
			100*c.CellOpsPerSec/c.BaseIOPS, FormatOps(c.BaseIOPS))
		if c.Error != "" {
			fmt.Fprintf(b, "fio failed: %s\n", c.Error)
			continue
		}
		fmt.Fprintf(b, "fio %s at %d reads in flight (%s; %d jobs × %d, %d B, %d s) over the server's %d files (%s, %s): %s IOPS, clat p50 %.0f µs p99 %.0f µs\n",
			c.Engine, c.Depth, c.DepthSource, c.Jobs, c.IODepth, c.BlockBytes, c.RuntimeSeconds, c.Files, c.Footprint, humanBytes(c.FootprintBytes),
			FormatOps(c.IOPS), c.ClatP50Us, c.ClatP99Us)
	}
	b.WriteString("\n")
}

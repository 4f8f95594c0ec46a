package ceiling

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// RowEngine is fio's --ioengine for the kernel interface row's server
// drives the disk with; "" where that is no fio engine (another server,
// or tierbench on localmemory).
func RowEngine(row results.Row) string {
	if row.Server != "" || (row.Backend != "libaio" && row.Backend != "uring") {
		return ""
	}
	return fio.Engine(row.Backend)
}

// MeasureFioCPU runs after a row of tierbench's on a disk, with its
// server idle: fio once at each cell's median disk depth, through the
// row's own interface, on the row's CPUs, over the server's files, where
// the ceiling's curve cannot stand in for that (no point within
// curveDepthSlack of the depth, or another interface: libaio beside
// io_uring). The report holds the cell's CPU per GET against it. Shares
// are untouched. A fio that fails is recorded, not fatal; a cell already
// measured (a resumed run) is not measured again.
func MeasureFioCPU(ctx context.Context, env Env, row results.Row) error {
	base, engine := RowBaseline(env.Bundle, row), RowEngine(row)
	if base == nil || engine == "" || !env.FioPlanned {
		return nil
	}
	passes, _, err := results.ReadCells(env.Bundle)
	if err != nil {
		return err
	}
	done, err := results.ReadFioCPU(env.Bundle)
	if err != nil {
		return err
	}
	files, _, _ := serverFiles(env.Config.DataDir)
	if len(files) == 0 {
		return nil
	}
	for _, t := range env.Config.Threads {
		if slices.ContainsFunc(done, func(c results.FioCPURecord) bool { return c.Row == row && c.Threads == t }) {
			continue
		}
		var depths []float64
		for _, p := range passes {
			if p.Row == row && p.Threads == t && len(p.DiskDevices) > 0 {
				results.JudgeEvidence(&p)
				depths = append(depths, p.DiskQueueDepth)
			}
		}
		d, _, _ := results.Median(depths)
		if d <= 0 || (engine == base.Engine && curveHasDepth(base, d)) {
			continue // no disk depth to run fio at, or the curve has it
		}
		step := depthStep(base, int(math.Ceil(d)))
		rec := results.FioCPURecord{Kind: "fio-cpu", Schema: results.SchemaVersion, Row: row, Threads: t, Engine: engine,
			Depth: int(math.Ceil(d)), Jobs: step.Jobs, IODepth: step.IODepth, RuntimeSeconds: base.RuntimeSeconds, Files: len(files),
			CPUs: base.CPUs, FioCost: results.FioCost{Time: time.Now().UTC()}}
		env.Printf("%s %s t=%d: fio %s at the cell's disk depth (%d in flight: %d jobs × %d) on the server's %d files, read-only, for its CPU per read\n",
			human.Title(row.Backend), row.Label, t, engine, rec.Depth, rec.Jobs, rec.IODepth, rec.Files)
		res, cpu, steal, err := fioAtDepth(ctx, base, engine, step, files)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		rec.StealShare = steal
		if err != nil {
			rec.Error = err.Error()
			env.Printf("  fio failed: %v\n", err)
		} else {
			rec.IOPS = res.IOPS
			rec.SetCPU(cpu)
			env.Printf("  fio: %s IOPS, %.1f CPU µs per read\n", human.Ops(res.IOPS), cpu.MicrosPerRead)
		}
		if err := results.AppendJSONL(env.Bundle, results.FileFioCPU, rec); err != nil {
			return err
		}
	}
	return nil
}

// curveDepthSlack is how far, by ratio, a curve's point may be from a
// cell's disk depth and still stand for fio at that depth: fio's CPU per
// read moves little with depth, even between depths much further apart
// than that (docs/notes/2026-12-07-comment-figures.md has the figures).
const curveDepthSlack = 1.1

// curveHasDepth says whether base has fio's CPU at a point within
// curveDepthSlack of depth.
func curveHasDepth(base *hostcheck.FIOBaseline, depth float64) bool {
	for _, p := range base.Sweep {
		if p.Depth > 0 && base.PointCPU(p).MicrosPerRead > 0 && math.Abs(math.Log(float64(p.Depth)/depth)) <= math.Log(curveDepthSlack) {
			return true
		}
	}
	return false
}

package ladder

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/internal/cpuload"
	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/freeze"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// With --ladder and --latency, each fixed-rate latency step of a tiered
// backend's rows is measured again on the disk alone: fio at --rate_iops
// of the step's offered rate and an iodepth of the step's most GETs in
// flight (connections × in flight per connection, at most the server's
// throttle limit: see fioStepDepth), 512 B random reads
// (the sector a record of the reference's shape needs) over a file the
// size of the dataset, with the step's backend as fio's engine. The
// report shows each step's p50 and p99 beside fio's total latency
// (submission and completion), so a reader sees what the server adds to
// the disk at the same load. Where the step left the host's CPUs less
// idle than fio did (results.LoadWorthHolding), fio runs once more with
// the CPUs held as little idle (cpuload, loadToHold): a virtual disk may
// slow under the guest's CPU load, and a step is then held against that
// disk too.

// fioStepDepth is fio's iodepth beside a latency step: the step's most
// GETs in flight, capped at the reads the server's device keeps in flight
// (device.DefaultThrottleLimit), a depth the server never passes. The
// reference's steps, 64 connections × 1024, would ask fio for 65 536,
// which io_uring refuses (EINVAL past 32 768 entries) and libaio's
// system-wide aio-max-nr (65 536 here) cannot hold.
func fioStepDepth(rec results.LatencyRecord) int {
	return min(rec.Threads*max(rec.InFlight, 1), device.DefaultThrottleLimit)
}

// latencyBeside measures fio beside each latency step of backend's rows,
// once the disk reads at its ceiling again (settle): the KV rung and the
// first fio run lay out a dataset's worth of files just before, and a
// disk still writing that back gives fio a p99 hundreds of times a quiet
// disk's (docs/notes/2026-12-07-ladder-fio-beside.md). It returns nothing when the
// bundle holds no fixed-rate step of backend (a run without --latency),
// for an external server or a backend with no disk under it.
func (r *run) latencyBeside(ctx context.Context, backend string) ([]results.LadderLatency, *results.DiskSettle) {
	if !r.started || r.cfg.Spec().InRAM || backend == results.ScenarioLocalMemory {
		return nil, nil
	}
	recs, err := results.ReadLatency(r.out)
	if err != nil {
		return []results.LadderLatency{{Error: err.Error()}}, nil
	}
	var steps []results.LatencyRecord
	for _, rec := range recs {
		if rec.Row.Backend == backend && rec.Floor == "" && rec.SLO == "" && rec.OfferedOpsPerSec > 0 {
			steps = append(steps, rec)
		}
	}
	if len(steps) == 0 {
		return nil, nil
	}
	dir := filepath.Join(r.cfg.DataDir, "ladder-fio")
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return []results.LadderLatency{{Error: fmt.Sprintf("orchestrator: ladder fio dir: %v", err)}}, nil
	}
	fileBytes := fileBytesOf(r.cfg)
	var settled *results.DiskSettle
	if host := r.env.HostBaseline(); r.fio && host != nil {
		if best, ok := host.Best(); ok {
			// The first probe lays out fio's file; the steps read it after.
			settled = r.env.AwaitDisk(ctx, "ladder "+backend+": disk before fio beside the latency steps", best.IOPS,
				fio.Job{Dir: dir, Files: 1, FileBytes: fileBytes, BlockBytes: 512, Jobs: best.Jobs, IODepth: best.IODepth,
					Engine: host.Engine, Registered: host.Registered, Batched: host.ReadJob().Batched})
		}
	}
	var out []results.LadderLatency
	for _, rec := range steps {
		l := results.LadderLatency{Row: rec.Row, Share: rec.Share, OfferedOpsPerSec: rec.OfferedOpsPerSec,
			Depth: fioStepDepth(rec), P50Micros: rec.P50Micros, P99Micros: rec.P99Micros, StealShare: rec.HostStealShare, BusyShare: rec.HostBusyShare,
			FrozenShare: rec.HostFrozenShare}
		if !r.fio {
			l.Error = "--no-fio"
			out = append(out, l)
			continue
		}
		r.printf("ladder %s: fio at %s IOPS, depth %d, %d s, beside the %s step at %.0f %%\n", backend, human.Ops(rec.OfferedOpsPerSec), l.Depth,
			r.ladderSeconds(), rec.Row.Label, 100*rec.Share)
		job := fio.Job{Dir: dir, Files: 1, FileBytes: fileBytes, BlockBytes: 512, Jobs: 1, IODepth: l.Depth,
			Engine: fio.Engine(backend), RuntimeSeconds: r.ladderSeconds(), RateIOPS: int(math.Round(rec.OfferedOpsPerSec))}
		watch, frozen := cpustat.StartWatch("/"), freeze.StartWindow()
		res, err := fio.Run(ctx, job)
		win := watch.End()
		l.FioStealShare, l.FioBusyShare, l.FioFrozenShare = win.Steal, win.Busy, frozen.End()
		if err != nil {
			l.Error = err.Error()
			out = append(out, l)
			continue
		}
		l.FioIOPS, l.FioP50Micros, l.FioP99Micros = res.IOPS, res.LatUs.P50, res.LatUs.P99
		r.printf("  server p50 %.0f µs p99 %.0f µs; fio p50 %.0f µs p99 %.0f µs\n", l.P50Micros, l.P99Micros, l.FioP50Micros, l.FioP99Micros)
		if held, ok := loadToHold(l); ok {
			r.printf("  fio again with a thread on every CPU spinning %.0f %% of the time, to leave the host as little idle as the step did\n", 100*held)
			l.UnderLoad = fioUnderLoad(ctx, job, held)
			if u := l.UnderLoad; u.Error == "" {
				r.printf("  under load: fio p50 %.0f µs p99 %.0f µs\n", u.P50Micros, u.P99Micros)
			}
		}
		out = append(out, l)
	}
	return out, settled
}

// loadToHold is the share of its time each CPU's spinning thread holds
// while fio runs again beside step l, so that the host is as little idle
// as in the step. The step's CPU time not idle was its busy share plus its
// steal (time the host took because none was idle); fio alone was busy
// for fioBusy, and threads spinning for h of the time overlap it at
// random, adding h × (1 − fioBusy): h = (busy + steal − fioBusy) / (1 −
// fioBusy). Holding only busy − fioBusy leaves the host idle where the
// step was not (docs/notes/2026-12-07-ladder-fio-beside.md). False when the step was less than results.LoadWorthHolding less idle
// than fio, or a share was not read.
func loadToHold(l results.LadderLatency) (float64, bool) {
	if l.BusyShare == nil || l.FioBusyShare == nil || *l.FioBusyShare >= 1 {
		return 0, false
	}
	notIdle := *l.BusyShare
	if l.StealShare != nil {
		notIdle += *l.StealShare
	}
	more := notIdle - *l.FioBusyShare
	if more < results.LoadWorthHolding {
		return 0, false
	}
	return min(1, more/(1-*l.FioBusyShare)), true
}

// fioUnderLoad runs job with every CPU held held busy by spinning threads
// (cpuload), reading the host's busy, steal and frozen shares over it.
func fioUnderLoad(ctx context.Context, job fio.Job, held float64) *results.FioUnderLoad {
	u := &results.FioUnderLoad{HeldShare: held}
	watch, frozen := cpustat.StartWatch("/"), freeze.StartWindow()
	stop := cpuload.Hold(held, runtime.NumCPU())
	res, err := fio.Run(ctx, job)
	stop()
	win := watch.End()
	u.BusyShare, u.StealShare, u.FrozenShare = win.Busy, win.Steal, frozen.End()
	if err != nil {
		u.Error = err.Error()
		return u
	}
	u.IOPS, u.P50Micros, u.P99Micros = res.IOPS, res.LatUs.P50, res.LatUs.P99
	return u
}

package orchestrator

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// One GET pass of a cell: the client run against the row's server, the
// evidence counted around it, and the verdict that keeps the pass in the
// table or out of it.

// Verification thresholds of the methodology.
const (
	// minLoadedShare: the loader's acknowledgements and the server's key
	// count must each reach 99 % of dbsize.
	minLoadedShare = 0.99
	// minDeviceShare: ≥ 99 % of the hybrid log below HeadAddress, unless
	// the part above it is no larger than --memory (the store evicted all
	// it could) and the dataset is ≥ 20 × memory, as validate requires.
	minDeviceShare = 0.99
)

// bench runs one GET phase of `threads` connections for `seconds`.
func (r *runner) bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	return r.clients.Bench(ctx, row, tgt, name, threads, seconds)
}

// benchLocal is bench with the client on this machine.
func (r *runner) benchLocal(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	var pl results.Placement
	limit := rig.PhaseLimit(seconds)
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := r.runBench(pctx, row, tgt, name, append(append([]string{"-s"}, r.cellOps()...), "-t", strconv.Itoa(threads),
		"-b", strconv.Itoa(r.batchOf(row)), "--runtime", strconv.Itoa(seconds)), &pl)
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return rig.BenchCell{}, pl, fmt.Errorf("orchestrator: the %d s GET phase at t=%d did not end within %v: the server stopped answering (see logs/)", seconds, threads, limit)
	}
	if err != nil {
		return rig.BenchCell{}, pl, err
	}
	for _, c := range out.Cells {
		if c.Threads == threads || len(out.Cells) == 1 {
			return c, pl, nil
		}
	}
	return rig.BenchCell{}, pl, fmt.Errorf("orchestrator: bench reported no cell for t=%d", threads)
}

// benchSpec is the client that runs `tierbench bench --json` with extra
// flags against the row's server, pinned as the row says.
func (r *runner) benchSpec(row results.Row, tgt target.Server, name string, extra []string) rig.ClientSpec {
	args := append(r.benchArgs(tgt), extra...)
	if tgt.Cluster {
		args = append(args, "--cluster-bench")
	}
	spec := rig.ClientSpec{Name: name, Args: args,
		LogPath: filepath.Join(r.out, results.DirLogs, fmt.Sprintf("client-%s-%s.log", rowFileName(row), name))}
	if row.Pin == plan.PinPinned {
		// The client's CPUs are apart from the server's: a paced step's
		// loops may spin to send on time without taking the server's CPU.
		spec.CPUs, spec.Mems = r.local.pinning.ClientCPUs, r.local.pinning.ClientMems
		spec.Args = append(spec.Args, "--own-cpus")
	}
	return spec
}

func (r *runner) runBench(ctx context.Context, row results.Row, tgt target.Server, name string, extra []string, pl *results.Placement) (rig.BenchOutput, error) {
	stdout, got, err := r.drv.RunClient(ctx, r.benchSpec(row, tgt, name, extra))
	if pl != nil {
		*pl = got
	}
	if err != nil {
		// A client that exits 1 after a short load still prints its JSON:
		// the counts are the evidence the refusal names.
		out, perr := rig.ParseBench(stdout)
		if perr == nil && out.Load != nil {
			return out, fmt.Errorf("%w: %w", errShortLoad, err)
		}
		return rig.BenchOutput{}, err
	}
	return rig.ParseBench(stdout)
}

// measure runs one pass of one cell with the server's device reads
// counted around it, and appends it to cells.jsonl.
func (r *runner) measure(ctx context.Context, row results.Row, tgt target.Server, threads, pass int) error {
	r.progress.cellIndex++
	left := r.progressLeft()
	r.printf("cell %d/%d: %s %s t=%d pass %d/%d%s%s\n", r.progress.cellIndex, r.progress.cellTotal, titleCase(row.Backend), row.Label, threads, pass, r.cfg.Passes, r.clients.Note(threads), left)
	r.setPhase(phaseCells, &row, fmt.Sprintf("t=%d pass %d/%d", threads, pass, r.cfg.Passes))
	start := time.Now()
	defer func() { r.progress.cellTime += time.Since(start) }()
	stopWatch := r.watchCell(ctx, tgt, threads)
	rec, err := r.takePass(ctx, row, tgt, threads, pass)
	stopWatch()
	if err != nil {
		return err
	}
	rec.FioBesideIOPS = r.fioBeside(ctx, row, tgt)
	if err := r.cells.Append(rec); err != nil {
		return err
	}
	r.resumed.passes[results.PassKey(row, threads, pass)] = true

	note := ""
	switch {
	case rec.TooManyMiss:
		limit := "any miss keeps a cell out"
		if r.cfg.MaxMissRatio > 0 {
			limit = fmt.Sprintf("more than --max-miss-ratio %g allows", r.cfg.MaxMissRatio)
		}
		note = fmt.Sprintf("  [misses %s, %s: kept out of the table]", formatPercentBeside(rec.MissRatio, r.cfg.MaxMissRatio), limit)
	case rec.MemoryServed:
		note = fmt.Sprintf("  [%.0f device bytes per GET: memory-served, kept out of the table]", rec.ReadBytesPerGet)
	case rec.DeviceRead:
		note = fmt.Sprintf("  [%.1f device bytes per GET: not memory-bound, kept out of the table]", rec.ReadBytesPerGet)
	case rec.NoDeviceReads:
		note = fmt.Sprintf("  [%.2f device reads per GET: reads missed the device, kept out of the table]", rec.DeviceReadsPerGet)
	}
	if plan.RowSpec(row).DeviceReads {
		note = fmt.Sprintf(", %.2f device reads per GET (INFO store%s)", rec.DeviceReadsPerGet, shardReadsNote(rec.Nodes)) + note
	}
	if rec.FioBesideIOPS > 0 {
		note += fmt.Sprintf("; fio right after: %s IOPS (%.1f %% of it)", FormatOps(rec.FioBesideIOPS), 100*rec.OpsPerSec/rec.FioBesideIOPS)
	}
	r.printf("  %s ops/s, %.0f device bytes per GET%s%s\n%s", FormatOps(rec.OpsPerSec), rec.ReadBytesPerGet, evidenceLine(rec), note, mixLine(rec))
	return nil
}

// takePass runs one pass of one cell with the server's device reads and
// CPU counted around it, and judges it; it records nothing.
func (r *runner) takePass(ctx context.Context, row results.Row, tgt target.Server, threads, pass int) (results.PassRecord, error) {
	rec := results.PassRecord{Kind: "pass", Schema: results.SchemaVersion, Row: row, Threads: threads, Pass: pass, Batch: r.batchOf(row), ReadBytes: -1}
	disks := r.diskBefore(ctx)
	storeBefore := r.readStore(ctx, tgt)
	before, err := r.readNodes(ctx, row, tgt)
	if err != nil {
		return rec, err
	}
	cell, clientPl, err := r.bench(ctx, row, tgt, fmt.Sprintf("t%d-p%d", threads, pass), threads, r.cfg.CellSeconds)
	if err != nil {
		return rec, fmt.Errorf("orchestrator: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	after, err := r.readNodes(ctx, row, tgt)
	if err != nil {
		return rec, err
	}
	recordMix(&rec, cell, storeBefore, r.readStore(ctx, tgt))
	rec.Ops, rec.Seconds, rec.OpsPerSec = cell.Ops, cell.Seconds, cell.OpsPerSec
	rec.Hits, rec.Misses, rec.Errors = cell.Hits, cell.Misses, cell.Errors
	rec.Gets = cell.Gets()
	rec.ClientCPUSeconds, rec.ClientSaturated, rec.Incomplete = cell.ClientCPUSeconds, cell.ClientSaturated, cell.Incomplete
	rec.HostStealShare = cell.HostStealShare
	rec.Client, rec.Clients = clientPl, cell.Clients
	if err := r.recordNodes(&rec, row, tgt, before, after, cell); err != nil {
		return rec, fmt.Errorf("orchestrator: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	if err := rig.CheckPlacement("client", rec.Client); err != nil {
		return rec, fmt.Errorf("orchestrator: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	r.recordDisks(ctx, disks, &rec)
	results.JudgeEvidence(&rec)
	results.JudgePass(&rec, r.cfg.MaxMissRatio)
	rec.Time = time.Now().UTC()
	return rec, nil
}

// benchArgs are the flags every client of a row's server takes.
func (r *runner) benchArgs(tgt target.Server) []string {
	host, port, _ := net.SplitHostPort(tgt.Addr)
	args := []string{"bench", "--host", host, "--port", port,
		"--dbsize", strconv.FormatInt(r.cfg.DBSize, 10),
		"--keylength", strconv.Itoa(r.cfg.KeyLength), "--valuelength", strconv.Itoa(r.cfg.ValueLength),
		"--json"}
	if r.cfg.KeyDist != "" {
		args = append(args, "--key-dist", r.cfg.KeyDist)
	}
	if !tgt.NoAuth {
		args = append(args, r.authArgs()...)
	}
	return append(args, tgt.ClientArgs...)
}

// cellOps are the flags of a measured cell's operations: GETs, or the
// --workload mix.
func (r *runner) cellOps() []string {
	if mix, _ := r.cfg.OpMix(); mix != "" {
		return []string{"--op-mix", mix}
	}
	return []string{"--op", "GET"}
}

package pass

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// One GET pass of a cell: the client run against the row's server, the
// evidence counted around it, and the verdict that keeps the pass in the
// table or out of it.

// Runner takes a run's passes through its Env; it keeps the disks whose
// counters are read around every GET phase (ResolveDisks).
type Runner struct {
	env Env
	// disks are the physical disks below the data dir; note says why
	// there are none.
	disks []string
	note  string
}

// New is a Runner over env.
func New(env Env) *Runner { return &Runner{env: env} }

func (r *Runner) printf(format string, a ...any) { r.env.Printf(format, a...) }

// Verification thresholds of the methodology.
const (
	// minDeviceShare: ≥ 99 % of the hybrid log below HeadAddress, unless
	// the part above it is no larger than --memory (the store evicted all
	// it could) and the dataset is ≥ 20 × memory, as validate requires.
	minDeviceShare = 0.99
)

// BenchLocal runs one GET phase of `threads` connections for `seconds`
// with the client on this machine.
func (r *Runner) BenchLocal(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	cfg := r.env.Config()
	var pl results.Placement
	limit := rig.PhaseLimit(seconds)
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out, err := r.runBench(pctx, row, tgt, name, append(append([]string{"-s"}, CellOps(cfg)...), "-t", strconv.Itoa(threads),
		"-b", strconv.Itoa(cfg.BatchOf(row)), "--runtime", strconv.Itoa(seconds)), &pl)
	if err != nil && ctx.Err() == nil && pctx.Err() != nil {
		return rig.BenchCell{}, pl, fmt.Errorf("pass: the %d s GET phase at t=%d did not end within %v: the server stopped answering (see logs/)", seconds, threads, limit)
	}
	if err != nil {
		return rig.BenchCell{}, pl, err
	}
	for _, c := range out.Cells {
		if c.Threads == threads || len(out.Cells) == 1 {
			return c, pl, nil
		}
	}
	return rig.BenchCell{}, pl, fmt.Errorf("pass: bench reported no cell for t=%d", threads)
}

// BenchSpec is the client that runs `tierbench bench --json` with extra
// flags against the row's server, pinned as the row says.
func (r *Runner) BenchSpec(row results.Row, tgt target.Server, name string, extra []string) rig.ClientSpec {
	args := append(BenchArgs(r.env.Config(), tgt, r.env.AuthArgs()), extra...)
	if tgt.Cluster {
		args = append(args, "--cluster-bench")
	}
	spec := rig.ClientSpec{Name: name, Args: args,
		LogPath: filepath.Join(r.env.Out(), results.DirLogs, fmt.Sprintf("client-%s-%s.log", r.env.FileName(row), name))}
	if row.Pin == plan.PinPinned {
		// The client's CPUs are apart from the server's: a paced step's
		// loops may spin to send on time without taking the server's CPU.
		pin := r.env.Pinning()
		spec.CPUs, spec.Mems = pin.ClientCPUs, pin.ClientMems
		spec.Args = append(spec.Args, "--own-cpus")
	}
	return spec
}

func (r *Runner) runBench(ctx context.Context, row results.Row, tgt target.Server, name string, extra []string, pl *results.Placement) (rig.BenchOutput, error) {
	stdout, got, err := r.env.RunClient(ctx, r.BenchSpec(row, tgt, name, extra))
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

// Measure runs one pass of one cell with the server's device reads
// counted around it, and appends it to cells.jsonl.
func (r *Runner) Measure(ctx context.Context, row results.Row, tgt target.Server, threads, pass int) error {
	cfg := r.env.Config()
	index, total, left := r.env.StartCell()
	r.printf("cell %d/%d: %s %s t=%d pass %d/%d%s%s\n", index, total, human.Title(row.Backend), row.Label, threads, pass, cfg.Passes, r.env.ClientNote(threads), left)
	r.env.CellPhase(row, fmt.Sprintf("t=%d pass %d/%d", threads, pass, cfg.Passes))
	start := time.Now()
	defer func() { r.env.CellTook(time.Since(start)) }()
	stopWatch := r.env.WatchCell(ctx, row, tgt, threads)
	rec, err := r.TakePass(ctx, row, tgt, threads, pass)
	stopWatch()
	if err != nil {
		return err
	}
	rec.FioBesideIOPS = r.env.FioBeside(ctx, row, tgt)
	if err := r.env.Record(rec); err != nil {
		return err
	}

	note := ""
	switch {
	case rec.TooManyMiss:
		limit := "any miss keeps a cell out"
		if cfg.MaxMissRatio > 0 {
			limit = fmt.Sprintf("more than --max-miss-ratio %g allows", cfg.MaxMissRatio)
		}
		note = fmt.Sprintf("  [misses %s, %s: kept out of the table]", human.PercentBeside(rec.MissRatio, cfg.MaxMissRatio), limit)
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
		note += fmt.Sprintf("; fio right after: %s IOPS (%.1f %% of it)", human.Ops(rec.FioBesideIOPS), 100*rec.OpsPerSec/rec.FioBesideIOPS)
	}
	r.printf("  %s ops/s, %.0f device bytes per GET%s%s\n%s", human.Ops(rec.OpsPerSec), rec.ReadBytesPerGet, evidenceLine(rec), note, mixLine(rec))
	return nil
}

// shardReadsNote is each shard's device reads per GET for a pass's line,
// "" for a single server.
func shardReadsNote(nodes []results.NodePass) string {
	if len(nodes) == 0 {
		return ""
	}
	per := make([]string, len(nodes))
	for i, n := range nodes {
		per[i] = fmt.Sprintf("%.2f", n.DeviceReadsPerGet)
	}
	return "; per shard " + strings.Join(per, " | ")
}

// TakePass runs one pass of one cell with the server's device reads and
// CPU counted around it, and judges it; it records nothing.
func (r *Runner) TakePass(ctx context.Context, row results.Row, tgt target.Server, threads, pass int) (results.PassRecord, error) {
	cfg := r.env.Config()
	rec := results.PassRecord{Kind: "pass", Schema: results.SchemaVersion, Row: row, Threads: threads, Pass: pass, Batch: cfg.BatchOf(row), ReadBytes: -1}
	disks := r.diskBefore(ctx)
	storeBefore := readStore(ctx, tgt)
	before, err := readNodes(ctx, row, tgt)
	if err != nil {
		return rec, err
	}
	cell, clientPl, err := r.env.Bench(ctx, row, tgt, fmt.Sprintf("t%d-p%d", threads, pass), threads, cfg.CellSeconds)
	if err != nil {
		return rec, fmt.Errorf("pass: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	after, err := readNodes(ctx, row, tgt)
	if err != nil {
		return rec, err
	}
	recordMix(&rec, cell, storeBefore, readStore(ctx, tgt))
	rec.Ops, rec.Seconds, rec.OpsPerSec = cell.Ops, cell.Seconds, cell.OpsPerSec
	rec.Hits, rec.Misses, rec.Errors = cell.Hits, cell.Misses, cell.Errors
	rec.Gets = cell.Gets()
	rec.ClientCPUSeconds, rec.ClientSaturated, rec.Incomplete = cell.ClientCPUSeconds, cell.ClientSaturated, cell.Incomplete
	rec.HostStealShare = cell.HostStealShare
	rec.Client, rec.Clients = clientPl, cell.Clients
	if err := recordNodes(&rec, row, tgt, before, after, cell); err != nil {
		return rec, fmt.Errorf("pass: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	if err := rig.CheckPlacement("client", rec.Client); err != nil {
		return rec, fmt.Errorf("pass: cell %s %s t=%d pass %d: %w", row.Backend, row.Label, threads, pass, err)
	}
	r.recordDisks(ctx, disks, &rec)
	results.JudgeEvidence(&rec)
	results.JudgePass(&rec, cfg.MaxMissRatio)
	rec.Time = time.Now().UTC()
	return rec, nil
}

// BenchArgs are the flags every client of a row's server takes; auth
// are the run's password flags, left out for a target without access
// control.
func BenchArgs(cfg plan.Config, tgt target.Server, auth []string) []string {
	host, port, _ := net.SplitHostPort(tgt.Addr)
	args := []string{"bench", "--host", host, "--port", port,
		"--dbsize", strconv.FormatInt(cfg.DBSize, 10),
		"--keylength", strconv.Itoa(cfg.KeyLength), "--valuelength", strconv.Itoa(cfg.ValueLength),
		"--json"}
	if cfg.KeyDist != "" {
		args = append(args, "--key-dist", cfg.KeyDist)
	}
	if !tgt.NoAuth {
		args = append(args, auth...)
	}
	return append(args, tgt.ClientArgs...)
}

// CellOps are the flags of a measured cell's operations: GETs, or the
// --workload mix.
func CellOps(cfg plan.Config) []string {
	if mix, _ := cfg.OpMix(); mix != "" {
		return []string{"--op-mix", mix}
	}
	return []string{"--op", "GET"}
}

package orchestrator

import (
	"context"
	"time"

	"github.com/tierbench/tierbench/orchestrator/ceiling"
	"github.com/tierbench/tierbench/orchestrator/pass"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
)

// passEnv is the run as a row's passes see it (pass.Env): the passes
// reach the run's driver, clients, progress, status and fio only
// through it.
type passEnv struct{ r *runner }

var _ pass.Env = passEnv{}

// passes is the run's pass.Runner, made on first use: it keeps the disks
// ResolveDisks found for the rest of the run.
func (r *runner) passes() *pass.Runner {
	if r.passRunner == nil {
		r.passRunner = pass.New(passEnv{r})
	}
	return r.passRunner
}

func (e passEnv) Config() plan.Config                 { return e.r.cfg }
func (e passEnv) Out() string                         { return e.r.out }
func (e passEnv) Printf(format string, a ...any)      { e.r.printf(format, a...) }
func (e passEnv) Record(rec any) error                { return e.r.cells.Append(rec) }
func (e passEnv) Host() rig.ServerHost                { return e.r.host }
func (e passEnv) HostPrefix() string                  { return hostPrefix(e.r.host) }
func (e passEnv) Pinning() rig.Pinning                { return e.r.local.pinning }
func (e passEnv) AuthArgs() []string                  { return e.r.authArgs() }
func (e passEnv) FileName(row results.Row) string     { return target.FileName(row) }
func (e passEnv) ClientNote(threads int) string       { return e.r.clients.Note(threads) }
func (e passEnv) CellPhase(row results.Row, c string) { e.r.watch.Phase(watch.PhaseCells, &row, c) }
func (e passEnv) CellTook(d time.Duration)            { e.r.watch.CellTook(d) }

func (e passEnv) RunClient(ctx context.Context, spec rig.ClientSpec) ([]byte, results.Placement, error) {
	return e.r.drv.RunClient(ctx, spec)
}

func (e passEnv) Bench(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	return e.r.clients.Bench(ctx, row, tgt, name, threads, seconds)
}

func (e passEnv) StartCell() (index, total int, left string) { return e.r.watch.NextCell() }

func (e passEnv) WatchCell(ctx context.Context, row results.Row, tgt target.Server, threads int) (stop func()) {
	return e.r.watch.Cell(ctx, tgt, threads*e.r.cfg.BatchOf(row))
}

func (e passEnv) LoadTook(keys int64, d time.Duration) { e.r.watch.Loaded(keys, d) }

func (e passEnv) SettleDisk(ctx context.Context, row results.Row, tgt target.Server) *results.DiskSettle {
	return ceiling.SettleDisk(ctx, e.r.ceilingEnv(), row, tgt)
}

func (e passEnv) FioBeside(ctx context.Context, row results.Row, tgt target.Server) float64 {
	return ceiling.Beside(ctx, e.r.ceilingEnv(), row, tgt)
}

func (e passEnv) ServerEvidence(ctx context.Context, row results.Row, p rig.ServerProbe) map[string]string {
	return target.ServerEvidence(ctx, e.r.cfg, row, p)
}

// The facade's own names for what other parts of the run (the client
// fleet, the preflight, the row steps) take of package pass.

// benchLocal runs one GET phase with the client on this machine.
func (r *runner) benchLocal(ctx context.Context, row results.Row, tgt target.Server, name string, threads, seconds int) (rig.BenchCell, results.Placement, error) {
	return r.passes().BenchLocal(ctx, row, tgt, name, threads, seconds)
}

// benchSpec is the client of the row's server with extra flags.
func (r *runner) benchSpec(row results.Row, tgt target.Server, name string, extra []string) rig.ClientSpec {
	return r.passes().BenchSpec(row, tgt, name, extra)
}

// benchArgs are the flags every client of a row's server takes.
func (r *runner) benchArgs(tgt target.Server) []string {
	return pass.BenchArgs(r.cfg, tgt, r.authArgs())
}

// cellOps are the flags of a measured cell's operations.
func (r *runner) cellOps() []string { return pass.CellOps(r.cfg) }

package orchestrator

import (
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/orchestrator/ceiling"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/preflight"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
)

// watchEnv is the run as its watch sees it (watch.Env): the rows, which
// TLS may add to after the watch starts, and the fio the preflight
// measured for a row.
type watchEnv struct{ r *runner }

var _ watch.Env = watchEnv{}

func (e watchEnv) Rows() []results.Row              { return e.r.plan.Rows }
func (e watchEnv) RowEngine(row results.Row) string { return ceiling.RowEngine(row) }
func (e watchEnv) Printf(format string, a ...any)   { e.r.printf(format, a...) }
func (e watchEnv) RowBaseline(row results.Row) *hostcheck.FIOBaseline {
	return ceiling.RowBaseline(e.r.out, row)
}

// startWatch begins status.json in the new bundle and, with
// --metrics-addr, the metrics endpoint.
func (r *runner) startWatch() (err error) {
	r.watch, err = watch.Start(watchEnv{r}, watch.Values{Config: r.cfg, RunID: r.plan.RunID, Bundle: r.out, Started: r.started,
		OwnServers: r.targets.Started(), Loads: !r.cfg.SkipLoad, FioPlanned: plan.FioPlanned(r.cfg), DonePasses: r.resumed.passes, DoneLoads: r.resumed.loads,
		Preflight: r.preflightSweeps(), Steps: watchSteps()})
	return err
}

// preflightSweeps is the fio sweeps the host preflight will run, as
// preflightLocal asks for them (preflightArgs: fioArgs, pinnedFioArgs),
// for the estimate: the host's on every CPU and, with a pinned row, one
// on the pinned server's CPUs. None across hosts (their image holds no
// fio), without a ceiling to measure, or when a resumed bundle has its
// preflight.
func (r *runner) preflightSweeps() watch.Preflight {
	if r.cfg.HostsMode() || r.resumed.preflight {
		return watch.Preflight{}
	}
	var cpus int
	for _, n := range r.local.topo.Nodes {
		cpus += len(n)
	}
	sweeps, depth, full := preflight.Env{Config: r.cfg, FioPlanned: plan.FioPlanned(r.cfg), Pinning: r.local.pinning}.Sweeps(cpus)
	return watch.Preflight{SweepCPUs: sweeps, MaxDepth: depth, Full: full, FileBytes: preflight.FioFileBytes(r.cfg)}
}

package orchestrator

import (
	"github.com/tierbench/tierbench/orchestrator/ceiling"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/preflight"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// ceilingEnv is the run as package ceiling sees it, built afresh for each
// call so that it holds the configuration as it is then.
func (r *runner) ceilingEnv() ceiling.Env {
	return ceiling.Env{Config: r.cfg, FioPlanned: plan.FioPlanned(r.cfg), Bundle: r.out, Printf: r.printf}
}

// preflightEnv is the run as package preflight sees it, built afresh for
// each call: the driver and the pinning are chosen after the runner is.
func (r *runner) preflightEnv() preflight.Env {
	return preflight.Env{Config: r.cfg, FioPlanned: plan.FioPlanned(r.cfg), Bundle: r.out, Measured: r.resumed.preflight, Started: r.targets.Started(), Printf: r.printf, Stderr: r.stderr,
		Pinning: r.local.pinning, NUMANodes: len(r.local.topo.Nodes), Driver: r.drv,
		Foreign: func(row results.Row) bool {
			s, err := target.RowServer(r.cfg, row)
			return err == nil && !s.Self
		},
		BenchArgs: r.benchArgs}
}

// The runner's names for the fio measurements and the preflights that
// the facade's other files call, each one call into its package.

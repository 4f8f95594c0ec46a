package orchestrator

import (
	"context"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/orchestrator/ceiling"
	"github.com/tierbench/tierbench/orchestrator/preflight"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// ceilingEnv is the run as package ceiling sees it, built afresh for each
// call so that it holds the configuration as it is then.
func (r *runner) ceilingEnv() ceiling.Env {
	return ceiling.Env{Config: r.cfg, Bundle: r.out, Printf: r.printf}
}

// preflightEnv is the run as package preflight sees it, built afresh for
// each call: the driver and the pinning are chosen after the runner is.
func (r *runner) preflightEnv() preflight.Env {
	return preflight.Env{Config: r.cfg, Bundle: r.out, Started: r.targets.Started(), Printf: r.printf, Stderr: r.stderr,
		Pinning: r.local.pinning, NUMANodes: len(r.local.topo.Nodes), Driver: r.drv,
		Foreign: func(row results.Row) bool {
			s, err := r.rowServer(row)
			return err == nil && !s.Self
		},
		BenchArgs: r.benchArgs}
}

// The runner's names for the fio measurements and the preflights that
// the facade's other files call, each one call into its package.

func (r *runner) rowBaseline(row results.Row) *hostcheck.FIOBaseline {
	return ceiling.RowBaseline(r.out, row)
}

func rowEngine(row results.Row) string { return ceiling.RowEngine(row) }

func (r *runner) settleDisk(ctx context.Context, row results.Row, tgt target.Server) *results.DiskSettle {
	return ceiling.SettleDisk(ctx, r.ceilingEnv(), row, tgt)
}

func (r *runner) fioBeside(ctx context.Context, row results.Row, tgt target.Server) float64 {
	return ceiling.Beside(ctx, r.ceilingEnv(), row, tgt)
}

func (r *runner) preflightLocal(ctx context.Context) error {
	return preflight.Local(ctx, r.preflightEnv())
}

func (r *runner) preflightHosts(ctx context.Context, h *docker.HostsDriver) error {
	return preflight.AcrossHosts(ctx, r.preflightEnv(), h)
}

func (r *runner) networkPreflight(ctx context.Context, h *docker.HostsDriver, tgt target.Server) error {
	return preflight.Network(ctx, r.preflightEnv(), h, tgt)
}

func (r *runner) serverPreflight(ctx context.Context, row results.Row, srv rig.ServerHandle, dataDir string, tgt *target.Server) error {
	return preflight.Server(ctx, r.preflightEnv(), row, srv, dataDir, tgt)
}

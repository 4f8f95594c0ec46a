package orchestrator

import (
	"context"
	"io"

	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/latency"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/serverinfo"
	"github.com/tierbench/tierbench/orchestrator/sweep"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/orchestrator/tlsrow"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
)

// runtimes are the runtimes a run starts its servers with, by the name
// plan.Config.ChooseRuntime gives: each opens its driver for the run.
var runtimes = map[string]func(ctx context.Context, r *runner) (rig.Driver, error){
	plan.RuntimeDocker:  openDocker,
	plan.RuntimeProcess: openProcess,
}

// parts is the registry: every measurement, dimension and runtime that
// has a say over a configuration, in the order their refusals are listed.
var parts = []plan.Part{
	scenarioDimension{},
	target.Servers{},
	sweep.Memory{},
	sweep.ReadCache{},
	tlsrow.Dimension{},
	latency.FixedRate{},
	latency.Capacity{},
	ladder.Part{},
}

// preparer is a part with something to make ready on the run's driver
// once it is open, before the first row (target.Servers: the servers'
// images on the engine).
type preparer interface {
	Prepare(ctx context.Context, c plan.Config, drv rig.Driver) error
}

// prepare runs every registered part's Prepare on drv, in the registry's
// order.
func prepare(ctx context.Context, c plan.Config, drv rig.Driver) error {
	for _, p := range parts {
		if pp, ok := p.(preparer); ok {
			if err := pp.Prepare(ctx, c, drv); err != nil {
				return err
			}
		}
	}
	return nil
}

// scenarioDimension is --scenario: which of the reference's server
// set-ups each row runs (scenario.go); plan refuses what cannot run.
type scenarioDimension struct{}

func (scenarioDimension) Name() string               { return "scenario" }
func (scenarioDimension) Supports(plan.Config) error { return nil }
func (scenarioDimension) Expand(c plan.Config, rows []results.Row) []results.Row {
	return scenarioRows(c, rows)
}

// rowStep is a measurement run after a row's passes, on the row's server:
// phase names it in progress lines and status.json, asked says whether
// the configuration asks for it, work is what the estimate counts for it
// (watch.Step), todo says whether the bundle still lacks some of it (so
// --resume runs a row whose passes are all done again), run measures
// what the bundle lacks. The facade calls todo and run only when asked
// says yes, so a step's body never asks for its own flag again.
type rowStep struct {
	phase string
	asked func(plan.Config) bool
	work  func(c plan.Config, rows []results.Row, ownServers bool) (count int, seconds float64, upTo bool)
	todo  func(env rowEnv) (bool, error)
	run   func(ctx context.Context, env rowEnv) error
}

// rowSteps are the measurements after a row's passes, in the order they
// run.
var rowSteps = []rowStep{
	{watch.PhaseLatency, func(c plan.Config) bool { return c.Latency }, latency.StepsWork,
		func(e rowEnv) (bool, error) { return latency.Todo(e, e.row) },
		func(ctx context.Context, e rowEnv) error { return latency.Steps(ctx, e, e.row) }},
	{watch.PhaseSLO, func(c plan.Config) bool { return c.SLO != "" }, latency.SLOWork,
		func(e rowEnv) (bool, error) { return latency.SLOTodo(e, e.row) },
		func(ctx context.Context, e rowEnv) error { return latency.SLOSearch(ctx, e, e.row) }},
	{serverinfo.Phase, func(c plan.Config) bool { return c.ServerInfo }, serverinfo.Work, func(e rowEnv) (bool, error) { return serverinfo.Todo(e, e.row) },
		func(ctx context.Context, e rowEnv) error { return serverinfo.Take(ctx, e, e.row) }},
}

// runStep is a measurement run once after every row has passed, on the
// bundle; the bundle is rendered and sealed again after it, so that its
// sums cover the step's files.
type runStep struct {
	phase string
	asked func(plan.Config) bool
	work  func(c plan.Config, rows []results.Row, ownServers bool) (count int, seconds float64, upTo bool)
	run   func(ctx context.Context, r *runner, stdout io.Writer) error
}

// runSteps are the measurements after every row, in the order they run.
var runSteps = []runStep{
	{watch.PhaseLadder, func(c plan.Config) bool { return c.Ladder }, ladderWork,
		func(ctx context.Context, r *runner, stdout io.Writer) error {
			return ladder.Run(ctx, ladderEnv{r}, stdout)
		}},
}

// ladderWork is the ladder's work for the estimate: it runs fio beside
// each of a row's fixed-rate latency steps, which latency counts.
func ladderWork(c plan.Config, rows []results.Row, ownServers bool) (int, float64, bool) {
	var steps int
	if c.Latency {
		steps = len(latency.Shares)
	}
	return ladder.Work(c, rows, ownServers, steps)
}

// watchSteps are the steps as the estimate counts them.
func watchSteps() watch.Steps {
	var s watch.Steps
	for _, st := range rowSteps {
		s.RowSteps = append(s.RowSteps, watch.Step{Name: st.phase, Work: st.work})
	}
	for _, st := range runSteps {
		s.RunSteps = append(s.RunSteps, watch.Step{Name: st.phase, Work: st.work})
	}
	return s
}

// runStepsAsked are the run steps c asks for.
func runStepsAsked(c plan.Config) []runStep {
	var out []runStep
	for _, s := range runSteps {
		if s.asked(c) {
			out = append(out, s)
		}
	}
	return out
}

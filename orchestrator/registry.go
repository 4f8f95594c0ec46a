package orchestrator

import (
	"context"

	"github.com/tierbench/tierbench/orchestrator/latency"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
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
	serversDimension{},
	memorySweepDimension{},
	readCacheSweepDimension{},
	tlsDimension{},
	latency.FixedRate{},
	latency.Capacity{},
}

type serversDimension struct{}

func (serversDimension) Name() string { return "servers" }
func (serversDimension) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateServers(c, bad) })
}
func (serversDimension) Adjust(c *plan.Config) { dropExtrasForServers(c) }

type memorySweepDimension struct{}

func (memorySweepDimension) Name() string { return "memory sweep" }
func (memorySweepDimension) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateSweep(c, bad) })
}
func (memorySweepDimension) Adjust(c *plan.Config) { dropExtrasForSweep(c) }

type readCacheSweepDimension struct{}

func (readCacheSweepDimension) Name() string { return "read-cache sweep" }
func (readCacheSweepDimension) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateReadCacheSweep(c, bad) })
}

type tlsDimension struct{}

func (tlsDimension) Name() string { return "tls" }
func (tlsDimension) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateTLS(c, bad) })
}
func (tlsDimension) Adjust(c *plan.Config) { dropExtrasForTLS(c) }

// rowStep is a measurement run after a row's passes, on the row's server:
// phase names it in progress lines and status.json, asked says whether
// the configuration asks for it, run measures what the bundle lacks.
type rowStep struct {
	phase string
	asked func(plan.Config) bool
	run   func(ctx context.Context, env rowEnv) error
}

// rowSteps are the measurements after a row's passes, in the order they
// run.
var rowSteps = []rowStep{
	{phaseLatency, func(c plan.Config) bool { return c.Latency }, func(ctx context.Context, e rowEnv) error { return latency.Steps(ctx, e, e.row) }},
	{phaseSLO, func(c plan.Config) bool { return c.SLO != "" }, func(ctx context.Context, e rowEnv) error { return latency.SLOSearch(ctx, e, e.row) }},
}

func (serversDimension) Flags() string { return "--server redis --scenario memory" }
func (serversDimension) Ask(c *plan.Config) {
	c.Servers, c.Scenario = []string{"redis"}, results.ScenarioMemory
}
func (memorySweepDimension) Flags() string      { return "--memory 16m,32m" }
func (memorySweepDimension) Ask(c *plan.Config) { c.Memory = "16m,32m" }
func (readCacheSweepDimension) Flags() string   { return "--readcache-memory 0,64m" }
func (readCacheSweepDimension) Ask(c *plan.Config) {
	c.ReadCacheMemory = "0,64m"
}
func (tlsDimension) Flags() string      { return "--tls both" }
func (tlsDimension) Ask(c *plan.Config) { c.TLS = TLSBoth }

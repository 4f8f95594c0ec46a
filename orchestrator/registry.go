package orchestrator

import (
	"context"

	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
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
	sloMeasurement{},
	ladder.Part{},
}

type serversDimension struct{}

func (serversDimension) Name() string { return "servers" }
func (serversDimension) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateServers(c, bad) })
}

type memorySweepDimension struct{}

func (memorySweepDimension) Name() string { return "memory sweep" }
func (memorySweepDimension) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateSweep(c, bad) })
}

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

type sloMeasurement struct{}

func (sloMeasurement) Name() string { return "slo" }
func (sloMeasurement) Supports(c plan.Config) error {
	return plan.Refusals(func(bad func(string, ...any)) { validateSLO(c, bad) })
}

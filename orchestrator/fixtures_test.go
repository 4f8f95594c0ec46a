package orchestrator

import (
	"flag"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// referencePlan is the reference's four rows with three passes, under
// the reference profile as this run resolves it.
func referencePlan() results.Plan {
	cfg, _ := plan.Config{Workload: results.Workload{Profile: plan.ProfileReference}}.Resolve(func(string) string { return "" }, parts)
	return bundletest.ReferencePlan(cfg.Record())
}

var referencePasses = bundletest.ReferencePasses

// writeBundle writes a finished bundle from the reference fixtures.
func writeBundle(t *testing.T, fio bool) string {
	return bundletest.WriteBundle(t, referencePlan(), fio)
}

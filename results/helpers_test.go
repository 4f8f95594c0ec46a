package results_test

import (
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

// referencePlan is the reference's four rows with three passes.
func referencePlan() results.Plan {
	return bundletest.ReferencePlan(bundletest.ReferenceWorkload())
}

var referencePasses = bundletest.ReferencePasses

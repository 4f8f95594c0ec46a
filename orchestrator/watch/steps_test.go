package watch

import (
	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/latency"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// testSteps are the steps the facade's registry lists, for the tests of
// the estimate.
var testSteps = Steps{
	RowSteps: []Step{{PhaseLatency, latency.StepsWork}, {PhaseSLO, latency.SLOWork}},
	RunSteps: []Step{{PhaseLadder, func(c plan.Config, rows []results.Row, own bool) (int, float64, bool) {
		return ladder.Work(c, rows, own, len(latency.Shares))
	}}},
}

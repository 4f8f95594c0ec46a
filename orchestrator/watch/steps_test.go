package watch

import (
	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/latency"
)

// testSteps are the steps the facade's registry lists, for the tests of
// the estimate.
var testSteps = Steps{
	RowSteps: []Step{{PhaseLatency, latency.StepsWork}, {PhaseSLO, latency.SLOWork}},
	RunSteps: []Step{{PhaseLadder, ladder.Work}},
}

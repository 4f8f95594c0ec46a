package watch

import (
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// Step is a measurement the run takes besides the passes, as the
// estimate counts it: the facade lists them from its registry (after each
// row's passes, or once after every row), so that the estimate names no
// measurement itself.
type Step struct {
	// Name is its phase's name in progress lines and status.json.
	Name string
	// Work is what it runs for cfg over rows (a row step's one row, a run
	// step's every row; ownServers: the run starts its servers): count
	// units of seconds each, upTo when it may stop early; a count of 0
	// when cfg does not ask for it.
	Work func(cfg plan.Config, rows []results.Row, ownServers bool) (count int, seconds float64, upTo bool)
}

// phase is step's phase for cfg; its Count is 0 when cfg does not ask
// for it (sumPhases drops it).
func (s Step) phase(cfg plan.Config, rows []results.Row, ownServers bool) phase {
	n, sec, upTo := s.Work(cfg, rows, ownServers)
	return phase{Name: s.Name, Count: n, Seconds: sec, UpTo: upTo}
}

// Steps are the measurements besides the passes: RowSteps after each
// row's passes, RunSteps once after every row.
type Steps struct {
	RowSteps, RunSteps []Step
}

package orchestrator

import (
	"fmt"

	"github.com/tierbench/tierbench/results"
)

// assumedLoadKeysPerSec is the load rate the progress estimate assumes
// until the run has measured a load of its own: the reference profile's
// 100 M keys took about 4 minutes on a 2-CPU host. The estimate says when
// it assumes it.
const assumedLoadKeysPerSec = 400_000

// rowTodo counts the passes of row still to measure.
func (r *runner) rowTodo(row results.Row) int {
	var todo int
	for p := 1; p <= r.cfg.Passes; p++ {
		for _, t := range r.cfg.Threads {
			if !r.resumed.passes[results.PassKey(row, t, p)] {
				todo++
			}
		}
	}
	return todo
}

// remainingPhases is every phase still ahead when a cell of the current
// row starts: the row's passes still to measure (the starting one
// included) and what the row runs after them, then every later row's
// phases and the ladder.
func (r *runner) remainingPhases() []phase {
	if r.progress.rowIndex >= len(r.plan.Rows) {
		return nil
	}
	row := r.plan.Rows[r.progress.rowIndex]
	w := r.rowWorkOf(row)
	w.load = false
	here := rowPhases(r.cfg, w, r.rates())
	// The warm-up is behind a row whose first cell is starting.
	kept := here[:0]
	for _, p := range here {
		if p.Name != phaseWarmup {
			kept = append(kept, p)
		}
	}
	return sumPhases(append(kept, r.planPhases(r.progress.rowIndex+1)...))
}

// progressLeft is the "~Ns left" of the progress line of the cell now
// starting, naming the phases counted in it and the load rate assumed.
func (r *runner) progressLeft() string {
	ps := r.remainingPhases()
	r.progress.leftSeconds = phasesSeconds(ps)
	how := "assumed until a load is measured"
	if r.progress.loadedKeys > 0 && r.progress.loadTime > 0 {
		how = "as measured"
	}
	note := ""
	for _, p := range ps {
		if p.Name == phaseLoad {
			note = fmt.Sprintf("; loads at %s keys/s, %s", FormatOps(r.rates().loadKeysPerSec), how)
		}
	}
	return fmt.Sprintf(", ~%.0fs left (%s%s)", r.progress.leftSeconds, describePhases(ps), note)
}

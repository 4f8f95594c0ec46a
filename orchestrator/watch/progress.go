package watch

import (
	"fmt"
	"time"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// progress is what the progress lines' estimate counts.
type progress struct {
	cellTotal int
	cellIndex int
	cellTime  time.Duration // measured time of the cells run so far
	// loadedKeys and loadTime are the loads measured so far, for the
	// estimate of the loads still ahead.
	loadedKeys int64
	loadTime   time.Duration
	rowIndex   int // the row being run, for the estimate of what is ahead
	// leftSeconds is the estimate of the last progress line, for
	// status.json and the metrics.
	leftSeconds float64
	// pastPreflight says the run left its preflight phase: the fio
	// ceilings are the bundle's from then on, not assumed.
	pastPreflight bool
}

// PassesLeft counts the passes of row still to measure.
func (w *Run) PassesLeft(row results.Row) int {
	var todo int
	for p := 1; p <= w.v.Config.Passes; p++ {
		for _, t := range w.v.Config.Threads {
			if !w.v.DonePasses[results.PassKey(row, t, p)] {
				todo++
			}
		}
	}
	return todo
}

// CountCells counts the passes still to measure in every row, for the
// progress lines' "cell i/n"; the run calls it once its rows are final.
func (w *Run) CountCells() {
	for _, row := range w.env.Rows() {
		w.progress.cellTotal += w.PassesLeft(row)
	}
}

// AtRow says the run starts the row at index i of its rows.
func (w *Run) AtRow(i int) { w.progress.rowIndex = i }

// NextCell counts a cell starting: its number, the run's cells in all
// and the "~Ns left" of its progress line.
func (w *Run) NextCell() (n, total int, left string) {
	w.progress.cellIndex++
	return w.progress.cellIndex, w.progress.cellTotal, w.progressLeft()
}

// CellTook adds a cell's measured time, for the estimate of the cells
// still ahead.
func (w *Run) CellTook(d time.Duration) { w.progress.cellTime += d }

// Loaded adds a load of keys that took d, for the estimate of the loads
// still ahead.
func (w *Run) Loaded(keys int64, d time.Duration) {
	w.progress.loadedKeys += keys
	w.progress.loadTime += d
}

// remainingPhases is every phase still ahead when a cell of the current
// row starts: the row's passes still to measure (the starting one
// included) and what the row runs after them, then every later row's
// phases and the ladder.
func (w *Run) remainingPhases() []phase {
	rows := w.env.Rows()
	if w.progress.rowIndex >= len(rows) {
		return nil
	}
	wk := w.rowWorkOf(rows[w.progress.rowIndex])
	wk.load, wk.server = false, false // started and loaded; its stop is in the noise
	here := rowPhases(w.v.Config, rows[w.progress.rowIndex], wk, w.rates(), w.v.Steps)
	// The warm-up is behind a row whose first cell is starting.
	kept := here[:0]
	for _, p := range here {
		if p.Name != PhaseWarmup {
			kept = append(kept, p)
		}
	}
	return sumPhases(append(kept, w.planPhases(w.progress.rowIndex+1)...))
}

// progressLeft is the "~Ns left" of the progress line of the cell now
// starting, naming the phases counted in it and the load rate assumed.
func (w *Run) progressLeft() string {
	ps := w.remainingPhases()
	w.progress.leftSeconds = phasesSeconds(ps)
	how := "assumed until a load is measured"
	if w.progress.loadedKeys > 0 && w.progress.loadTime > 0 {
		how = "as measured"
	}
	note := ""
	for _, p := range ps {
		if p.Name == PhaseLoad {
			note = fmt.Sprintf("; loads at %s keys/s, %s", human.Ops(w.rates().loadKeysPerSec), how)
		}
	}
	return fmt.Sprintf(", ~%.0fs left (%s%s)", w.progress.leftSeconds, describePhases(ps), note)
}

package orchestrator

import (
	"fmt"
	"time"

	"github.com/tierbench/tierbench/results"
)

// assumedLoadKeysPerSec is the load rate the progress estimate assumes
// until the run has measured a load of its own: the reference profile's
// 100 M keys took about 4 minutes on a 2-CPU host. The estimate says when
// it assumes it.
const assumedLoadKeysPerSec = 400_000

// estimate is what the "~Ns left" of a progress line counts: the cells
// still to measure, and for every row still ahead its load and warm-up.
type estimate struct {
	cellsLeft   int           // including the one starting now
	perCell     time.Duration // measured mean so far; 0 = none measured yet
	cellSeconds int

	rowsAhead     int   // rows after the current one with cells to measure
	warmupSeconds int   // per row
	loadKeys      int64 // keys each row ahead loads; 0 with --skip-load

	loadedKeys int64 // keys loaded so far, and the time it took
	loadTime   time.Duration
}

// left returns the seconds left and a note on the loads counted in it.
func (e estimate) left() (float64, string) {
	perCell := e.perCell
	if perCell == 0 {
		perCell = time.Duration(e.cellSeconds+1) * time.Second
	}
	secs := float64(e.cellsLeft) * perCell.Seconds()
	secs += float64(e.rowsAhead * e.warmupSeconds)
	if e.rowsAhead == 0 || e.loadKeys == 0 {
		return secs, ""
	}
	rate, how := float64(assumedLoadKeysPerSec), "assumed until a load is measured"
	if e.loadedKeys > 0 && e.loadTime > 0 {
		rate, how = float64(e.loadedKeys)/e.loadTime.Seconds(), "as measured"
	}
	loadSecs := float64(e.rowsAhead) * float64(e.loadKeys) / rate
	return secs + loadSecs, fmt.Sprintf(" (%d load(s) of %d keys ahead, ~%.0fs at %s keys/s, %s)",
		e.rowsAhead, e.loadKeys, loadSecs, FormatOps(rate), how)
}

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

// progressLeft is the "~Ns left" of the progress line of the cell now
// starting, counting the loads and warm-ups of the rows still ahead.
func (r *runner) progressLeft() string {
	e := estimate{cellsLeft: r.progress.cellTotal - r.progress.cellIndex + 1, cellSeconds: r.cfg.CellSeconds,
		warmupSeconds: r.cfg.WarmupSeconds, loadedKeys: r.progress.loadedKeys, loadTime: r.progress.loadTime}
	if r.progress.cellIndex > 1 {
		e.perCell = r.progress.cellTime / time.Duration(r.progress.cellIndex-1)
	}
	if !r.cfg.SkipLoad {
		e.loadKeys = r.cfg.DBSize
	}
	for _, row := range r.plan.Rows[min(r.progress.rowIndex+1, len(r.plan.Rows)):] {
		if r.rowTodo(row) > 0 {
			e.rowsAhead++
		}
	}
	secs, note := e.left()
	return fmt.Sprintf(", ~%.0fs left%s", secs, note)
}

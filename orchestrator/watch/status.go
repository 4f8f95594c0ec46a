package watch

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// FileStatus is the run's live status in its bundle (docs/watching-a-run.md).
const FileStatus = "status.json"

// The states of status.json: a run is running until it ends done,
// failed or interrupted.
const (
	StateRunning     = "running"
	StateDone        = "done"
	StateFailed      = "failed"
	StateInterrupted = "interrupted"
)

// RunStatus is status.json: where the run is and what is left, for
// scripts. It is rewritten whole (a temp file renamed over it) at every
// phase and cell, so a reader always sees one complete document.
type RunStatus struct {
	Schema     int       `json:"schema_version"`
	RunID      string    `json:"run_id"`
	State      string    `json:"state"` // running, done, failed, interrupted
	Phase      string    `json:"phase"` // preflight, load, warm-up, cells, latency steps, slo probes, fio re-runs, ladder, report
	Row        string    `json:"row,omitempty"`
	RowIndex   int       `json:"row_index"` // 1-based; 0 before the first row
	Rows       int       `json:"rows"`
	Cell       string    `json:"cell,omitempty"` // "t=8 pass 1/2" while a cell runs
	CellsDone  int       `json:"cells_done"`
	CellsTotal int       `json:"cells_total"`
	ETASeconds float64   `json:"eta_seconds"` // estimate of the seconds left (0 when done)
	ETA        time.Time `json:"eta"`         // updated_at + eta_seconds
	StartedAt  time.Time `json:"started_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	Error      string    `json:"error,omitempty"` // why a failed or interrupted run stopped
}

// status holds the run's status for status.json and the metrics
// endpoint, which reads it from its own goroutine.
type status struct {
	mu     sync.Mutex
	dir    string // the bundle; "" until it exists
	status RunStatus
	// etaAt is when ETASeconds was estimated: the metrics count down
	// from it between updates.
	etaAt  time.Time
	warned bool // a failed write was said once
	live   liveCell
}

// snapshot is a copy of the status, with the estimate counted down to now.
func (w *status) snapshot(now time.Time) RunStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.status
	if s.State == StateRunning && !w.etaAt.IsZero() {
		s.ETASeconds = max(0, s.ETASeconds-now.Sub(w.etaAt).Seconds())
	}
	return s
}

// update changes the status with f and writes status.json when the
// bundle exists.
func (w *status) update(f func(*RunStatus)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(&w.status)
	now := time.Now().UTC()
	w.status.UpdatedAt = now
	w.status.ETA = now.Add(time.Duration(w.status.ETASeconds * float64(time.Second)))
	w.etaAt = now
	if w.dir == "" {
		return nil
	}
	return writeStatusFile(w.dir, w.status)
}

// writeStatusFile writes s to dir/status.json atomically: a fresh temp
// file, opened O_EXCL|O_NOFOLLOW so that nothing already there (a link
// planted in the bundle) is written through, renamed over the old one.
func writeStatusFile(dir string, s RunStatus) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	var suffix [6]byte
	rand.Read(suffix[:])
	tmp := filepath.Join(dir, "."+FileStatus+"."+hex.EncodeToString(suffix[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("watch: write %s: %w", FileStatus, err)
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp)
		return fmt.Errorf("watch: write %s: %w", FileStatus, errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp, filepath.Join(dir, FileStatus)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("watch: write %s: %w", FileStatus, err)
	}
	return nil
}

// Phase records that the run entered phase on row (nil: none), with the
// estimate of what is left. A status that cannot be written is said once
// on the progress and not fatal: the run measures on.
func (w *Run) Phase(phase string, row *results.Row, cell string) {
	if phase != PhasePreflight {
		w.progress.pastPreflight = true // its sweeps, if any, are measured
	}
	left := w.leftAt(phase) // before update: it may read the status
	rows := w.env.Rows()
	err := w.status.update(func(s *RunStatus) {
		s.State, s.Phase, s.Cell = StateRunning, phase, cell
		s.Rows = len(rows)
		if row != nil {
			s.Row, s.RowIndex = human.Title(row.Backend)+" "+row.Label, w.progress.rowIndex+1
		}
		s.CellsTotal = w.progress.cellTotal
		s.CellsDone = max(0, w.progress.cellIndex-1)
		if phase != PhaseCells {
			s.CellsDone = w.progress.cellIndex
		}
		s.ETASeconds = left
	})
	w.statusErr(err)
}

// PhaseIf is Phase when the row runs the phase.
func (w *Run) PhaseIf(runs bool, phase string, row *results.Row) {
	if runs {
		w.Phase(phase, row, "")
	}
}

// leftAt is the estimate of the seconds left when phase starts: at a
// cell, the progress line's; at a row's start, everything from that row
// on; later in a row, the last estimate counted down.
func (w *Run) leftAt(phase string) float64 {
	switch phase {
	case PhasePreflight:
		// The run's first estimate: its preflight's fio sweeps, then
		// every row and the ladder.
		w.progress.leftSeconds = phasesSeconds(sumPhases(append(w.v.Preflight.phases(w.v.Config), w.planPhases(0)...)))
		return w.progress.leftSeconds
	case PhaseCells:
		return w.progress.leftSeconds
	case PhaseLoad, PhaseWarmup:
		w.progress.leftSeconds = phasesSeconds(w.planPhases(w.progress.rowIndex))
		return w.progress.leftSeconds
	}
	return w.status.snapshot(time.Now()).ETASeconds
}

// finish writes the run's last status: done, failed or interrupted, with
// nothing left.
func (w *Run) finish(err error, interrupted bool) {
	werr := w.status.update(func(s *RunStatus) {
		s.State, s.Cell, s.ETASeconds = StateDone, "", 0
		s.CellsDone = w.progress.cellIndex
		switch {
		case interrupted:
			s.State, s.Error = StateInterrupted, err.Error()
		case err != nil:
			s.State, s.Error = StateFailed, err.Error()
		}
	})
	w.statusErr(werr)
}

// statusErr says a status write failed, once.
func (w *Run) statusErr(err error) {
	if err == nil || w.status.warned {
		return
	}
	w.status.warned = true
	w.env.Printf("status: %v (the run goes on; %s is not updated)\n", err, FileStatus)
}

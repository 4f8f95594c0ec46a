package orchestrator

import (
	"context"
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

	"github.com/tierbench/tierbench/results"
)

// FileStatus is the run's live status in its bundle (docs/watching-a-run.md).
const FileStatus = "status.json"

// Run states of status.json.
const (
	stateRunning     = "running"
	stateDone        = "done"
	stateFailed      = "failed"
	stateInterrupted = "interrupted"
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

// runWatch holds the run's status for status.json and the metrics
// endpoint, which reads it from its own goroutine.
type runWatch struct {
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
func (w *runWatch) snapshot(now time.Time) RunStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.status
	if s.State == stateRunning && !w.etaAt.IsZero() {
		s.ETASeconds = max(0, s.ETASeconds-now.Sub(w.etaAt).Seconds())
	}
	return s
}

// update changes the status with f and writes status.json when the
// bundle exists.
func (w *runWatch) update(f func(*RunStatus)) error {
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
		return fmt.Errorf("orchestrator: write %s: %w", FileStatus, err)
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp)
		return fmt.Errorf("orchestrator: write %s: %w", FileStatus, errors.Join(werr, cerr))
	}
	if err := os.Rename(tmp, filepath.Join(dir, FileStatus)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("orchestrator: write %s: %w", FileStatus, err)
	}
	return nil
}

// setPhase records that the run entered phase on row (nil: none), with
// the estimate of what is left. A status that cannot be written is said
// once on the progress and not fatal: the run measures on.
func (r *runner) setPhase(phase string, row *results.Row, cell string) {
	left := r.leftAt(phase) // before update: it may read the status
	err := r.watch.update(func(s *RunStatus) {
		s.State, s.Phase, s.Cell = stateRunning, phase, cell
		s.Rows = len(r.plan.Rows)
		if row != nil {
			s.Row, s.RowIndex = titleCase(row.Backend)+" "+row.Label, r.progress.rowIndex+1
		}
		s.CellsTotal = r.progress.cellTotal
		s.CellsDone = max(0, r.progress.cellIndex-1)
		if phase != phaseCells {
			s.CellsDone = r.progress.cellIndex
		}
		s.ETASeconds = left
	})
	r.statusErr(err)
}

// leftAt is the estimate of the seconds left when phase starts: at a
// cell, the progress line's; at a row's start, everything from that row
// on; later in a row, the last estimate counted down.
func (r *runner) leftAt(phase string) float64 {
	switch phase {
	case phaseCells:
		return r.progress.leftSeconds
	case phaseLoad, phaseWarmup, "row":
		r.progress.leftSeconds = phasesSeconds(r.planPhases(r.progress.rowIndex))
		return r.progress.leftSeconds
	}
	return r.watch.snapshot(time.Now()).ETASeconds
}

// finishStatus writes the run's last status: done, failed or
// interrupted, with nothing left.
func (r *runner) finishStatus(err error, interrupted bool) {
	werr := r.watch.update(func(s *RunStatus) {
		s.State, s.Cell, s.ETASeconds = stateDone, "", 0
		s.CellsDone = r.progress.cellIndex
		switch {
		case interrupted:
			s.State, s.Error = stateInterrupted, err.Error()
		case err != nil:
			s.State, s.Error = stateFailed, err.Error()
		}
	})
	r.statusErr(werr)
}

// statusErr says a status write failed, once.
func (r *runner) statusErr(err error) {
	if err == nil || r.watch.warned {
		return
	}
	r.watch.warned = true
	r.printf("status: %v (the run goes on; %s is not updated)\n", err, FileStatus)
}

// setPhaseIf is setPhase when the row runs the phase.
func (r *runner) setPhaseIf(runs bool, phase string, row *results.Row) {
	if runs {
		r.setPhase(phase, row, "")
	}
}

// startWatch begins status.json in the new bundle and, with
// --metrics-addr, the metrics endpoint.
func (r *runner) startWatch() error {
	r.watch.mu.Lock()
	r.watch.dir = r.out
	r.watch.status = RunStatus{Schema: results.SchemaVersion, RunID: r.plan.RunID, StartedAt: r.started.UTC()}
	r.watch.mu.Unlock()
	r.setPhase("preflight", nil, "")
	if r.cfg.MetricsAddr == "" {
		return nil
	}
	addr, err := ResolveMetricsAddr(r.cfg.MetricsAddr)
	if err != nil {
		return err
	}
	if r.metrics, err = startMetrics(addr, &r.watch); err != nil {
		return err
	}
	r.printf("metrics: http://%s/metrics\n", r.metrics.Addr())
	return nil
}

// dropBundleStatus stops writing status.json and removes it: a run
// refused before it measured anything leaves no bundle behind.
func (r *runner) dropBundleStatus() {
	r.watch.mu.Lock()
	dir := r.watch.dir
	r.watch.dir = ""
	r.watch.mu.Unlock()
	if dir != "" {
		os.Remove(filepath.Join(dir, FileStatus))
	}
}

// beforeSeal writes the status the report's seal covers: with last, the
// run's final one (done, or failed naming failed), else the report phase
// before the ladder.
func (r *runner) beforeSeal(last bool, failed error) {
	if last {
		r.finishStatus(failed, false)
		return
	}
	r.setPhase("report", nil, "")
}

// stopWatch writes the last status of a run that ended on an error
// after its status said otherwise; when the bundle was sealed already
// (the ladder failed after the table), it seals it again so that
// SHA256SUMS covers the status as it ends. It stops the metrics.
func (r *runner) stopWatch(ctx context.Context, err error) {
	defer func() {
		if r.metrics != nil {
			r.metrics.Close()
		}
	}()
	st := r.watch.snapshot(time.Now())
	if err == nil || st.State != stateRunning && st.State != stateDone {
		return
	}
	r.finishStatus(err, ctx.Err() != nil)
	if _, serr := os.Stat(filepath.Join(r.out, results.FileSums)); serr == nil {
		if serr := results.Seal(r.out, nil); serr != nil {
			r.printf("status: %v\n", serr)
		}
	}
}

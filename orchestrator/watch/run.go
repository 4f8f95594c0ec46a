package watch

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// Env is what the watch asks the run for as it goes: what may change
// after the watch starts, and what other parts of the run own.
type Env interface {
	// Rows is the run's table rows (TLS across hosts may add rows after
	// the watch started).
	Rows() []results.Row
	// RowEngine is fio's --ioengine for row's server, "" where fio does
	// not stand for it (its fio re-runs and the fio beside its passes).
	RowEngine(row results.Row) string
	// RowBaseline is the preflight's fio curve row is held against; nil
	// before the preflight measured one, or without one.
	RowBaseline(row results.Row) *hostcheck.FIOBaseline
	// Printf writes a progress line.
	Printf(format string, a ...any)
}

// Values are what the watch reads of the run that does not change once
// it starts.
type Values struct {
	Config plan.Config // resolved, with the target's changes made
	RunID  string
	Bundle string // the bundle's directory, which exists
	// Started is when the run began.
	Started time.Time
	// OwnServers says the run starts its servers (not --server-addr's):
	// the ladder then climbs every tiered backend.
	OwnServers bool
	// Loads says the run loads each row's dataset (not --skip-load).
	Loads bool
	// FioPlanned says the run measures fio on its data dir
	// (plan.FioPlanned): the fio beside and after each row's passes.
	FioPlanned bool
	// DonePasses and DoneLoads are what the bundle held already when the
	// run began (--resume), keyed by results.PassKey and Row.ID.
	DonePasses map[string]bool
	DoneLoads  map[string]bool
	// Preflight is the host preflight's fio sweeps still ahead, which the
	// first estimate counts.
	Preflight Preflight
	// Steps are the measurements the run takes besides the passes.
	Steps Steps
}

// Run is one run's watch: its progress counts, its status and, with
// --metrics-addr, the metrics endpoint.
type Run struct {
	env      Env
	v        Values
	progress progress
	status   status
	metrics  *metricsServer // nil without --metrics-addr
}

// Start begins the watch of a run whose bundle exists: status.json in
// the preflight phase, with the estimate of the whole run, and, with
// --metrics-addr, the endpoint. Stop ends it.
func Start(env Env, v Values) (*Run, error) {
	w := &Run{env: env, v: v}
	w.status.dir = v.Bundle
	w.status.status = RunStatus{Schema: results.SchemaVersion, RunID: v.RunID, StartedAt: v.Started.UTC()}
	w.Phase(PhasePreflight, nil, "")
	if v.Config.MetricsAddr == "" {
		return w, nil
	}
	addr, err := ResolveMetricsAddr(v.Config.MetricsAddr)
	if err != nil {
		return nil, err
	}
	if w.metrics, err = startMetrics(addr, &w.status); err != nil {
		return nil, err
	}
	env.Printf("metrics: http://%s/metrics\n", w.metrics.Addr())
	return w, nil
}

// DropStatus stops writing status.json and removes it: a run refused
// before it measured anything leaves no bundle behind.
func (w *Run) DropStatus() {
	w.status.mu.Lock()
	dir := w.status.dir
	w.status.dir = ""
	w.status.mu.Unlock()
	if dir != "" {
		os.Remove(filepath.Join(dir, FileStatus))
	}
}

// BeforeSeal writes the status the report's seal covers: with last, the
// run's final one (done, or failed naming failed), else the report phase
// before the ladder.
func (w *Run) BeforeSeal(last bool, failed error) {
	if last {
		w.finish(failed, false)
		return
	}
	w.Phase(PhaseReport, nil, "")
}

// Stop writes the last status of a run that ended on err after its
// status said otherwise; when the bundle was sealed already (the ladder
// failed after the table), it seals it again so that SHA256SUMS covers
// the status as it ends. It stops the metrics.
func (w *Run) Stop(ctx context.Context, err error) {
	defer func() {
		if w.metrics != nil {
			w.metrics.Close()
		}
	}()
	st := w.status.snapshot(time.Now())
	if err == nil || st.State != StateRunning && st.State != StateDone {
		return
	}
	w.finish(err, ctx.Err() != nil)
	if _, serr := os.Stat(filepath.Join(w.v.Bundle, results.FileSums)); serr == nil {
		if serr := results.Seal(w.v.Bundle, nil); serr != nil {
			w.env.Printf("status: %v\n", serr)
		}
	}
}

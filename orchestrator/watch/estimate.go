package watch

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// phase is one kind of work a run does, counted from its plan: Count
// runs of Seconds each. UpTo marks a count that is the most the phase can
// run (an SLO search stops early, a fio re-run is skipped where the
// preflight's curve already holds the depth): the estimate counts the
// most, so it errs long, never short.
type phase struct {
	Name    string
	Count   int
	Seconds float64
	UpTo    bool
}

// Total is the phase's seconds in all.
func (p phase) Total() float64 { return float64(p.Count) * p.Seconds }

// Phase names, as status.json and the progress lines give them: the
// run's preflight, then a row's in the order it runs them, then the
// ladder and the report.
const (
	PhasePreflight = "preflight"
	PhaseServer    = "server start and stop"
	PhaseLoad      = "load"
	PhaseWarmup    = "warm-up"
	PhaseCells     = "cells"
	PhaseLatency   = "latency steps"
	PhaseSLO       = "slo probes"
	PhaseFio       = "fio re-runs"
	PhaseLadder    = "ladder"
	PhaseReport    = "report"
)

// PhaseSweep is the preflight's fio depth sweeps as the estimate counts
// them, in the status's preflight phase.
const PhaseSweep = "preflight fio steps"

// Preflight is the host preflight's fio depth sweeps still ahead of a
// run, as the estimate counts them; the zero value has none (no ceiling
// to measure, none across hosts, or the bundle has it already).
type Preflight struct {
	// SweepCPUs is, per sweep, the CPUs its fio may use: the host's,
	// then, for a pinned row, the pinned server's.
	SweepCPUs []int
	// MaxDepth is the depth each sweep reaches (--fio-max-depth).
	MaxDepth int
	// Full says each sweep runs every step (--fio-full-sweep); otherwise
	// a sweep stops where IOPS stop growing and its most is counted.
	Full bool
	// FileBytes is the fio files' size in all, laid out before the first
	// step (the sweeps share them).
	FileBytes int64
}

// fioStartSeconds is what each fio run costs around its measured
// seconds: the process, its files opened, its rings or contexts set up.
const fioStartSeconds = 0.5

// fioStepSeconds is each fio sweep step's seconds (--fio-seconds, passed
// on as preflight's --fio-runtime), the preflight's default where the run
// gives none.
func fioStepSeconds(cfg plan.Config) int {
	return cmp.Or(cfg.FioSeconds, hostcheck.DefaultFIORuntimeSeconds)
}

// phases is the sweeps as one phase: every step of every sweep, the
// 4 KiB read at each one's best depth included (hostcheck.SweepSteps),
// each fioStepSeconds long.
func (p Preflight) phases(cfg plan.Config) []phase {
	var steps int
	for _, cpus := range p.SweepCPUs {
		steps += hostcheck.SweepSteps(p.MaxDepth, cpus)
	}
	if steps == 0 {
		return nil
	}
	// The layout is spread over the steps: the phase is one line.
	layout := float64(p.FileBytes) / plan.AssumedWriteBytesPerSec / float64(steps)
	return []phase{{Name: PhaseSweep, Count: steps, Seconds: float64(fioStepSeconds(cfg)) + fioStartSeconds + layout, UpTo: !p.Full}}
}

// rowWork is what one row still has to run, for the estimate.
type rowWork struct {
	cells int  // passes still to measure
	load  bool // its load still to run (false with --skip-load or resumed)
	// server says the run starts the row's server and stops it after:
	// its own servers, a row still to run.
	server bool
	// fioSeconds is each fio re-run's seconds; 0 when the row has none
	// (no ceiling for it, --no-fio, or not a tierbench disk row).
	fioSeconds int
	// besideSeconds is the fio run after each of its passes
	// (results.BesideSeconds) where the row has a ceiling, else 0.
	besideSeconds int
}

// serverStartStopSeconds is a row's server started on a wiped data dir,
// its load's sampled GET check, and its stop with its files removed.
const serverStartStopSeconds = 15

// phaseRates are the per-unit rates the estimate assumes until the run
// measured its own.
type phaseRates struct {
	loadKeysPerSec float64
	perCellSeconds float64 // 0: the cell's seconds, one of set-up and the fio beside it
}

// rowPhases lists the phases of one row, from the run's parameters.
func rowPhases(cfg plan.Config, row results.Row, w rowWork, rates phaseRates, steps Steps) []phase {
	var out []phase
	if w.server {
		out = append(out, phase{Name: PhaseServer, Count: 1, Seconds: serverStartStopSeconds})
	}
	if w.load && cfg.DBSize > 0 {
		out = append(out, phase{Name: PhaseLoad, Count: 1, Seconds: float64(cfg.DBSize) / rates.loadKeysPerSec})
	}
	if w.cells > 0 && cfg.WarmupSeconds > 0 {
		out = append(out, phase{Name: PhaseWarmup, Count: 1, Seconds: float64(cfg.WarmupSeconds)})
	}
	if w.cells > 0 {
		per := rates.perCellSeconds
		if per == 0 {
			per = float64(cfg.CellSeconds + 1 + w.besideSeconds)
		}
		out = append(out, phase{Name: PhaseCells, Count: w.cells, Seconds: per})
	}
	out = append(out, postCellPhases(cfg, row, w, steps)...)
	return out
}

// postCellPhases are what a row runs after its passes: the registered
// row steps (the latency steps, the SLO search's probes) and the fio
// re-runs at the cells' disk depths.
func postCellPhases(cfg plan.Config, row results.Row, w rowWork, steps Steps) []phase {
	var out []phase
	for _, s := range steps.RowSteps {
		out = append(out, s.phase(cfg, []results.Row{row}, true))
	}
	if w.fioSeconds > 0 {
		out = append(out, phase{Name: PhaseFio, Count: len(cfg.Threads), Seconds: float64(w.fioSeconds) + fioStartSeconds, UpTo: true})
	}
	return out
}

// runStepPhases are what the run runs once after every row (the
// ladder's rounds).
func runStepPhases(cfg plan.Config, rows []results.Row, ownServers bool, steps Steps) []phase {
	var out []phase
	for _, s := range steps.RunSteps {
		out = append(out, s.phase(cfg, rows, ownServers))
	}
	return out
}

// sumPhases merges phases of the same name, keeping the first order.
func sumPhases(ps []phase) []phase {
	var out []phase
	at := map[string]int{}
	for _, p := range ps {
		if p.Count == 0 {
			continue
		}
		i, ok := at[p.Name]
		if !ok {
			at[p.Name] = len(out)
			out = append(out, p)
			continue
		}
		// Rows may differ in a phase's unit; the sum keeps the total.
		total := out[i].Total() + p.Total()
		out[i].Count += p.Count
		out[i].Seconds = total / float64(out[i].Count)
		out[i].UpTo = out[i].UpTo || p.UpTo
	}
	return out
}

// phasesSeconds is the phases' seconds in all.
func phasesSeconds(ps []phase) float64 {
	var s float64
	for _, p := range ps {
		s += p.Total()
	}
	return s
}

// describePhases is the phases as a progress line shows them.
func describePhases(ps []phase) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		most := ""
		if p.UpTo {
			most = "≤"
		}
		parts = append(parts, fmt.Sprintf("%s %s%d ~%.0fs", p.Name, most, p.Count, p.Total()))
	}
	return strings.Join(parts, ", ")
}

// rowWorkOf is what row still has to run in this run.
func (w *Run) rowWorkOf(row results.Row) rowWork {
	cfg := w.v.Config
	wk := rowWork{cells: w.PassesLeft(row), load: w.v.Loads && !w.v.DoneLoads[row.ID()], besideSeconds: w.besideOf(row)}
	wk.server = w.v.OwnServers && wk.cells > 0
	if w.env.RowEngine(row) == "" || !w.v.FioPlanned {
		return wk
	}
	// A re-run runs as long as the preflight's steps did.
	if base := w.baseline(row); base != nil {
		wk.fioSeconds = cmp.Or(base.RuntimeSeconds, cfg.FioSeconds, hostcheck.DefaultFIORuntimeSeconds)
	}
	return wk
}

// RerunsFio says row has fio re-runs after its passes (a ceiling to
// hold its cells against), for the phase status.json names.
func (w *Run) RerunsFio(row results.Row) bool { return w.rowWorkOf(row).fioSeconds > 0 }

// besideOf is the seconds of the fio run after each pass of row (the fio
// beside it): where it has a ceiling, not across a cluster's shards.
func (w *Run) besideOf(row results.Row) int {
	if !w.v.FioPlanned || row.Shards > 1 || w.baseline(row) == nil {
		return 0
	}
	return results.BesideSeconds
}

// baseline is the fio curve row is held against, for the estimate: the
// preflight's or, while its sweeps are still ahead, one with the steps
// they will run, so that the first estimate counts the fio that runs
// against the ceiling not measured yet.
func (w *Run) baseline(row results.Row) *hostcheck.FIOBaseline {
	if b := w.env.RowBaseline(row); b != nil || w.progress.pastPreflight || len(w.v.Preflight.SweepCPUs) == 0 {
		return b
	}
	return &hostcheck.FIOBaseline{RuntimeSeconds: fioStepSeconds(w.v.Config)}
}

// rates is what the estimate assumes per load key and per cell: what the
// run measured so far, else the defaults.
func (w *Run) rates() phaseRates {
	rates := phaseRates{loadKeysPerSec: plan.AssumedLoadKeysPerSec}
	if w.progress.loadedKeys > 0 && w.progress.loadTime > 0 {
		rates.loadKeysPerSec = float64(w.progress.loadedKeys) / w.progress.loadTime.Seconds()
	}
	if w.progress.cellIndex > 1 {
		rates.perCellSeconds = w.progress.cellTime.Seconds() / float64(w.progress.cellIndex-1)
	}
	return rates
}

// planPhases lists every phase the run will run from the row at index
// from on (a row's passes already measured not counted), and the ladder.
func (w *Run) planPhases(from int) []phase {
	var ps []phase
	cfg, rows, rates := w.v.Config, w.env.Rows(), w.rates()
	for _, row := range rows[min(from, len(rows)):] {
		ps = append(ps, rowPhases(cfg, row, w.rowWorkOf(row), rates, w.v.Steps)...)
	}
	return sumPhases(append(ps, runStepPhases(cfg, rows, w.v.OwnServers, w.v.Steps)...))
}

// PlanEstimate is the estimate a run of rows planned from cfg starts
// from, before anything ran (tierbench plan): the preflight's fio sweeps,
// every row's phases at the default rates, fio counted where engine names
// one for the row and the ceiling applies, at --fio-seconds, and the
// ladder.
func PlanEstimate(cfg plan.Config, pre Preflight, rows []results.Row, engine func(results.Row) string, steps Steps) *plan.Estimate {
	ps := pre.phases(cfg)
	fio, ownServers := plan.FioPlanned(cfg), cfg.ServerAddr == ""
	for _, row := range rows {
		w := plannedWork(cfg, row, engine(row), fio)
		w.server = ownServers
		ps = append(ps, rowPhases(cfg, row, w, phaseRates{loadKeysPerSec: plan.AssumedLoadKeysPerSec}, steps)...)
	}
	ps = sumPhases(append(ps, runStepPhases(cfg, rows, ownServers, steps)...))
	e := &plan.Estimate{Seconds: phasesSeconds(ps)}
	for _, p := range ps {
		e.Phases = append(e.Phases, plan.Phase{Name: p.Name, Count: p.Count, Seconds: p.Seconds, UpTo: p.UpTo})
	}
	return e
}

// plannedWork is a row's work before anything ran: every pass, its load
// unless skipped, and the fio runs beside and after its passes where the
// run measures fio (rowWorkOf's, without a preflight to read).
func plannedWork(c plan.Config, row results.Row, engine string, fio bool) rowWork {
	w := rowWork{load: !c.SkipLoad}
	w.cells = c.Passes * len(c.Threads)
	if engine == "" || !fio {
		return w
	}
	w.fioSeconds = fioStepSeconds(c)
	if row.Shards <= 1 {
		w.besideSeconds = results.BesideSeconds
	}
	return w
}

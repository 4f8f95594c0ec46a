package orchestrator

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/latency"
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

// Phase names, in the order a row runs them.
const (
	phaseLoad    = "load"
	phaseWarmup  = "warm-up"
	phaseCells   = "cells"
	phaseLatency = "latency steps"
	phaseSLO     = "slo probes"
	phaseFio     = "fio re-runs"
	phaseLadder  = "ladder"
)

// rowWork is what one row still has to run, for the estimate.
type rowWork struct {
	cells int  // passes still to measure
	load  bool // its load still to run (false with --skip-load or resumed)
	// fioSeconds is each fio re-run's seconds; 0 when the row has none
	// (no ceiling for it, --no-fio, or not a tierbench disk row).
	fioSeconds int
	// besideSeconds is the fio run after each of its passes
	// (results.BesideSeconds) where the row has a ceiling, else 0.
	besideSeconds int
}

// phaseRates are the per-unit rates the estimate assumes until the run
// measured its own.
type phaseRates struct {
	loadKeysPerSec float64
	perCellSeconds float64 // 0: the cell's seconds, one of set-up and the fio beside it
}

// rowPhases lists the phases of one row, from the run's parameters.
func rowPhases(cfg plan.Config, w rowWork, rates phaseRates) []phase {
	var out []phase
	if w.load && cfg.DBSize > 0 {
		out = append(out, phase{Name: phaseLoad, Count: 1, Seconds: float64(cfg.DBSize) / rates.loadKeysPerSec})
	}
	if w.cells > 0 && cfg.WarmupSeconds > 0 {
		out = append(out, phase{Name: phaseWarmup, Count: 1, Seconds: float64(cfg.WarmupSeconds)})
	}
	if w.cells > 0 {
		per := rates.perCellSeconds
		if per == 0 {
			per = float64(cfg.CellSeconds + 1 + w.besideSeconds)
		}
		out = append(out, phase{Name: phaseCells, Count: w.cells, Seconds: per})
	}
	out = append(out, postCellPhases(cfg, w)...)
	return out
}

// postCellPhases are what a row runs after its passes: the latency steps
// (a PING floor and one step per share), the SLO search's probes and the
// fio re-runs at the cells' disk depths.
func postCellPhases(cfg plan.Config, w rowWork) []phase {
	var out []phase
	step := float64(results.LatencyWarmupSeconds + cfg.CellSeconds)
	if cfg.Latency {
		floor := float64(results.LatencyWarmupSeconds + min(cfg.CellSeconds, latency.FloorSeconds))
		out = append(out, phase{Name: phaseLatency, Count: 1 + len(latency.Shares), Seconds: (floor + float64(len(latency.Shares))*step) / float64(1+len(latency.Shares))})
	}
	if cfg.SLO != "" {
		out = append(out, phase{Name: phaseSLO, Count: latency.SLOMaxProbes, Seconds: step, UpTo: true})
	}
	if w.fioSeconds > 0 {
		out = append(out, phase{Name: phaseFio, Count: len(cfg.Threads), Seconds: float64(w.fioSeconds), UpTo: true})
	}
	return out
}

// ladderPhase is the ladder's rounds after the matrix: per backend,
// ladder.Rounds rounds of the Device, fio and KV layers, each a cell long.
func ladderPhase(cfg plan.Config, backends int) []phase {
	if !cfg.Ladder || backends == 0 {
		return nil
	}
	return []phase{{Name: phaseLadder, Count: backends * ladder.Rounds * 3, Seconds: float64(max(cfg.CellSeconds, 1))}}
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
func (r *runner) rowWorkOf(row results.Row) rowWork {
	w := rowWork{cells: r.rowTodo(row), load: !r.cfg.SkipLoad && !r.resumed.loads[row.ID()], besideSeconds: r.besideOf(row)}
	if rowEngine(row) == "" || r.cfg.NoFio || !plan.CeilingApplies(r.cfg) {
		return w
	}
	// A re-run runs as long as the preflight's steps did.
	if base := r.rowBaseline(row); base != nil {
		w.fioSeconds = cmp.Or(base.RuntimeSeconds, r.cfg.FioSeconds, hostcheck.DefaultFIORuntimeSeconds)
	}
	return w
}

// besideOf is the seconds of the fio run after each pass of row
// (fioBeside): where it has a ceiling, not across a cluster's shards.
func (r *runner) besideOf(row results.Row) int {
	if r.cfg.NoFio || row.Shards > 1 || !plan.CeilingApplies(r.cfg) || r.rowBaseline(row) == nil {
		return 0
	}
	return results.BesideSeconds
}

// rates is what the estimate assumes per load key and per cell: what the
// run measured so far, else the defaults.
func (r *runner) rates() phaseRates {
	rates := phaseRates{loadKeysPerSec: assumedLoadKeysPerSec}
	if r.progress.loadedKeys > 0 && r.progress.loadTime > 0 {
		rates.loadKeysPerSec = float64(r.progress.loadedKeys) / r.progress.loadTime.Seconds()
	}
	if r.progress.cellIndex > 1 {
		rates.perCellSeconds = r.progress.cellTime.Seconds() / float64(r.progress.cellIndex-1)
	}
	return rates
}

// planPhases lists every phase the run will run from the row at index
// from on (a row's passes already measured not counted), and the ladder.
func (r *runner) planPhases(from int) []phase {
	var ps []phase
	rates := r.rates()
	for _, row := range r.plan.Rows[min(from, len(r.plan.Rows)):] {
		ps = append(ps, rowPhases(r.cfg, r.rowWorkOf(row), rates)...)
	}
	var backends int
	if r.cfg.Ladder {
		backends = len(ladder.Backends(r.cfg, r.targets.Started()))
	}
	return sumPhases(append(ps, ladderPhase(r.cfg, backends)...))
}

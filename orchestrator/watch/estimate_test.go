package watch

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/latency"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// runEnv is a run as its watch reads it (Env): its rows, fio's engine
// for tierbench's disk rows, and the preflight's fio curve when the
// preflight measured one.
type runEnv struct {
	rows []results.Row
	base *hostcheck.FIOBaseline
	log  *strings.Builder
}

func (e runEnv) Rows() []results.Row { return e.rows }
func (e runEnv) RowEngine(row results.Row) string {
	if row.Server != "" || (row.Backend != "libaio" && row.Backend != "uring") {
		return ""
	}
	return fio.Engine(row.Backend)
}
func (e runEnv) RowBaseline(results.Row) *hostcheck.FIOBaseline { return e.base }
func (e runEnv) Printf(format string, a ...any) {
	if e.log != nil {
		e.log.WriteString(fmt.Sprintf(format, a...))
	}
}

// newRun is a watch over rows of cfg with nothing measured yet and no
// bundle to write (Start is not called: nothing is written).
func newRun(cfg plan.Config, env runEnv) *Run {
	return &Run{env: env, v: Values{Config: cfg, OwnServers: true, Loads: !cfg.SkipLoad, FioPlanned: plan.FioPlanned(cfg), Steps: testSteps, DonePasses: map[string]bool{}, DoneLoads: map[string]bool{}}}
}

// rowsOf is one row per backend, unpinned, and per memory size of a sweep.
func rowsOf(c plan.Config) []results.Row {
	var rows []results.Row
	for _, b := range c.Backends {
		for _, m := range strings.Split(c.Memory, ",") {
			row := results.Row{Backend: b, Pin: plan.PinNone, Label: "no pin"}
			if strings.Contains(c.Memory, ",") {
				row.Memory = m
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// ladderSeconds is the ladder's work for c as ladder.Work counts it (its
// own tests check the count): the estimate adds it once, after the rows.
func ladderSeconds(c plan.Config) float64 {
	n, sec, _ := ladder.Work(c, rowsOf(c), true, len(latency.Shares))
	return float64(n) * sec
}

// phaseNames is the phase list's names, in order.
func phaseNames(ps []phase) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

// TestPlanPhasesCountEveryPhase plans a few run shapes and checks that
// the estimate lists every phase the run will run, each counted from the
// plan's own parameters: loads, warm-ups and cells per row, the latency
// steps (a floor and one per share), the SLO search's most probes, the
// ladder's rounds and, for a row with a fio ceiling, its fio re-runs.
func TestPlanPhasesCountEveryPhase(t *testing.T) {
	const cell, warm, passes, dbsize = 3, 2, 2, 800_000
	threads := []int{2, 4}
	cellsPerRow := passes * len(threads)
	step := float64(results.LatencyWarmupSeconds + cell)
	latencySeconds := float64(results.LatencyWarmupSeconds+min(cell, latency.FloorSeconds)) + float64(len(latency.Shares))*step
	load := float64(dbsize) / plan.AssumedLoadKeysPerSec
	base := plan.Config{Workload: results.Workload{
		Profile:       plan.ProfileQuick,
		Backends:      []string{"uring"},
		Pins:          []string{plan.PinNone},
		Threads:       threads,
		CellSeconds:   cell,
		WarmupSeconds: warm,
		Passes:        passes,
		DBSize:        dbsize,
		Runtime:       plan.RuntimeProcess,
		NoFio:         true,
		Memory:        "1m",
		Page:          "64k",
		Segment:       "16m",
		Index:         "16m",
	},
	}
	with := func(f func(*plan.Config)) plan.Config {
		c := base
		c.Backends = slices.Clone(base.Backends)
		f(&c)
		return c
	}
	tests := []struct {
		name      string
		cfg       plan.Config
		preflight bool // a preflight with a fio ceiling in the bundle
		loadsDone bool // every row's load in the bundle already
		rows      int
		want      []string
		wantTotal float64
	}{
		{name: "cells only", cfg: base, rows: 1,
			want:      []string{PhaseLoad, PhaseWarmup, PhaseCells},
			wantTotal: load + warm + float64(cellsPerRow*(cell+1))},
		{name: "two backends, loaded already (resumed)", cfg: with(func(c *plan.Config) { c.Backends = []string{"libaio", "uring"} }), loadsDone: true, rows: 2,
			want:      []string{PhaseWarmup, PhaseCells},
			wantTotal: 2 * (warm + float64(cellsPerRow*(cell+1)))},
		{name: "latency", cfg: with(func(c *plan.Config) { c.Latency = true; c.Given = []string{"latency"} }), rows: 1,
			want:      []string{PhaseLoad, PhaseWarmup, PhaseCells, PhaseLatency},
			wantTotal: load + warm + float64(cellsPerRow*(cell+1)) + latencySeconds},
		{name: "slo", cfg: with(func(c *plan.Config) { c.SLO = "p99=1ms" }), rows: 1,
			want:      []string{PhaseLoad, PhaseWarmup, PhaseCells, PhaseSLO},
			wantTotal: load + warm + float64(cellsPerRow*(cell+1)) + latency.SLOMaxProbes*step},
		{name: "ladder", cfg: with(func(c *plan.Config) { c.Ladder = true }), rows: 1,
			want:      []string{PhaseLoad, PhaseWarmup, PhaseCells, PhaseLadder},
			wantTotal: load + warm + float64(cellsPerRow*(cell+1)) + ladderSeconds(with(func(c *plan.Config) { c.Ladder = true }))},
		{name: "memory sweep", cfg: with(func(c *plan.Config) { c.Memory = "1m,2m,4m"; c.DBSize = 8 * dbsize }), rows: 3,
			want:      []string{PhaseLoad, PhaseWarmup, PhaseCells},
			wantTotal: 3 * (8*load + warm + float64(cellsPerRow*(cell+1)))},
		{name: "fio re-runs with a ceiling", cfg: with(func(c *plan.Config) { c.NoFio = false }), preflight: true, rows: 1,
			want:      []string{PhaseLoad, PhaseWarmup, PhaseCells, PhaseFio},
			wantTotal: load + warm + float64(cellsPerRow*(cell+1+results.BesideSeconds)) + float64(len(threads))*(4+fioStartSeconds)},
		{name: "everything", cfg: with(func(c *plan.Config) {
			c.Latency, c.Given, c.SLO, c.Ladder, c.NoFio, c.FioSeconds = true, []string{"latency"}, "p99=1ms", true, false, 0
		}), preflight: true, rows: 1,
			want: []string{PhaseLoad, PhaseWarmup, PhaseCells, PhaseLatency, PhaseSLO, PhaseFio, PhaseLadder},
			wantTotal: load + warm + float64(cellsPerRow*(cell+1+results.BesideSeconds)) + latencySeconds + latency.SLOMaxProbes*step + float64(len(threads))*(4+fioStartSeconds) +
				ladderSeconds(with(func(c *plan.Config) {
					c.Latency, c.Given, c.SLO, c.Ladder, c.NoFio, c.FioSeconds = true, []string{"latency"}, "p99=1ms", true, false, 0
				}))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := runEnv{rows: rowsOf(tc.cfg)}
			if tc.preflight {
				env.base = &hostcheck.FIOBaseline{Engine: "io_uring", RuntimeSeconds: 4, Results: []hostcheck.FIOResult{{BlockBytes: 512, IOPS: 1000}}}
			}
			w := newRun(tc.cfg, env)
			for _, row := range env.rows {
				w.v.DoneLoads[row.ID()] = tc.loadsDone
			}
			if got := len(env.rows); got != tc.rows {
				t.Fatalf("got %d rows, want %d", got, tc.rows)
			}
			// Every row starts its server and stops it after.
			want, wantTotal := append([]string{PhaseServer}, tc.want...), tc.wantTotal+float64(tc.rows)*serverStartStopSeconds
			ps := w.planPhases(0)
			if got := phaseNames(ps); !slices.Equal(got, want) {
				t.Errorf("got phases %v, want %v", got, want)
			}
			if got := phasesSeconds(ps); abs(got-wantTotal) > 1e-6 {
				t.Errorf("got %.3f s in all, want %.3f s (%s)", got, wantTotal, describePhases(ps))
			}
		})
	}
}

// TestRemainingPhasesAtACell checks the estimate of a cell's progress
// line: the current row's passes left and its latency steps, then the
// later rows' server starts, loads, warm-ups, cells and latency; no
// start, warm-up or load of the current row.
func TestRemainingPhasesAtACell(t *testing.T) {
	cfg := plan.Config{Workload: results.Workload{
		Profile:       plan.ProfileQuick,
		Backends:      []string{"libaio", "uring"},
		Pins:          []string{plan.PinNone},
		Threads:       []int{2, 4},
		CellSeconds:   2,
		WarmupSeconds: 1,
		Passes:        1,
		DBSize:        400_000,
		Runtime:       plan.RuntimeProcess,
		NoFio:         true,
		Memory:        "1m",
		Page:          "64k",
		Segment:       "16m",
		Index:         "16m",
		Latency:       true,
		Given:         []string{"latency"},
	},
	}
	env := runEnv{rows: rowsOf(cfg)}
	w := newRun(cfg, env)
	// The first row's first pass is done and its second starting.
	w.v.DonePasses[results.PassKey(env.rows[0], 2, 1)] = true
	w.progress.cellIndex = 2
	ps := w.remainingPhases()
	latencyPhase := phase{Name: PhaseLatency, Count: 1 + len(latency.Shares), Seconds: float64(3+len(latency.Shares)*3) / float64(1+len(latency.Shares))}
	want := []phase{
		{Name: PhaseCells, Count: 1 + 2, Seconds: 3},
		latencyPhase,
		{Name: PhaseServer, Count: 1, Seconds: serverStartStopSeconds},
		{Name: PhaseLoad, Count: 1, Seconds: 1},
		{Name: PhaseWarmup, Count: 1, Seconds: 1},
	}
	want[1].Count, want[1].Seconds = 2*latencyPhase.Count, latencyPhase.Seconds
	if got := phaseNames(ps); !slices.Equal(got, phaseNames(want)) {
		t.Fatalf("got phases %v, want %v", got, phaseNames(want))
	}
	for i, p := range ps {
		if p.Count != want[i].Count || abs(p.Total()-want[i].Total()) > 1e-6 {
			t.Errorf("phase %s: got %d × %.2f s, want %d × %.2f s", p.Name, p.Count, p.Seconds, want[i].Count, want[i].Seconds)
		}
	}
	if line := w.progressLeft(); !strings.Contains(line, "latency steps 12") || !strings.Contains(line, "assumed until a load is measured") {
		t.Errorf("got progress %q, want the latency steps counted and the assumed load rate named", line)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

package watch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestFirstEstimateCountsThePreflightSweep starts the watch of a run in
// a bundle and checks the estimate status.json starts from, and the one
// tierbench plan prints: the preflight's fio sweeps (each to the
// throttle limit's 4096 in flight: 5 depths and the 4 KiB read), then
// every row with the fio that runs against the ceiling the sweep will
// measure, and the sweep's files laid out before its first step. Once
// the preflight is over, a ceiling it did not measure is
// no longer assumed.
func TestFirstEstimateCountsThePreflightSweep(t *testing.T) {
	const cell, warm, passes, dbsize, step = 3, 2, 2, 800_000, 2
	threads := []int{2, 4}
	cells := float64(passes * len(threads))
	load := float64(dbsize) / plan.AssumedLoadKeysPerSec
	noFio := serverStartStopSeconds + load + warm + cells*(cell+1)
	// With a ceiling: the fio beside each pass, and a fio re-run per
	// thread count after them, each as long as a sweep step.
	withFio := serverStartStopSeconds + load + warm + cells*(cell+1+results.BesideSeconds) + float64(len(threads))*(step+fioStartSeconds)
	cfg := plan.Config{Workload: results.Workload{
		Profile:       plan.ProfileQuick,
		Backends:      []string{"uring"},
		Pins:          []string{plan.PinNone},
		Threads:       threads,
		CellSeconds:   cell,
		WarmupSeconds: warm,
		Passes:        passes,
		DBSize:        dbsize,
		Runtime:       plan.RuntimeProcess,
		Memory:        "1m",
		Page:          "64k",
		Segment:       "16m",
		Index:         "16m",
	},
	}
	host := Preflight{SweepCPUs: []int{2}, MaxDepth: 4096}
	tests := []struct {
		name       string
		noFio      bool
		fioSeconds int // 0: the preflight's default
		pre        Preflight
		measured   *hostcheck.FIOBaseline // the bundle's preflight ceiling already, as on --resume
		// want is the first estimate; wantSteps the sweeps' steps in it
		// and wantUpTo whether they are counted at most.
		want      float64
		wantSteps int
		wantUpTo  bool
		// wantAfter is the estimate at the row's load when the sweep
		// measured no ceiling (fio missing).
		wantAfter float64
	}{
		{name: "no fio", noFio: true, want: noFio, wantAfter: noFio},
		{name: "the host's sweep", pre: host, fioSeconds: step,
			want: 6*(step+fioStartSeconds) + withFio, wantSteps: 6, wantUpTo: true, wantAfter: noFio},
		{name: "the host's sweep, its files laid out first", pre: Preflight{SweepCPUs: []int{2}, MaxDepth: 4096, FileBytes: 400 << 20}, fioSeconds: step,
			want: 6*(step+fioStartSeconds) + float64(400<<20)/plan.AssumedWriteBytesPerSec + withFio, wantSteps: 6, wantUpTo: true, wantAfter: noFio},
		{name: "the host's and the pinned server's sweeps", pre: Preflight{SweepCPUs: []int{2, 1}, MaxDepth: 4096}, fioSeconds: step,
			want: 12*(step+fioStartSeconds) + withFio, wantSteps: 12, wantUpTo: true, wantAfter: noFio},
		{name: "a full sweep, at the preflight's default step", pre: Preflight{SweepCPUs: []int{2}, MaxDepth: 4096, Full: true},
			want:      6*(hostcheck.DefaultFIORuntimeSeconds+fioStartSeconds) + serverStartStopSeconds + load + warm + cells*(cell+1+results.BesideSeconds) + float64(len(threads))*(hostcheck.DefaultFIORuntimeSeconds+fioStartSeconds),
			wantSteps: 6, wantAfter: noFio},
		{name: "past the throttle limit", pre: Preflight{SweepCPUs: []int{2}, MaxDepth: 16384}, fioSeconds: step,
			want: 8*(step+fioStartSeconds) + withFio, wantSteps: 8, wantUpTo: true, wantAfter: noFio},
		{name: "resumed: the sweep measured already", fioSeconds: step, measured: &hostcheck.FIOBaseline{RuntimeSeconds: step, Results: []hostcheck.FIOResult{{BlockBytes: 512, IOPS: 1000}}},
			want: withFio, wantAfter: withFio},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.NoFio, c.FioSeconds = tc.noFio, tc.fioSeconds
			env := runEnv{rows: rowsOf(c), base: tc.measured}
			dir := t.TempDir()
			w, err := Start(env, Values{Config: c, RunID: "r", Bundle: dir, Started: time.Now(), OwnServers: true, Loads: true, FioPlanned: plan.FioPlanned(c), Steps: testSteps,
				DonePasses: map[string]bool{}, DoneLoads: map[string]bool{}, Preflight: tc.pre})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop(context.Background(), nil)
			if got := readStatus(t, dir); got.Phase != PhasePreflight || abs(got.ETASeconds-tc.want) > 1e-6 {
				t.Errorf("status.json at the start: got phase %q, %.3f s left; want %q, %.3f s", got.Phase, got.ETASeconds, PhasePreflight, tc.want)
			}

			e := PlanEstimate(c, tc.pre, env.rows, env.RowEngine, testSteps)
			if tc.measured == nil && abs(e.Seconds-tc.want) > 1e-6 {
				t.Errorf("plan estimate: got %.3f s, want %.3f s (%+v)", e.Seconds, tc.want, e.Phases)
			}
			var sweep plan.Phase
			for _, p := range e.Phases {
				if p.Name == PhaseSweep {
					sweep = p
				}
			}
			if sweep.Count != tc.wantSteps || sweep.UpTo != tc.wantUpTo || (tc.wantSteps > 0 && e.Phases[0].Name != PhaseSweep) {
				t.Errorf("plan estimate: got %+v, want %d preflight fio steps first (at most: %v)", e.Phases, tc.wantSteps, tc.wantUpTo)
			}

			w.Phase(PhaseLoad, &env.rows[0], "")
			if got := readStatus(t, dir); abs(got.ETASeconds-tc.wantAfter) > 1e-6 {
				t.Errorf("status.json at the load: got %.3f s left, want %.3f s", got.ETASeconds, tc.wantAfter)
			}
		})
	}
}

// readStatus reads dir's status.json.
func readStatus(t *testing.T, dir string) RunStatus {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, FileStatus))
	if err != nil {
		t.Fatal(err)
	}
	var s RunStatus
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("status.json: %v\n%s", err, raw)
	}
	return s
}

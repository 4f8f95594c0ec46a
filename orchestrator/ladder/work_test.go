package ladder

import (
	"math"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestWorkCountsWhatRunRuns counts the ladder's timed runs per backend as
// Run runs them: the Device shapes, the rounds' Device, fio and KV runs,
// fio beside each latency step and again under load, and the top's
// passes; and the untimed loads and layouts in its seconds.
func TestWorkCountsWhatRunRuns(t *testing.T) {
	const cell, dbsize, steps = 12, 1_000_000, 5
	storage := plan.Config{Workload: results.Workload{Ladder: true, Scenario: results.ScenarioStorage, Backends: []string{"libaio", "uring"},
		CellSeconds: cell, DBSize: dbsize, KeyLength: 16, ValueLength: 96, Passes: 3, WarmupSeconds: 12}}
	with := func(f func(*plan.Config)) plan.Config { c := storage; f(&c); return c }
	rows := []results.Row{{Backend: "libaio", Pin: plan.PinPinned}, {Backend: "libaio", Pin: plan.PinNone},
		{Backend: "uring", Pin: plan.PinPinned}, {Backend: "uring", Pin: plan.PinNone}}
	fileBytes := float64(dbsize * results.RecordBytes(16, 96))
	kvLoad := float64(dbsize)/assumedKVLoadKeysPerSec + assumedSettleSeconds
	layout := fileBytes / assumedDeviceWriteBytesPerSec
	fioLayout := fileBytes / plan.AssumedWriteBytesPerSec
	tests := []struct {
		name        string
		cfg         plan.Config
		rows        []results.Row
		own         bool
		steps       int
		wantRuns    int
		wantUntimed float64
		wantUpTo    bool
	}{
		{name: "no ladder", cfg: with(func(c *plan.Config) { c.Ladder = false }), rows: rows, own: true},
		{name: "an external server", cfg: storage, rows: rows, own: false},
		// Per backend: 3 shapes, 3 rounds of Device, fio and 2 KV runs.
		{name: "storage", cfg: storage, rows: rows, own: true,
			wantRuns: 2 * (3 + 3*4), wantUntimed: 2 * (layout + 3*kvLoad), wantUpTo: true},
		{name: "storage, --no-fio", cfg: with(func(c *plan.Config) { c.NoFio = true }), rows: rows, own: true,
			wantRuns: 2 * (3 + 3*3), wantUntimed: 2 * (layout + 3*kvLoad), wantUpTo: true},
		// And fio beside each of the backend's 2 rows' 5 steps, twice at
		// the most, over a file of its own.
		{name: "storage, --latency", cfg: with(func(c *plan.Config) { c.Latency = true }), rows: rows, own: true, steps: steps,
			wantRuns: 2 * (3 + 3*4 + 2*2*steps), wantUntimed: 2 * (layout + fioLayout + 3*kvLoad + assumedSettleSeconds), wantUpTo: true},
		// LocalMemory: no shapes, no fio, no settle; the top's 2 servers
		// loaded and warmed up, 3 passes each.
		{name: "localmemory", cfg: with(func(c *plan.Config) {
			c.Scenario, c.Backends = results.ScenarioLocalMemory, []string{results.ScenarioLocalMemory}
		}),
			rows: []results.Row{{Backend: results.ScenarioLocalMemory, Pin: plan.PinNone}}, own: true,
			wantRuns: 3*3 + 2*3, wantUntimed: 3*float64(dbsize)/assumedKVLoadKeysPerSec + 2*(float64(dbsize)/plan.AssumedLoadKeysPerSec+12)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, sec, upTo := Work(tc.cfg, tc.rows, tc.own, tc.steps)
			if n != tc.wantRuns || upTo != tc.wantUpTo {
				t.Fatalf("got %d runs (up to: %v), want %d (%v)", n, upTo, tc.wantRuns, tc.wantUpTo)
			}
			if n == 0 {
				return
			}
			want := float64(n)*(cell+startSeconds) + tc.wantUntimed
			if got := float64(n) * sec; math.Abs(got-want) > 1e-6 {
				t.Errorf("got %.3f s in all, want %.3f s", got, want)
			}
		})
	}
}

package orchestrator

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/sweep"
	"github.com/tierbench/tierbench/results"
)

// TestMemorySweepFlags: --memory with several sizes plans a row per size
// (smallest first, labelled), lifts the 20 × rule, and is refused where
// it cannot be measured; one size plans the rows as before.
func TestMemorySweepFlags(t *testing.T) {
	resolve := func(c plan.Config) (plan.Config, error) { return c.Resolve(func(string) string { return "" }, parts) }
	for _, tt := range []struct {
		name    string
		cfg     plan.Config
		wantErr string
		want    []string // the rows' memory
	}{
		{"one size", plan.Config{Workload: results.Workload{Memory: "16m"}}, "", []string{""}},
		{"sweep", plan.Config{Workload: results.Workload{Memory: "128m,4m 32m", Page: "1m", DBSize: 100_000}}, "", []string{"4m", "32m", "128m"}},
		{"bad size", plan.Config{Workload: results.Workload{Memory: "4m,lots"}}, "--memory 4m,lots", nil},
		{"twice", plan.Config{Workload: results.Workload{Memory: "4m,4096k"}}, "the same size", nil},
		{"empty item", plan.Config{Workload: results.Workload{Memory: "4m,,8m"}}, "is empty", nil},
		{"memory scenario", plan.Config{Workload: results.Workload{Memory: "4m,8m", Scenario: results.ScenarioMemory}}, "applies to --scenario storage", nil},
		{"ladder", plan.Config{Workload: results.Workload{Memory: "4m,8m", Ladder: true, Given: []string{"ladder"}}}, "with --ladder", nil},
		{"reference profile", plan.Config{Workload: results.Workload{Memory: "8m,16m", Profile: plan.ProfileReference}}, "", []string{"8m", "16m"}},
		{"one size under the 20 × rule", plan.Config{Workload: results.Workload{Memory: "128m", DBSize: 100_000}}, "less than 20 × --memory 128m", nil},
		{"foreign server", plan.Config{Workload: results.Workload{Memory: "4m,8m", Servers: []string{"garnet"}}}, "measures tierbench's own server", nil},
		{"shards", plan.Config{Workload: results.Workload{Memory: "4m,8m", Shards: []int{2}}}, "with --shards", nil},
	} {
		c := tt.cfg
		c.NoFio, c.Backends, c.Pins = true, []string{"libaio"}, []string{plan.PinNone}
		got, err := resolve(c)
		if tt.wantErr != "" {
			if !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got %v, want a config error saying %q", tt.name, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		rows := sweep.MemoryRows(got, []results.Row{{Backend: "libaio", Pin: plan.PinNone, Label: "no pin"}})
		var mems []string
		for _, r := range rows {
			mems = append(mems, r.Memory)
			if r.Memory != "" && r.Label != "--memory "+r.Memory+", no pin" {
				t.Errorf("%s: row label %q, want the size first", tt.name, r.Label)
			}
		}
		if tt.name == "reference profile" && (got.Ladder || !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.HasPrefix(n, "ladder: off in a memory-tier sweep") })) {
			t.Errorf("%s: ladder %v, notes %q: want it off and said", tt.name, got.Ladder, got.Notes)
		}
		if !slices.Equal(mems, tt.want) {
			t.Errorf("%s: got rows with memory %q, want %q", tt.name, mems, tt.want)
		}
		if tt.name == "sweep" && got.LargestMemory() != "128m" {
			t.Errorf("%s: largest memory %q, want 128m", tt.name, got.LargestMemory())
		}
	}
}

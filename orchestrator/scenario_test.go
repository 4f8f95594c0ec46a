package orchestrator

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

func TestResolveScenario(t *testing.T) {
	env := func(string) string { return "" }
	for _, tc := range []struct {
		cfg         plan.Config
		wantErr     string
		threads     []int
		backends    []string
		valueLength int
	}{
		{cfg: plan.Config{}, threads: []int{8, 32, 48, 64}, backends: []string{"libaio", "uring"}, valueLength: 96},
		{cfg: plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory}}, threads: []int{1, 2, 4, 8, 16, 32}, backends: []string{results.ScenarioMemory}, valueLength: 100},
		{cfg: plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory, Profile: plan.ProfileReference}}, threads: []int{1, 2, 4, 8, 16, 32}, backends: []string{results.ScenarioMemory}, valueLength: 100},
		{cfg: plan.Config{Workload: results.Workload{Scenario: results.ScenarioLocalMemory, Profile: plan.ProfileReference}}, threads: []int{1, 2, 4, 8, 16}, backends: []string{results.ScenarioLocalMemory}, valueLength: 100},
		{cfg: plan.Config{Workload: results.Workload{Scenario: "disk"}}, wantErr: `unknown --scenario "disk" (want memory, storage, localmemory or all)`},
		{cfg: plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory, Backends: []string{"libaio"}, Given: []string{"backends"}}}, wantErr: "--backends applies to --scenario storage"},
		{cfg: plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory, Shards: []int{2}, Given: []string{"shards"}}}, wantErr: "--shards applies to --scenario storage and localmemory"},
		{cfg: plan.Config{Workload: results.Workload{
			Scenario: results.ScenarioLocalMemory,
			Shards:   []int{1, 2},
			DBSize:   1_400_000,
			Given:    []string{"shards"},
		},
		}, threads: []int{1, 2, 4, 8, 16}, backends: []string{results.ScenarioLocalMemory}, valueLength: 100},
		// The quick profile's 700 000 keys are 47.6 MiB a shard, under 20 × --memory 4m.
		{cfg: plan.Config{Workload: results.Workload{Scenario: results.ScenarioLocalMemory, Shards: []int{2}, Given: []string{"shards"}}}, wantErr: "split over --shards 2"},
	} {
		got, err := tc.cfg.Resolve(env, parts)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, fault.ErrConfig) {
				t.Errorf("%+v: got error %v, want ErrConfig with %q", tc.cfg, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.cfg, err)
			continue
		}
		if !slices.Equal(got.Threads, tc.threads) || !slices.Equal(got.Backends, tc.backends) || got.ValueLength != tc.valueLength {
			t.Errorf("scenario %q: got threads %v backends %v valuelength %d, want %v %v %d", tc.cfg.Scenario, got.Threads, got.Backends, got.ValueLength, tc.threads, tc.backends, tc.valueLength)
		}
	}
	ref, _ := plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory, Profile: plan.ProfileReference}}.Resolve(env, parts)
	if ref.DBSize != 16_777_216 || ref.Batch != 1024 {
		t.Errorf("memory reference: got %d keys -b %d, want 16777216 and -b 1024", ref.DBSize, ref.Batch)
	}
}

func TestScenarioRows(t *testing.T) {
	rows := []results.Row{{Backend: results.ScenarioLocalMemory, Pin: plan.PinNone, Label: "no pin"}}
	got := scenarioRows(plan.Config{Workload: results.Workload{Scenario: results.ScenarioLocalMemory}}, slices.Clone(rows))
	want := []results.Row{{Backend: results.ScenarioLocalMemory, Pin: plan.PinNone, Label: "-b 1024, no pin", Batch: 1024}, {Backend: results.ScenarioLocalMemory, Pin: plan.PinNone, Label: "-b 256, no pin", Batch: 256}}
	if !slices.Equal(got, want) {
		t.Errorf("localmemory rows: got %+v, want %+v", got, want)
	}
	if got[0].ID() == got[1].ID() {
		t.Errorf("rows -b 1024 and -b 256 share the key %q", got[0].ID())
	}
	ext := scenarioRows(plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory, ServerAddr: "127.0.0.1:1"}}, []results.Row{{Backend: "external", Pin: plan.PinNone}})
	if ext[0].Backend != results.ScenarioMemory {
		t.Errorf("external row in scenario 1: got backend %q, want %q so the inverted check judges it", ext[0].Backend, results.ScenarioMemory)
	}
	for _, tc := range []struct {
		row  results.Row
		want string
	}{
		{results.Row{Backend: results.ScenarioLocalMemory, Pin: plan.PinNone, Batch: 256, Shards: 2}, "localmemory/none/b=256/shards=2"},
		{results.Row{Backend: results.ScenarioLocalMemory, Pin: plan.PinNone, Batch: 256, Shards: 1}, "localmemory/none/b=256"},
		{results.Row{Backend: "uring", Pin: plan.PinNone, Shards: 2}, "uring/none/shards=2"},
	} {
		if got := tc.row.ID(); got != tc.want {
			t.Errorf("key of %+v: got %q, want %q", tc.row, got, tc.want)
		}
	}
	if k := (results.Row{Backend: "libaio", Pin: plan.PinNone}).ID(); k != "libaio/none" {
		t.Errorf("storage row key: got %q, want the old bundles' %q", k, "libaio/none")
	}
}

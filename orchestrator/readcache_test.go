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

// TestReadCacheSweepFlags: --readcache-memory with several sizes plans a
// row per size (smallest first, labelled) whose server gets that size,
// one size gives every server its cache and no row of its own, and a
// size is refused where it cannot apply.
func TestReadCacheSweepFlags(t *testing.T) {
	resolve := func(c plan.Config) (plan.Config, error) { return c.Resolve(func(string) string { return "" }, parts) }
	for _, tt := range []struct {
		name     string
		cfg      plan.Config
		wantErr  string
		want     []string   // the rows' read cache
		wantArgs [][]string // each row's server flags for it
	}{
		{"off", plan.Config{}, "", []string{""}, [][]string{nil}},
		{"one size", plan.Config{Workload: results.Workload{ReadCacheMemory: "32m"}}, "", []string{""}, [][]string{{"--readcache-memory", "32m"}}},
		{"sweep", plan.Config{Workload: results.Workload{ReadCacheMemory: "128m,32m"}}, "", []string{"32m", "128m"},
			[][]string{{"--readcache-memory", "32m"}, {"--readcache-memory", "128m"}}},
		{"bad size", plan.Config{Workload: results.Workload{ReadCacheMemory: "4m,lots"}}, "--readcache-memory 4m,lots", nil, nil},
		{"twice", plan.Config{Workload: results.Workload{ReadCacheMemory: "4m,4096k"}}, "the same size", nil, nil},
		{"memory scenario", plan.Config{Workload: results.Workload{ReadCacheMemory: "4m,8m", Scenario: results.ScenarioMemory}}, "applies to --scenario storage", nil, nil},
		{"foreign server", plan.Config{Workload: results.Workload{ReadCacheMemory: "4m", Servers: []string{"garnet"}}}, "tierbench's own server's flag", nil, nil},
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
		rows := sweep.ReadCacheRows(got, []results.Row{{Backend: "libaio", Pin: plan.PinNone, Label: "no pin"}})
		var sizes []string
		var args [][]string
		for _, r := range rows {
			sizes = append(sizes, r.ReadCache)
			args = append(args, sweep.ReadCacheArgs(got, r))
			if r.ReadCache != "" && r.Label != "--readcache-memory "+r.ReadCache+", no pin" {
				t.Errorf("%s: row label %q, want the size first", tt.name, r.Label)
			}
		}
		if !slices.Equal(sizes, tt.want) {
			t.Errorf("%s: got rows with read cache %q, want %q", tt.name, sizes, tt.want)
		}
		if !slices.EqualFunc(args, tt.wantArgs, slices.Equal) {
			t.Errorf("%s: got server flags %q, want %q", tt.name, args, tt.wantArgs)
		}
	}
}

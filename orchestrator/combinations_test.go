package orchestrator

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestCombinations holds the combinations of modes that no code path
// measures right to their refusal (the table in doc.go), and the
// profile's extras to being turned off, and said, where they cannot run.
func TestCombinations(t *testing.T) {
	none := func(string) string { return "" }
	hosts := plan.Config{Workload: results.Workload{ServerHost: "srv=tcp://127.0.0.1:1", ClientHosts: "cli=tcp://127.0.0.1:2"}}
	with := func(c plan.Config, f func(*plan.Config)) plan.Config { f(&c); return c }
	for _, tc := range []struct {
		name string
		cfg  plan.Config
		want string
	}{
		{"localmemory across hosts", with(hosts, func(c *plan.Config) { c.Scenario = results.ScenarioLocalMemory }), "--scenario localmemory across hosts is not supported"},
		{"memory across hosts", with(hosts, func(c *plan.Config) { c.Scenario = results.ScenarioMemory }), "--scenario memory across hosts is not supported"},
		{"ladder with a server host", with(hosts, func(c *plan.Config) { c.Ladder = true; c.Given = []string{"ladder"} }), "--ladder with --server-host is not supported"},
		{"latency with shards", plan.Config{Workload: results.Workload{
			Shards:  []int{1, 2},
			Latency: true,
			Given:   []string{"latency"},
			DBSize:  20_000_000,
		},
		}, "--latency with --shards above 1 is not supported"},
		{"relative data on a server host", with(hosts, func(c *plan.Config) { c.DataDir = "data" }), "give an absolute path"},
		{"root data on a server host", with(hosts, func(c *plan.Config) { c.DataDir = "/" }), "--data /: a run empties its data dir"},
		{"shards across hosts", with(hosts, func(c *plan.Config) { c.Shards = []int{2}; c.DBSize = 20_000_000 }), "--shards across hosts is not supported"},
		{"external server across hosts", with(hosts, func(c *plan.Config) { c.ServerAddr = "127.0.0.1:6379" }), "--server-addr measures a server already running"},
		{"foreign server across hosts", with(hosts, func(c *plan.Config) { c.Servers = []string{"redis"}; c.Scenario = results.ScenarioMemory }), "--server redis across hosts is not supported yet"},
		{"foreign server with shards", plan.Config{Workload: results.Workload{Servers: []string{"garnet"}, Shards: []int{2}, DBSize: 20_000_000}}, "--shards starts tierbench's own servers as a cluster"},
		{"foreign server with an external one", plan.Config{Workload: results.Workload{Servers: []string{"redis"}, ServerAddr: "127.0.0.1:6379"}}, "give one or the other"},
		{"foreign server's image under process", plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioMemory,
			Servers:     []string{"redis"},
			ServerImage: "redis",
			Runtime:     plan.RuntimeProcess,
		},
		}, "--server-image runs the server under Docker"},
		{"foreign server under docker without an image", plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory, Servers: []string{"redis"}, Runtime: plan.RuntimeDocker}}, "give --server-image"},
		{"a server that has no tier in storage", plan.Config{Workload: results.Workload{Servers: []string{"dragonfly"}}}, "--server dragonfly cannot run --scenario storage"},
	} {
		_, err := tc.cfg.Resolve(none, parts)
		if !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a configuration error saying %q", tc.name, err, tc.want)
		}
	}

	// The reference profile's ladder and latency, not asked for, are
	// turned off where they cannot run, and the run says so.
	for _, tc := range []struct {
		name string
		cfg  plan.Config
		note string
	}{
		{"reference across hosts", with(hosts, func(c *plan.Config) { c.Profile = plan.ProfileReference }), "ladder: off across hosts"},
		{"reference with shards", plan.Config{Workload: results.Workload{Profile: plan.ProfileReference, Shards: []int{1, 2}, Pins: []string{plan.PinNone}}}, "latency: off with --shards above 1"},
	} {
		got, err := tc.cfg.Resolve(none, parts)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.HasPrefix(n, tc.note) }) {
			t.Errorf("%s: notes %q, want one saying %q", tc.name, got.Notes, tc.note)
		}
	}
	if got, _ := (plan.Config{Workload: results.Workload{Profile: plan.ProfileReference}}).Resolve(none, parts); !got.Ladder || !got.Latency || len(got.Notes) != 0 {
		t.Errorf("reference on one machine: ladder %v latency %v notes %q; want both on, nothing said", got.Ladder, got.Latency, got.Notes)
	}
}

// TestRunRefusesLocalMemoryAcrossHosts: the refusal comes from the
// command line before any engine is asked anything or anything created.
func TestRunRefusesLocalMemoryAcrossHosts(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := t.TempDir()
	out := filepath.Join(base, "out")
	r := runBinary(t, bin, "run", "--scenario", "localmemory", "--server-host", "a=tcp://127.0.0.1:1", "--client-hosts", "b=tcp://127.0.0.1:2",
		"--data", "/var/tmp/tierbench-data", "--out", out, "--state-dir", filepath.Join(base, "state"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--scenario localmemory across hosts is not supported") {
		t.Errorf("run --scenario localmemory across hosts: exit %d, want %d with the reason:\n%s", r.code, ExitUsage, r.stderr)
	}
	if entries, _ := os.ReadDir(base); len(entries) != 0 {
		t.Errorf("the refused run created %v", entries)
	}
}

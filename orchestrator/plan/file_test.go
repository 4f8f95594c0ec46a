package plan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/results"
)

func quickWorkload() results.Workload {
	return results.Workload{
		Profile: "quick", Scenario: "storage", DBSize: 300_000, KeyLength: 16, ValueLength: 96,
		Threads: []int{2, 4}, Batch: 64, CellSeconds: 1, Passes: 2, WarmupSeconds: 1, LoadThreads: 4, LoadBatch: 4096,
		Memory: "1m", Page: "64k", Segment: "16m", Index: "16m", Backends: []string{"uring"}, Pins: []string{"pinned", "none"},
		DataDir: "/mnt/other-host/tb", OutDir: "/home/them/out", StateDir: "/run/them", Binary: "/usr/local/bin/tierbench",
		Runtime: "auto", FioSeconds: 2, Given: []string{"dbsize", "threads", "out", "state-dir"},
	}
}

func TestFileRoundTrip(t *testing.T) {
	f := File{Schema: FileSchema, Kind: FileKind, Workload: quickWorkload(),
		Rows:     []results.Row{{Backend: "uring", Pin: "pinned", Label: "srv node-0 / cli node-1"}, {Backend: "uring", Pin: "none", Label: "no pin"}},
		Dataset:  &Dataset{Keys: 300_000, RecordBytes: 128, Bytes: 38_400_000, DiskBytes: 76_800_000, MemoryBytes: 17 << 20},
		Needs:    Needs{Runtime: "process", NUMANodes: 2, Backends: []string{"uring"}},
		Estimate: &Estimate{Seconds: 71, Phases: []Phase{{Name: "cells", Count: 8, Seconds: 2}, {Name: "slo probes", Count: 11, Seconds: 2, UpTo: true}}}}
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			b, err := f.Marshal(format)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseFile(b, "test."+format)
			if err != nil {
				t.Fatalf("ParseFile of its own %s: %v\n%s", format, err, b)
			}
			if !reflect.DeepEqual(got, f) {
				t.Errorf("got %+v, want %+v", got, f)
			}
		})
	}
	if _, err := f.Marshal("toml"); !errors.Is(err, fault.ErrConfig) {
		t.Errorf("Marshal(toml): got %v, want a configuration error", err)
	}
}

func TestParseFileRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"another kind", "schema: 1\nkind: compose\nworkload: {}\n", `kind "compose"`},
		{"no schema", "kind: tierbench-plan\nworkload: {}\n", "no schema"},
		{"newer schema", "schema: 99\nkind: tierbench-plan\nworkload: {}\n", "schema 99 is newer"},
		{"misspelt field", "schema: 1\nkind: tierbench-plan\nworkload: {}\nneeds: {numa_node: 2}\n", "numa_node"},
		{"misspelt workload field", "schema: 1\nkind: tierbench-plan\nworkload: {DBSise: 5}\n", "DBSise"},
		{"not a mapping", "- a\n- b\n", "mapping"},
		{"not yaml", "schema: [1\n", "not YAML"},
		{"newer bundle", `{"schema_version": 99, "config": {}}`, "schema_version 99 is newer"},
		{"all bundle", `{"schema_version": 2, "config": {"Scenario": "all"}}`, "each scenario's directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.doc), "p.yaml")
			if err == nil || !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a configuration error with %q", err, tc.want)
			}
		})
	}
}

// A bundle's plan.json is a valid --plan: its workload, rows, the NUMA
// nodes of its pinned rows and the runtime it ran under.
func TestReadFileOfBundle(t *testing.T) {
	dir := t.TempDir()
	p := results.Plan{Schema: results.SchemaVersion, RunID: "r1", Runtime: "process", Workload: quickWorkload(), Nodes: 2, Hostname: "h1",
		Rows: []results.Row{{Backend: "uring", Pin: "pinned", Label: "srv node-0 / cli node-1"}}}
	if err := results.WriteJSON(dir, results.FilePlan, p); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(dir, results.FilePlan)} {
		f, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f.Workload, p.Workload) || !reflect.DeepEqual(f.Rows, p.Rows) {
			t.Errorf("%s: got workload %+v rows %+v, want the bundle's", path, f.Workload, f.Rows)
		}
		want := Needs{Runtime: "process", NUMANodes: 2, Backends: []string{"uring"}}
		if !reflect.DeepEqual(f.Needs, want) {
			t.Errorf("%s: needs %+v, want %+v", path, f.Needs, want)
		}
		if f.From != "bundle run r1 on h1" {
			t.Errorf("from %q", f.From)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "none.yaml")); !errors.Is(err, fault.ErrConfig) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing plan: got %v, want a configuration error of a file not there", err)
	}
}

// File.Config keeps what is measured and drops where the other host ran
// it: its out, state dir, binary and a data dir nobody named.
func TestFileConfigDropsHostFields(t *testing.T) {
	f := File{Workload: quickWorkload(), Needs: Needs{Runtime: "process"}}
	c := f.Config()
	if c.OutDir != "" || c.StateDir != "" || c.Binary != "" || c.DataDir != "" {
		t.Errorf("got out %q state %q binary %q data %q, want them dropped", c.OutDir, c.StateDir, c.Binary, c.DataDir)
	}
	if c.DBSize != 300_000 || !slices.Equal(c.Threads, []int{2, 4}) || c.Runtime != "process" {
		t.Errorf("got dbsize %d threads %v runtime %s, want the plan's, under the runtime it ran", c.DBSize, c.Threads, c.Runtime)
	}
	if slices.Contains(c.Given, "out") || slices.Contains(c.Given, "state-dir") || !slices.Contains(c.Given, "dbsize") {
		t.Errorf("given %v: want out and state-dir gone, dbsize kept", c.Given)
	}
	w := quickWorkload()
	w.Given = append(w.Given, "data")
	if c := (File{Workload: w}).Config(); c.DataDir != "/mnt/other-host/tb" {
		t.Errorf("a data dir the plan named: got %q, want it kept", c.DataDir)
	}
}

func TestOverride(t *testing.T) {
	base := File{Workload: quickWorkload()}.Config()
	var flags Config
	flags.Passes, flags.Backends, flags.OutDir, flags.SLO = 5, []string{"libaio", "uring"}, "/tmp/o", "p99=1ms"
	given := []string{"passes", "backends", "out", "slo"}
	got, said, err := Override(base, flags, given)
	if err != nil {
		t.Fatal(err)
	}
	if got.Passes != 5 || !slices.Equal(got.Backends, []string{"libaio", "uring"}) || got.OutDir != "/tmp/o" || got.SLO != "p99=1ms" || got.DBSize != 300_000 {
		t.Errorf("got passes %d backends %v out %q slo %q dbsize %d", got.Passes, got.Backends, got.OutDir, got.SLO, got.DBSize)
	}
	want := []string{"--passes 5 overrides the plan's 2", "--backends libaio,uring overrides the plan's uring", "--slo p99=1ms overrides the plan's (none)"}
	if !slices.Equal(said, want) {
		t.Errorf("said %q, want %q (--out sets where, not what the plan measures)", said, want)
	}
	for _, g := range given {
		if !slices.Contains(got.Given, g) {
			t.Errorf("given %v lacks %s", got.Given, g)
		}
	}
	if _, _, err := Override(base, flags, []string{"no-such-flag"}); err == nil {
		t.Error("an unknown flag: got nil, want an error")
	}
}

func TestCheckHost(t *testing.T) {
	onPath := func(p string) (string, error) {
		if p == "redis-server" {
			return "/usr/bin/redis-server", nil
		}
		return "", errors.New("not found")
	}
	programs := func(s string) []string {
		return map[string][]string{"redis": {"redis-server"}, "garnet": {"GarnetServer", "dotnet"}}[s]
	}
	ok := Host{NUMANodes: 2, LookPath: onPath, Programs: programs, Image: func(string) (bool, error) { return true, nil }}
	for _, tc := range []struct {
		name  string
		needs Needs
		host  func(Host) Host
		pull  bool
		want  []string // each a sentence of the refusal; none: accepted
	}{
		{"all given", Needs{Runtime: "docker", NUMANodes: 2, Backends: []string{"libaio", "uring"}, Servers: []string{"redis"}, Images: []string{"redis:7"}}, nil, false, nil},
		{"no engine", Needs{Runtime: "docker"}, func(h Host) Host { h.Docker = errors.New("no socket"); return h }, false, []string{"runs under Docker", "no socket"}},
		{"one node for two", Needs{NUMANodes: 2}, func(h Host) Host { h.NUMANodes = 1; return h }, false, []string{"planned on 2 NUMA node(s)", "this host has 1"}},
		{"no pinned rows", Needs{NUMANodes: 0}, func(h Host) Host { h.NUMANodes = 1; return h }, false, nil},
		{"no io_uring", Needs{Backends: []string{"uring"}}, func(h Host) Host { h.IOUring = errors.New("io_uring_disabled=2"); return h }, false, []string{"io_uring", "io_uring_disabled=2"}},
		{"unknown backend", Needs{Backends: []string{"spdk"}}, nil, false, []string{`backend "spdk"`}},
		{"server not on PATH", Needs{Runtime: "process", Servers: []string{"garnet"}}, nil, false, []string{"server garnet", "GarnetServer, dotnet"}},
		{"server under docker", Needs{Runtime: "docker", Servers: []string{"garnet"}}, nil, false, nil},
		{"image missing", Needs{Images: []string{"ghcr.io/x/y@sha256:ab"}}, func(h Host) Host { h.Image = func(string) (bool, error) { return false, nil }; return h }, false, []string{"does not hold it", "docker pull ghcr.io/x/y@sha256:ab"}},
		{"image missing, pulled", Needs{Images: []string{"x"}}, func(h Host) Host { h.Image = func(string) (bool, error) { return false, nil }; return h }, true, nil},
		{"two at once", Needs{Runtime: "docker", NUMANodes: 2}, func(h Host) Host { h.Docker = errors.New("down"); h.NUMANodes = 1; return h }, false, []string{"Docker", "NUMA"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := ok
			if tc.host != nil {
				h = tc.host(h)
			}
			err := CheckHost(tc.needs, h, tc.pull)
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("got %v, want accepted", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got accepted, want a refusal with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to say %q", err, w)
				}
			}
		})
	}
}

func TestNeedsOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want Needs
	}{
		{"pinned", Config{Workload: results.Workload{Runtime: "auto", Backends: []string{"uring"}, Pins: []string{"pinned", "none"}}}, Needs{Runtime: "auto", NUMANodes: 2, Backends: []string{"uring"}}},
		{"unpinned", Config{Workload: results.Workload{Runtime: "process", Backends: []string{"libaio"}, Pins: []string{"none"}}}, Needs{Runtime: "process", Backends: []string{"libaio"}}},
		{"servers and image", Config{Workload: results.Workload{
			Runtime:     "docker",
			Pins:        []string{"none"},
			Servers:     []string{"tierbench", "redis"},
			ServerImage: "redis@sha256:ab",
		},
		},
			Needs{Runtime: "docker", Servers: []string{"redis"}, Images: []string{"redis@sha256:ab"}}},
		{"external", Config{Workload: results.Workload{
			Runtime:    "auto",
			ServerAddr: "h:1",
			Backends:   []string{"uring"},
			Pins:       []string{"none"},
		},
		}, Needs{Runtime: "auto"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NeedsOf(tc.c, 2)
			if g, _ := json.Marshal(got); string(g) != mustJSON(tc.want) {
				t.Errorf("got %s, want %s", g, mustJSON(tc.want))
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

package orchestrator

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

func TestJudgeScenario(t *testing.T) {
	memory, local := Row{Backend: ScenarioMemory, Pin: PinNone}, Row{Backend: ScenarioLocalMemory, Pin: PinNone, Batch: 1024}
	sharded := local
	sharded.Shards = 2
	for _, tc := range []struct {
		name         string
		rec          PassRecord
		wantExcluded string
		unverified   bool
	}{
		{"untiered server reads nothing", PassRecord{Row: memory, Ops: 1_000_000, ReadBytes: 0}, "", false},
		{"untiered, page-cache noise below 1 %", PassRecord{Row: memory, Ops: 1_000_000, ReadBytes: 5_000_000}, "", false},
		// A tiered server in scenario 1: a sector per GET.
		{"tiered server in scenario 1", PassRecord{Row: memory, Ops: 1_000_000, ReadBytes: 512_000_000}, excludedDeviceRead, false},
		{"just at 1 % of a sector", PassRecord{Row: memory, Ops: 1000, ReadBytes: 5120}, excludedDeviceRead, false},
		{"memory, pid unknown", PassRecord{Row: memory, Ops: 1000, ReadBytes: -1}, "", true},
		{"localmemory device counts every GET", PassRecord{Row: local, Ops: 1000, DeviceReads: 960}, "", false},
		{"localmemory below 0.9 reads per GET", PassRecord{Row: local, Ops: 1000, DeviceReads: 899}, excludedNoDeviceReads, false},
		{"localmemory counter never moved", PassRecord{Row: local, Ops: 1000, DeviceReads: 0}, excludedNoDeviceReads, false},
		// A native device in scenario 3: the counter moves, but so does /proc io.
		{"native device in scenario 3", PassRecord{Row: local, Ops: 1000, DeviceReads: 1000, ReadBytes: 512_000}, excludedDeviceRead, false},
		{"localmemory, counter unknown", PassRecord{Row: local, Ops: 1000, DeviceReads: -1}, "", true},
		// Two shards: each shard's own counter is judged, not only the sum.
		{"both shards read their device", PassRecord{Row: sharded, Ops: 2000, DeviceReads: 2000,
			Nodes: []NodePass{{Addr: "a", Ops: 1000, DeviceReads: 1000}, {Addr: "b", Ops: 1000, DeviceReads: 1000}}}, "", false},
		{"one shard missed its device, the sum passes", PassRecord{Row: sharded, Ops: 2000, DeviceReads: 1900,
			Nodes: []NodePass{{Addr: "a", Ops: 1000, DeviceReads: 1000}, {Addr: "b", Ops: 1000, DeviceReads: 880}}}, excludedNoDeviceReads, false},
		{"a shard's counter unknown", PassRecord{Row: sharded, Ops: 2000, DeviceReads: 1999,
			Nodes: []NodePass{{Addr: "a", Ops: 1000, DeviceReads: 1000}, {Addr: "b", Ops: 1000, DeviceReads: -1}}}, excludedNoDeviceReads, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tc.rec
			judgePass(&rec, 0)
			if got := scenarioExclusion(rec); got != tc.wantExcluded {
				t.Errorf("exclusion: got %q, want %q (record %+v)", got, tc.wantExcluded, rec)
			}
			if rec.Unverified != tc.unverified {
				t.Errorf("unverified: got %v, want %v", rec.Unverified, tc.unverified)
			}
			if rec.MemoryServed {
				t.Errorf("memory_served set on a %s pass: scenario 2's check must not apply", rec.Row.Backend)
			}
			// aggregate keeps the cell out for the same reason.
			plan := Plan{Rows: []Row{rec.Row}, Workload: results.Workload{Threads: []int{0}, Passes: 1}}
			cells := aggregate(plan, []PassRecord{tc.rec}, nil, 0)
			want := tc.wantExcluded
			if tc.unverified {
				want = excludedUnverified
			}
			if len(cells) != 1 || cells[0].Excluded != want {
				t.Errorf("aggregate: got %+v, want one cell excluded %q", cells, want)
			}
		})
	}
}

func TestResolveScenario(t *testing.T) {
	env := func(string) string { return "" }
	for _, tc := range []struct {
		cfg         Config
		wantErr     string
		threads     []int
		backends    []string
		valueLength int
	}{
		{cfg: Config{}, threads: []int{8, 32, 48, 64}, backends: []string{"libaio", "uring"}, valueLength: 96},
		{cfg: Config{Scenario: ScenarioMemory}, threads: []int{1, 2, 4, 8, 16, 32}, backends: []string{ScenarioMemory}, valueLength: 100},
		{cfg: Config{Scenario: ScenarioMemory, Profile: ProfileReference}, threads: []int{1, 2, 4, 8, 16, 32}, backends: []string{ScenarioMemory}, valueLength: 100},
		{cfg: Config{Scenario: ScenarioLocalMemory, Profile: ProfileReference}, threads: []int{1, 2, 4, 8, 16}, backends: []string{ScenarioLocalMemory}, valueLength: 100},
		{cfg: Config{Scenario: "disk"}, wantErr: `unknown --scenario "disk" (want memory, storage, localmemory or all)`},
		{cfg: Config{Scenario: ScenarioMemory, Backends: []string{"libaio"}, Given: []string{"backends"}}, wantErr: "--backends applies to --scenario storage"},
		{cfg: Config{Scenario: ScenarioMemory, Shards: []int{2}, Given: []string{"shards"}}, wantErr: "--shards applies to --scenario storage and localmemory"},
		{cfg: Config{Scenario: ScenarioLocalMemory, Shards: []int{1, 2}, DBSize: 1_400_000, Given: []string{"shards"}}, threads: []int{1, 2, 4, 8, 16}, backends: []string{ScenarioLocalMemory}, valueLength: 100},
		// The quick profile's 700 000 keys are 47.6 MiB a shard, under 20 × --memory 4m.
		{cfg: Config{Scenario: ScenarioLocalMemory, Shards: []int{2}, Given: []string{"shards"}}, wantErr: "split over --shards 2"},
	} {
		got, err := tc.cfg.resolve(env)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrConfig) {
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
	ref, _ := Config{Scenario: ScenarioMemory, Profile: ProfileReference}.resolve(env)
	if ref.DBSize != 16_777_216 || ref.Batch != 1024 {
		t.Errorf("memory reference: got %d keys -b %d, want 16777216 and -b 1024", ref.DBSize, ref.Batch)
	}
}

func TestScenarioRows(t *testing.T) {
	rows := []Row{{Backend: ScenarioLocalMemory, Pin: PinNone, Label: "no pin"}}
	got := Config{Scenario: ScenarioLocalMemory}.scenarioRows(slices.Clone(rows))
	want := []Row{{Backend: ScenarioLocalMemory, Pin: PinNone, Label: "-b 1024, no pin", Batch: 1024}, {Backend: ScenarioLocalMemory, Pin: PinNone, Label: "-b 256, no pin", Batch: 256}}
	if !slices.Equal(got, want) {
		t.Errorf("localmemory rows: got %+v, want %+v", got, want)
	}
	if got[0].ID() == got[1].ID() {
		t.Errorf("rows -b 1024 and -b 256 share the key %q", got[0].ID())
	}
	ext := Config{Scenario: ScenarioMemory, ServerAddr: "127.0.0.1:1"}.scenarioRows([]Row{{Backend: "external", Pin: PinNone}})
	if ext[0].Backend != ScenarioMemory {
		t.Errorf("external row in scenario 1: got backend %q, want %q so the inverted check judges it", ext[0].Backend, ScenarioMemory)
	}
	for _, tc := range []struct {
		row  Row
		want string
	}{
		{Row{Backend: ScenarioLocalMemory, Pin: PinNone, Batch: 256, Shards: 2}, "localmemory/none/b=256/shards=2"},
		{Row{Backend: ScenarioLocalMemory, Pin: PinNone, Batch: 256, Shards: 1}, "localmemory/none/b=256"},
		{Row{Backend: "uring", Pin: PinNone, Shards: 2}, "uring/none/shards=2"},
	} {
		if got := tc.row.ID(); got != tc.want {
			t.Errorf("key of %+v: got %q, want %q", tc.row, got, tc.want)
		}
	}
	if k := (Row{Backend: "libaio", Pin: PinNone}).ID(); k != "libaio/none" {
		t.Errorf("storage row key: got %q, want the old bundles' %q", k, "libaio/none")
	}
}

func TestCheckFreeMemory(t *testing.T) {
	dir := t.TempDir()
	meminfo := filepath.Join(dir, "meminfo")
	os.WriteFile(meminfo, []byte("MemTotal:       24000000 kB\nMemFree:          100000 kB\nMemAvailable:     102400 kB\n"), 0o644)
	for _, tc := range []struct {
		cfg     Config
		wantErr string
	}{
		{Config{Scenario: ScenarioLocalMemory, DBSize: 1_000_000, KeyLength: 16, ValueLength: 100}, "1000000 keys × 136 B = 129.7 MiB is larger than the 100.0 MiB of memory available"},
		{Config{Scenario: ScenarioMemory, DBSize: 1_000_000, KeyLength: 16, ValueLength: 100}, "129.7 MiB is larger than the 100.0 MiB"},
		{Config{Scenario: ScenarioLocalMemory, DBSize: 500_000, KeyLength: 16, ValueLength: 100}, ""},
		{Config{Scenario: ScenarioStorage, DBSize: 100_000_000, KeyLength: 16, ValueLength: 96}, ""}, // on disk
		{Config{Scenario: ScenarioMemory, DBSize: 1_000_000, KeyLength: 16, ValueLength: 100, Force: true}, ""},
		// 500 000 keys fit alone, not with each shard's log and index.
		{Config{Scenario: ScenarioLocalMemory, DBSize: 500_000, KeyLength: 16, ValueLength: 100, Memory: "4m", Index: "8m"}, ""},
		{Config{Scenario: ScenarioLocalMemory, DBSize: 500_000, KeyLength: 16, ValueLength: 100, Memory: "4m", Index: "8m", Shards: []int{1, 2, 4}}, "plus 4 shards × (--memory 4m + --index 8m) = 112.8 MiB in all, is larger than the 100.0 MiB"},
	} {
		err := tc.cfg.checkFreeMemory(meminfo)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s %d keys: got %v, want %q", tc.cfg.Scenario, tc.cfg.DBSize, err, tc.wantErr)
		}
	}
	os.WriteFile(meminfo, []byte("MemTotal: 1 kB\n"), 0o644)
	if err := (Config{Scenario: ScenarioMemory, DBSize: 1}).checkFreeMemory(meminfo); err == nil || !strings.Contains(err.Error(), "no MemAvailable") {
		t.Errorf("meminfo without MemAvailable: got %v, want it named", err)
	}
}

func TestParseDeviceReads(t *testing.T) {
	for _, tc := range []struct {
		info map[string]string
		want int64
		err  bool
	}{
		{map[string]string{"Device.CompletedReads": "12345"}, 12345, false},
		{map[string]string{"Log.HeadAddress": "64"}, -1, true},
		{map[string]string{"Device.CompletedReads": "-3"}, -1, true},
		{map[string]string{"Device.CompletedReads": "x"}, -1, true},
	} {
		got, err := parseDeviceReads(tc.info)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%v: got %d, %v; want %d, error %v", tc.info, got, err, tc.want, tc.err)
		}
	}
}

func FuzzMemAvailable(f *testing.F) {
	f.Add([]byte("MemTotal: 10 kB\nMemAvailable:  2048 kB\n"))
	f.Add([]byte("MemAvailable: -1 kB\n"))
	f.Add([]byte("MemAvailable:\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := memAvailable(b)
		if err == nil && (n < 0 || n%1024 != 0) {
			t.Errorf("memAvailable(%q) = %d: want a non-negative multiple of 1 KiB", b, n)
		}
	})
}

// TestReportRendersOldBundle renders a bundle written by schema 1 (before
// scenarios) and requires the same table.md and report.md it wrote.
func TestReportRendersOldBundle(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "bundle-v1")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	if err := Report(context.Background(), ReportConfig{Dir: dir}, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{fileTable, fileReport} {
		want, _ := os.ReadFile(filepath.Join(src, f))
		got, _ := os.ReadFile(filepath.Join(dir, f))
		if string(got) != string(want) {
			t.Errorf("%s of a schema 1 bundle: got\n%s\nwant (as written)\n%s", f, got, want)
		}
	}
	var res Results
	if err := readJSON(dir, fileResults, &res); err != nil {
		t.Fatal(err)
	}
	if res.Scenario != ScenarioStorage || res.Schema != SchemaVersion {
		t.Errorf("results.json of an old bundle: scenario %q schema %d, want %q and %d", res.Scenario, res.Schema, ScenarioStorage, SchemaVersion)
	}
}

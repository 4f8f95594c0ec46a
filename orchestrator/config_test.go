package orchestrator

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/size"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

func TestExplicitZeroIsKeptOrRefused(t *testing.T) {
	none := func(string) string { return "" }
	cfg, err := plan.Config{Workload: results.Workload{WarmupSeconds: 0, Given: []string{"warmup-seconds"}}}.Resolve(none, parts)
	if err != nil || cfg.WarmupSeconds != 0 {
		t.Errorf("--warmup-seconds 0: got %d, %v; want 0 (no warm-up)", cfg.WarmupSeconds, err)
	}
	cfg, _ = plan.Config{}.Resolve(none, parts)
	if cfg.WarmupSeconds != plan.Profiles[plan.ProfileQuick].WarmupSeconds || cfg.Passes != plan.Profiles[plan.ProfileQuick].Passes {
		t.Errorf("not given: warm-up %d, passes %d; want the quick profile's", cfg.WarmupSeconds, cfg.Passes)
	}
	refused := []struct {
		cfg  plan.Config
		want string
	}{
		{plan.Config{Workload: results.Workload{Given: []string{"passes"}}}, "--passes 0: want at least 1 pass"},
		{plan.Config{Workload: results.Workload{Given: []string{"cell-seconds"}}}, "--cell-seconds 0"},
		{plan.Config{Workload: results.Workload{Given: []string{"dbsize"}}}, "--dbsize 0"},
		{plan.Config{Workload: results.Workload{Given: []string{"batch"}}}, "--batch 0"},
		{plan.Config{Workload: results.Workload{Given: []string{"load-threads"}}}, "--load-threads 0"},
		{plan.Config{Workload: results.Workload{Given: []string{"load-batch"}}}, "--load-batch 0"},
		{plan.Config{Workload: results.Workload{Given: []string{"keylength"}}}, "--keylength 0"},
		{plan.Config{Workload: results.Workload{Given: []string{"threads"}}}, "--threads: want at least one"},
		{plan.Config{Workload: results.Workload{WarmupSeconds: -1}}, "--warmup-seconds -1"},
		{plan.Config{Workload: results.Workload{MaxMissRatio: 1}}, "--max-miss-ratio 1"},
		{plan.Config{Workload: results.Workload{MaxMissRatio: -0.1}}, "--max-miss-ratio -0.1"},
		{plan.Config{Workload: results.Workload{ServerPID: 42}}, "--server-pid 42 needs --server-addr"},
		{plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", Given: []string{"server-pid"}}}, "--server-pid 0: want the pid"},
		{plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1"}}, `--server-addr "127.0.0.1": want HOST:PORT`},
		{plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", Memory: "16m"}}, "--memory applies to the tiered server a run starts"},
		{plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", Backends: []string{"uring"}}}, "--backends applies"},
		{plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", Given: []string{"pin"}}}, "--pin applies"},
	}
	for _, tt := range refused {
		_, err := tt.cfg.Resolve(none, parts)
		if err == nil || !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("resolve(%+v): got %v, want an ErrConfig containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestExternalConfigHoldsOnlyWhatRuns(t *testing.T) {
	cfg, err := plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", ServerPID: 7, SkipLoad: true}}.Resolve(func(string) string { return "" }, parts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Backends != nil || cfg.Pins != nil || cfg.Memory != "" || cfg.Index != "" {
		t.Errorf("external config: backends %v pins %v memory %q index %q; want none of tierbench's server flags", cfg.Backends, cfg.Pins, cfg.Memory, cfg.Index)
	}
	if plan.CeilingApplies(cfg) {
		t.Errorf("external server without --data: ceilingApplies = true, want false")
	}
	named, _ := plan.Config{Workload: results.Workload{ServerAddr: "127.0.0.1:6379", ServerPID: 7, SkipLoad: true}}.Resolve(func(k string) string {
		return map[string]string{"TIERBENCH_DATA": "/mnt/redis"}[k]
	}, parts)
	if !plan.CeilingApplies(named) || named.DataDir != "/mnt/redis" {
		t.Errorf("external server with TIERBENCH_DATA: ceilingApplies %v, data %q; want true, /mnt/redis", plan.CeilingApplies(named), named.DataDir)
	}
	own, _ := plan.Config{}.Resolve(func(string) string { return "" }, parts)
	if !plan.CeilingApplies(own) {
		t.Errorf("tierbench's own server: ceilingApplies = false, want true")
	}
}

func TestParseIntsAndSplitList(t *testing.T) {
	good := []struct {
		in   string
		want []int
	}{
		{"8,32,48,64", []int{8, 32, 48, 64}},
		{"8 32 48 64", []int{8, 32, 48, 64}},
		{" 8, 32 ", []int{8, 32}},
	}
	for _, tt := range good {
		got, err := plan.ParseInts(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseInts(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	bad := []struct{ in, want string }{
		{"8,,32", `item 2 of "8,,32" is empty`},
		{"8,", "item 2"},
		{",8", "item 1"},
		{"", "empty list"},
		{"8,x", `"x" is not a positive integer`},
		{"0", `"0" is not a positive integer`},
	}
	for _, tt := range bad {
		if _, err := plan.ParseInts(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseInts(%q): got %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
	if got, err := plan.SplitList("libaio,uring"); err != nil || !slices.Equal(got, []string{"libaio", "uring"}) {
		t.Errorf("SplitList(libaio,uring) = %v, %v", got, err)
	}
	if _, err := plan.SplitList("libaio,,uring"); err == nil {
		t.Errorf("SplitList(libaio,,uring): got nil error, want the empty item refused")
	}
}

func TestResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	ref, err := plan.Config{Workload: results.Workload{Profile: plan.ProfileReference}}.Resolve(env(nil), parts)
	if err != nil {
		t.Fatal(err)
	}
	if ref.DBSize != 100_000_000 || ref.Batch != 1024 || ref.CellSeconds != 12 || ref.Passes != 3 || ref.Index != "8g" ||
		!slices.Equal(ref.Threads, []int{8, 32, 48, 64}) || !slices.Equal(ref.Backends, []string{"libaio", "uring"}) {
		t.Errorf("reference profile: got %+v", ref)
	}
	quick, err := plan.Config{}.Resolve(env(nil), parts)
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := size.Parse(quick.Memory)
	if quick.Profile != plan.ProfileQuick || quick.DBSize*int64(results.RecordBytes(quick.KeyLength, quick.ValueLength)) < 20*mem ||
		!slices.Equal(quick.Threads, []int{8, 32, 48, 64}) {
		t.Errorf("quick profile: got %+v; want the reference's columns with the dataset ≥ 20 × memory", quick)
	}
	got, err := plan.Config{Workload: results.Workload{Passes: 5}}.Resolve(env(map[string]string{"TIERBENCH_DATA": "/mnt/x", "TIERBENCH_THREADS": "8 16", "TIERBENCH_PASSES": "2", "TIERBENCH_CELL_SECONDS": "7"}), parts)
	if err != nil {
		t.Fatal(err)
	}
	if got.DataDir != "/mnt/x" || !slices.Equal(got.Threads, []int{8, 16}) || got.Passes != 5 || got.CellSeconds != 7 {
		t.Errorf("environment overrides: got data %q threads %v passes %d cell %d; want /mnt/x, [8 16], 5 (flag wins), 7",
			got.DataDir, got.Threads, got.Passes, got.CellSeconds)
	}
	// Each variable used is said; the one a flag overrode is not.
	wantEnv := []string{"TIERBENCH_DATA=/mnt/x (--data)", "TIERBENCH_THREADS=8 16 (--threads)", "TIERBENCH_CELL_SECONDS=7 (--cell-seconds)"}
	if !slices.Equal(got.FromEnv, wantEnv) {
		t.Errorf("environment said: got %q, want %q", got.FromEnv, wantEnv)
	}
	bad := []struct {
		cfg  plan.Config
		env  map[string]string
		want string
	}{
		{plan.Config{Workload: results.Workload{Profile: "huge"}}, nil, `unknown --profile "huge"`},
		{plan.Config{}, map[string]string{"TIERBENCH_THREADS": "8,x"}, "TIERBENCH_THREADS"},
		{plan.Config{}, map[string]string{"TIERBENCH_PASSES": "0"}, "TIERBENCH_PASSES"},
		{plan.Config{}, map[string]string{"TIERBENCH_CELL_SECONDS": "x"}, "TIERBENCH_CELL_SECONDS"},
		// The reference generator's unprefixed names are refused, naming
		// the new one, even when the flag is given.
		{plan.Config{}, map[string]string{"DATA": "/mnt/x"}, "set TIERBENCH_DATA"},
		{plan.Config{}, map[string]string{"THREADS": "8"}, "set TIERBENCH_THREADS"},
		{plan.Config{Workload: results.Workload{Passes: 2, Given: []string{"passes"}}}, map[string]string{"PASSES": "2"}, "set TIERBENCH_PASSES"},
		{plan.Config{}, map[string]string{"RUNTIME": "7"}, "set TIERBENCH_CELL_SECONDS"},
		{plan.Config{Workload: results.Workload{Backends: []string{"spdk"}}}, nil, `unknown backend "spdk"`},
		{plan.Config{Workload: results.Workload{Pins: []string{"half"}}}, nil, `unknown pin mode "half"`},
		// A repeated row or column was measured once and shown twice.
		{plan.Config{Workload: results.Workload{Backends: []string{"uring", "libaio", "uring"}}}, nil, "--backends names uring twice"},
		{plan.Config{Workload: results.Workload{Pins: []string{"none", "none"}}}, nil, "--pin names none twice"},
		{plan.Config{}, map[string]string{"TIERBENCH_THREADS": "8 32 8"}, "--threads names 8 twice"},
		{plan.Config{Workload: results.Workload{Shards: []int{1, 2, 2}}}, nil, "--shards names 2 twice"},
		{plan.Config{Workload: results.Workload{Runtime: "vm"}}, nil, `--runtime "vm"`},
		{plan.Config{Workload: results.Workload{DBSize: 1000}}, nil, "less than 20 × --memory"},
		{plan.Config{Workload: results.Workload{Memory: "lots"}}, nil, `size "lots"`},
		{plan.Config{Workload: results.Workload{SkipLoad: true}}, nil, "--skip-load needs --server-addr"},
	}
	for _, tt := range bad {
		_, err := tt.cfg.Resolve(env(tt.env), parts)
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, fault.ErrConfig) {
			t.Errorf("resolve(%+v, env %v): got %v, want an ErrConfig containing %q", tt.cfg, tt.env, err, tt.want)
		}
	}
	if _, err := (plan.Config{Workload: results.Workload{DBSize: 1000, Force: true}}).Resolve(env(nil), parts); err != nil {
		t.Errorf("--force with a small dataset: got %v, want it accepted (the device-hit check judges)", err)
	}
}

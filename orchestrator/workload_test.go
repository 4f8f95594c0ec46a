package orchestrator

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/target"
	"github.com/tierbench/tierbench/results"
)

// TestWorkloadFlags: --key-dist and --workload are validated as bench
// reads them, DEL and INCR (which change the verified dataset) and a
// mixed cluster are refused, and the bench arguments carry them: the key
// distribution to every client, the mix to the measured cells.
func TestWorkloadFlags(t *testing.T) {
	resolve := func(c plan.Config) (plan.Config, error) { return c.Resolve(func(string) string { return "" }, parts) }
	for _, tt := range []struct {
		keyDist, workload string
		wantErr           string
		wantOps           []string
	}{
		{"", "", "", []string{"--op", "GET"}},
		{"zipf:0.99", "ycsb-a", "", []string{"--op-mix", "GET:50,SET:50"}},
		{"hotspot", "YCSB-F", "", []string{"--op-mix", "GET:50,RMW:50"}},
		{"latest", "get:90,mget:10", "", []string{"--op-mix", "GET:90,MGET:10"}},
		{"pareto", "", "--key-dist: key distribution \"pareto\"", nil},
		{"", "ycsb-z", "neither a preset", nil},
		{"", "GET:90,DEL:10", "DEL changes the dataset", nil},
		{"", "GET:90,INCR:10", "INCR changes the dataset", nil},
	} {
		cfg, err := resolve(plan.Config{Workload: results.Workload{KeyDist: tt.keyDist, Mix: tt.workload, NoFio: true}})
		if tt.wantErr != "" {
			if !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("--key-dist %q --workload %q: got %v, want a config error saying %q", tt.keyDist, tt.workload, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("--key-dist %q --workload %q: %v", tt.keyDist, tt.workload, err)
		}
		r := &runner{cfg: cfg}
		if got := r.cellOps(); !slices.Equal(got, tt.wantOps) {
			t.Errorf("--workload %q: cell flags %v, want %v", tt.workload, got, tt.wantOps)
		}
		args := strings.Join(r.benchArgs(target.Server{Addr: "127.0.0.1:6379"}), " ")
		if hasDist := strings.Contains(args, "--key-dist "+tt.keyDist); hasDist != (tt.keyDist != "") {
			t.Errorf("--key-dist %q: bench arguments %q", tt.keyDist, args)
		}
	}
	if _, err := resolve(plan.Config{Workload: results.Workload{Mix: "ycsb-b", Shards: []int{1, 2}, NoFio: true}}); err == nil || !strings.Contains(err.Error(), "--workload with --shards") {
		t.Errorf("--workload with --shards 1,2: got %v, want a refusal", err)
	}
}

// TestRunWorkloadOnTieredServer runs a YCSB-A mix (50 % SET) over skewed
// keys on the tiered server: every cell publishable, each pass counting
// the GETs apart from its ops, device bytes per GET about a sector, the
// plan recording the key distribution and the workload, and the load
// check holding after (the run verifies DBSIZE and sampled values of the
// loaded length before each row; one row here, so this checks it once
// after the mix through the client's exact count).
func TestRunWorkloadOnTieredServer(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	args := append(tinyArgs(t, data, out), "--runtime", "process", "--backends", "libaio", "--pin", "none", "--workload", "ycsb-a", "--key-dist", "hotspot:0.5,0.6")
	r := runBinary(t, bin, args...)
	if r.code != 0 {
		t.Fatalf("ycsb-a run: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	plan := checkBundle(t, out, r.stdout, 1, 1)
	if plan.Workload.KeyDist != "hotspot:0.5,0.6" || plan.Workload.Mix != "ycsb-a" {
		t.Errorf("plan.json records key dist %q and workload %q, want hotspot:0.5,0.6 and ycsb-a", plan.Workload.KeyDist, plan.Workload.Mix)
	}
	recs, _, err := results.ReadCells(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Gets <= 0 || rec.Gets >= rec.Ops || rec.Misses != 0 || rec.Errors != 0 {
			t.Errorf("pass t=%d: %d ops, %d GETs, %d misses, %d errors: want about half the ops GETs, no miss", rec.Threads, rec.Ops, rec.Gets, rec.Misses, rec.Errors)
		}
		if rec.MemoryServed {
			t.Errorf("pass t=%d: %.0f device bytes per GET (memory-served %v), want about a sector", rec.Threads, rec.ReadBytesPerGet, rec.MemoryServed)
		}
	}
	assertNoProcesses(t, bin)
}

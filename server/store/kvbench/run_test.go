package kvbench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/keyspace"
	"github.com/tierbench/tierbench/internal/settle"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/server/store"
)

// TestMixKeepsKeyCountExact runs every kind of operation from two threads
// on keys that live mostly on the device, uniform and zipf-drawn, then counts
// the live keys one by one: the store's counter must agree exactly.
func TestMixKeepsKeyCountExact(t *testing.T) {
	for _, zipf := range []bool{false, true} {
		t.Run(map[bool]string{false: "uniform", true: "zipf"}[zipf], func(t *testing.T) {
			mixKeepsKeyCountExact(t, zipf)
		})
	}
}

func mixKeepsKeyCountExact(t *testing.T, zipf bool) {
	cfg := DefaultConfig()
	cfg.Zipf = zipf
	cfg.Store = store.Config{StorageTier: true, DeviceType: "localmemory", MemoryBytes: 256 << 10, PageBytes: 64 << 10, IndexBytes: 256 << 10}
	cfg.DBSize = 5000
	cfg.RUMD = [4]int{40, 25, 15, 20}
	cfg.Runtime = 500 * time.Millisecond
	cfg.InFlight = 16
	st, err := store.Open(cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := load(ctx, st, cfg); err != nil {
		t.Fatal(err)
	}
	r, err := runMix(ctx, st, cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reads == 0 || r.Upserts == 0 || r.RMWs == 0 || r.Deletes == 0 || r.DeviceReads == 0 {
		t.Fatalf("run %+v: want every kind of operation and device reads", r)
	}
	if r.Ops != r.Reads+r.Upserts+r.RMWs+r.Deletes {
		t.Errorf("run %+v: ops are not the sum of the kinds", r)
	}
	if s, err := cpustat.Read("/"); err == nil && s.HasSteal && (r.StealShare == nil || *r.StealShare < 0 || *r.StealShare > 1) {
		t.Errorf("run steal: got %v, want the host's share over the window", r.StealShare)
	}
	sess := st.NewSession()
	defer sess.Close()
	live := int64(0)
	key := make([]byte, 0, cfg.KeyLength)
	for k := range uint64(cfg.DBSize) {
		key = keyspace.AppendKey(key[:0], k, cfg.KeyLength)
		_, s, err := sess.Read(key, nil, k)
		if err != nil {
			t.Fatal(err)
		}
		if s == store.Found {
			live++
		}
		if err := sess.CompletePending(true, func(_ uint64, _ []byte, s store.Status, err error) {
			if err != nil {
				t.Error(err)
			}
			if s == store.Found {
				live++
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if got := st.Stats().Keys; got != live {
		t.Errorf("Keys counter: got %d, want %d (counted by reading every key)", got, live)
	}
	if live == cfg.DBSize || live == 0 {
		t.Errorf("%d of %d keys live: the deletes did not happen or everything went", live, cfg.DBSize)
	}
}

// TestCompareFio runs the benchmark beside the real fio on the same disk.
func TestCompareFio(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	cfg := DefaultConfig()
	cfg.Store = store.Config{StorageTier: true, LogDir: testenv.MustDiskDir(t), Backend: "libaio",
		MemoryBytes: 256 << 10, PageBytes: 64 << 10, IndexBytes: 256 << 10}
	cfg.DBSize = 20000
	cfg.Threads = []int{1}
	cfg.Runtime = time.Second
	cfg.Passes = 2
	cfg.CompareFio = true
	cfg.FioFileBytes = 16 << 20
	res, _ := runJSON(t, cfg)
	if len(res.Runs) != 1 {
		t.Fatalf("runs: got %d, want 1", len(res.Runs))
	}
	r := res.Runs[0]
	if len(r.PassesOpsPerSec) != 2 || len(r.FioPasses) != 2 || r.FioIOPS <= 0 || r.DeviceReads == 0 {
		t.Errorf("run %+v: want 2 passes of each side, fio IOPS and device reads", r)
	}
	if want := r.OpsPerSec / r.FioIOPS; r.FioRatio != want {
		t.Errorf("fio_ratio: got %v, want %v", r.FioRatio, want)
	}
	if _, err := os.Stat(filepath.Join(cfg.Store.LogDir, "tierbench-fio.0")); !os.IsNotExist(err) {
		t.Errorf("the fio file is left behind (stat: %v)", err)
	}
}

// TestSettle: with --settle the runs wait after the load on real O_DIRECT
// files until the store's read-only probes reach 90 % of the target. A
// target the disk reads at once ends the wait at the first probe; one no
// disk reaches ends it on the plateau or the time limit, unsettled, and
// the runs still happen, every read finding its key.
func TestSettle(t *testing.T) {
	for _, tt := range []struct {
		name      string
		target    float64
		settled   bool
		probes    int // exactly, or at least with 0 < probes and !settled
		wantHuman string
	}{
		{"reached at once", 1, true, 1, "[Settle] back to 90 % of the target after"},
		{"out of reach", 1e12, false, settle.FlatProbes + 1, "measuring anyway"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Store = store.Config{StorageTier: true, LogDir: testenv.MustDiskDir(t), Backend: "libaio",
				MemoryBytes: 256 << 10, PageBytes: 64 << 10, IndexBytes: 256 << 10}
			cfg.DBSize = 20000
			cfg.Threads = []int{1, 2}
			cfg.Runtime = time.Second
			cfg.Settle, cfg.SettleTargetOpsPerSec = true, tt.target
			res, human := runJSON(t, cfg)
			s := res.Settle
			if s == nil {
				t.Fatalf("settle: got none, want the probes in the JSON")
			}
			if s.Settled != tt.settled || s.Threads != 2 || s.TargetOpsPerSec != tt.target {
				t.Errorf("settle %+v: got settled %v at t=%d against %v, want %v at t=2 against %v", s, s.Settled, s.Threads, s.TargetOpsPerSec, tt.settled, tt.target)
			}
			if tt.settled && len(s.ProbeOpsPerSec) != tt.probes || !tt.settled && len(s.ProbeOpsPerSec) < tt.probes {
				t.Errorf("probes: got %v, want %d", s.ProbeOpsPerSec, tt.probes)
			}
			if !tt.settled && s.Why == "" {
				t.Errorf("settle %+v: want why the wait ended", s)
			}
			if !strings.Contains(human, tt.wantHuman) {
				t.Errorf("human lines: got\n%s\nwant %q", human, tt.wantHuman)
			}
			if len(res.Runs) != 2 || res.Runs[0].Ops == 0 {
				t.Errorf("runs: got %+v, want one per thread count after the wait", res.Runs)
			}
			for _, r := range res.Runs {
				if r.NotFound != 0 {
					t.Errorf("run at t=%d: %d reads missed, want none", r.Threads, r.NotFound)
				}
			}
		})
	}
}

// runJSON runs cfg with --json and returns the document and the human
// lines.
func runJSON(t *testing.T, cfg Config) (Result, string) {
	t.Helper()
	cfg.JSON = true
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), cfg, &stdout, &stderr); err != nil {
		t.Fatalf("Run: %v (stderr %s)", err, stderr.String())
	}
	var res Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("JSON: %v in %q", err, stdout.String())
	}
	return res, stderr.String()
}

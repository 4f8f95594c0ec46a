package preflight

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

func TestCheckFreeMemory(t *testing.T) {
	dir := t.TempDir()
	meminfo := filepath.Join(dir, "meminfo")
	os.WriteFile(meminfo, []byte("MemTotal:       24000000 kB\nMemFree:          100000 kB\nMemAvailable:     102400 kB\n"), 0o644)
	for _, tc := range []struct {
		cfg     plan.Config
		wantErr string
	}{
		{plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioLocalMemory,
			DBSize:      1_000_000,
			KeyLength:   16,
			ValueLength: 100,
		},
		}, "1000000 keys × 136 B = 129.7 MiB is larger than the 100.0 MiB of memory available"},
		{plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioMemory,
			DBSize:      1_000_000,
			KeyLength:   16,
			ValueLength: 100,
		},
		}, "129.7 MiB is larger than the 100.0 MiB"},
		{plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioLocalMemory,
			DBSize:      500_000,
			KeyLength:   16,
			ValueLength: 100,
		},
		}, ""},
		{plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioStorage,
			DBSize:      100_000_000,
			KeyLength:   16,
			ValueLength: 96,
		},
		}, ""}, // on disk
		{plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioMemory,
			DBSize:      1_000_000,
			KeyLength:   16,
			ValueLength: 100,
			Force:       true,
		},
		}, ""},
		// 500 000 keys fit alone, not with each shard's log and index.
		{plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioLocalMemory,
			DBSize:      500_000,
			KeyLength:   16,
			ValueLength: 100,
			Memory:      "4m",
			Index:       "8m",
		},
		}, ""},
		{plan.Config{Workload: results.Workload{
			Scenario:    results.ScenarioLocalMemory,
			DBSize:      500_000,
			KeyLength:   16,
			ValueLength: 100,
			Memory:      "4m",
			Index:       "8m",
			Shards:      []int{1, 2, 4},
		},
		}, "plus 4 shards × (--memory 4m + --index 8m) = 112.8 MiB in all, is larger than the 100.0 MiB"},
	} {
		err := CheckFreeMemory(tc.cfg, meminfo)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s %d keys: got %v, want %q", tc.cfg.Scenario, tc.cfg.DBSize, err, tc.wantErr)
		}
	}
	os.WriteFile(meminfo, []byte("MemTotal: 1 kB\n"), 0o644)
	if err := CheckFreeMemory((plan.Config{Workload: results.Workload{Scenario: results.ScenarioMemory, DBSize: 1}}), meminfo); err == nil || !strings.Contains(err.Error(), "no MemAvailable") {
		t.Errorf("meminfo without MemAvailable: got %v, want it named", err)
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

package orchestrator

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

func TestShardConfig(t *testing.T) {
	none := func(string) string { return "" }
	cfg, err := plan.Config{Workload: results.Workload{
		Shards:  []int{1, 2},
		DataDir: "/var/tmp/a,/var/tmp/b",
		DBSize:  1000000,
		Memory:  "1m",
		Page:    "64k",
	},
	}.Resolve(none, parts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "/var/tmp/a" || fmt.Sprint(cfg.DataDirs) != "[/var/tmp/a /var/tmp/b]" {
		t.Errorf("--data list: DataDir %q, DataDirs %v, want /var/tmp/a and [/var/tmp/a /var/tmp/b]", cfg.DataDir, cfg.DataDirs)
	}
	refused := []struct {
		cfg  plan.Config
		want string
	}{
		{plan.Config{Workload: results.Workload{Shards: []int{0}}}, "--shards 0 is outside 1..64"},
		{plan.Config{Workload: results.Workload{Shards: []int{65}}}, "--shards 65"},
		{plan.Config{Workload: results.Workload{Shards: []int{3}, DataDir: "/a,/b"}}, "--data lists 2 directories for --shards 3"},
		{plan.Config{Workload: results.Workload{Shards: []int{2}, DataDir: "/a,,/b"}}, "has an empty directory"},
		{plan.Config{Workload: results.Workload{Shards: []int{2}, Runtime: plan.RuntimeDocker}}, "--runtime docker does not start clusters"},
		{plan.Config{Workload: results.Workload{Shards: []int{2}, ServerAddr: "127.0.0.1:7000"}}, "with --server-addr"},
		{plan.Config{Workload: results.Workload{Shards: []int{4}, DBSize: 100000, Memory: "1m"}}, "split over --shards 4"},
	}
	for _, tt := range refused {
		_, err := tt.cfg.Resolve(none, parts)
		if err == nil || !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("resolve(%+v): got %v, want an ErrConfig containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestCellExtrasTakesMedians(t *testing.T) {
	passes := []results.PassRecord{
		{CPUMicrosPerOp: 3, Nodes: []results.NodePass{{Addr: "a", OpsPerSec: 10, ReadBytesPerGet: 500, Keys: 7}, {Addr: "b", OpsPerSec: 20, ReadBytesPerGet: 510}}},
		{CPUMicrosPerOp: 5, Nodes: []results.NodePass{{Addr: "a", OpsPerSec: 30, ReadBytesPerGet: 520, Keys: 7}, {Addr: "b", OpsPerSec: 40, ReadBytesPerGet: 530}}},
		{CPUMicrosPerOp: 4, Nodes: []results.NodePass{{Addr: "a", OpsPerSec: 20, ReadBytesPerGet: 510, Keys: 7}, {Addr: "b", OpsPerSec: 60, ReadBytesPerGet: 520}}},
	}
	var c results.Cell
	results.CellExtras(&c, passes)
	if c.CPUMicrosPerOp != 4 || len(c.Nodes) != 2 || c.Nodes[0].OpsPerSec != 20 || c.Nodes[0].ReadBytesPerGet != 510 || c.Nodes[0].Keys != 7 || c.Nodes[1].OpsPerSec != 40 {
		t.Errorf("results.CellExtras: %+v", c)
	}
}

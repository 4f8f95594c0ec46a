package orchestrator

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
)

func TestShardPlaces(t *testing.T) {
	one := rig.Topology{Nodes: [][]int{{0, 1, 2, 3}}}
	two := rig.Topology{Nodes: [][]int{{0, 1}, {2, 3}}}
	three := rig.Topology{Nodes: [][]int{{0, 1}, {2, 3}, {4, 5}}}
	half := rig.Pinning{ServerCPUs: "0-1", ServerMems: "0", ClientCPUs: "2-3", ClientMems: "0"}
	tiny := rig.Pinning{ServerCPUs: "0", ServerMems: "0", ClientCPUs: "1", ClientMems: "0"}
	cases := []struct {
		n       int
		topo    rig.Topology
		pin     string
		pn      rig.Pinning
		want    string
		wantHow string
	}{
		{2, one, plan.PinNone, rig.Pinning{}, "[{0-1 } {2-3 }]", "disjoint slices of all CPUs"},
		{4, one, plan.PinNone, rig.Pinning{}, "[{0 } {1 } {2 } {3 }]", "cpus 0 | 1 | 2 | 3"},
		{2, one, plan.PinPinned, half, "[{0 0} {1 0}]", "of the server's CPUs 0-1"},
		{2, rig.Topology{Nodes: [][]int{{0, 1}}}, plan.PinPinned, tiny, "[{0 0} {1 0}]", "overlapping the client's"},
		{2, two, plan.PinNone, rig.Pinning{}, "[{0-1 0} {2-3 1}]", "NUMA node"},
		{2, two, plan.PinPinned, rig.Pinning{ServerCPUs: "0-1", ServerMems: "0", ClientCPUs: "2-3", ClientMems: "1"}, "[{0 0} {1 0}]", "of the server's CPUs"},
		{2, three, plan.PinPinned, rig.Pinning{}, "[{0-1 0} {2-3 1}]", "NUMA node"},
		{5, one, plan.PinNone, rig.Pinning{}, "[{ } { } { } { } { }]", "unpinned: 5 shards on 4 CPUs"},
	}
	for _, c := range cases {
		got, how := shardPlaces(c.n, c.topo, c.pin, c.pn)
		if fmt.Sprint(got) != c.want || !strings.Contains(how, c.wantHow) {
			t.Errorf("shardPlaces(%d, %v, %s): got %v (%s), want %s (%q)", c.n, c.topo.Nodes, c.pin, got, how, c.want, c.wantHow)
		}
	}
}

func TestShardConfig(t *testing.T) {
	none := func(string) string { return "" }
	cfg, err := plan.Config{Shards: []int{1, 2}, DataDir: "/var/tmp/a,/var/tmp/b", DBSize: 1000000, Memory: "1m", Page: "64k"}.Resolve(none, parts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DataDir != "/var/tmp/a" || fmt.Sprint(cfg.DataDirs) != "[/var/tmp/a /var/tmp/b]" || shardDir(cfg, 1, 2) != "/var/tmp/b" {
		t.Errorf("--data list: DataDir %q, DataDirs %v, shard 1 in %q", cfg.DataDir, cfg.DataDirs, shardDir(cfg, 1, 2))
	}
	cfg, _ = plan.Config{Shards: []int{2}, DataDir: "/var/tmp/x", DBSize: 1000000, Memory: "1m", Page: "64k"}.Resolve(none, parts)
	if got := shardDir(cfg, 1, 2); got != "/var/tmp/x/shard-1" {
		t.Errorf("shard 1 under one --data: %q, want /var/tmp/x/shard-1", got)
	}
	if got := shardDir(cfg, 0, 1); got != "/var/tmp/x" {
		t.Errorf("one shard: %q, want the data dir itself", got)
	}
	refused := []struct {
		cfg  plan.Config
		want string
	}{
		{plan.Config{Shards: []int{0}}, "--shards 0 is outside 1..64"},
		{plan.Config{Shards: []int{65}}, "--shards 65"},
		{plan.Config{Shards: []int{3}, DataDir: "/a,/b"}, "--data lists 2 directories for --shards 3"},
		{plan.Config{Shards: []int{2}, DataDir: "/a,,/b"}, "has an empty directory"},
		{plan.Config{Shards: []int{2}, Runtime: plan.RuntimeDocker}, "--runtime docker does not start clusters"},
		{plan.Config{Shards: []int{2}, ServerAddr: "127.0.0.1:7000"}, "with --server-addr"},
		{plan.Config{Shards: []int{4}, DBSize: 100000, Memory: "1m"}, "split over --shards 4"},
	}
	for _, tt := range refused {
		_, err := tt.cfg.Resolve(none, parts)
		if err == nil || !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("resolve(%+v): got %v, want an ErrConfig containing %q", tt.cfg, err, tt.want)
		}
	}
}

func TestExpandShardsLabelsRows(t *testing.T) {
	rows := []results.Row{{Backend: "uring", Pin: plan.PinNone, Label: "no pin"}}
	r := &runner{cfg: plan.Config{Shards: []int{1, 2}}}
	got := r.expandShards(rows)
	want := []results.Row{
		{Backend: "uring", Pin: plan.PinNone, Label: "1 shard / no pin", Shards: 1},
		{Backend: "uring", Pin: plan.PinNone, Label: "2 shards / no pin", Shards: 2},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("expandShards: got %+v, want %+v", got, want)
	}
	if got[0].ID() == got[1].ID() || got[1].ID() != "uring/none/shards=2" || got[0].ID() != "uring/none" {
		t.Errorf("keys %q and %q: want uring/none and uring/none/shards=2", got[0].ID(), got[1].ID())
	}
	r.cfg.Shards = nil
	if got := r.expandShards(rows); fmt.Sprint(got) != fmt.Sprint(rows) {
		t.Errorf("without --shards the rows changed: %v", got)
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

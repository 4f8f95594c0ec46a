package target

import (
	"fmt"
	"slices"
	"strings"
	"testing"

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

// TestShardDir: shard i runs in the i-th dir of a --data list, else in a
// directory of its own under the one --data; a lone shard in --data
// itself.
func TestShardDir(t *testing.T) {
	list := plan.Config{Workload: results.Workload{DataDir: "/var/tmp/a", DataDirs: []string{"/var/tmp/a", "/var/tmp/b"}}}
	one := plan.Config{Workload: results.Workload{DataDir: "/var/tmp/x", DataDirs: []string{"/var/tmp/x"}}}
	for _, c := range []struct {
		cfg       plan.Config
		i, shards int
		want      string
	}{
		{list, 1, 2, "/var/tmp/b"},
		{list, 0, 2, "/var/tmp/a"},
		{one, 1, 2, "/var/tmp/x/shard-1"},
		{one, 0, 1, "/var/tmp/x"},
	} {
		if got := shardDir(c.cfg, c.i, c.shards); got != c.want {
			t.Errorf("shardDir(%v, %d, %d): got %q, want %q", c.cfg.DataDirs, c.i, c.shards, got, c.want)
		}
	}
}

func TestExpandShardsLabelsRows(t *testing.T) {
	rows := []results.Row{{Backend: "uring", Pin: plan.PinNone, Label: "no pin"}}
	cfg := plan.Config{Workload: results.Workload{Shards: []int{1, 2}}}
	got := ExpandShards(cfg, rows)
	want := []results.Row{
		{Backend: "uring", Pin: plan.PinNone, Label: "1 shard / no pin", Shards: 1},
		{Backend: "uring", Pin: plan.PinNone, Label: "2 shards / no pin", Shards: 2},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ExpandShards: got %+v, want %+v", got, want)
	}
	if got[0].ID() == got[1].ID() || got[1].ID() != "uring/none/shards=2" || got[0].ID() != "uring/none" {
		t.Errorf("keys %q and %q: want uring/none and uring/none/shards=2", got[0].ID(), got[1].ID())
	}
	cfg.Shards = nil
	if got := ExpandShards(cfg, rows); fmt.Sprint(got) != fmt.Sprint(rows) {
		t.Errorf("without --shards the rows changed: %v", got)
	}
}

package orchestrator

import (
	"os"
	"slices"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

func TestProcFiles(t *testing.T) {
	proc := rig.ProcRoot("testdata/proc")
	rb, err := proc.ReadBytes(4242)
	if err != nil || rb != 2621440000 {
		t.Errorf("readBytes: got %d, %v; want 2621440000", rb, err)
	}
	pl, err := proc.Placement(4242)
	if err != nil {
		t.Fatal(err)
	}
	if pl.CPUs != "0-3,8" || pl.Mems != "0" || pl.Policy != "bind:0" {
		t.Errorf("placement: got %+v, want cpus 0-3,8 mems 0 policy bind:0", pl)
	}
	if _, err := proc.ReadBytes(1); err == nil {
		t.Errorf("readBytes of a missing pid: got nil error")
	}
	for _, bad := range []string{"rchar: 1\n", "read_bytes: lots\n"} {
		if _, err := rig.ParseProcIO([]byte(bad)); err == nil {
			t.Errorf("parseProcIO(%q): got nil error", bad)
		}
	}
}

func TestCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  bool
	}{
		{"0", []int{0}, false},
		{"0-3,8", []int{0, 1, 2, 3, 8}, false},
		{"8,0-1,1", []int{0, 1, 8}, false},
		{"", nil, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"-1", nil, true},
	}
	for _, tt := range tests {
		got, err := rig.ParseCPUList(tt.in)
		if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil && len(got) > 0 {
			back, _ := rig.ParseCPUList(rig.FormatCPUList(got))
			if !slices.Equal(back, got) {
				t.Errorf("formatCPUList round trip of %v: got %v", got, back)
			}
		}
	}
	if got := rig.FormatCPUList([]int{0, 1, 2, 3, 8, 10, 11}); got != "0-3,8,10-11" {
		t.Errorf("formatCPUList: got %q, want 0-3,8,10-11", got)
	}
}

func TestCheckPlacement(t *testing.T) {
	tests := []struct {
		pl   results.Placement
		fail bool
	}{
		{results.Placement{CPUs: "0-1", Mems: "0"}, false},
		{results.Placement{WantCPUs: "0", WantMems: "0", CPUs: "0", Mems: "0"}, false},
		{results.Placement{WantCPUs: "0", WantMems: "0", CPUs: "0-1", Mems: "0"}, true},
		{results.Placement{WantCPUs: "0-55", WantMems: "1", CPUs: "0-55", Mems: "0-1"}, true},                    // cpuset-mems not honoured
		{results.Placement{WantCPUs: "0-55", WantMems: "1", CPUs: "0-55", Mems: "0-1", Policy: "bind:1"}, false}, // bound by mempolicy
	}
	for _, tt := range tests {
		if err := rig.CheckPlacement("server", tt.pl); (err != nil) != tt.fail {
			t.Errorf("checkPlacement(%+v) = %v; want failure %v", tt.pl, err, tt.fail)
		}
	}
}

func TestTopology(t *testing.T) {
	two := rig.ReadTopology("testdata/sys", 224)
	p, err := two.Pinned()
	if err != nil || p.ServerCPUs != "0-55,112-167" || p.ClientCPUs != "56-111,168-223" || p.ServerMems != "0" || p.ClientMems != "1" || p.Label != "srv node-0 / cli node-1" {
		t.Errorf("two nodes: got %+v, %v", p, err)
	}
	one := rig.ReadTopology("testdata/sys1", 2)
	p, err = one.Pinned()
	if err != nil || p.ServerCPUs != "0" || p.ClientCPUs != "1" || p.Label != "srv cpus 0 / cli cpus 1 (1 node)" {
		t.Errorf("one node: got %+v, %v", p, err)
	}
	none := rig.ReadTopology(t.TempDir(), 1)
	if _, err := none.Pinned(); err == nil {
		t.Errorf("one CPU: got nil error, want a refusal to pin")
	}
}

func TestStatStartTime(t *testing.T) {
	if got := safe.StartTime(os.Getpid()); got == 0 || !safe.Alive(os.Getpid(), got) {
		t.Errorf("own start time %d not alive", got)
	}
}

package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/results"
)

// TestInterruptNote: the host paragraph names a pinned row whose server
// ran on none of the CPUs the data disk's completions interrupt, and only
// such a row, and only where the server ran on the preflight's host.
func TestInterruptNote(t *testing.T) {
	pinned := results.Row{Backend: "uring", Pin: results.PinPinned, Label: "srv node-0 / cli node-1"}
	free := results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
	disk := hostcheck.BlockDevice{Name: "vda", Interrupts: []hostcheck.DiskInterrupt{{IRQ: 36, Name: "virtio1-req.0", CPUs: "1"}}}
	bundle := func(serverCPUs string) results.Results {
		return results.Results{Plan: results.Plan{Rows: []results.Row{pinned, free}}, Passes: []results.PassRecord{
			{Row: pinned, Server: results.Placement{CPUs: serverCPUs}},
			{Row: free, Server: results.Placement{CPUs: "0-1"}},
		}}
	}
	for _, tt := range []struct {
		name  string
		res   results.Results
		disks []hostcheck.BlockDevice
		want  string // "" : no note
	}{
		{"pinned away from the interrupt", bundle("0"), []hostcheck.BlockDevice{disk}, "interrupt CPU 1, none of the server's in the Uring srv node-0 / cli node-1 row (server on CPU 0)"},
		{"pinned on it", bundle("1"), []hostcheck.BlockDevice{disk}, ""},
		{"pinned on a half without it", bundle("0-3"), []hostcheck.BlockDevice{{Name: "nvme0n1", Interrupts: []hostcheck.DiskInterrupt{{IRQ: 40, Name: "nvme0q1", CPUs: "4"}, {IRQ: 41, Name: "nvme0q2", CPUs: "5"}}}},
			"interrupt CPUs 4-5, none of the server's in the Uring srv node-0 / cli node-1 row (server on CPUs 0-3)"},
		{"no interrupts read", bundle("0"), []hostcheck.BlockDevice{{Name: "md1"}}, ""},
		{"across hosts", func() results.Results { r := bundle("0"); r.Hosts = []results.HostSummary{{Name: "server"}}; return r }(), []hostcheck.BlockDevice{disk}, ""},
	} {
		got := interruptNote(tt.res, hostcheck.Storage{Disks: tt.disks})
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want it to say %q", tt.name, got, tt.want)
		}
		if strings.Contains(got, "no pin") {
			t.Errorf("%s: an unpinned row is named: %q", tt.name, got)
		}
	}
}

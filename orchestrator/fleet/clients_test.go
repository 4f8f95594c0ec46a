package fleet

import (
	"slices"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig"
)

// TestSplitThreads: a cell's connections are shared out evenly, the
// remainder one each to the first hosts, none lost or added.
func TestSplitThreads(t *testing.T) {
	for _, tc := range []struct {
		threads, hosts int
		want           []int
	}{
		{64, 2, []int{32, 32}},
		{65, 2, []int{33, 32}},
		{8, 3, []int{3, 3, 2}},
		{1, 3, []int{1, 0, 0}},
	} {
		if got := SplitThreads(tc.threads, tc.hosts); !slices.Equal(got, tc.want) {
			t.Errorf("SplitThreads(%d, %d): got %v, want %v", tc.threads, tc.hosts, got, tc.want)
		}
	}
}

// TestLatestClient: the client ready last after a phase's shared start is
// found among offline cells and online runs; a host with no share of the
// connections is not asked.
func TestLatestClient(t *testing.T) {
	cell := func(late float64) Report {
		var rep Report
		rep.Cells = append(rep.Cells, struct {
			rig.BenchCell
			Window *Window `json:"window"`
		}{Window: &Window{Seconds: 1, LateSeconds: late}})
		return rep
	}
	online := func(late float64) Report {
		var rep Report
		rep.Online = &OnlineRun{Window: &Window{Seconds: 1, LateSeconds: late}}
		return rep
	}
	tests := []struct {
		name     string
		outs     []clientOut
		wantHost string
		wantLate float64
	}{
		{"all on time", []clientOut{{host: "a", threads: 2, rep: cell(0)}, {host: "b", threads: 2, rep: cell(0)}}, "", 0},
		{"offline, b late", []clientOut{{host: "a", threads: 2, rep: cell(0.01)}, {host: "b", threads: 2, rep: cell(6.5)}}, "b", 6.5},
		{"online, a late", []clientOut{{host: "a", threads: 1, rep: online(0.3)}, {host: "b", threads: 1, rep: online(0.2)}}, "a", 0.3},
		{"idle host not asked", []clientOut{{host: "a", threads: 0, rep: cell(9)}, {host: "b", threads: 1, rep: cell(0.05)}}, "b", 0.05},
	}
	for _, tt := range tests {
		host, late := latestClient(tt.outs)
		if host != tt.wantHost || late != tt.wantLate {
			t.Errorf("%s: got %q %.2f s, want %q %.2f s", tt.name, host, late, tt.wantHost, tt.wantLate)
		}
	}
}

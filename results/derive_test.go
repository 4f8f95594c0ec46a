package results

import (
	"strings"
	"testing"
)

func TestLinkWarnings(t *testing.T) {
	hosts := []HostSummary{
		{Name: "b", Network: &NetworkCheck{NoopOps: 1000}},
		{Name: "c", Network: &NetworkCheck{NoopOps: 1000}},
		{Name: "d"}, // no network check: nothing to judge
	}
	row := Row{Backend: "libaio", Pin: "none", Label: "no pin"}
	passes := []PassRecord{
		{Row: row, Threads: 8, Pass: 1, Clients: []ClientShare{{Host: "b", OpsPerSec: 500}, {Host: "c", OpsPerSec: 899}, {Host: "d", OpsPerSec: 5000}}},
		{Row: row, Threads: 32, Pass: 1, Clients: []ClientShare{{Host: "b", OpsPerSec: 950}, {Host: "c", OpsPerSec: 100}}},
	}
	got := linkWarnings(hosts, passes)
	if len(got) != 1 || !strings.Contains(got[0], "host b") || !strings.Contains(got[0], "95 %") || !strings.Contains(got[0], "t=32 pass 1") {
		t.Errorf("linkWarnings: got %q, want one warning for host b at 95 %% in t=32 pass 1", got)
	}
}

func TestReadScenarioIndexStaysInTheBundle(t *testing.T) {
	for _, tc := range []struct {
		index, wantErr string
	}{
		{`{"schema_version":2,"scenarios":[{"scenario":"storage","dir":"storage"}]}`, ""},
		{`{"schema_version":2,"scenarios":[{"scenario":"storage","dir":"../elsewhere"}]}`, `directory "../elsewhere" is not a directory of the bundle`},
		{`{"schema_version":2,"scenarios":[{"scenario":"storage","dir":"/tmp"}]}`, `directory "/tmp" is not`},
		{`{"schema_version":2,"scenarios":[{"scenario":"storage","dir":"a/b"}]}`, `directory "a/b" is not`},
		{`{"schema_version":2,"scenarios":[{"scenario":"storage","dir":".."}]}`, `directory ".." is not`},
		{`{"schema_version":2,"scenarios":[{"scenario":"storage"}]}`, `directory "" is not`},
		{`{"schema_version":3,"scenarios":[]}`, "schema_version 3"},
	} {
		dir := t.TempDir()
		if err := WriteFile(dir, FileScenarios, []byte(tc.index)); err != nil {
			t.Fatal(err)
		}
		_, err := ReadScenarioIndex(dir)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("ReadScenarioIndex(%s): got %v, want error %q", tc.index, err, tc.wantErr)
		}
	}
}

func TestMaxShare(t *testing.T) {
	a, b := 0.01, 0.02
	tests := []struct {
		name string
		x, y *float64
		want *float64
	}{
		{"neither read", nil, nil, nil},
		{"first only", &a, nil, &a},
		{"second only", nil, &b, &b},
		{"larger second", &a, &b, &b},
		{"larger first", &b, &a, &b},
	}
	for _, tt := range tests {
		if got := MaxShare(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestBesideShare: a cell's share of fio side by side is the median of
// its passes' ops/s ÷ the fio right after each; a pass without one stays
// out, and a cell with none has none.
func TestBesideShare(t *testing.T) {
	tests := []struct {
		name   string
		passes []PassRecord
		want   float64
	}{
		{"every pass beside fio", []PassRecord{{OpsPerSec: 90, FioBesideIOPS: 100}, {OpsPerSec: 80, FioBesideIOPS: 100}, {OpsPerSec: 120, FioBesideIOPS: 100}}, 0.9},
		{"a pass without fio stays out", []PassRecord{{OpsPerSec: 90, FioBesideIOPS: 100}, {OpsPerSec: 10}, {OpsPerSec: 80, FioBesideIOPS: 80}}, 0.95},
		{"none", []PassRecord{{OpsPerSec: 90}, {OpsPerSec: 80}}, 0},
	}
	for _, tt := range tests {
		var c Cell
		CellExtras(&c, tt.passes)
		if diff := c.BesideShare - tt.want; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("%s: got %v, want %v", tt.name, c.BesideShare, tt.want)
		}
	}
}

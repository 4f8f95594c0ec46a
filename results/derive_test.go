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

package latency

import (
	"errors"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestCheckAttached: against a cluster node the profile's --latency is
// turned off and said, an explicit --latency or any --slo is refused as a
// configuration error naming the node; against one server nothing
// changes.
func TestCheckAttached(t *testing.T) {
	const addr = "127.0.0.1:7000"
	cluster, single := plan.Attached{Cluster: true}, plan.Attached{}
	profile := plan.Config{Workload: results.Workload{ServerAddr: addr, Latency: true}}
	explicit := profile
	explicit.Given = []string{"latency"}
	slo := plan.Config{Workload: results.Workload{ServerAddr: addr, SLO: "p99=1ms"}}

	c := profile
	if note, err := (FixedRate{}).CheckAttached(&c, cluster); err != nil || c.Latency || !strings.Contains(note, "latency: off against a cluster") {
		t.Errorf("profile's --latency against a cluster: got note %q, err %v, latency %v; want it off and said", note, err, c.Latency)
	}
	c = profile
	if note, err := (FixedRate{}).CheckAttached(&c, single); err != nil || !c.Latency || note != "" {
		t.Errorf("--latency against one server: got note %q, err %v, latency %v; want it kept, unsaid", note, err, c.Latency)
	}
	for _, tt := range []struct {
		name string
		part plan.AttachChecker
		c    plan.Config
	}{
		{"--latency", FixedRate{}, explicit},
		{"--slo", Capacity{}, slo},
	} {
		c := tt.c
		if _, err := tt.part.CheckAttached(&c, cluster); !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), addr+" is a cluster node") {
			t.Errorf("%s against a cluster: got %v, want a configuration error naming %s", tt.name, err, addr)
		}
		if _, err := tt.part.CheckAttached(&c, single); err != nil {
			t.Errorf("%s against one server: got %v, want nil", tt.name, err)
		}
	}
}

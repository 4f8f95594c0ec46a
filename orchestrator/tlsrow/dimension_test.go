package tlsrow

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestTLSRows: TLS is a row dimension: --tls both doubles every row,
// plain first; on (or a rediss:// server) turns it on in every row; off
// and the default on one machine leave the rows plain.
func TestTLSRows(t *testing.T) {
	rows := []results.Row{{Backend: "libaio", Pin: plan.PinNone}, {Backend: "uring", Pin: plan.PinNone}}
	for _, tc := range []struct {
		cfg  plan.Config
		want string
	}{
		{plan.Config{Workload: results.Workload{TLS: Both}}, "libaio/none libaio/none/tls uring/none uring/none/tls"},
		{plan.Config{Workload: results.Workload{TLS: On}}, "libaio/none/tls uring/none/tls"},
		{plan.Config{Workload: results.Workload{ServerTLS: true}}, "libaio/none/tls uring/none/tls"},
		{plan.Config{Workload: results.Workload{TLS: Off}}, "libaio/none uring/none"},
		{plan.Config{}, "libaio/none uring/none"},
	} {
		var ids []string
		for _, r := range Rows(tc.cfg, rows) {
			ids = append(ids, r.ID())
		}
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("--tls %q (rediss %v): got rows %s, want %s", tc.cfg.TLS, tc.cfg.ServerTLS, got, tc.want)
		}
	}
}

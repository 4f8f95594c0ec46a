package pass

import (
	"math"
	"testing"

	"github.com/tierbench/tierbench/internal/cpustat"
)

// TestServerSteal: the steal of the server's CPUs is taken over its
// Cpus_allowed_list, every CPU's without one; a list that does not parse,
// a CPU the host has no line for, or no tick between the readings give
// nil.
func TestServerSteal(t *testing.T) {
	cpu := func(total, steal uint64) cpustat.Sample {
		return cpustat.Sample{TotalTicks: total, StealTicks: steal, HasSteal: true}
	}
	before := cpustat.Sample{TotalTicks: 2000, StealTicks: 20, HasSteal: true, PerCPU: map[int]cpustat.Sample{0: cpu(1000, 10), 1: cpu(1000, 10)}}
	after := cpustat.Sample{TotalTicks: 2200, StealTicks: 60, HasSteal: true, PerCPU: map[int]cpustat.Sample{0: cpu(1100, 50), 1: cpu(1100, 10)}}
	for _, tt := range []struct {
		cpus string
		want float64 // < 0: nil
	}{{"0", 0.4}, {"1", 0}, {"0-1", 0.2}, {"", 0.2}, {"0-", -1}, {"2", -1}} {
		got := serverSteal(before, after, tt.cpus)
		switch {
		case tt.want < 0 && got != nil:
			t.Errorf("CPUs %q: got %v, want nil", tt.cpus, *got)
		case tt.want >= 0 && (got == nil || math.Abs(*got-tt.want) > 1e-12):
			t.Errorf("CPUs %q: got %v, want %v", tt.cpus, got, tt.want)
		}
	}
	if got := serverSteal(before, before, "0"); got != nil {
		t.Errorf("no tick between the readings: got %v, want nil", *got)
	}
}

package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

// TestSLOMarkdown: the capacity table reads the search's result from its
// probes alone (named from the flag), marks a client-bound miss and one
// the host stalled above it, lists every probe, keeps the probes out of the fixed-rate table and
// draws them with the bound in the row's latency chart.
func TestSLOMarkdown(t *testing.T) {
	plan := referencePlan()
	plan.Workload.SLO = "p99=1ms"
	if len(plan.Rows) < 3 {
		t.Fatalf("the reference plan has %d rows, the test needs 3", len(plan.Rows))
	}
	row, other, third := plan.Rows[0], plan.Rows[1], plan.Rows[2]
	probe := func(row results.Row, n int, rate, p99 float64, clientBound bool) results.LatencyRecord {
		return results.LatencyRecord{Kind: "latency", Row: row, SLO: "p99=1ms", Probe: n, OfferedOpsPerSec: rate, AchievedOpsPerSec: rate,
			P50Micros: p99 / 4, P99Micros: p99, P999Micros: 2 * p99, Pacing: &results.Pacing{ClientBound: clientBound}}
	}
	steps := bundletest.LatencySteps(plan)
	steps = append(steps, probe(row, 1, 8e6, 40_000, false), probe(row, 2, 4e6, 800, false), probe(row, 3, 5.657e6, 1500, false),
		probe(row, 4, 4.757e6, 950, true), probe(row, 5, 5.187e6, 1200, false),
		probe(other, 1, 6e6, 3000, true), probe(other, 2, 3e6, 700, false))
	frozen := probe(third, 1, 7e6, 2500, false)
	frozen.HostFrozenShare = new(float64)
	*frozen.HostFrozenShare = 0.04
	steps = append(steps, frozen, probe(third, 2, 3.5e6, 600, false))
	res := results.Results{Plan: plan, Latency: steps}
	got := sloMarkdown(res)
	for _, want := range []string{
		"## GET ops/s at p99 ≤ 1 ms",
		"| Libaio | " + row.Label + " | 4.76 M | 950 µs | 5.19 M | 1.2 ms | 5 |",
		"| 3.00 M | 700 µs | 6.00 M | 3 ms client-bound† | 2 |",
		"client-bound†: the client could not keep that probe's schedule",
		"| 4 | 4.76 M | 4.76 M | 237.5 µs | 950 µs | 1.9 ms | met |",
		"| 3.50 M | 600 µs | 7.00 M | 2.5 ms host-stalled§ | 2 |",
		"host-stalled§: the host took 0.5 % or more of the CPU time during that probe",
		"| 1 | 7.00 M | 7.00 M | 625 µs | 2.5 ms | 5 ms | not met: host-stalled |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("sloMarkdown lacks %q:\n%s", want, got)
		}
	}
	if lat := latencyMarkdown(res); strings.Count(lat, "\n| Libaio") != len(bundletest.LatencySteps(plan)) {
		t.Errorf("latencyMarkdown: want the %d fixed-rate steps alone:\n%s", len(bundletest.LatencySteps(plan)), lat)
	}
	chart := latencyCharts(res)[latencyChartName(row)]
	if len(chart.Levels) != 1 || chart.Levels[0].Y != 1000 || len(chart.Series[1].Points) != len(bundletest.LatencySteps(plan))+5 {
		t.Errorf("latency chart: got levels %+v and %d p99 points; want the 1 ms bound and every step and probe", chart.Levels, len(chart.Series[1].Points))
	}
	for i, p := range chart.Series[1].Points[1:] {
		if p.X < chart.Series[1].Points[i].X {
			t.Errorf("latency chart: point %d at %.0f after %.0f, want them in the order of achieved rate", i+1, p.X, chart.Series[1].Points[i].X)
		}
	}
	plan.Workload.SLO = ""
	if got := sloMarkdown(results.Results{Plan: plan, Latency: steps}); got != "" {
		t.Errorf("sloMarkdown without --slo: got\n%s\nwant nothing", got)
	}
}

package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

// TestTableServersSideBySide: a plan with servers side by side gets a
// server column, one line per server; one without keeps the reference
// layout.
func TestTableServersSideBySide(t *testing.T) {
	plan := results.Plan{Workload: results.Workload{Threads: []int{1, 2}}}
	for _, s := range []string{"tierbench", "redis"} {
		plan.Rows = append(plan.Rows, results.Row{Backend: "memory", Pin: "none", Label: "no pin", Server: s})
	}
	cells := []results.Cell{
		{Row: plan.Rows[0], Threads: 1, Passes: 1, Median: 100_000}, {Row: plan.Rows[0], Threads: 2, Passes: 1, Median: 200_000},
		{Row: plan.Rows[1], Threads: 1, Passes: 1, Median: 90_000}, {Row: plan.Rows[1], Threads: 2, Passes: 1, Median: 150_000},
	}
	got, err := Table(plan, cells)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| server    | backend | NUMA   | t=1 ", "| tierbench | Memory  | no pin | 100 K", "| redis     | Memory  | no pin | 90 K"} {
		if !strings.Contains(got, want) {
			t.Errorf("got table\n%s\nwant a line containing %q", got, want)
		}
	}
	plan.Rows[0].Server, plan.Rows[1].Server = "", ""
	plan.Rows = plan.Rows[:1]
	got, err = Table(plan, cells[:2])
	if err != nil || strings.Contains(got, "server") {
		t.Errorf("got %v, table\n%s\nwant no server column", err, got)
	}
	if got := rowName(results.Row{Backend: "memory", Server: "redis"}); got != "redis Memory" {
		t.Errorf("rowName: got %q, want %q", got, "redis Memory")
	}
	if got := latencyChartName(results.Row{Backend: "memory", Pin: "none", Server: "redis"}); got != "latency-redis-memory-none.svg" {
		t.Errorf("latencyChartName: got %q", got)
	}
}

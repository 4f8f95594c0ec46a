package report

import (
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

// TestTLSColumnAndCost: a plan of rows without and with TLS gets a TLS
// column stating each row's, and report.md's section sets each cell's
// ops/sec and server CPU per GET side by side; a plan without TLS keeps
// the reference layout and has no such section.
func TestTLSColumnAndCost(t *testing.T) {
	plain := results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
	tls := plain
	tls.TLS = true
	ev := func(us float64) results.CellEvidence { return results.CellEvidence{ServerCPUMicrosPerGet: us} }
	for _, tt := range []struct {
		name      string
		rows      []results.Row
		cells     []results.Cell
		wantTable []string
		wantCost  []string
	}{
		{
			name: "both",
			rows: []results.Row{plain, tls},
			cells: []results.Cell{
				{Row: plain, Threads: 4, Passes: 2, Median: 200_000, CellEvidence: ev(2.5)},
				{Row: tls, Threads: 4, Passes: 2, Median: 150_000, CellEvidence: ev(3.75)},
			},
			wantTable: []string{"| backend | NUMA   | TLS | t=4   |", "| Uring   | no pin | off | 200 K |", "| Uring   | no pin | on  | 150 K |"},
			wantCost:  []string{"## What TLS costs", "| Uring | no pin | 4 | 200 K | 150 K | 0.75 | 2.50 µs | 3.75 µs | +1.25 µs |"},
		},
		{
			name:      "plain only",
			rows:      []results.Row{plain},
			cells:     []results.Cell{{Row: plain, Threads: 4, Passes: 2, Median: 200_000}},
			wantTable: []string{"| backend | NUMA   | t=4   |", "| Uring   | no pin | 200 K |"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := results.Plan{Rows: tt.rows, Workload: results.Workload{Threads: []int{4}}}
			table, err := Table(plan, tt.cells)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.wantTable {
				if !strings.Contains(table, want) {
					t.Errorf("got table\n%s\nwant a line containing %q", table, want)
				}
			}
			cost := tlsMarkdown(results.Results{Plan: plan, Cells: tt.cells})
			if len(tt.wantCost) == 0 && cost != "" {
				t.Errorf("got a TLS section without TLS rows:\n%s", cost)
			}
			for _, want := range tt.wantCost {
				if !strings.Contains(cost, want) {
					t.Errorf("got section\n%s\nwant a line containing %q", cost, want)
				}
			}
		})
	}
}

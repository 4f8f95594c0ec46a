package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

// verdictRows are the reference's four rows.
var (
	libaioPinned = results.Row{Backend: "libaio", Pin: results.PinPinned, Label: "srv node-0 / cli node-1"}
	libaioFree   = results.Row{Backend: "libaio", Pin: "none", Label: "no pin"}
	uringPinned  = results.Row{Backend: "uring", Pin: results.PinPinned, Label: "srv node-0 / cli node-1"}
	uringFree    = results.Row{Backend: "uring", Pin: "none", Label: "no pin"}
)

// verdictCell is a shown cell of 3 passes held against ceiling (0: none).
func verdictCell(row results.Row, threads int, median, ceiling float64) results.Cell {
	c := results.Cell{Row: row, Threads: threads, Passes: 3, Median: median}
	if ceiling > 0 {
		c.Ceiling, c.FioShare = ceiling, median/ceiling
	}
	return c
}

// verdictResults is a bundle's results with the rows and thread counts
// of its cells, in their order, and the host's ceiling.
func verdictResults(ceiling float64, cells ...results.Cell) results.Results {
	var plan results.Plan
	for _, c := range cells {
		if !containsRow(plan.Rows, c.Row) {
			plan.Rows = append(plan.Rows, c.Row)
		}
		if !containsInt(plan.Workload.Threads, c.Threads) {
			plan.Workload.Threads = append(plan.Workload.Threads, c.Threads)
		}
	}
	plan.Workload.Passes = 3
	return results.Results{Plan: plan, Cells: cells, FioIOPS512: ceiling}
}

func containsRow(rows []results.Row, r results.Row) bool {
	for _, x := range rows {
		if x == r {
			return true
		}
	}
	return false
}

func containsInt(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

// TestCeilingVerdict: the line under the table names the row that held
// the least of its ceiling at its most connections, with its course and
// share, and the row that held the most; none without a ceiling.
func TestCeilingVerdict(t *testing.T) {
	const ceiling = 273e3
	excluded := func(c results.Cell, why string) results.Cell { c.Excluded = why; return c }
	tests := []struct {
		name string
		res  results.Results
		want string // "" = no ceiling line
	}{
		{
			// The quick run: uring pinned fell, libaio pinned held.
			name: "slowest row fell",
			res: verdictResults(ceiling,
				verdictCell(libaioPinned, 8, 150e3, ceiling), verdictCell(libaioPinned, 64, 240e3, ceiling),
				verdictCell(uringPinned, 8, 185e3, ceiling), verdictCell(uringPinned, 64, 101e3, ceiling)),
			want: "- **Slowest against its ceiling:** Uring srv node-0 / cli node-1 fell from 185 K at t=8 to 101 K at t=64, 37.0 % of its 273 K ceiling, " +
				"while Libaio srv node-0 / cli node-1 held 240 K at t=64, 87.9 % of its 273 K ceiling.",
		},
		{
			// A drop within 5 % is not a fall.
			name: "slowest row held",
			res: verdictResults(ceiling,
				verdictCell(libaioFree, 8, 200e3, ceiling), verdictCell(libaioFree, 64, 191e3, ceiling),
				verdictCell(uringFree, 8, 100e3, ceiling), verdictCell(uringFree, 64, 250e3, ceiling)),
			want: "- **Slowest against its ceiling:** Libaio no pin held 191 K at t=64, 70.0 % of its 273 K ceiling, " +
				"while Uring no pin held 250 K at t=64, 91.6 % of its 273 K ceiling.",
		},
		{
			// A row is taken at its last shown cell, here t=32: its
			// t=64 is kept out.
			name: "last cell kept out",
			res: verdictResults(ceiling,
				verdictCell(libaioPinned, 32, 120e3, ceiling), verdictCell(libaioPinned, 64, 130e3, ceiling),
				verdictCell(uringPinned, 32, 200e3, ceiling), excluded(verdictCell(uringPinned, 64, 50e3, ceiling), results.ExcludedMisses)),
			want: "- **Slowest against its ceiling:** Libaio srv node-0 / cli node-1 held 130 K at t=64, 47.6 % of its 273 K ceiling, " +
				"while Uring srv node-0 / cli node-1 held 200 K at t=32, 73.3 % of its 273 K ceiling.",
		},
		{
			// A pinned row is held against its own ceiling.
			name: "each row its own ceiling",
			res: verdictResults(ceiling,
				verdictCell(libaioPinned, 64, 120e3, 150e3), verdictCell(libaioFree, 64, 200e3, ceiling)),
			want: "- **Slowest against its ceiling:** Libaio no pin held 200 K at t=64, 73.3 % of its 273 K ceiling, " +
				"while Libaio srv node-0 / cli node-1 held 120 K at t=64, 80.0 % of its 150 K ceiling.",
		},
		{
			name: "one row",
			res:  verdictResults(ceiling, verdictCell(uringFree, 4, 70e3, ceiling), verdictCell(uringFree, 8, 60e3, ceiling)),
			want: "- **Against its ceiling:** Uring no pin fell from 70 K at t=4 to 60 K at t=8, 22.0 % of its 273 K ceiling.",
		},
		{
			name: "no ceiling",
			res:  verdictResults(0, verdictCell(libaioFree, 8, 150e3, 0), verdictCell(uringFree, 8, 185e3, 0)),
		},
		{
			name: "no cell shown",
			res:  verdictResults(ceiling, excluded(verdictCell(libaioFree, 8, 150e3, ceiling), results.ExcludedMemoryServed)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ceilingVerdict(tt.res); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			all := verdictMarkdown(tt.res)
			if tt.want == "" && strings.Contains(all, "ceiling:**") {
				t.Errorf("verdict without a ceiling has a ceiling line:\n%s", all)
			}
			if tt.want != "" && !strings.HasPrefix(all, tt.want+"\n") {
				t.Errorf("verdict does not open with the ceiling line:\n%s", all)
			}
		})
	}
}

// TestMarkedCellsVerdict: every cell kept out is named under its mark
// with the mark's reason and the figure that marked it; shown cells with
// a mark are named too; a table without any has one line saying so.
func TestMarkedCellsVerdict(t *testing.T) {
	const ceiling = 8.2e6
	memServed := verdictCell(libaioFree, 8, 1.38e6, ceiling)
	memServed.Excluded, memServed.ReadBytesPerGet = results.ExcludedMemoryServed, 3
	missed := verdictCell(uringPinned, 64, 6.89e6, ceiling)
	missed.Excluded, missed.MissRatio = results.ExcludedMisses, 0.01
	failed := results.Cell{Row: uringFree, Threads: 64, Passes: 1, Excluded: results.ExcludedFailed}
	unmeasured := results.Cell{Row: uringFree, Threads: 64}
	above := verdictCell(libaioPinned, 64, 8.5e6, ceiling)
	above.AboveCeiling = true
	cpuBound := verdictCell(libaioPinned, 32, 5e6, ceiling)
	cpuBound.ServerCPUBound, cpuBound.ServerCPUShare = true, 0.96
	steal := 0.031
	stolen := verdictCell(uringPinned, 8, 1.8e6, ceiling)
	stolen.ServerStealShare = &steal
	shown := verdictCell(uringPinned, 32, 6e6, ceiling)

	tests := []struct {
		name         string
		cells        []results.Cell
		failures     []results.FailRecord
		want, absent []string
	}{
		{
			name:  "kept out",
			cells: []results.Cell{memServed, missed, shown},
			want: []string{
				"- Kept out of the table: 2 of the 3 planned cells (1 shown).",
				"  - mem-served*: the server read less than 461 B (90 % of a 512 B sector) from its device per GET: the cell was served from memory, not storage-bound, and is kept out of the table: Libaio no pin t=8 (3.0 B per GET).",
				"  - misses*: a GET missed: a miss is answered without a device read, so the cell is kept out of the table: Uring srv node-0 / cli node-1 t=64 (1.00 % missed).",
			},
			absent: []string{"Every planned cell", "above-ceiling", "server-cpu-bound", "steal"},
		},
		{
			name:     "failed and not measured",
			cells:    []results.Cell{failed, shown},
			failures: []results.FailRecord{{Row: uringFree, Error: "the server stopped answering"}},
			want: []string{
				"- Kept out of the table: 1 of the 2 planned cells (1 shown).",
				"  - failed*: the row failed before all its passes were measured (report.md and cells.jsonl say why); --resume retries it: Uring no pin t=64 (the server stopped answering).",
			},
		},
		{
			name:  "not measured",
			cells: []results.Cell{unmeasured, shown},
			want:  []string{"  - —: not measured (the run, or its row, stopped first): Uring no pin t=64."},
		},
		{
			name:  "shown with marks",
			cells: []results.Cell{above, cpuBound, stolen, shown},
			want: []string{
				"- Every planned cell is in the table.",
				"- above-ceiling: shown, but above 102 % of the higher of the ceiling and fio measured again at the cell's depth (the disk evidence says why): Libaio srv node-0 / cli node-1 t=64 (103.7 % of its 8.20 M ceiling).",
				"- server-cpu-bound: shown, but the server used 90 % or more of its CPUs in a pass, so the figure is its CPU's limit, not the disk's: Libaio srv node-0 / cli node-1 t=32 (96 % of cpus unknown).",
				"- steal: the hypervisor took 2 % or more of the server's CPU time in a pass, so a low figure there may be the host's: Uring srv node-0 / cli node-1 t=8 (3.1 %).",
			},
			absent: []string{"Kept out"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := verdictResults(ceiling, tt.cells...)
			res.Failures = tt.failures
			got := verdictMarkdown(res)
			for _, want := range tt.want {
				if !strings.Contains(got, want+"\n") {
					t.Errorf("verdict lacks the line\n%s\ngot:\n%s", want, got)
				}
			}
			for _, no := range tt.absent {
				if strings.Contains(got, no) {
					t.Errorf("verdict has %q:\n%s", no, got)
				}
			}
			if !strings.HasSuffix(got, "[docs/methodology.md]("+MethodologyURL+").\n\n") {
				t.Errorf("verdict does not end with the one link to the definitions:\n%s", got)
			}
		})
	}
}

// TestVerdictNamesSome: a mark on many cells names maxNamed and counts
// the rest, so its line stays a line.
func TestVerdictNamesSome(t *testing.T) {
	var cells []results.Cell
	for _, threads := range []int{1, 2, 4, 8, 16, 32, 48, 64} {
		c := verdictCell(uringFree, threads, 1e5, 1e6)
		c.Excluded, c.ReadBytesPerGet = results.ExcludedMemoryServed, 1
		cells = append(cells, c)
	}
	got := verdictMarkdown(verdictResults(1e6, cells...))
	if want := "Uring no pin t=32 (1.0 B per GET); and 2 more."; !strings.Contains(got, want) {
		t.Errorf("got\n%s\nwant the line to end %q", got, want)
	}
}

// TestReportGolden renders the reference bundle (with its fio baseline)
// and requires report.md to be testdata/report.golden.md, whose first
// screen is the title and host line, the table and the verdict; -update
// rewrites it when report.md changes on purpose.
func TestReportGolden(t *testing.T) {
	dir, _ := renderedBundle(t)
	got, err := os.ReadFile(filepath.Join(dir, results.FileReport))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("report.md differs from %s:\ngot:\n%s", golden, got)
	}
	// The finding is on the first screen, the definitions are not.
	lines := strings.Split(string(got), "\n")
	first := strings.Join(lines[:min(25, len(lines))], "\n")
	for _, want := range []string{"# tierbench run ", "Host: ", "| backend | NUMA", "**Slowest against its ceiling:**", "Kept out of the table:", MethodologyURL} {
		if !strings.Contains(first, want) {
			t.Errorf("report.md's first 25 lines lack %q:\n%s", want, first)
		}
	}
	for _, definition := range []string{"Device bytes are the server's", "During every measured GET phase", "Steal is the share", "(beside: X %):", "fio CPU is its jobs'"} {
		if strings.Contains(string(got), definition) {
			t.Errorf("report.md repeats the definition %q, docs/methodology.md's", definition)
		}
	}
}

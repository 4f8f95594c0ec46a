package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// Marks written in place of an excluded cell; the notes under the table
// explain them.
var excludedMark = map[string]string{
	results.ExcludedMisses:        "misses*",
	results.ExcludedMemoryServed:  "mem-served*",
	results.ExcludedUnverified:    "unverified*",
	results.ExcludedFailed:        "failed*",
	results.ExcludedRefused:       "refused*",
	results.ExcludedDeviceRead:    "device-read*",
	results.ExcludedNoDeviceReads: "no-device-reads*",
}

// Table writes the reference layout
// `| backend | NUMA | TLS | t=8 | t=32 | t=48 | t=64 |` as Markdown, one
// line per planned row, followed by a note for each kind of excluded
// cell; a run that set servers side by side gets a server column first.
// The TLS column (on or off: whether the row's clients spoke TLS) is
// there when a row had TLS on; a table without it is plain TCP in every
// row, as every bundle from before TLS.
func Table(plan results.Plan, cells []results.Cell) (string, error) {
	grid, err := tableGrid(plan, cells)
	if err != nil {
		return "", err
	}
	var notes []string
	for _, kind := range markOrder {
		if slices.ContainsFunc(cells, func(c results.Cell) bool { return c.Excluded == kind }) {
			notes = append(notes, markNote(plan, kind))
		}
	}
	if len(notes) > 0 {
		grid += "\n" + strings.Join(notes, "\n") + "\n"
	}
	return grid, nil
}

// tableGrid is the table of Table without the notes under it: report.md
// names each marked cell with its mark's reason in its verdict instead.
func tableGrid(plan results.Plan, cells []results.Cell) (string, error) {
	header := []string{"backend", "NUMA"}
	tlsCol := hasTLS(plan)
	if tlsCol {
		header = append(header, "TLS")
	}
	servers := hasServers(plan)
	if servers {
		header = append([]string{"server"}, header...)
	}
	for _, t := range plan.Workload.Threads {
		header = append(header, fmt.Sprintf("t=%d", t))
	}
	byKey := map[string]results.Cell{}
	for _, c := range cells {
		byKey[results.CellKey(c.Row, c.Threads)] = c
	}
	var buf bytes.Buffer
	table := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	table.Header(header)
	for _, row := range plan.Rows {
		line := []string{human.Title(row.Backend), row.Label}
		if tlsCol {
			line = append(line, onOff(row.TLS))
		}
		if servers {
			line = append([]string{row.ServerName()}, line...)
		}
		for _, t := range plan.Workload.Threads {
			c, ok := byKey[results.CellKey(row, t)]
			switch {
			case c.Excluded != "":
				line = append(line, excludedMark[c.Excluded])
			case !ok || c.Passes == 0:
				line = append(line, "—")
			default:
				line = append(line, cellText(c))
			}
		}
		if err := table.Append(line); err != nil {
			return "", fmt.Errorf("report: table row %v: %w", line, err)
		}
	}
	if err := table.Render(); err != nil {
		return "", fmt.Errorf("report: render table: %w", err)
	}
	return buf.String(), nil
}

// markOrder is the order of the notes under the table.
var markOrder = []string{
	results.ExcludedMemoryServed, results.ExcludedMisses, results.ExcludedRefused, results.ExcludedUnverified,
	results.ExcludedFailed, results.ExcludedDeviceRead, results.ExcludedNoDeviceReads,
}

// markNote is the note under the table for the cells kept out as kind:
// its mark, a colon, and why, with the plan's thresholds.
func markNote(plan results.Plan, kind string) string {
	switch kind {
	case results.ExcludedMemoryServed:
		return fmt.Sprintf("mem-served*: the server read less than %.0f B (%.0f %% of a %d B sector) from its device per GET: the cell was served from memory, not storage-bound, and is kept out of the table.", results.MinSectorShare*results.SectorBytes, 100*results.MinSectorShare, results.SectorBytes)
	case results.ExcludedMisses:
		limit := "a GET missed"
		if plan.MaxMisses > 0 {
			limit = fmt.Sprintf("more than %s of the GETs missed (--max-miss-ratio %g)", human.PercentBeside(plan.MaxMisses, 0), plan.MaxMisses)
		}
		return fmt.Sprintf("misses*: %s: a miss is answered without a device read, so the cell is kept out of the table.", limit)
	case results.ExcludedRefused:
		return "refused*: the row was refused before measuring (a partial load, a sampled GET that missed, or a pid that is not the server); report.md says why."
	case results.ExcludedUnverified:
		return "unverified*: the server's pid is unknown (give --server-pid), so its device reads could not be counted; the cell is kept out of the table."
	case results.ExcludedFailed:
		return "failed*: the row failed before all its passes were measured (report.md and cells.jsonl say why); --resume retries it."
	case results.ExcludedDeviceRead:
		return fmt.Sprintf("device-read*: the server read %.1f B or more (%.0f %% of a %d B sector) per GET through the kernel (/proc/<pid>/io): in scenario 1 the data was not all in RAM, in scenario 3 a native device, not the in-RAM one, is under the store; the cell is kept out of the table.", results.MaxMemorySectorShare*results.SectorBytes, 100*results.MaxMemorySectorShare, results.SectorBytes)
	case results.ExcludedNoDeviceReads:
		return fmt.Sprintf("no-device-reads*: the server's INFO store counted fewer than %.1f device reads per GET: reads did not reach the localmemory device, and the cell is kept out of the table.", results.MinDeviceReadsPerGet)
	}
	return excludedMark[kind] + ": kept out of the table (" + kind + ")."
}

// rowName names a row in the report's sentences and tables: its backend,
// after its server's name when the run set servers side by side.
func rowName(row results.Row) string {
	if row.Server == "" {
		return human.Title(row.Backend)
	}
	return row.Server + " " + human.Title(row.Backend)
}

// latencyChartName is the file of a row's latency chart.
func latencyChartName(row results.Row) string {
	if row.Server == "" {
		return fmt.Sprintf("latency-%s-%s.svg", row.Backend, row.Pin)
	}
	return fmt.Sprintf("latency-%s-%s-%s.svg", row.Server, row.Backend, row.Pin)
}

// hasServers says whether the plan sets servers side by side (rows with
// a Server): the table then has a server column.
func hasServers(plan results.Plan) bool {
	for _, r := range plan.Rows {
		if r.Server != "" {
			return true
		}
	}
	return false
}

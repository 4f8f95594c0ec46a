package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// MethodologyURL is where the columns, marks and sections of report.md
// are defined, once; every report links it instead of defining them.
const MethodologyURL = "https://github.com/tierbench/tierbench/blob/main/docs/methodology.md"

// fallShare: a row whose last cell reads under this share of its best
// is said to fall; a smaller drop is within the spread of passes that
// the ladder also treats as noise (5 %).
const fallShare = 0.95

// maxNamed is how many cells a verdict line names before it counts the
// rest: the line stays one line on a screen.
const maxNamed = 6

// leadLine is the line under report.md's title: the host in a line
// (hostcheck.HostLine), its ceiling and the workload's shape.
func leadLine(res results.Results, pre results.Preflight, preRaw []byte) string {
	var host string
	var rep hostcheck.Report
	switch {
	case len(res.Hosts) > 0:
		names := make([]string, len(res.Hosts))
		for i, h := range res.Hosts {
			names[i] = fmt.Sprintf("%s (%s)", h.Name, strings.Join(h.Roles, " and "))
		}
		host = fmt.Sprintf("Across %d hosts: %s", len(res.Hosts), strings.Join(names, ", "))
	case len(pre.Fingerprint) > 0 && json.Unmarshal(preRaw, &rep) == nil:
		host = "Host: " + hostcheck.HostLine(rep)
	default:
		host = fmt.Sprintf("Host: no fingerprint in this bundle (%d NUMA node(s) seen by the run)", res.Plan.Nodes)
	}
	c := res.Plan.Workload
	s := host + "."
	if res.FioIOPS512 > 0 {
		s += fmt.Sprintf(" fio ceiling %s IOPS at 512 B.", human.Ops(res.FioIOPS512))
	}
	scenario := results.ScenarioTitle[c.ScenarioName()]
	if scenario == "" || c.ServerAddr != "" {
		scenario = "Server at " + orDash(c.ServerAddr)
	} else {
		// "2. NVMe storage-bound — …" reads "Scenario 2, NVMe storage-bound — …".
		scenario = "Scenario " + strings.Replace(scenario, ". ", ", ", 1)
	}
	return fmt.Sprintf("%s %s: %d keys × %d B, client -b %d, median of %d × %d s passes per cell.",
		s, scenario, c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), c.Batch, c.Passes, c.CellSeconds)
}

// verdictMarkdown is the lines under report.md's table that say what it
// found: the slowest row against its ceiling, every cell kept out with its
// mark's reason, and every shown cell flagged, each named; then the one
// link to where the columns and marks are defined.
func verdictMarkdown(res results.Results) string {
	var lines []string
	if l := ceilingVerdict(res); l != "" {
		lines = append(lines, l)
	} else if res.FioIOPS512 <= 0 {
		lines = append(lines, "- "+strings.TrimSpace(noCeilingSentence(res.Plan.Workload)))
	}
	lines = append(lines, keptOutVerdict(res)...)
	lines = append(lines, flaggedVerdict(res)...)
	if len(res.LinkWarnings) > 0 {
		lines = append(lines, "- **Network:** "+strings.Join(res.LinkWarnings, "; ")+".")
	}
	return strings.Join(lines, "\n") + "\n\nWhat each column and mark means, and how every number below is earned: [docs/methodology.md](" + MethodologyURL + ").\n\n"
}

// standing is a row's shown cells held against a ceiling: its best cell
// and its last (most connections), as the table shows them.
type standing struct {
	row        results.Row
	best, last results.Cell
}

// standings are the rows with a shown cell held against a ceiling, in
// the plan's order.
func standings(res results.Results) []standing {
	var out []standing
	for _, row := range res.Plan.Rows {
		var st standing
		found := false
		for _, t := range res.Plan.Workload.Threads {
			c, ok := findCell(res.Cells, row, t)
			if !ok || c.Passes == 0 || c.Excluded != "" || c.Ceiling <= 0 {
				continue
			}
			if !found || c.Median > st.best.Median {
				st.best = c
			}
			st.last, found = c, true
		}
		if found {
			st.row = row
			out = append(out, st)
		}
	}
	return out
}

// ceilingVerdict names the row that held the least of its ceiling at the
// most connections it was shown at, and, beside it, the row that held the
// most: "Uring srv node-0 / cli node-1 fell from 185 K at t=8 to 101 K at
// t=64, 37.0 % of its 273 K ceiling, while …". "" without a ceiling.
func ceilingVerdict(res results.Results) string {
	sts := standings(res)
	if len(sts) == 0 {
		return ""
	}
	share := func(s standing) float64 { return s.last.FioShare }
	slow := slices.MinFunc(sts, func(a, b standing) int { return cmpFloat(share(a), share(b)) })
	if len(sts) == 1 {
		return "- **Against its ceiling:** " + standingText(slow) + "."
	}
	fast := slices.MaxFunc(sts, func(a, b standing) int { return cmpFloat(share(a), share(b)) })
	s := "- **Slowest against its ceiling:** " + standingText(slow)
	if fast.row != slow.row {
		s += ", while " + standingText(fast)
	}
	return s + "."
}

// standingText is a row's course to its last shown cell, against that
// cell's ceiling.
func standingText(s standing) string {
	name := rowTitle(s.row)
	last := s.last
	of := fmt.Sprintf("%.1f %% of its %s ceiling", 100*last.FioShare, human.Ops(last.Ceiling))
	if last.Threads != s.best.Threads && last.Median < fallShare*s.best.Median {
		return fmt.Sprintf("%s fell from %s at t=%d to %s at t=%d, %s", name, human.Ops(s.best.Median), s.best.Threads, human.Ops(last.Median), last.Threads, of)
	}
	return fmt.Sprintf("%s held %s at t=%d, %s", name, human.Ops(last.Median), last.Threads, of)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rowTitle names a row in a verdict: its backend (after its server's
// name), its NUMA label and, for a TLS row, TLS.
func rowTitle(row results.Row) string {
	s := rowName(row) + " " + row.Label
	if row.TLS {
		s += " TLS"
	}
	return s
}

// keptOutVerdict is a line saying how many planned cells the table keeps
// out, then one line per mark: its reason (the note under table.md) and
// the cells it marks, each with the figure that marked it.
func keptOutVerdict(res results.Results) []string {
	kept, shown := KeptOut(res)
	if len(kept) == 0 {
		return []string{"- Every planned cell is in the table."}
	}
	lines := []string{fmt.Sprintf("- Kept out of the table: %d of the %d planned cells (%d shown).", len(kept), len(kept)+shown, shown)}
	var kinds []string
	for _, c := range res.Cells {
		if k := keptKind(c); k != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	for _, kind := range kinds {
		var named []string
		for _, c := range res.Cells {
			if keptKind(c) == kind {
				named = append(named, cellTitle(c)+keptFigure(res, c))
			}
		}
		reason := "—: not measured (the run, or its row, stopped first)."
		if kind != notMeasured {
			reason = markNote(res.Plan, kind)
		}
		lines = append(lines, "  - "+strings.TrimSuffix(reason, ".")+": "+nameSome(named)+".")
	}
	return lines
}

// notMeasured is keptKind's name for a planned cell with no pass.
const notMeasured = "not measured"

// keptKind is why a cell is not in the table: its exclusion, notMeasured,
// or "" for a shown cell.
func keptKind(c results.Cell) string {
	switch {
	case c.Excluded != "":
		return c.Excluded
	case c.Passes == 0:
		return notMeasured
	}
	return ""
}

// keptFigure is the figure that kept a cell out, in parentheses, or why
// its row failed; "" where the mark says it all.
func keptFigure(res results.Results, c results.Cell) string {
	switch c.Excluded {
	case results.ExcludedMemoryServed, results.ExcludedDeviceRead:
		return fmt.Sprintf(" (%.1f B per GET)", c.ReadBytesPerGet)
	case results.ExcludedMisses:
		return fmt.Sprintf(" (%s missed)", human.PercentBeside(c.MissRatio, res.Plan.MaxMisses))
	case results.ExcludedFailed, results.ExcludedRefused:
		for _, f := range res.Failures {
			if f.Row == c.Row {
				return " (" + clipText(f.Error, 160) + ")"
			}
		}
	}
	return ""
}

// flaggedVerdict names the shown cells that carry a mark beside their
// figure: above the ceiling, bound by the server's CPU, or with steal.
func flaggedVerdict(res results.Results) []string {
	var above, cpu, steal []string
	for _, c := range res.Cells {
		if c.Passes == 0 || c.Excluded != "" {
			continue
		}
		if c.AboveCeiling {
			above = append(above, fmt.Sprintf("%s (%.1f %% of its %s ceiling)", cellTitle(c), 100*c.FioShare, human.Ops(c.Ceiling)))
		}
		if c.ServerCPUBound {
			cpu = append(cpu, fmt.Sprintf("%s (%.0f %% of %s)", cellTitle(c), 100*c.ServerCPUShare, cpusOf(res, c.Row)))
		}
		if stealMarked(c) {
			steal = append(steal, fmt.Sprintf("%s (%.1f %%)", cellTitle(c), 100**c.Steal()))
		}
	}
	var lines []string
	if len(above) > 0 {
		lines = append(lines, fmt.Sprintf("- above-ceiling: shown, but above %.0f %% of the higher of the ceiling and fio measured again at the cell's depth (the disk evidence says why): %s.",
			100*results.AboveCeilingTolerance, nameSome(above)))
	}
	if len(cpu) > 0 {
		lines = append(lines, fmt.Sprintf("- server-cpu-bound: shown, but the server used %.0f %% or more of its CPUs in a pass, so the figure is its CPU's limit, not the disk's: %s.",
			100*results.ServerCPUBoundShare, nameSome(cpu)))
	}
	if len(steal) > 0 {
		lines = append(lines, fmt.Sprintf("- steal: the hypervisor took %.0f %% or more of the server's CPU time in a pass, so a low figure there may be the host's: %s.",
			100*results.CellStealMark, nameSome(steal)))
	}
	return lines
}

// cellTitle names a cell in a verdict: its row and thread count.
func cellTitle(c results.Cell) string {
	return fmt.Sprintf("%s t=%d", rowTitle(c.Row), c.Threads)
}

// nameSome joins up to maxNamed names and counts the rest.
func nameSome(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(names[:maxNamed], "; "), len(names)-maxNamed)
}

// clipText cuts s to n bytes at a rune boundary, marking the cut.
func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

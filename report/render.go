package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/cpulist"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// Render writes results.json, table.md, report.md and the charts of the
// bundle at dir from its raw records (results.Derive), then seals it
// (results.Seal: SHA256SUMS last), and returns the table. It is the
// run's: it checks no old sums, since the run wrote the records; a reader
// renders again through Rerender. A --scenario all bundle is rendered
// scenario by scenario, with a report.md at its top (WriteIndex); the
// table returned is then each scenario's under its heading.
func Render(dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("report: no bundle directory")
	}
	if IsAll(dir) {
		return renderAll(dir, func(string) *results.Signing { return nil })
	}
	return render(dir, nil)
}

// Verify checks the bundle at dir against the checksums and medians its
// results.json records (results.Verify), printing one line per finding;
// a --scenario all bundle is checked scenario by scenario.
func Verify(dir string, w io.Writer) error {
	if !IsAll(dir) {
		return results.Verify(dir, w)
	}
	index, err := results.ReadScenarioIndex(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range index.Scenarios {
		if err := results.Verify(filepath.Join(dir, e.Dir), w); err != nil {
			errs = append(errs, fmt.Errorf("scenario %s: %w", e.Scenario, err))
		}
	}
	sealed, err := verifyTop(dir, w)
	if err != nil {
		errs = append(errs, err)
	}
	if err := verifyIndex(dir, w, sealed); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// render derives results.json, table.md and report.md from the bundle's
// raw records, so a report can always be re-rendered, seals the bundle
// (recording signing first, when not nil) and returns the table.
func render(dir string, signing *results.Signing) (string, error) {
	res, err := results.Derive(dir, hostPreflightParagraph)
	if err != nil {
		return "", err
	}
	pre, preRaw, err := results.ReadPreflight(dir)
	if err != nil {
		return "", err
	}
	table, err := Table(res.Plan, res.Cells)
	if err != nil {
		return "", err
	}
	if res.Plots, err = writePlots(dir, res); err != nil {
		return "", err
	}
	if err := results.WriteFile(dir, results.FileTable, []byte(table)); err != nil {
		return "", err
	}
	grid, err := tableGrid(res.Plan, res.Cells)
	if err != nil {
		return "", err
	}
	reportMD := renderReport(res, pre, preRaw, grid)
	if err := results.WriteFile(dir, results.FileReport, []byte(reportMD)); err != nil {
		return "", err
	}
	if signing != nil {
		// Recorded before the page is drawn, so that the page lists it.
		if err := results.AppendSigning(dir, *signing); err != nil {
			return "", err
		}
	}
	page, err := bundleHTML(dir, res, reportMD)
	if err != nil {
		return "", err
	}
	if err := results.WriteFile(dir, FileHTML, page); err != nil {
		return "", err
	}
	if err := results.WriteJSON(dir, results.FileResults, res); err != nil {
		return "", err
	}
	// The seal comes last: SHA256SUMS covers every other file.
	if err := results.Seal(dir, nil); err != nil {
		return "", err
	}
	return table, nil
}

// renderReport writes report.md. Its first screen is the finding: a line
// on the host and workload, the table (grid, without table.md's notes)
// and the verdict under it (verdictMarkdown), with the one link to where
// its columns and marks are defined; then the host and workload in full,
// each cell as a share of its ceiling, and the load, device-hit, disk and
// CPU evidence behind every number.
func renderReport(res results.Results, pre results.Preflight, preRaw []byte, grid string) string {
	var b strings.Builder
	c := res.Plan.Workload
	fmt.Fprintf(&b, "# tierbench run %s\n\n%s\n\n", res.Plan.RunID, leadLine(res, pre, preRaw))
	fmt.Fprintf(&b, "## Results (GET ops/sec)\n\n%s\n", grid)
	b.WriteString(verdictMarkdown(res))
	b.WriteString(plotsMarkdown(res.Plots, false))
	fmt.Fprintf(&b, "## Host\n\n%s\n\n", hostParagraph(res, pre, preRaw))
	b.WriteString(hostsMarkdown(res))
	fmt.Fprintf(&b, "## Workload\n\n%s", workloadParagraph(res))
	b.WriteString(mixMarkdown(res))
	b.WriteString(sweepMarkdown(res))
	b.WriteString(tlsMarkdown(res))
	b.WriteString(latencyMarkdown(res))
	b.WriteString(sloMarkdown(res))
	b.WriteString(plotsMarkdown(res.Plots, true))

	b.WriteString("## Share of the fio ceiling\n\n")
	if res.FioIOPS512 > 0 {
		renderCeilings(&b, res, preRaw)
		b.WriteString("Each cell's median as a share of its row's ceiling:\n\n")
		fmt.Fprintf(&b, "| backend | NUMA | held against |")
		for _, t := range c.Threads {
			fmt.Fprintf(&b, " t=%d |", t)
		}
		b.WriteString("\n|:--|:--|:--|" + strings.Repeat(":--|", len(c.Threads)) + "\n")
		for _, row := range res.Plan.Rows {
			fmt.Fprintf(&b, "| %s | %s | %s |", rowName(row), row.Label, heldAgainst(res, row))
			then := diskThen(res, row)
			for _, t := range c.Threads {
				cell, ok := findCell(res.Cells, row, t)
				switch {
				case !ok || cell.Passes == 0:
					b.WriteString(" — |")
				case cell.Excluded != "":
					b.WriteString(" " + excludedMark[cell.Excluded] + " |")
				default:
					b.WriteString(" " + shareText(cell, res.FioIOPS512, then, fioAfter(res, cell)) + " |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
		renderRemeasures(&b, res)
		b.WriteString(cpuAgainstFio(res, preRaw))
	} else {
		b.WriteString(noCeilingSentence(c))
	}

	b.WriteString("## Load evidence\n\n")
	if len(res.Loads) == 0 {
		b.WriteString("No load recorded.\n\n")
	} else {
		b.WriteString("| backend | NUMA | dbsize | loader acknowledged | server DBSIZE | log on device (head / tail) | load s | server cpus / mems |\n|:--|:--|--:|--:|--:|--:|--:|:--|\n")
		for _, l := range res.Loads {
			ack := "skipped"
			if l.Acknowledged >= 0 {
				ack = fmt.Sprintf("%d (%s)", l.Acknowledged, human.PercentBeside(human.Share(l.Acknowledged, l.DBSize), 1))
			}
			dev := "not tiered"
			if l.Tiered {
				dev = fmt.Sprintf("%.2f %% (%d / %d)", 100*l.DeviceShare, l.HeadAddress, l.TailAddress)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %d (%s) | %s | %.1f | %s / %s |\n", rowName(l.Row), l.Row.Label,
				l.DBSize, ack, l.ServerKeys, human.PercentBeside(human.Share(l.ServerKeys, l.DBSize), 1), dev, l.LoadSeconds, orDash(l.Server.CPUs), orDash(l.Server.Mems))
		}
		b.WriteString("\n")
		for _, l := range res.Loads {
			if l.ServerMode != "" || l.UringProbe != "" {
				fmt.Fprintf(&b, "- %s %s: server ran as %s", rowName(l.Row), l.Row.Label, orDash(l.ServerMode))
				if l.UringProbe != "" {
					fmt.Fprintf(&b, "; checked where it ran: %s", l.UringProbe)
				}
				b.WriteString("\n")
			}
			if l.ServerCommand != "" {
				fmt.Fprintf(&b, "- %s %s: `%s`\n", rowName(l.Row), l.Row.Label, l.ServerCommand)
			}
			if len(l.ServerEvidence) > 0 {
				fmt.Fprintf(&b, "- %s %s says: %s\n", rowName(l.Row), l.Row.Label, evidenceText(l.ServerEvidence))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(loadNotes(res))

	b.WriteString(shardsReport(res))
	b.WriteString("## Device-hit evidence and spread\n\n")
	b.WriteString("| backend | NUMA | threads | passes | median | min | max | device B/GET | misses | note |\n|:--|:--|--:|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, cell := range res.Cells {
		if cell.Passes == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %.0f | %s | %s |\n", rowName(cell.Row), cell.Row.Label,
			cell.Threads, cell.Passes, human.Ops(cell.Median), human.Ops(cell.Min), human.Ops(cell.Max),
			cell.ReadBytesPerGet, human.PercentBeside(cell.MissRatio, res.Plan.MaxMisses), cell.Excluded)
	}
	b.WriteString("\n")
	renderEvidence(&b, res)
	if len(res.Failures) > 0 {
		b.WriteString("\n## Failures and refusals\n\n")
		for _, f := range res.Failures {
			later := ""
			if rowComplete(res, f.Row) {
				later = " — the row was completed later (--resume)"
			}
			fmt.Fprintf(&b, "- %s %s (%s): %s%s\n", rowName(f.Row), f.Row.Label, f.Time.Format(time.RFC3339), f.Error, later)
		}
	}
	b.WriteString("\nEffective placement of every pass (from /proc/<pid>/status) is in cells.jsonl; container and process logs are in logs/.\n")
	return b.String()
}

// rowComplete reports whether every cell of row has all its passes.
func rowComplete(res results.Results, row results.Row) bool {
	for _, c := range res.Cells {
		if c.Row == row && c.Passes < res.Plan.Workload.Passes {
			return false
		}
	}
	return true
}

func findCell(cells []results.Cell, row results.Row, threads int) (results.Cell, bool) {
	i := slices.IndexFunc(cells, func(c results.Cell) bool { return c.Row == row && c.Threads == threads })
	if i < 0 {
		return results.Cell{}, false
	}
	return cells[i], true
}

func pct(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// hostParagraph is preflight's own "Host —" paragraph (hostcheck writes
// it in the reference's words from the fingerprint and fio baseline that
// preflight.json holds), followed by the checks that did not pass and the
// pinned rows whose servers the disk's completions did not interrupt.
func hostParagraph(res results.Results, pre results.Preflight, preRaw []byte) string {
	plan := res.Plan
	var rep hostcheck.Report
	if len(pre.Fingerprint) == 0 || json.Unmarshal(preRaw, &rep) != nil {
		s := fmt.Sprintf("No host fingerprint in this bundle (%d NUMA node(s) seen by the run)", plan.Nodes)
		if len(preRaw) > 0 {
			s += "; preflight said: " + strings.TrimSpace(results.Clip(preRaw))
		}
		return s + "."
	}
	var b strings.Builder
	b.WriteString(hostcheck.HostParagraph(rep))
	var warn []string
	for _, c := range pre.Checks {
		if c.Status != "pass" {
			warn = append(warn, fmt.Sprintf("%s %s: %s", strings.ToUpper(c.Status), c.Name, c.Detail))
		}
	}
	if len(warn) > 0 {
		b.WriteString(" Preflight: " + strings.Join(warn, "; ") + ".")
	}
	b.WriteString(interruptNote(res, rep.Fingerprint.Storage))
	return b.String()
}

// interruptNote names the pinned rows whose server ran on none of the CPUs
// the data disks' completions interrupt (hostcheck.DiskInterrupt): each of
// their reads completed on another CPU and woke the server across CPUs.
// "" where every pinned row shared one, or preflight read no interrupts,
// or the server ran on another host than the preflight's.
func interruptNote(res results.Results, st hostcheck.Storage) string {
	if len(res.Hosts) > 0 {
		return ""
	}
	irqCPUs := st.InterruptCPUs()
	if len(irqCPUs) == 0 {
		return ""
	}
	var away []string
	for _, row := range res.Plan.Rows {
		if row.Pin != results.PinPinned {
			continue
		}
		list := serverCPUs(res, row)
		cpus, err := cpulist.Parse(list)
		if err != nil || slices.ContainsFunc(cpus, func(c int) bool { return slices.Contains(irqCPUs, c) }) {
			continue
		}
		away = append(away, fmt.Sprintf("the %s %s row (server on %s)", rowName(row), row.Label, cpuWord(list)))
	}
	if len(away) == 0 {
		return ""
	}
	irq := cpulist.Format(irqCPUs)
	return fmt.Sprintf(" The data disk's completions interrupt %s, none of the server's in %s: each read completed there and woke the server across CPUs, which on a 2-CPU virtual machine doubled a pinned server's own p99 at low load. Where the interrupt is delivered is the host's setting (/proc/irq/N/smp_affinity_list); tierbench does not change it.",
		cpuWord(irq), strings.Join(away, ", "))
}

// cpuWord is a CPU list with its noun: "CPU 1", "CPUs 0-3".
func cpuWord(list string) string {
	if cpus, err := cpulist.Parse(list); err == nil && len(cpus) == 1 {
		return "CPU " + list
	}
	return "CPUs " + list
}

// evidenceText writes a server's INFO evidence as "field value" pairs in
// the order of their names.
func evidenceText(ev map[string]string) string {
	keys := make([]string, 0, len(ev))
	for k := range ev {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %s", k, orDash(ev[k]))
	}
	return strings.Join(parts, ", ")
}

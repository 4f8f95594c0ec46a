package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// ReportConfig names the bundle `tierbench report` renders again.
type ReportConfig struct {
	Dir string // a results bundle written by Run
}

// Report renders results.json, table.md and report.md again from the
// bundle's plan, cells.jsonl and preflight.json, and prints the table.
func Report(_ context.Context, cfg ReportConfig, stdout io.Writer) error {
	if cfg.Dir == "" {
		return fmt.Errorf("orchestrator: report needs a bundle directory")
	}
	table, err := render(cfg.Dir)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, table)
	return nil
}

// render derives results.json, table.md and report.md from the bundle's
// raw records, so a report can always be re-rendered, and returns the table.
func render(dir string) (string, error) {
	var plan Plan
	if err := readJSON(dir, filePlan, &plan); err != nil {
		return "", err
	}
	if plan.Schema > SchemaVersion {
		return "", fmt.Errorf("orchestrator: %s: schema_version %d is newer than this tierbench's %d", dir, plan.Schema, SchemaVersion)
	}
	if plan.MaxMisses == 0 {
		plan.MaxMisses = maxMissRatio
	}
	passes, loads, err := readCells(dir)
	if err != nil {
		return "", err
	}
	var pre preflightOutput
	var preRaw []byte
	if b, err := os.ReadFile(filepath.Join(dir, filePreflight)); err == nil {
		preRaw = b
		pre, _ = parsePreflight(b) // a --force run may hold only an error
	}
	fio := pre.fioIOPS(512)
	res := Results{Schema: SchemaVersion, Plan: plan, Finished: time.Now().UTC(), Loads: loads,
		Cells: aggregate(plan, passes, fio), FioIOPS512: fio}
	table, err := renderTable(plan, res.Cells)
	if err != nil {
		return "", err
	}
	if err := writeJSON(dir, fileResults, res); err != nil {
		return "", err
	}
	if err := writeFile(dir, fileTable, []byte(table)); err != nil {
		return "", err
	}
	if err := writeFile(dir, fileReport, []byte(renderReport(res, pre, preRaw, table))); err != nil {
		return "", err
	}
	return table, nil
}

// renderReport writes report.md: the host paragraph, the table, each
// cell as a share of the fio 512 B ceiling, and the load and device-hit
// evidence behind every number.
func renderReport(res Results, pre preflightOutput, preRaw []byte, table string) string {
	var b strings.Builder
	c := res.Plan.Config
	fmt.Fprintf(&b, "# tierbench run %s\n\n", res.Plan.RunID)
	fmt.Fprintf(&b, "## Host\n\n%s\n\n", hostParagraph(res.Plan, pre, preRaw))
	fmt.Fprintf(&b, "## Workload\n\n%d keys × %d B (--keylength %d --valuelength %d) tiered with --memory %s --page %s --segment %s --index %s; 100 %% random GET; client -b %d; %d s per cell; median of %d passes after a %d s warm-up; runtime %s.\n\n",
		c.DBSize, c.KeyLength+c.ValueLength, c.KeyLength, c.ValueLength, c.Memory, c.Page, c.Segment, c.Index,
		c.Batch, c.CellSeconds, c.Passes, c.WarmupSeconds, res.Plan.Runtime)
	if c.ServerAddr != "" {
		fmt.Fprintf(&b, "External server at %s (pid %d for /proc).\n\n", c.ServerAddr, c.ServerPID)
	}
	fmt.Fprintf(&b, "## Results (GET ops/sec)\n\n%s\n", table)

	b.WriteString("## Share of the fio ceiling\n\n")
	if res.FioIOPS512 > 0 {
		fmt.Fprintf(&b, "fio random-read ceiling at 512 B on the data dir's mount: %s IOPS. Each cell's median as a share of it (RESP ≤ KV ≤ Device ≤ fio):\n\n", FormatOps(res.FioIOPS512))
		fmt.Fprintf(&b, "| backend | NUMA |")
		for _, t := range c.Threads {
			fmt.Fprintf(&b, " t=%d |", t)
		}
		b.WriteString("\n|:--|:--|" + strings.Repeat(":--|", len(c.Threads)) + "\n")
		for _, row := range res.Plan.Rows {
			fmt.Fprintf(&b, "| %s | %s |", titleCase(row.Backend), row.Label)
			for _, t := range c.Threads {
				cell, ok := findCell(res.Cells, row, t)
				switch {
				case !ok || cell.Passes == 0:
					b.WriteString(" — |")
				case cell.Excluded != "":
					b.WriteString(" " + excludedMark[cell.Excluded] + " |")
				default:
					fmt.Fprintf(&b, " %.1f %% |", 100*cell.FioShare)
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("No fio baseline in this bundle (preflight ran without --fio, or failed): no ceiling to divide by.\n\n")
	}

	b.WriteString("## Load evidence\n\n")
	if len(res.Loads) == 0 {
		b.WriteString("No load recorded.\n\n")
	} else {
		b.WriteString("| backend | NUMA | dbsize | loader acknowledged | server DBSIZE | log on device (head / tail) | load s | server cpus / mems |\n|:--|:--|--:|--:|--:|--:|--:|:--|\n")
		for _, l := range res.Loads {
			ack := "skipped"
			if l.Acknowledged >= 0 {
				ack = fmt.Sprintf("%d (%.2f %%)", l.Acknowledged, pct(l.Acknowledged, l.DBSize))
			}
			dev := "not tiered"
			if l.Tiered {
				dev = fmt.Sprintf("%.2f %% (%d / %d)", 100*l.DeviceShare, l.HeadAddress, l.TailAddress)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %d (%.2f %%) | %s | %.1f | %s / %s |\n", titleCase(l.Row.Backend), l.Row.Label,
				l.DBSize, ack, l.ServerKeys, pct(l.ServerKeys, l.DBSize), dev, l.LoadSeconds, orDash(l.Server.CPUs), orDash(l.Server.Mems))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Device-hit evidence and spread\n\n")
	fmt.Fprintf(&b, "Device bytes are the server's /proc/<pid>/io read_bytes over each GET phase. A cell under %d B per GET was served from memory; a cell with more than %.1f %% misses answered them without the device. Both are kept out of the table.\n\n", sectorBytes, 100*res.Plan.MaxMisses)
	b.WriteString("| backend | NUMA | threads | passes | median | min | max | device B/GET | misses | note |\n|:--|:--|--:|--:|--:|--:|--:|--:|--:|:--|\n")
	for _, cell := range res.Cells {
		if cell.Passes == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %.0f | %.3f %% | %s |\n", titleCase(cell.Row.Backend), cell.Row.Label,
			cell.Threads, cell.Passes, FormatOps(cell.Median), FormatOps(cell.Min), FormatOps(cell.Max),
			cell.ReadBytesPerGet, 100*cell.MissRatio, cell.Excluded)
	}
	b.WriteString("\nEffective placement of every pass (from /proc/<pid>/status) is in cells.jsonl; container and process logs are in logs/.\n")
	return b.String()
}

func findCell(cells []Cell, row Row, threads int) (Cell, bool) {
	i := slices.IndexFunc(cells, func(c Cell) bool { return c.Row == row && c.Threads == threads })
	if i < 0 {
		return Cell{}, false
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

// hostParagraph describes the host from the preflight fingerprint. The
// fingerprint is hostcheck's document; its scalar fields are listed in
// order without assuming their names, so a new field shows up by itself.
func hostParagraph(plan Plan, pre preflightOutput, preRaw []byte) string {
	var parts []string
	if plan.Hostname != "" {
		parts = append(parts, "hostname "+plan.Hostname)
	}
	parts = append(parts, fmt.Sprintf("%d NUMA node(s)", plan.Nodes))
	var fp map[string]any
	if len(pre.Fingerprint) > 0 && json.Unmarshal(pre.Fingerprint, &fp) == nil {
		keys := make([]string, 0, len(fp))
		for k := range fp {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, flatten(k, fp[k])...)
		}
	} else if len(preRaw) > 0 {
		parts = append(parts, "no fingerprint (preflight: "+strings.TrimSpace(clip(preRaw))+")")
	}
	if ioFio := pre.Fio; ioFio != nil {
		var f []string
		for _, r := range ioFio.Results {
			f = append(f, fmt.Sprintf("%s IOPS at %d B", FormatOps(r.IOPS), r.BlockBytes))
		}
		parts = append(parts, fmt.Sprintf("fio random-read ceiling (%s): %s", ioFio.Engine, strings.Join(f, ", ")))
	}
	var warn []string
	for _, c := range pre.Checks {
		if c.Status != "pass" {
			warn = append(warn, fmt.Sprintf("%s %s (%s)", strings.ToUpper(c.Status), c.Name, c.Detail))
		}
	}
	s := strings.Join(parts, "; ") + "."
	if len(warn) > 0 {
		s += " Preflight: " + strings.Join(warn, "; ") + "."
	}
	return s
}

// flatten writes a fingerprint value as "key value" items, nested objects
// as dotted keys; long lists are summarised by their length.
func flatten(key string, v any) []string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			out = append(out, flatten(key+"."+k, x[k])...)
		}
		return out
	case []any:
		if len(x) <= 4 {
			var items []string
			for _, e := range x {
				if _, nested := e.(map[string]any); nested {
					return []string{fmt.Sprintf("%s: %d entries", key, len(x))}
				}
				items = append(items, fmt.Sprint(e))
			}
			return []string{key + " " + strings.Join(items, ", ")}
		}
		return []string{fmt.Sprintf("%s: %d entries", key, len(x))}
	case nil:
		return nil
	case float64:
		return []string{fmt.Sprintf("%s %v", key, jsonNumber(x))}
	}
	return []string{fmt.Sprintf("%s %v", key, v)}
}

func jsonNumber(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}

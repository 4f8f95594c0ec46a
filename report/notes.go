package report

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// workloadParagraph describes what actually ran: tierbench's flags for the
// tiered servers the run started, or, for a server at --server-addr, what
// that server says about itself — never tierbench's flags for it.
func workloadParagraph(res results.Results) string {
	c := res.Plan.Workload
	var b strings.Builder
	records := fmt.Sprintf("%d keys, %d B values and %d B keys", c.DBSize, c.ValueLength, c.KeyLength)
	if w := scenarioWorkload(c); w != "" {
		b.WriteString(w)
	} else if c.ServerAddr == "" {
		fmt.Fprintf(&b, "%d keys, %d B records (--keylength %d --valuelength %d) tiered with --memory %s --page %s --segment %s --index %s",
			c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), c.KeyLength, c.ValueLength, c.Memory, c.Page, c.Segment, c.Index)
	} else {
		who := "a server that did not describe itself"
		for _, l := range res.Loads {
			if l.ServerInfo != nil {
				who = l.ServerInfo.Describe()
			}
		}
		load := "loaded by this run"
		if c.SkipLoad {
			load = "already loaded (--skip-load)"
		}
		fmt.Fprintf(&b, "%s, %s, in the external server at %s: %s", records, load, c.ServerAddr, who)
	}
	fmt.Fprintf(&b, "; 100 %% random GET; client -b %d; %d s per cell; median of %d passes", c.Batch, c.CellSeconds, c.Passes)
	if c.WarmupSeconds > 0 {
		fmt.Fprintf(&b, " after a %d s warm-up", c.WarmupSeconds)
	} else {
		b.WriteString(" with no warm-up (--warmup-seconds 0)")
	}
	fmt.Fprintf(&b, "; runtime %s.\n\n", res.Plan.Runtime)
	for _, l := range res.Loads {
		if l.Owner != nil && c.ServerAddr != "" {
			fmt.Fprintf(&b, "The server's device reads are counted for %s.\n\n", l.Owner.Sentence())
			break
		}
	}
	if res.Plan.MaxMisses > 0 {
		fmt.Fprintf(&b, "**--max-miss-ratio %g: cells with up to %s of their GETs missed are kept in the table (by default a cell with any miss is kept out); each miss is answered without a device read.**\n\n",
			res.Plan.MaxMisses, human.PercentBeside(res.Plan.MaxMisses, 0))
	}
	return b.String()
}

// noCeilingSentence says why the report has no fio ceiling.
func noCeilingSentence(cfg results.Workload) string {
	if cfg.ScenarioName() == results.ScenarioMemory || cfg.ScenarioName() == results.ScenarioLocalMemory {
		return fmt.Sprintf("No fio ceiling: --scenario %s keeps the data in RAM, so no disk bounds it.\n\n", cfg.ScenarioName())
	}
	if !cfg.CeilingApplies() {
		return fmt.Sprintf("No fio ceiling: the server at %s was not started by this run and --data did not name where its data lives, so no disk measured here bounds it.\n\n", cfg.ServerAddr)
	}
	return "No fio baseline in this bundle (preflight ran without --fio, or failed): no ceiling to divide by.\n\n"
}

// deviceHitParagraph explains the device-hit and miss rules of the table.
func deviceHitParagraph(res results.Results) string {
	if p := scenarioDeviceHitParagraph(res.Plan.Workload); p != "" {
		return p
	}
	fits := ""
	if res.Plan.Workload.ServerAddr == "" {
		fits = fmt.Sprintf("; at most 1/%d of the dataset fits in the server's memory", results.MinDeviceToMemory)
	}
	misses := "a cell with any miss answered it without the device"
	if res.Plan.MaxMisses > 0 {
		misses = fmt.Sprintf("a cell with more than %s misses answered them without the device", human.PercentBeside(res.Plan.MaxMisses, 0))
	}
	return fmt.Sprintf("Device bytes are the server's /proc/<pid>/io read_bytes over each GET phase. A cell under %.0f B per GET (%.0f %% of a %d B sector%s) was served from memory; %s. Both are kept out of the table.\n\n",
		results.MinSectorShare*results.SectorBytes, 100*results.MinSectorShare, results.SectorBytes, fits, misses)
}

// loadNotes lists each row's proof of process and sampled GET check.
func loadNotes(res results.Results) string {
	var b strings.Builder
	for _, l := range res.Loads {
		row := rowName(l.Row) + " " + l.Row.Label
		if l.Owner != nil {
			fmt.Fprintf(&b, "- %s: %s.\n", row, l.Owner.Sentence())
		}
		if s := l.Sample; s != nil {
			fmt.Fprintf(&b, "- %s: sampled GET check of %d random keys in %.1f s: %d missed, %d of the wrong length, %d error replies", row, s.Keys, s.Seconds, s.Missed, s.WrongLength, s.Errors)
			if s.FirstBad != "" {
				fmt.Fprintf(&b, " (first: %s)", s.FirstBad)
			}
			b.WriteString(".\n")
		}
		if st := l.Settle; st != nil {
			fmt.Fprintf(&b, "- %s: %s.\n", row, settleSentence(*st, "after the load, fio over the server's files (read-only", "the passes"))
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// keptOut lists the planned cells that are not in the table and why; the
// run's exit status is 3 when there are some, 4 when no cell is left.
func keptOut(res results.Results) string {
	kept, _ := KeptOut(res)
	if len(kept) == 0 {
		return "Every planned cell is in the table.\n\n"
	}
	return "Kept out of the table: " + strings.Join(kept, "; ") + ".\n\n"
}

// scenarioNotes explains the scenario marks under a table.
func scenarioNotes(seen map[string]bool) []string {
	var notes []string
	if seen[results.ExcludedDeviceRead] {
		notes = append(notes, fmt.Sprintf("device-read*: the server read %.1f B or more (%.0f %% of a %d B sector) per GET through the kernel (/proc/<pid>/io): in scenario 1 the data was not all in RAM, in scenario 3 a native device, not the in-RAM one, is under the store; the cell is kept out of the table.", results.MaxMemorySectorShare*results.SectorBytes, 100*results.MaxMemorySectorShare, results.SectorBytes))
	}
	if seen[results.ExcludedNoDeviceReads] {
		notes = append(notes, fmt.Sprintf("no-device-reads*: the server's INFO store counted fewer than %.1f device reads per GET: reads did not reach the localmemory device, and the cell is kept out of the table.", results.MinDeviceReadsPerGet))
	}
	return notes
}

// scenarioWorkload describes the server of a memory or localmemory run
// for report.md; "" for the storage scenario or an external server.
func scenarioWorkload(c results.Workload) string {
	if c.ServerAddr != "" {
		return ""
	}
	switch c.ScenarioName() {
	case results.ScenarioMemory:
		return fmt.Sprintf("%d keys, %d B records (--keylength %d --valuelength %d) in the untiered server (--index %s)",
			c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), c.KeyLength, c.ValueLength, c.Index)
	case results.ScenarioLocalMemory:
		return fmt.Sprintf("%d keys, %d B records (--keylength %d --valuelength %d) tiered with --memory %s --page %s --segment %s --index %s on --device-type localmemory --device-completion-threads 4 --device-throttle-limit 512",
			c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), c.KeyLength, c.ValueLength, c.Memory, c.Page, c.Segment, c.Index)
	}
	return ""
}

// scenarioDeviceHitParagraph states the device-hit rule of scenarios 1
// and 3 for report.md; "" for the storage scenario.
func scenarioDeviceHitParagraph(c results.Workload) string {
	switch c.ScenarioName() {
	case results.ScenarioMemory:
		return fmt.Sprintf("Device bytes are the server's /proc/<pid>/io read_bytes over each GET phase. Scenario 1 is memory-bound: a cell reading %.1f B or more per GET (%.0f %% of a %d B sector) reached a device and is kept out of the table, as is a cell with any miss.\n\n",
			results.MaxMemorySectorShare*results.SectorBytes, 100*results.MaxMemorySectorShare, results.SectorBytes)
	case results.ScenarioLocalMemory:
		return fmt.Sprintf("The localmemory device reads nothing through the kernel, so the evidence is the server's own INFO store Device.CompletedReads over each GET phase: a cell under %.1f device reads per GET, or reading %.1f B or more per GET from /proc/<pid>/io (a native device under the store), is kept out of the table, as is a cell with any miss.\n\n",
			results.MinDeviceReadsPerGet, results.MaxMemorySectorShare*results.SectorBytes)
	}
	return ""
}

// KeptOut names each planned cell missing from the table, with why,
// and counts the cells shown.
func KeptOut(res results.Results) (kept []string, shown int) {
	for _, c := range res.Cells {
		if c.Excluded == "" && c.Passes > 0 {
			shown++
			continue
		}
		why := c.Excluded
		if why == "" {
			why = "not measured"
		}
		if c.Excluded == results.ExcludedMisses {
			why = fmt.Sprintf("%s %s", why, human.PercentBeside(c.MissRatio, res.Plan.MaxMisses))
		}
		kept = append(kept, fmt.Sprintf("%s %s t=%d (%s)", rowName(c.Row), c.Row.Label, c.Threads, why))
	}
	return kept, shown
}

// settleSentence says how the disk came back after a large write: lead
// names the probes (up to their open parenthesis), what the measurements
// that waited for it.
func settleSentence(s results.DiskSettle, lead, what string) string {
	probes := make([]string, len(s.ProbeIOPS))
	for i, v := range s.ProbeIOPS {
		probes[i] = human.Ops(v)
	}
	text := fmt.Sprintf("%s, %d × %d in flight, %d s a probe) read %s IOPS against the %s ceiling",
		lead, s.Jobs, s.IODepth, s.ProbeSeconds, strings.Join(probes, ", "), human.Ops(s.CeilingIOPS))
	if s.Settled {
		return text + fmt.Sprintf("; %s began once it read %.0f %% of it, %.0f s after the first probe", what, 100*results.SettleShare, s.Seconds)
	}
	return text + fmt.Sprintf("; **the disk had not come back to %.0f %% of it** (%s) when %s began, %.0f s later: they measured a slower disk than the ceiling's", 100*results.SettleShare, s.Why, what, s.Seconds)
}

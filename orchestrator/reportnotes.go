package orchestrator

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/results"
)

// workloadParagraph describes what actually ran: tierbench's flags for the
// tiered servers the run started, or, for a server at --server-addr, what
// that server says about itself — never tierbench's flags for it.
func workloadParagraph(res Results) string {
	c := res.Plan.Workload
	var b strings.Builder
	records := fmt.Sprintf("%d keys, %d B values and %d B keys", c.DBSize, c.ValueLength, c.KeyLength)
	if w := scenarioWorkload(c); w != "" {
		b.WriteString(w)
	} else if c.ServerAddr == "" {
		fmt.Fprintf(&b, "%d keys, %d B records (--keylength %d --valuelength %d) tiered with --memory %s --page %s --segment %s --index %s",
			c.DBSize, recordBytes(c.KeyLength, c.ValueLength), c.KeyLength, c.ValueLength, c.Memory, c.Page, c.Segment, c.Index)
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
			res.Plan.MaxMisses, formatPercentBeside(res.Plan.MaxMisses, 0))
	}
	return b.String()
}

// noCeilingSentence says why the report has no fio ceiling.
func noCeilingSentence(cfg results.Workload) string {
	if cfg.ScenarioName() == ScenarioMemory || cfg.ScenarioName() == ScenarioLocalMemory {
		return fmt.Sprintf("No fio ceiling: --scenario %s keeps the data in RAM, so no disk bounds it.\n\n", cfg.ScenarioName())
	}
	if !cfg.CeilingApplies() {
		return fmt.Sprintf("No fio ceiling: the server at %s was not started by this run and --data did not name where its data lives, so no disk measured here bounds it.\n\n", cfg.ServerAddr)
	}
	return "No fio baseline in this bundle (preflight ran without --fio, or failed): no ceiling to divide by.\n\n"
}

// deviceHitParagraph explains the device-hit and miss rules of the table.
func deviceHitParagraph(res Results) string {
	if p := scenarioDeviceHitParagraph(res.Plan.Workload); p != "" {
		return p
	}
	fits := ""
	if res.Plan.Workload.ServerAddr == "" {
		fits = fmt.Sprintf("; at most 1/%d of the dataset fits in the server's memory", minDeviceToMemory)
	}
	misses := "a cell with any miss answered it without the device"
	if res.Plan.MaxMisses > 0 {
		misses = fmt.Sprintf("a cell with more than %s misses answered them without the device", formatPercentBeside(res.Plan.MaxMisses, 0))
	}
	return fmt.Sprintf("Device bytes are the server's /proc/<pid>/io read_bytes over each GET phase. A cell under %.0f B per GET (%.0f %% of a %d B sector%s) was served from memory; %s. Both are kept out of the table.\n\n",
		minSectorShare*sectorBytes, 100*minSectorShare, sectorBytes, fits, misses)
}

// loadNotes lists each row's proof of process and sampled GET check.
func loadNotes(res Results) string {
	var b strings.Builder
	for _, l := range res.Loads {
		row := titleCase(l.Row.Backend) + " " + l.Row.Label
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
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// keptOut lists the planned cells that are not in the table and why; the
// run's exit status is 3 when there are some, 4 when no cell is left.
func keptOut(res Results) string {
	kept, _ := keptOutCells(res)
	if len(kept) == 0 {
		return "Every planned cell is in the table.\n\n"
	}
	return "Kept out of the table: " + strings.Join(kept, "; ") + ".\n\n"
}

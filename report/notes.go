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

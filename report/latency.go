package report

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/results"
)

// latencyMarkdown is report.md's latency section: the table and the note
// on short steps (the charts are embedded with the others).
func latencyMarkdown(res results.Results) string {
	var steps []results.LatencyRecord
	for _, l := range res.Latency {
		if l.SLO == "" { // --slo probes have their own section (slo.go)
			steps = append(steps, l)
		}
	}
	if len(steps) == 0 {
		return ""
	}
	var b strings.Builder
	c := res.Plan.Workload
	fmt.Fprintf(&b, "## Latency under load\n\nAfter each row's passes, GETs at fixed offered rates of 10, 25, 50, 75 and 90 %% of the row's best median, each for %d s over that cell's connections with up to %d GETs in flight each (`bench --online --rate`), after %d s at the same rate that are not recorded, so the client's start-up stays out of the percentiles. Latency runs from each GET's intended send time, so a stall is charged to every GET it delayed. Each step's HdrHistogram is in %s/ as an HdrHistogram log.\n\n",
		c.CellSeconds, c.Batch, results.LatencyWarmupSeconds, results.DirLatency)
	b.WriteString("| backend | NUMA | offered | achieved | p50 | p99 | p99.9 | max |\n|:--|:--|--:|--:|--:|--:|--:|--:|\n")
	short, bound := false, false
	for _, l := range steps {
		ach := human.Ops(l.AchievedOpsPerSec)
		if l.Short {
			ach += " short*"
			short = true
		}
		if l.Pacing != nil && l.Pacing.ClientBound {
			ach += " client-bound†"
			bound = true
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%.0f %%) | %s | %s | %s | %s | %s |\n", rowName(l.Row), l.Row.Label,
			human.Ops(l.OfferedOpsPerSec), 100*l.Share, ach, plots.FormatMicros(l.P50Micros), plots.FormatMicros(l.P99Micros),
			plots.FormatMicros(l.P999Micros), plots.FormatMicros(l.MaxMicros))
	}
	if short {
		fmt.Fprintf(&b, "\nshort*: the step achieved less than %.0f %% of its offered rate: the client or the server could not keep up, and its latency is mostly time spent queued behind the intended send times.\n", 100*results.MinAchievedShare)
	}
	if bound {
		b.WriteString("\nclient-bound†: the client sent its GETs late — at p99 by more than 10 % of the step's median latency — or left over 10 % of them unsent: that much of the step's latency is the client's, not the server's. Each step's lateness is in latency.jsonl (pacing).\n")
	}
	b.WriteString("\n")
	return b.String()
}

package report

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/results"
)

// sloMarkdown is report.md's capacity at a bound (run --slo): per row,
// the highest offered rate whose percentile met the bound and the probe
// above it, read from the probes in latency.jsonl (results.FindSLO), and
// every probe after it.
func sloMarkdown(res results.Results) string {
	slo, err := results.ParseSLO(res.Plan.Workload.SLO)
	if res.Plan.Workload.SLO == "" || err != nil {
		return ""
	}
	var found []results.SLOFinding
	for _, row := range res.Plan.Rows {
		if f := results.FindSLO(res.Latency, row, slo); f.Probes > 0 {
			found = append(found, f)
		}
	}
	if len(found) == 0 {
		return ""
	}
	p := slo.Percentile
	var b strings.Builder
	fmt.Fprintf(&b, "## GET ops/s at %s\n\n", slo.Title())
	fmt.Fprintf(&b, "The highest offered GET rate whose %s latency stayed at or under the bound (`run --slo %s`), each probe %d s over the row's best cell's connections:\n\n",
		p, slo, res.Plan.Workload.CellSeconds)
	fmt.Fprintf(&b, "| backend | NUMA | GET ops/s at %s | %s there | lowest probe above | %s there | probes |\n|:--|:--|--:|--:|--:|--:|--:|\n", slo.Title(), p, p)
	bound, stalled := false, false
	for _, f := range found {
		met, metP := "none of the probes", "–"
		if f.Met != nil {
			met, metP = human.Ops(f.Met.OfferedOpsPerSec), plots.FormatMicros(slo.Of(*f.Met))
		}
		above, aboveP := "none: the best median met it", "–"
		if f.Above != nil {
			above, aboveP = human.Ops(f.Above.OfferedOpsPerSec), plots.FormatMicros(slo.Of(*f.Above))
			switch {
			case f.Why == "client-bound":
				aboveP += " client-bound†"
				bound = true
			case f.Why == "host-stalled":
				aboveP += " host-stalled§"
				stalled = true
			case f.Why != "over":
				aboveP += " (" + f.Why + ")"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %d |\n", rowName(f.Row), f.Row.Label, met, metP, above, aboveP, f.Probes)
	}
	var key []string
	if bound {
		key = append(key, "client-bound†: the client could not keep that probe's schedule, so the capacity at the bound is at least the rate shown.")
	}
	if stalled {
		key = append(key, fmt.Sprintf("host-stalled§: the host took %.1f %% or more of the CPU time during that probe, so the capacity at the bound is at least the rate shown.", 100*results.NoticeableSteal))
	}
	if len(key) > 0 {
		b.WriteString("\n" + strings.Join(key, "\n") + "\n")
	}
	fmt.Fprintf(&b, "\nThe probes, in the order run:\n\n| backend | NUMA | probe | offered | achieved | p50 | p99 | p99.9 | %s |\n|:--|:--|--:|--:|--:|--:|--:|--:|:--|\n", slo.Title())
	for _, f := range found {
		for _, l := range res.Latency {
			if l.Row != f.Row || l.SLO != slo.String() {
				continue
			}
			verdict := "met"
			if why := slo.Judge(l); why != "" {
				verdict = "not met: " + why
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", rowName(l.Row), l.Row.Label, l.Probe, human.Ops(l.OfferedOpsPerSec), human.Ops(l.AchievedOpsPerSec),
				plots.FormatMicros(l.P50Micros), plots.FormatMicros(l.P99Micros), plots.FormatMicros(l.P999Micros), verdict)
		}
	}
	b.WriteString("\n")
	return b.String()
}

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
	fmt.Fprintf(&b, "After each row's passes, `run --slo %s` searched fixed offered GET rates for the highest whose %s latency, from each GET's intended send time, stays at or under the bound. "+
		"Each probe is a latency step: %d s at its rate after %d s unrecorded, over the row's best cell's connections. The search starts at the row's best median, halves the rate until a probe meets the bound, then bisects between the highest that met it and the lowest that did not until they are within 5 %%. "+
		"A probe that is short (under %.0f %% of its rate achieved) or has a miss or an error does not meet the bound. A client-bound probe (the client sent late) that still meets the bound counts, since its latency includes the client's lateness; one that does not is marked client-bound, not over: the search stops below it, and the rate found is what this client could show, not the server's limit.\n\n",
		slo, p, res.Plan.Workload.CellSeconds, results.LatencyWarmupSeconds, 100*results.MinAchievedShare)
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
	if bound {
		b.WriteString("\nclient-bound†: the client could not keep that probe's schedule and it missed the bound, which may be the client's doing: the row's capacity at the bound is at least the rate shown; how much more, this client could not measure.\n")
	}
	if stalled {
		fmt.Fprintf(&b, "\nhost-stalled§: that probe missed the bound while the host took at least %.1f %% of this machine's CPU time (steal, or freezes: its CPUs not run at all), which delays every GET in flight: the miss may be the host's, so the row's capacity at the bound is at least the rate shown; how much more, this host could not measure. Each probe's steal and frozen shares are in latency.jsonl.\n",
			100*results.NoticeableSteal)
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

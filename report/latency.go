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
		// --slo probes have their own section (slo.go); a row's floor
		// comes first, as it was measured.
		if l.SLO == "" {
			steps = append(steps, l)
		}
	}
	if len(steps) == 0 {
		return ""
	}
	var b strings.Builder
	c := res.Plan.Workload
	fmt.Fprintf(&b, "## Latency under load\n\nSteps of %d s at fixed offered rates, up to %d GETs in flight per connection, latency from each GET's intended send time; the HdrHistogram logs are in %s/.\n\n",
		c.CellSeconds, c.Batch, results.DirLatency)
	steal, froze := false, false
	for _, l := range steps {
		steal = steal || l.HostStealShare != nil
		froze = froze || l.HostFrozenShare != nil
	}
	cols := []string{"backend", "NUMA", "offered>", "achieved>", "p50>", "p50 above floor>", "p99>", "p99.9>", "max>", "sends late p99>"}
	if steal {
		cols = append(cols, "steal>")
	}
	if froze {
		cols = append(cols, "frozen>")
	}
	writeHead(&b, cols...)
	short, bound, stolen, frozen := false, false, false, false
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
		offered := fmt.Sprintf("%s (%.0f %%)", human.Ops(l.OfferedOpsPerSec), 100*l.Share)
		above := "—"
		if l.Floor != "" {
			offered = fmt.Sprintf("floor: %s at %s", l.Floor, human.Ops(l.OfferedOpsPerSec))
		} else if f, ok := results.FloorOf(res.Latency, l.Row); ok {
			above = plots.FormatMicros(l.P50Micros - f.P50Micros)
		}
		late := "—" // bundles from before the client measured its pacing
		if l.Pacing != nil {
			late = plots.FormatMicros(l.Pacing.LatenessP99Micros)
			if own := l.Pacing.OwnLatenessP99Micros; own != nil {
				late += " (own " + plots.FormatMicros(*own) + ")"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", rowName(l.Row), l.Row.Label, offered, ach,
			plots.FormatMicros(l.P50Micros), above, plots.FormatMicros(l.P99Micros), plots.FormatMicros(l.P999Micros), plots.FormatMicros(l.MaxMicros), late)
		if steal {
			stolen = hostCell(&b, l.HostStealShare, "‡") || stolen
		}
		if froze {
			frozen = hostCell(&b, l.HostFrozenShare, "§") || frozen
		}
		b.WriteString("\n")
	}
	var key []string
	if short {
		key = append(key, fmt.Sprintf("short*: under %.0f %% of the offered rate achieved", 100*results.MinAchievedShare))
	}
	if bound {
		key = append(key, "client-bound†: the client sent late")
	}
	if stolen {
		key = append(key, fmt.Sprintf("‡: steal of %.1f %% or more", 100*results.NoticeableSteal))
	}
	if frozen {
		key = append(key, fmt.Sprintf("§: frozen %.1f %% or more", 100*results.NoticeableSteal))
	}
	if len(key) > 0 {
		b.WriteString("\n" + strings.Join(key, "; ") + ".\n")
	}
	b.WriteString("\n")
	return b.String()
}

// hostCell writes a step's share of its window lost to the host (steal,
// freezes), marked when noticeable, and reports whether it was.
func hostCell(b *strings.Builder, share *float64, mark string) bool {
	cell := human.SharePercent(share)
	marked := share != nil && *share >= results.NoticeableSteal
	if marked {
		cell += " " + mark
	}
	fmt.Fprintf(b, " %s |", cell)
	return marked
}

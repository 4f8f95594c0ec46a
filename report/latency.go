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
	floors := false
	for _, l := range res.Latency {
		// --slo probes have their own section (slo.go); a row's floor
		// comes first, as it was measured.
		if l.SLO == "" {
			steps = append(steps, l)
			floors = floors || l.Floor != ""
		}
	}
	if len(steps) == 0 {
		return ""
	}
	var b strings.Builder
	c := res.Plan.Workload
	fmt.Fprintf(&b, "## Latency under load\n\nAfter each row's passes, GETs at fixed offered rates of 10, 25, 50, 75 and 90 %% of the row's best median, each for %d s over that cell's connections with up to %d GETs in flight each (`bench --online --rate`), after %d s at the same rate that are not recorded, so the client's start-up stays out of the percentiles. Latency runs from each GET's intended send time, so a stall is charged to every GET it delayed. Each step's HdrHistogram is in %s/ as an HdrHistogram log.\n\n",
		c.CellSeconds, c.Batch, results.LatencyWarmupSeconds, results.DirLatency)
	if floors {
		b.WriteString("Before its GET steps, each row's floor: PING at the lowest step's rate over the same connections, which every server answers without touching data, so its latency is the network's, the client's and the server's event loop's. A step's p50 above the floor is what reading the value cost.\n\n")
	}
	steal, froze := false, false
	for _, l := range steps {
		steal = steal || l.HostStealShare != nil
		froze = froze || l.HostFrozenShare != nil
	}
	cols := []string{"backend", "NUMA", "offered>", "achieved>", "p50>", "p50 above floor>", "p99>", "p99.9>", "max>", "sends late p99>"}
	if steal {
		b.WriteString(stealSentence)
		cols = append(cols, "steal>")
	}
	if froze {
		cols = append(cols, "frozen>")
	}
	writeHead(&b, cols...)
	short, bound, stolen, ownShown, frozen := false, false, false, false, false
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
				ownShown = true
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
	if short {
		fmt.Fprintf(&b, "\nshort*: the step achieved less than %.0f %% of its offered rate: the client or the server could not keep up, and its latency is mostly time spent queued behind the intended send times.\n", 100*results.MinAchievedShare)
	}
	if stolen {
		fmt.Fprintf(&b, "\n‡: the hypervisor took at least %.1f %% of the host's CPU time during the step, %.0f ms of every second of one CPU: enough to put a stall of a few ms into the p99 of a step of thousands of GETs a second. That part of its tail is the host's, not the server's; fio run at another moment does not see it.\n",
			100*results.NoticeableSteal, 1000*results.NoticeableSteal)
	}
	if bound {
		b.WriteString("\nclient-bound†: the client sent its GETs late — at p99 by more than 10 % of the step's median latency — or left over 10 % of them unsent with an in-flight slot free: that much of the step's latency is the client's, not the server's. Each step's lateness is in latency.jsonl (pacing).\n")
	}
	if frozen {
		fmt.Fprintf(&b, "\n§: this machine's CPUs stood still for at least %.1f %% of their time during the step (frozen: gaps in a per-CPU sample the kernel takes every millisecond, idle included): the host did not run them at all, as when its CPU quota for the machine runs out, which steal does not count. Every GET in flight then waited, so that part of the step's tail is the host's, not the server's.\n",
			100*results.NoticeableSteal)
	}
	if ownShown {
		b.WriteString("\nSends late p99 is from each GET's intended time to its send; (own) is the client's part alone, from the time the GET could be sent: a server slower than the schedule keeps every in-flight slot taken and holds the sends back, which is its delay (the latency carries it), not the client's. Only the own part makes a step client-bound.\n")
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

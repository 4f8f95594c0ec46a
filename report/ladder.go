package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/internal/plots"
	"github.com/tierbench/tierbench/results"
)

// Ladders writes the ladders as Markdown, top layer first.
func Ladders(ls []results.Ladder) string {
	if len(ls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Where the time goes\n\n")
	for _, l := range ls {
		fmt.Fprintf(&b, "### %s\n\n", human.Title(l.Backend))
		steal := slices.ContainsFunc(l.Layers, func(x results.LadderLayer) bool { return x.StealShare != nil })
		cols := []string{"layer", "ops/s>", "share of the layer below>", "CPU µs per op>", "what ran"}
		if steal {
			cols = slices.Insert(cols, 4, "steal>")
		}
		writeHead(&b, cols...)
		for i := len(l.Layers) - 1; i >= 0; i-- {
			x := l.Layers[i]
			ops, share, cpu := "—", "—", "—"
			if x.OpsPerSec > 0 {
				ops = human.Ops(x.OpsPerSec)
			}
			if x.Share > 0 {
				share = fmt.Sprintf("%.2f", x.Share)
			}
			if x.CPUMicrosPerOp > 0 {
				cpu = fmt.Sprintf("%.2f", x.CPUMicrosPerOp)
			}
			detail := x.Detail
			if x.Error != "" {
				detail = strings.TrimSpace(detail + " — " + x.Error)
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |", x.Layer, ops, share, cpu)
			if steal {
				fmt.Fprintf(&b, " %s |", human.SharePercent(x.StealShare))
			}
			fmt.Fprintf(&b, " %s |\n", detail)
		}
		if l.Gap != "" {
			fmt.Fprintf(&b, "\n%s.\n", human.Title(l.Gap))
		}
		for _, x := range l.Layers {
			if x.Flag != "" {
				fmt.Fprintf(&b, "\n**Flagged: %s.**\n", x.Flag)
			}
		}
		for _, x := range l.Layers {
			if x.ShareIs != "" {
				fmt.Fprintf(&b, "%s's share is %s: the untiered server is the ceiling above the tiered one.\n", x.Layer, x.ShareIs)
			}
		}
		if l.Note != "" && l.Note != l.Gap {
			fmt.Fprintf(&b, "%s.\n", human.Title(l.Note))
		}
		b.WriteString("\n")
		ladderLatency(&b, l.Latency, l.LatencySettle)
	}
	return b.String()
}

// ladderLatency writes a backend's latency steps beside fio at the same
// rate and depth, each marked against the targets, after how the disk
// came back before those fio runs (settled; nil when not probed).
func ladderLatency(b *strings.Builder, steps []results.LadderLatency, settled *results.DiskSettle) {
	if len(steps) == 0 {
		return
	}
	fmt.Fprintf(b, "Latency beside the disk: each --latency step, and fio alone at its offered rate (--rate_iops) and depth (connections × in flight), 512 B random reads, total latency. Target: p50 ≤ fio's + %d µs, p99 ≤ %d × fio's + %s.\n\n",
		results.LatencyP50AboveFioMicros, results.LatencyP99FioTimes, plots.FormatMicros(results.LatencyP99AboveFioMicros))
	if settled != nil {
		fmt.Fprintf(b, "The rungs below and fio's own file had just written a dataset's worth: %s.\n\n",
			settleSentence(*settled, "fio over its own file (laid out by the first probe", "these fio runs"))
	}
	steal, froze, loaded := false, false, false
	for _, s := range steps {
		steal = steal || s.StealShare != nil || s.FioStealShare != nil
		froze = froze || s.FrozenShare != nil || s.FioFrozenShare != nil
		loaded = loaded || s.UnderLoad != nil
	}
	cols := []string{"row", "offered>", "depth>", "p50>", "fio p50>", "p99>", "fio p99>", "within target"}
	if steal {
		fmt.Fprintf(b, "Steal is the share of the host's CPU time the hypervisor took during the step, and during fio's run beside it (/proc/stat): a step that misses its p99 target with steal in its own window and less in fio's lost part of its tail to the host, which fio did not see (host steal); a fio run with %.1f %% or more, and more than its step, carries the host's stalls in its own latencies, and the target taken from them is looser than the disk's (fio's run not quiet).\n\n", 100*results.NoticeableSteal)
		cols = slices.Insert(cols, len(cols)-1, "steal (step / fio)>")
	}
	if froze {
		fmt.Fprintf(b, "Frozen is the share of the host's CPU time this machine's CPUs did not run at all, during the step and during fio's run beside it (gaps in a sample the kernel takes on every CPU each millisecond, idle included: the host's CPU quota for the machine running out, which steal does not count). It reads like steal: a step that misses its p99 target with %.1f %% or more frozen, and less in fio's run, lost part of its tail to the host (host froze); a fio run frozen that much, and more than its step, is not quiet.\n\n", 100*results.NoticeableSteal)
		cols = slices.Insert(cols, len(cols)-1, "frozen (step / fio)>")
	}
	if loaded {
		fmt.Fprintf(b, "Busy is the share of the host's CPU time something ran in during the step, and during fio's run alone. Where the step left the host at least %.0f points less idle (busy, or stolen because nothing was idle), fio ran once more at the same rate and depth with a thread spinning on every CPU for the share of the time that leaves the host as little idle as the step did (fio under load): a virtual disk whose emulation needs the CPUs the guest keeps busy is slower so, and a step that misses its targets against fio alone but meets them against fio under load lost the difference to the host (the disk slows under load).\n\n", 100*results.LoadWorthHolding)
		cols = slices.Insert(cols, len(cols)-1, "busy (step / fio)>", "fio under load p50 / p99>")
	}
	writeHead(b, cols...)
	for _, s := range steps {
		fioP50, fioP99, verdict := "—", "—", s.Error
		if s.Error == "" {
			fioP50, fioP99 = plots.FormatMicros(s.FioP50Micros), plots.FormatMicros(s.FioP99Micros)
			p50, p99 := s.MeetsTargets()
			verdict = targetsMet(p50, p99)
			switch {
			case !p99 && hostTook(s.StealShare, s.FioStealShare):
				verdict += " (host steal)"
			case !p99 && hostTook(s.FrozenShare, s.FioFrozenShare):
				verdict += " (host froze)"
			case hostTook(s.FioStealShare, s.StealShare) || hostTook(s.FioFrozenShare, s.FrozenShare):
				verdict += " (fio's run not quiet)"
			}
			verdict += underLoadVerdict(s, p50, p99)
		}
		fmt.Fprintf(b, "| %s %s | %s (%.0f %%) | %d | %s | %s | %s | %s |", human.Title(s.Row.Backend), s.Row.Label, human.Ops(s.OfferedOpsPerSec), 100*s.Share,
			s.Depth, plots.FormatMicros(s.P50Micros), fioP50, plots.FormatMicros(s.P99Micros), fioP99)
		if steal {
			fmt.Fprintf(b, " %s / %s |", human.SharePercent(s.StealShare), human.SharePercent(s.FioStealShare))
		}
		if froze {
			fmt.Fprintf(b, " %s / %s |", human.SharePercent(s.FrozenShare), human.SharePercent(s.FioFrozenShare))
		}
		if loaded {
			fmt.Fprintf(b, " %s / %s | %s |", human.SharePercent(s.BusyShare), human.SharePercent(s.FioBusyShare), underLoadCell(s.UnderLoad))
		}
		fmt.Fprintf(b, " %s |\n", verdict)
	}
	b.WriteString("\n")
}

// hostTook reports whether the host took noticeable CPU time (steal, or
// freezes) from one run and less from the other beside it (nil: not
// read). For a step against fio's run: the host took time from the step
// that it did not take from fio, so a tail fio lacks is partly the host's.
// For fio's run against its step: fio's latencies carry the host's
// stalls, and a target taken from them is looser than the disk's.
func hostTook(share, beside *float64) bool {
	if share == nil || *share < results.NoticeableSteal {
		return false
	}
	return beside == nil || *share > *beside
}

// underLoadCell is fio under load's p50 / p99 and the host's busy share
// while it ran; "—" where it did not run.
func underLoadCell(u *results.FioUnderLoad) string {
	switch {
	case u == nil:
		return "—"
	case u.Error != "":
		return u.Error
	}
	cell := fmt.Sprintf("%s / %s (busy %s", plots.FormatMicros(u.P50Micros), plots.FormatMicros(u.P99Micros), human.SharePercent(u.BusyShare))
	if u.FrozenShare != nil {
		cell += ", frozen " + human.SharePercent(u.FrozenShare)
	}
	return cell + ")"

}

// underLoadVerdict adds a step's verdict against fio under load to the
// one against fio alone (p50, p99), naming the host where the load
// explains every target the step missed.
func underLoadVerdict(s results.LadderLatency, p50, p99 bool) string {
	if s.UnderLoad == nil || s.UnderLoad.Error != "" {
		return ""
	}
	lp50, lp99 := s.MeetsTargetsUnderLoad()
	v := "; under load " + targetsMet(lp50, lp99)
	if (!p50 || !p99) && (p50 || lp50) && (p99 || lp99) {
		v += " (the disk slows under load)"
	}
	return v
}

// targetsMet says which of a step's two latency targets it met.
func targetsMet(p50, p99 bool) string {
	return map[bool]string{true: "p50 yes", false: "p50 no"}[p50] + ", " + map[bool]string{true: "p99 yes", false: "p99 no"}[p99]
}

package report

import (
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
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
		fmt.Fprintf(&b, "### %s\n\n| layer | ops/s | share of the layer below | CPU µs per op | what ran |\n|:--|--:|--:|--:|:--|\n", human.Title(l.Backend))
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
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", x.Layer, ops, share, cpu, detail)
		}
		if l.Gap != "" {
			fmt.Fprintf(&b, "\n%s.\n", human.Title(l.Gap))
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
	}
	return b.String()
}

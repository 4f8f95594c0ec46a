package orchestrator

import "github.com/tierbench/tierbench/internal/human"

// FormatOps writes a throughput the way the reference table does:
// "7.06 M", "123 K", "12.3 K", else the plain number (human.Ops).
func FormatOps(v float64) string { return human.Ops(v) }

// The bundle's ways of writing numbers (package human).
var (
	titleCase = human.Title
	share     = human.Share
)

package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// hasTLS says a row of the plan spoke TLS: the table then has a TLS
// column.
func hasTLS(plan results.Plan) bool {
	return slices.ContainsFunc(plan.Rows, func(r results.Row) bool { return r.TLS })
}

// onOff is how the table states a row's TLS.
func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// tlsMarkdown is the section of a run that measured rows both without
// and with TLS (run --tls both): each cell's median ops/sec each way, the
// ratio, and the server's CPU per GET each way, so what TLS costs the
// server is a number. "" when no row has its twin.
func tlsMarkdown(res results.Results) string {
	byKey := map[string]results.Cell{}
	for _, c := range res.Cells {
		byKey[results.CellKey(c.Row, c.Threads)] = c
	}
	var b strings.Builder
	for _, row := range res.Plan.Rows {
		if row.TLS {
			continue
		}
		twin := row
		twin.TLS = true
		for _, t := range res.Plan.Workload.Threads {
			plain, okP := byKey[results.CellKey(row, t)]
			tls, okT := byKey[results.CellKey(twin, t)]
			if !okP || !okT {
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", rowName(row), row.Label, t,
				tlsOps(plain), tlsOps(tls), tlsRatio(plain, tls),
				cpuPerGet(plain), cpuPerGet(tls), cpuDelta(plain, tls))
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "## What TLS costs\n\n" +
		"| backend | NUMA | threads | ops/sec plain | ops/sec TLS | TLS ÷ plain | server CPU plain | server CPU TLS | TLS adds per GET |\n|:--|:--|--:|--:|--:|--:|--:|--:|--:|\n" +
		b.String() + "\n"
}

// tlsOps is a cell's median, or its mark when it is kept out.
func tlsOps(c results.Cell) string {
	if c.Excluded != "" {
		return excludedMark[c.Excluded]
	}
	if c.Passes == 0 {
		return "—"
	}
	return human.Ops(c.Median)
}

func tlsRatio(plain, tls results.Cell) string {
	if plain.Excluded != "" || tls.Excluded != "" || plain.Median <= 0 || tls.Passes == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", tls.Median/plain.Median)
}

func cpuPerGet(c results.Cell) string {
	if c.ServerCPUMicrosPerGet <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f µs", c.ServerCPUMicrosPerGet)
}

func cpuDelta(plain, tls results.Cell) string {
	if plain.ServerCPUMicrosPerGet <= 0 || tls.ServerCPUMicrosPerGet <= 0 {
		return "—"
	}
	return fmt.Sprintf("%+.2f µs", tls.ServerCPUMicrosPerGet-plain.ServerCPUMicrosPerGet)
}

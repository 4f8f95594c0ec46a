package orchestrator

import (
	"fmt"
	"slices"
)

// Reasons a cell is kept out of the table.
const (
	excludedMisses       = "misses"
	excludedMemoryServed = "memory-served"
	excludedUnverified   = "unverified"
	excludedFailed       = "failed"
	excludedRefused      = "refused"
)

// median returns the median of xs (the mean of the middle two for an
// even count) with the minimum and maximum; zeros for an empty slice.
// xs is not modified.
func median(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		med = s[n/2]
	} else {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// aggregate folds the pass records into one Cell per row × threads, in
// plan order. Only the first `passes` records of a cell count (a resumed
// run never measures more). A cell is excluded when any of its passes was
// flagged: one memory-served or miss-ridden pass is enough to doubt it.
func aggregate(plan Plan, recs []PassRecord, fails []FailRecord, fioIOPS512 float64) []Cell {
	failedRow := map[string]bool{}
	refusedRow := map[string]bool{}
	for _, f := range fails {
		failedRow[f.Row.key()] = true
		refusedRow[f.Row.key()] = f.Refused
	}
	byCell := map[string][]PassRecord{}
	for _, r := range recs {
		// Judge again from the raw counts: a re-rendered report applies
		// this tierbench's thresholds, whatever the run recorded.
		judgePass(&r, plan.MaxMisses)
		k := cellKey(r.Row, r.Threads)
		byCell[k] = append(byCell[k], r)
	}
	var cells []Cell
	for _, row := range plan.Rows {
		for _, t := range plan.Config.Threads {
			rs := byCell[cellKey(row, t)]
			seen := map[int]bool{}
			var ops, rb []float64
			var counted []PassRecord
			c := Cell{Row: row, Threads: t}
			for _, r := range rs {
				if seen[r.Pass] || len(seen) == plan.Config.Passes {
					continue
				}
				seen[r.Pass] = true
				counted = append(counted, r)
				ops = append(ops, r.OpsPerSec)
				rb = append(rb, r.ReadBytesPerGet)
				c.MissRatio = max(c.MissRatio, r.MissRatio)
				switch {
				case r.TooManyMiss:
					c.Excluded = excludedMisses
				case r.MemoryServed && c.Excluded == "":
					c.Excluded = excludedMemoryServed
				case scenarioExclusion(r) != "" && c.Excluded == "":
					c.Excluded = scenarioExclusion(r)
				case r.Unverified && c.Excluded == "":
					c.Excluded = excludedUnverified
				}
			}
			c.Passes = len(ops)
			if c.Passes < plan.Config.Passes && failedRow[row.key()] {
				c.Excluded = excludedFailed
				if refusedRow[row.key()] {
					c.Excluded = excludedRefused
				}
			}
			c.Median, c.Min, c.Max = median(ops)
			c.ReadBytesPerGet, _, _ = median(rb)
			c.CellEvidence = summarizeEvidence(counted)
			cellExtras(&c, counted)
			if fioIOPS512 > 0 {
				c.FioShare = c.Median / fioIOPS512
				c.Ceiling = fioIOPS512
			}
			cells = append(cells, c)
		}
	}
	return cells
}

func cellKey(r Row, threads int) string { return fmt.Sprintf("%s/t=%d", r.key(), threads) }

// donePasses says which (cell, pass) pairs the records already hold.
func donePasses(recs []PassRecord) map[string]bool {
	done := map[string]bool{}
	for _, r := range recs {
		done[fmt.Sprintf("%s/p=%d", cellKey(r.Row, r.Threads), r.Pass)] = true
	}
	return done
}

func passKey(r Row, threads, pass int) string {
	return fmt.Sprintf("%s/p=%d", cellKey(r, threads), pass)
}

// FormatOps writes a throughput the way the reference table does:
// "7.06 M" from a million up, "123 K" / "12.3 K" from a thousand, else
// the plain number.
func FormatOps(v float64) string {
	switch {
	case v >= 999_500:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 9_950:
		return fmt.Sprintf("%.0f K", v/1e3)
	case v >= 1_000:
		return fmt.Sprintf("%.1f K", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

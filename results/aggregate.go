package results

import (
	"fmt"
	"slices"
)

// Median returns the Median of xs (the mean of the middle two for an
// even count) with the minimum and maximum; zeros for an empty slice.
// xs is not modified.
func Median(xs []float64) (med, lo, hi float64) {
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

// Aggregate folds the pass records into one Cell per row × threads, in
// plan order. Only the first `passes` records of a cell count (a resumed
// run never measures more). A cell is excluded when any of its passes was
// flagged: one memory-served or miss-ridden pass is enough to doubt it.
func Aggregate(plan Plan, recs []PassRecord, fails []FailRecord, fioIOPS512 float64) []Cell {
	failedRow := map[string]bool{}
	refusedRow := map[string]bool{}
	for _, f := range fails {
		failedRow[f.Row.ID()] = true
		refusedRow[f.Row.ID()] = f.Refused
	}
	byCell := map[string][]PassRecord{}
	for _, r := range recs {
		// Judge again from the raw counts: a re-rendered report applies
		// this tierbench's thresholds, whatever the run recorded.
		JudgePass(&r, plan.MaxMisses)
		k := CellKey(r.Row, r.Threads)
		byCell[k] = append(byCell[k], r)
	}
	var cells []Cell
	for _, row := range plan.Rows {
		for _, t := range plan.Workload.Threads {
			rs := byCell[CellKey(row, t)]
			seen := map[int]bool{}
			var ops, rb []float64
			var counted []PassRecord
			c := Cell{Row: row, Threads: t}
			for _, r := range rs {
				if seen[r.Pass] || len(seen) == plan.Workload.Passes {
					continue
				}
				seen[r.Pass] = true
				counted = append(counted, r)
				ops = append(ops, r.OpsPerSec)
				rb = append(rb, r.ReadBytesPerGet)
				c.MissRatio = max(c.MissRatio, r.MissRatio)
				switch {
				case r.TooManyMiss:
					c.Excluded = ExcludedMisses
				case r.MemoryServed && c.Excluded == "":
					c.Excluded = ExcludedMemoryServed
				case ScenarioExclusion(r) != "" && c.Excluded == "":
					c.Excluded = ScenarioExclusion(r)
				case r.Unverified && c.Excluded == "":
					c.Excluded = ExcludedUnverified
				}
			}
			c.Passes = len(ops)
			if c.Passes < plan.Workload.Passes && failedRow[row.ID()] {
				c.Excluded = ExcludedFailed
				if refusedRow[row.ID()] {
					c.Excluded = ExcludedRefused
				}
			}
			c.Median, c.Min, c.Max = Median(ops)
			c.ReadBytesPerGet, _, _ = Median(rb)
			c.CellEvidence = SummarizeEvidence(counted)
			CellExtras(&c, counted)
			if fioIOPS512 > 0 {
				c.FioShare = c.Median / fioIOPS512
				c.Ceiling = fioIOPS512
			}
			cells = append(cells, c)
		}
	}
	return cells
}

func CellKey(r Row, threads int) string { return fmt.Sprintf("%s/t=%d", r.ID(), threads) }

// DonePasses says which (cell, pass) pairs the records already hold.
func DonePasses(recs []PassRecord) map[string]bool {
	done := map[string]bool{}
	for _, r := range recs {
		done[fmt.Sprintf("%s/p=%d", CellKey(r.Row, r.Threads), r.Pass)] = true
	}
	return done
}

func PassKey(r Row, threads, pass int) string {
	return fmt.Sprintf("%s/p=%d", CellKey(r, threads), pass)
}

// CountedPasses are the passes a cell's median takes, by CellKey, in run
// order: one record per pass number, at most the plan's passes, the first
// of each, as Aggregate counts them (a resumed run's repeats are not).
func CountedPasses(plan Plan, recs []PassRecord) map[string][]PassRecord {
	out := map[string][]PassRecord{}
	seen := map[string]map[int]bool{}
	for _, r := range recs {
		k := CellKey(r.Row, r.Threads)
		if seen[k] == nil {
			seen[k] = map[int]bool{}
		}
		if seen[k][r.Pass] || len(seen[k]) == plan.Workload.Passes {
			continue
		}
		seen[k][r.Pass] = true
		out[k] = append(out[k], r)
	}
	return out
}

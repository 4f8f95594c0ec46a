package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Gate is the verdict of --fail-on-regression: which cells are
// significantly slower than the first bundle's by more than ThresholdPct,
// and how many cells no test could judge.
type Gate struct {
	ThresholdPct float64      `json:"threshold_pct"`
	Regressions  []Regression `json:"regressions"`
	// Blind counts the compared cells whose passes are too few for any
	// difference to be significant (Value.MinP > α) or that have no
	// passes: a regression there, however large, cannot fail the gate.
	Blind int `json:"blind_cells"`
	// Judged counts the compared cells the test could judge. With none,
	// the gate has no verdict (Blind says why) and the command refuses.
	Judged int  `json:"judged_cells"`
	Failed bool `json:"failed"`
}

// Regression is one cell that failed the gate.
type Regression struct {
	Scenario string  `json:"scenario"`
	Cell     string  `json:"cell"`   // "Libaio no pin t=8"
	Bundle   string  `json:"bundle"` // the slower bundle
	DeltaPct float64 `json:"delta_pct"`
	P        float64 `json:"p"`
}

// Judge sets c.Gate from the comparison: a cell fails when its delta
// against the first bundle is significant and below −thresholdPct
// (throughput lost). It returns the gate.
func (c *Comparison) Judge(thresholdPct float64) *Gate {
	g := &Gate{ThresholdPct: thresholdPct, Regressions: []Regression{}}
	for _, s := range c.Scenarios {
		for _, cell := range s.Cells {
			for i, v := range cell.Values {
				if i == 0 || !v.Compared {
					continue
				}
				if v.MinP == 0 || v.MinP > c.Alpha {
					g.Blind++
					continue
				}
				g.Judged++
				if v.Significant && v.DeltaPct < -thresholdPct {
					g.Regressions = append(g.Regressions, Regression{Scenario: s.Name, Cell: cellTitle(cell), Bundle: c.Bundles[i].Name, DeltaPct: v.DeltaPct, P: v.P})
				}
			}
		}
	}
	g.Failed = len(g.Regressions) > 0
	c.Gate = g
	return g
}

func cellTitle(c CellCmp) string {
	return fmt.Sprintf("%s %s t=%d", cellName(c), c.Label, c.Threads)
}

// Summary is the gate's verdict in a sentence or two.
func (g *Gate) Summary(base string) string {
	var b strings.Builder
	switch {
	case g.Judged == 0:
		fmt.Fprintf(&b, "no verdict: none of the %d compared cells could fail the gate whatever its delta (too few passes for any difference to be significant, or none: see the notes).", g.Blind)
		return b.String()
	case g.Failed:
		fmt.Fprintf(&b, "FAIL: %d cell(s) significantly slower than `%s` by more than %s %%: ", len(g.Regressions), base, strconv.FormatFloat(g.ThresholdPct, 'g', -1, 64))
		parts := make([]string, len(g.Regressions))
		for i, r := range g.Regressions {
			parts[i] = fmt.Sprintf("%s %s in `%s` %+.1f %% (p=%.3f)", r.Scenario, r.Cell, r.Bundle, r.DeltaPct, r.P)
		}
		b.WriteString(strings.Join(parts, "; ") + ".")
	default:
		fmt.Fprintf(&b, "pass: no cell is significantly slower than `%s` by more than %s %%.", base, strconv.FormatFloat(g.ThresholdPct, 'g', -1, 64))
	}
	if g.Blind > 0 {
		fmt.Fprintf(&b, " %d compared cell(s) could not fail it whatever their delta: too few passes for any difference to be significant, or none (see the notes).", g.Blind)
	}
	return b.String()
}

// minTwoSidedP is the smallest two-sided p the Mann–Whitney U test can
// give for samples of n1 and n2 without ties: the two most extreme
// orderings of C(n1+n2, n1), one each side.
func minTwoSidedP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	// C(n1+n2, n1) in floating point: exact enough for any pass count.
	lg := func(n int) float64 { v, _ := math.Lgamma(float64(n + 1)); return v }
	combos := math.Exp(lg(n1+n2) - lg(n1) - lg(n2))
	return math.Min(1, 2/combos)
}

// passesNeeded is the fewest passes on the side with n2 for the test to
// be able to reach alpha against n1 passes, and the fewest on both sides
// alike; 0 when n1 alone can never get there within 1000.
func passesNeeded(n1 int, alpha float64) (other, both int) {
	for n := 1; n <= 1000 && (other == 0 || both == 0); n++ {
		if other == 0 && minTwoSidedP(n1, n) <= alpha {
			other = n
		}
		if both == 0 && minTwoSidedP(n, n) <= alpha {
			both = n
		}
	}
	return other, both
}

// tooFewNote says why n1 against n2 passes can never be significant, and
// what would be.
func tooFewNote(n1, n2 int, alpha float64) string {
	other, both := passesNeeded(n1, alpha)
	s := fmt.Sprintf("%d against %d passes: the smallest p the Mann–Whitney U test can give is %.3f (two-sided, no ties), above α = %.2f, so no difference can be significant however large; %d against %d passes can reach p = %.3f",
		n1, n2, minTwoSidedP(n1, n2), alpha, both, both, minTwoSidedP(both, both))
	if other > 0 && other != both {
		s += fmt.Sprintf(" (or %d against %d: p = %.3f)", n1, other, minTwoSidedP(n1, other))
	}
	return s + "; run --passes " + fmt.Sprint(both) + " or more on both sides"
}

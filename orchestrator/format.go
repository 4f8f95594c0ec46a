package orchestrator

import (
	"math"
	"strconv"
)

// formatPercentBeside writes share v as a percentage with enough digits
// that it never reads as the threshold it is compared with — a refused
// 98.996 % beside "want ≥ 99 %" prints as "98.996 %", not "99.00 %" — and
// within 0.5 % of the true value, so about three significant digits
// (0.102 %, not "0.10 %"; 0.005 %, not "0.01 %"). Two decimals when that
// is already so.
func formatPercentBeside(v, threshold float64) string {
	const minDigits, maxDigits = 2, 12
	pct := 100 * v
	var s string
	for digits := minDigits; digits <= maxDigits; digits++ {
		s = strconv.FormatFloat(pct, 'f', digits, 64)
		printed, _ := strconv.ParseFloat(s, 64)
		distinct := v == threshold || s != strconv.FormatFloat(100*threshold, 'f', digits, 64)
		if distinct && math.Abs(printed-pct) <= 0.005*math.Abs(pct) {
			break
		}
	}
	return s + " %"
}

// Package human writes the numbers of a results bundle the way its
// tables and sentences print them: throughputs as the reference table
// does, byte sizes in binary units, shares as percentages that never read
// as the threshold they are compared with. The bundle's own derived text
// (results.json's above-ceiling reasons) is written with it, so a change
// here changes what `tierbench report --verify` derives: keep it stable.
package human

import (
	"fmt"
	"math"
	"strconv"
	"unicode"
)

// Ops writes a throughput the way the reference table does: "7.06 M"
// from a million up, "123 K" / "12.3 K" from a thousand, else the plain
// number.
func Ops(v float64) string {
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

// Bytes writes n in binary units with one decimal: "1.5 GiB", "12 B".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Title writes a backend as the reference does: "Libaio", "Uring".
func Title(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// Plural is word for a count of n: "1 shard", "2 shards".
func Plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// PercentBeside writes share v as a percentage with enough digits that
// it never reads as the threshold it is compared with — a refused
// 98.996 % beside "want ≥ 99 %" prints as "98.996 %", not "99.00 %" — and
// within 0.5 % of the true value, so about three significant digits
// (0.102 %, not "0.10 %"; 0.005 %, not "0.01 %"). Two decimals when that
// is already so.
func PercentBeside(v, threshold float64) string {
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

// Share is n over of, the share PercentBeside writes; 0 when of is 0.
func Share(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// SharePercent is a share that may not have been read, as tables and
// output lines show it: "12.3 %", or "—" when nil.
func SharePercent(share *float64) string {
	if share == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", 100**share)
}

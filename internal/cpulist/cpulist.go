// Package cpulist reads and writes the kernel's cpulist format
// ("0-3,8,10-11"), as /proc/<pid>/status Cpus_allowed_list and
// /sys/devices/system/node/node*/cpulist print it.
package cpulist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Parse parses a kernel cpulist like "0-3,8,10-11" into sorted,
// distinct numbers.
func Parse(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpulist %q: bad element %q", s, part)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a || b-a > 1<<16 {
				return nil, fmt.Errorf("cpulist %q: bad range %q", s, part)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Format writes sorted numbers back as a cpulist, ranges collapsed.
func Format(xs []int) string {
	var b strings.Builder
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", xs[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", xs[i], xs[j])
		}
		i = j + 1
	}
	return b.String()
}

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

// maxCPUs bounds what one list may name: more is not a kernel's list, and
// a list of a few bytes must not expand into gigabytes.
const maxCPUs = 1 << 16

// Parse parses a kernel cpulist like "0-3,8,10-11" ("" for none) into
// sorted, distinct numbers. Errors name the bad element; a list naming
// more than 65536 numbers is refused.
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
			return nil, fmt.Errorf("cpulist %q: bad element %q", clip(s), clip(part))
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
			if err != nil || b < a {
				return nil, fmt.Errorf("cpulist %q: bad range %q", clip(s), clip(part))
			}
		}
		if b-a >= maxCPUs || len(out)+b-a >= maxCPUs {
			return nil, fmt.Errorf("cpulist %q: more than %d numbers", clip(s), maxCPUs)
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// clip keeps an error about a long list short.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
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

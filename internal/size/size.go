// Package size reads and writes byte sizes the way the reference's flags
// and fio's options write them: "16m", "4m", "1g", "8g", "512k", "64KiB".
// It is the one parser every tierbench flag and fio option goes through.
package size

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parse reads a non-negative decimal integer with an optional unit k, m, g
// or t (powers of 1024) and an optional trailing b or, after a unit, ib;
// case-insensitive: "16m", "4m", "1g", "8g", "512k", "100", "64KB", "4KiB".
// Errors name the input.
func Parse(s string) (int64, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	if in == "" {
		return 0, fmt.Errorf("size %q is empty, want a number with an optional k, m, g or t unit, like 16m", s)
	}
	if n := len(in); n >= 3 && strings.HasSuffix(in, "ib") && strings.ContainsRune("kmgt", rune(in[n-3])) {
		in = in[:n-2]
	} else {
		in = strings.TrimSuffix(in, "b")
	}
	shift := 0
	if n := len(in); n > 0 {
		switch in[n-1] {
		case 'k':
			shift = 10
		case 'm':
			shift = 20
		case 'g':
			shift = 30
		case 't':
			shift = 40
		}
		if shift != 0 {
			in = in[:n-1]
		}
	}
	if in == "" || in[0] < '0' || in[0] > '9' {
		return 0, fmt.Errorf("size %q is not a number with an optional k, m, g or t unit, like 16m", s)
	}
	n, err := strconv.ParseUint(in, 10, 63)
	if err != nil {
		return 0, fmt.Errorf("size %q is not a number with an optional k, m, g or t unit, like 16m", s)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n) << shift, nil
}

// Format writes n the way Parse reads it, with the largest unit that
// divides it exactly: 16777216 is "16m".
func Format(n int64) string {
	units := []struct {
		shift  uint
		suffix string
	}{{40, "t"}, {30, "g"}, {20, "m"}, {10, "k"}}
	for _, u := range units {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

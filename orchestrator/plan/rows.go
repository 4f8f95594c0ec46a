package plan

import "github.com/tierbench/tierbench/results"

// ExpandRows makes a row dimension: every row once per value, in order,
// each changed by set (a scenario's -b values, a sweep's memory sizes,
// TLS off and on).
func ExpandRows[V any](rows []results.Row, values []V, set func(*results.Row, V)) []results.Row {
	out := make([]results.Row, 0, len(rows)*len(values))
	for _, row := range rows {
		for _, v := range values {
			r := row
			set(&r, v)
			out = append(out, r)
		}
	}
	return out
}

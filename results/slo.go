package results

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SLO is a latency bound a run searches capacity under (run --slo): the
// percentile of GET latency from intended send time, and its bound.
type SLO struct {
	// Percentile is "p50", "p99" or "p99.9".
	Percentile  string
	BoundMicros float64
}

// sloPercentiles are the percentiles a latency step records, in order.
var sloPercentiles = []string{"p50", "p99", "p99.9"}

// ParseSLO reads PERCENTILE=BOUND as run --slo takes it: p50, p99 or
// p99.9, then a positive decimal number of µs (us) or ms, such as
// p99=1ms or p99.9=500us.
func ParseSLO(s string) (SLO, error) {
	const example = "want PERCENTILE=BOUND such as p99=1ms or p99.9=500us (p50, p99 or p99.9; µs, us or ms)"
	name, bound, ok := strings.Cut(s, "=")
	if !ok {
		return SLO{}, fmt.Errorf("%q has no '=': %s", s, example)
	}
	p := strings.ToLower(strings.TrimSpace(name))
	if !slices.Contains(sloPercentiles, p) {
		return SLO{}, fmt.Errorf("percentile %q in %q is none of p50, p99, p99.9: %s", name, s, example)
	}
	bound = strings.TrimSpace(bound)
	num, scale := bound, 0.0
	for _, u := range []struct {
		suffix string
		micros float64
	}{{"ms", 1e3}, {"us", 1}, {"µs", 1}, {"μs", 1}} {
		if n, ok := strings.CutSuffix(bound, u.suffix); ok {
			num, scale = strings.TrimSpace(n), u.micros
			break
		}
	}
	if scale == 0 {
		return SLO{}, fmt.Errorf("bound %q in %q has no unit (us or ms): %s", bound, s, example)
	}
	v, err := decimal(num)
	if err != nil || v <= 0 {
		return SLO{}, fmt.Errorf("bound %q in %q is not a positive decimal number: %s", num, s, example)
	}
	us := v * scale
	if us > 3600e6 {
		return SLO{}, fmt.Errorf("bound %q in %q is over an hour: %s", bound, s, example)
	}
	return SLO{Percentile: p, BoundMicros: us}, nil
}

// decimal parses digits with at most one '.', nothing else (no sign,
// exponent, hex, Inf or NaN, which strconv.ParseFloat would take).
func decimal(s string) (float64, error) {
	dots := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return 0, fmt.Errorf("not a decimal")
		}
	}
	if s == "" || s == "." || dots > 1 || len(s) > 32 {
		return 0, fmt.Errorf("not a decimal")
	}
	return strconv.ParseFloat(s, 64)
}

// String is the SLO as ParseSLO reads it, the bound in ms from 1 ms up:
// p99=1ms, p99.9=500us.
func (s SLO) String() string {
	if s.BoundMicros >= 1e3 {
		return s.Percentile + "=" + strconv.FormatFloat(s.BoundMicros/1e3, 'f', -1, 64) + "ms"
	}
	return s.Percentile + "=" + strconv.FormatFloat(s.BoundMicros, 'f', -1, 64) + "us"
}

// Title is the SLO as a table header's words: "p99 ≤ 1 ms".
func (s SLO) Title() string {
	if s.BoundMicros >= 1e3 {
		return fmt.Sprintf("%s ≤ %s ms", s.Percentile, strconv.FormatFloat(s.BoundMicros/1e3, 'f', -1, 64))
	}
	return fmt.Sprintf("%s ≤ %s µs", s.Percentile, strconv.FormatFloat(s.BoundMicros, 'f', -1, 64))
}

// Of is the step's latency at the SLO's percentile, in µs.
func (s SLO) Of(rec LatencyRecord) float64 {
	switch s.Percentile {
	case "p50":
		return rec.P50Micros
	case "p99.9":
		return rec.P999Micros
	}
	return rec.P99Micros
}

// Judge says why a probe does not count as meeting the SLO, "" when it
// does: a miss or an error, a percentile over the bound, or a short
// probe (under MinAchievedShare of the offered rate achieved).
//
// A probe whose client could not keep its schedule (Pacing.ClientBound)
// is judged by what it can prove. Its latency runs from the intended send
// times, so the client's lateness is inside it: when it still meets the
// bound at the rate offered, the server's share met it too, and the rate
// counts. When it does not, the miss may be the client's, so Judge says
// "client-bound" rather than "over" or "short": the search goes no
// higher, and the result is the most this client could show, not the
// server's capacity.
//
// A probe over the bound in whose window the host took noticeable CPU
// time (LatencyRecord.HostStalled) is "host-stalled" rather than "over",
// for the same reason: a stall of the whole machine delays every GET in
// flight, so the miss may be the host's, and the rate found is a lower
// bound of the server's.
func (s SLO) Judge(rec LatencyRecord) string {
	short := rec.AchievedOpsPerSec < MinAchievedShare*rec.OfferedOpsPerSec
	switch {
	case rec.Errors > 0 || rec.Misses > 0:
		return fmt.Sprintf("%d errors, %d misses", rec.Errors, rec.Misses)
	case !short && s.Of(rec) <= s.BoundMicros:
		return ""
	case rec.Pacing != nil && rec.Pacing.ClientBound:
		return "client-bound"
	case short:
		return fmt.Sprintf("short: achieved %.0f %% of offered", 100*rec.AchievedOpsPerSec/max(rec.OfferedOpsPerSec, 1))
	case rec.HostStalled():
		return "host-stalled"
	}
	return "over"
}

// SLOFinding is what a row's probes show: the highest offered rate that
// met the SLO and the lowest probed above it that did not.
type SLOFinding struct {
	Row    Row
	Probes int
	// Met is the highest probe that met the SLO; nil when none did.
	Met *LatencyRecord
	// Above is the lowest probe above Met (or the lowest of all, when
	// none met it) that did not meet it, Why its verdict; nil when no
	// probe failed (the search reached its ceiling).
	Above *LatencyRecord
	Why   string
}

// FindSLO reads the row's probes of the SLO from recs (latency.jsonl).
// The search only probes between the highest rate that met the bound
// and the lowest that did not, so the two are its result.
func FindSLO(recs []LatencyRecord, row Row, s SLO) SLOFinding {
	f := SLOFinding{Row: row}
	name := s.String()
	for i := range recs {
		rec := &recs[i]
		if rec.Row != row || rec.SLO != name {
			continue
		}
		f.Probes++
		if s.Judge(*rec) == "" {
			if f.Met == nil || rec.OfferedOpsPerSec > f.Met.OfferedOpsPerSec {
				f.Met = rec
			}
		}
	}
	for i := range recs {
		rec := &recs[i]
		if rec.Row != row || rec.SLO != name || s.Judge(*rec) == "" {
			continue
		}
		if f.Met != nil && rec.OfferedOpsPerSec <= f.Met.OfferedOpsPerSec {
			continue
		}
		if f.Above == nil || rec.OfferedOpsPerSec < f.Above.OfferedOpsPerSec {
			f.Above, f.Why = rec, s.Judge(*rec)
		}
	}
	return f
}

package results

import (
	"strings"
	"testing"
)

func TestParseSLO(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    SLO
		str     string
		wantErr string // a word the refusal must name; "" when it parses
	}{
		{in: "p99=1ms", want: SLO{"p99", 1000}, str: "p99=1ms"},
		{in: "p50=250us", want: SLO{"p50", 250}, str: "p50=250us"},
		{in: "p99.9=1.5ms", want: SLO{"p99.9", 1500}, str: "p99.9=1.5ms"},
		{in: "P99 = 500µs", want: SLO{"p99", 500}, str: "p99=500us"},
		{in: "p99=500μs", want: SLO{"p99", 500}, str: "p99=500us"},
		{in: "p99=2000us", want: SLO{"p99", 2000}, str: "p99=2ms"},
		{in: "p99=.5ms", want: SLO{"p99", 500}, str: "p99=500us"},
		{in: "p99", wantErr: "no '='"},
		{in: "p95=1ms", wantErr: `percentile "p95"`},
		{in: "=1ms", wantErr: `percentile ""`},
		{in: "p99=1", wantErr: "no unit"},
		{in: "p99=1s", wantErr: "no unit"},
		{in: "p99=ms", wantErr: "not a positive decimal"},
		{in: "p99=0ms", wantErr: "not a positive decimal"},
		{in: "p99=-1ms", wantErr: "not a positive decimal"},
		{in: "p99=1e3us", wantErr: "not a positive decimal"},
		{in: "p99=Infms", wantErr: "not a positive decimal"},
		{in: "p99=1.2.3ms", wantErr: "not a positive decimal"},
		{in: "p99=9000000ms", wantErr: "over an hour"},
	} {
		got, err := ParseSLO(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "p99=1ms") {
				t.Errorf("ParseSLO(%q): got %+v, %v; want an error naming %s with an example", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want || got.String() != tt.str {
			t.Errorf("ParseSLO(%q): got %+v (%q), %v; want %+v (%q)", tt.in, got, got.String(), err, tt.want, tt.str)
		}
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99=1ms", "p99.9=250us", "p50=0.5ms", "p99=", "p99=1e9ms", "p99=µs"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSLO(s)
		if err != nil {
			return
		}
		if got.BoundMicros <= 0 || got.BoundMicros > 3600e6 {
			t.Fatalf("ParseSLO(%q) accepted bound %v µs", s, got.BoundMicros)
		}
		again, err := ParseSLO(got.String())
		if err != nil || again.Percentile != got.Percentile || again.BoundMicros/got.BoundMicros > 1+1e-12 || got.BoundMicros/again.BoundMicros > 1+1e-12 {
			t.Fatalf("ParseSLO(%q) = %+v, whose String %q reads back as %+v, %v", s, got, got.String(), again, err)
		}
	})
}

func TestJudgeSLO(t *testing.T) {
	slo := SLO{"p99", 1000}
	bound := &Pacing{ClientBound: true}
	frozen, quiet := NoticeableSteal, NoticeableSteal/2
	for _, tt := range []struct {
		name string
		rec  LatencyRecord
		want string
	}{
		{"under", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 999}, ""},
		{"at the bound", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 96, P99Micros: 1000}, ""},
		{"over", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 1001}, "over"},
		{"another percentile over", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 10, P999Micros: 5000}, ""},
		{"short", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 90, P99Micros: 10}, "short: achieved 90 % of offered"},
		{"a miss", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 10, Misses: 1}, "0 errors, 1 misses"},
		{"client-bound, under", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 900, Pacing: bound}, ""},
		{"client-bound, over", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 1100, Pacing: bound}, "client-bound"},
		{"client-bound, short", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 50, P99Micros: 100, Pacing: bound}, "client-bound"},
		{"frozen, under", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 900, HostFrozenShare: &frozen}, ""},
		{"frozen, over", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 1100, HostFrozenShare: &frozen}, "host-stalled"},
		{"stolen, over", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 1100, HostStealShare: &frozen}, "host-stalled"},
		{"barely frozen, over", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 1100, HostFrozenShare: &quiet}, "over"},
		{"frozen, short", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 50, P99Micros: 1100, HostFrozenShare: &frozen}, "short: achieved 50 % of offered"},
		{"client-bound and frozen, over", LatencyRecord{OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 1100, Pacing: bound, HostFrozenShare: &frozen}, "client-bound"},
	} {
		if got := slo.Judge(tt.rec); got != tt.want {
			t.Errorf("%s: Judge = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFindSLO(t *testing.T) {
	slo := SLO{"p99", 1000}
	row, other := Row{Backend: "libaio", Pin: "none"}, Row{Backend: "uring", Pin: "none"}
	probe := func(row Row, rate, p99 float64) LatencyRecord {
		return LatencyRecord{Row: row, SLO: slo.String(), OfferedOpsPerSec: rate, AchievedOpsPerSec: rate, P99Micros: p99}
	}
	recs := []LatencyRecord{probe(row, 1000, 5000), probe(row, 500, 800), probe(row, 707, 1200), probe(row, 595, 900),
		probe(other, 2000, 10), {Row: row, OfferedOpsPerSec: 100, AchievedOpsPerSec: 100, P99Micros: 1}}
	f := FindSLO(recs, row, slo)
	if f.Probes != 4 || f.Met == nil || f.Met.OfferedOpsPerSec != 595 || f.Above == nil || f.Above.OfferedOpsPerSec != 707 || f.Why != "over" {
		t.Errorf("FindSLO: got %d probes, met %+v, above %+v (%s); want 4, met at 595, over at 707", f.Probes, f.Met, f.Above, f.Why)
	}
	if f := FindSLO(recs, other, slo); f.Met == nil || f.Met.OfferedOpsPerSec != 2000 || f.Above != nil {
		t.Errorf("FindSLO(other): got met %+v, above %+v; want met at 2000 and none above", f.Met, f.Above)
	}
	if f := FindSLO(recs[:1], row, slo); f.Met != nil || f.Above == nil || f.Above.OfferedOpsPerSec != 1000 {
		t.Errorf("FindSLO(one failed probe): got met %+v, above %+v; want none met, 1000 above", f.Met, f.Above)
	}
}

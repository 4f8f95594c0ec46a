package device

import (
	"context"
	"io"
	"slices"
	"testing"
)

// BenchmarkHandoffBesideInline measures the completion-goroutine hand-off
// against inline completion the way issue 24 states its target: `tierbench
// device --backend localmemory --threads 2 --qd 64 --block 512` with the
// seed's 4 completion goroutines and throttle 512, and the same with
// --device-inline-completion, in one process, alternating the two for 5
// passes of 2 s each (so that what else runs on the machine hits both
// alike). It reports each side's median IOPS and CPU µs per op and the
// ratio of the medians, hand-off ÷ inline; every pass is logged with -v.
// It asserts nothing about the figures: they are measurements, for
// `flock /work/heavy.lock go test -run X -bench HandoffBesideInline ./device`.
func BenchmarkHandoffBesideInline(b *testing.B) {
	const passes = 5
	shape := BenchConfig{Backend: BackendLocalMemory, FileBytes: 1 << 30, Files: 1, BlockBytes: 512,
		Threads: 2, QueueDepth: 64, RuntimeSeconds: 2}
	handoff, inline := shape, shape
	handoff.CompletionThreads, handoff.ThrottleLimit = 4, 512
	inline.InlineCompletion = true
	for b.Loop() {
		var h, in []BenchResult
		for p := range passes {
			order := []*BenchConfig{&handoff, &inline}
			if p%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, cfg := range order {
				res, err := Bench(context.Background(), *cfg, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				if res.Errors != 0 {
					b.Fatalf("pass %d: %d errors, first %s", p, res.Errors, res.FirstError)
				}
				if cfg.InlineCompletion {
					in = append(in, res)
				} else {
					h = append(h, res)
				}
			}
			b.Logf("pass %d: hand-off %.2f M IOPS (%.3f CPU µs/op), inline %.2f M IOPS (%.3f CPU µs/op), ratio %.3f",
				p+1, h[p].IOPS/1e6, h[p].CPUMicrosPerOp, in[p].IOPS/1e6, in[p].CPUMicrosPerOp, h[p].IOPS/in[p].IOPS)
		}
		hIOPS, hCPU := medianOf(h, func(r BenchResult) float64 { return r.IOPS }), medianOf(h, func(r BenchResult) float64 { return r.CPUMicrosPerOp })
		iIOPS, iCPU := medianOf(in, func(r BenchResult) float64 { return r.IOPS }), medianOf(in, func(r BenchResult) float64 { return r.CPUMicrosPerOp })
		b.ReportMetric(hIOPS, "handoff-IOPS")
		b.ReportMetric(hCPU, "handoff-cpu-µs/op")
		b.ReportMetric(iIOPS, "inline-IOPS")
		b.ReportMetric(iCPU, "inline-cpu-µs/op")
		b.ReportMetric(hIOPS/iIOPS, "handoff/inline")
	}
}

// medianOf is the median of key over rs (the mean of the middle two for an
// even count).
func medianOf(rs []BenchResult, key func(BenchResult) float64) float64 {
	xs := make([]float64, len(rs))
	for i, r := range rs {
		xs[i] = key(r)
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}

package kvbench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/tierbench/tierbench/server/store"
)

// BenchmarkTieredBesideUntiered measures the tiered store on localmemory
// with the seed's completion goroutines (4, throttle 512) against the
// untiered one the way issue 24 states its target: `tierbench kv` at 2 M ×
// (16 + 96 B) records, --memory 16m, -t 2, both stores loaded in one
// process and their 2 s windows alternated for 5 passes, so that what else
// runs on the machine hits both alike. It reports each side's median ops/s
// and CPU µs per op and the ratio of the medians, tiered ÷ untiered; every
// pass is logged with -v. It asserts nothing about the figures: run it as
// `flock /work/heavy.lock go test -run X -bench TieredBesideUntiered ./server/store/kvbench`.
func BenchmarkTieredBesideUntiered(b *testing.B) {
	const passes = 5
	cfg := DefaultConfig()
	cfg.DBSize, cfg.Threads, cfg.Runtime = 2_000_000, []int{2}, 2*time.Second
	untiered, tiered := cfg, cfg
	untiered.Store = store.Config{MemoryBytes: 16 << 20, IndexBytes: 64 << 20}
	tiered.Store = store.Config{StorageTier: true, DeviceType: "localmemory", MemoryBytes: 16 << 20, IndexBytes: 64 << 20,
		CompletionThreads: 4, ThrottleLimit: 512}
	ctx := context.Background()
	open := func(c Config) *store.Store {
		st, err := store.Open(c.Store)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		if _, err := load(ctx, st, c); err != nil {
			b.Fatal(err)
		}
		return st
	}
	stU, stT := open(untiered), open(tiered)
	for b.Loop() {
		var u, t []RunResult
		for p := range passes {
			sides := []bool{false, true} // tiered?
			if p%2 == 1 {
				sides[0], sides[1] = true, false
			}
			for _, tier := range sides {
				st, c, into := stU, untiered, &u
				if tier {
					st, c, into = stT, tiered, &t
				}
				r, err := runMix(ctx, st, c, 2)
				if err != nil {
					b.Fatal(err)
				}
				if r.NotFound != 0 || (tier && r.DeviceReads == 0) {
					b.Fatalf("pass %d (tiered %v): %+v; want every read found, and device reads when tiered", p, tier, r)
				}
				*into = append(*into, r)
			}
			b.Logf("pass %d: untiered %.2f M ops/s (%.3f CPU µs/op), tiered %.2f M ops/s (%.3f CPU µs/op, %.2f device reads per op), ratio %.3f",
				p+1, u[p].OpsPerSec/1e6, u[p].CPUMicrosPerOp, t[p].OpsPerSec/1e6, t[p].CPUMicrosPerOp,
				float64(t[p].DeviceReads)/float64(t[p].Ops), t[p].OpsPerSec/u[p].OpsPerSec)
		}
		uOps, uCPU := median(u, func(r RunResult) float64 { return r.OpsPerSec }), median(u, func(r RunResult) float64 { return r.CPUMicrosPerOp })
		tOps, tCPU := median(t, func(r RunResult) float64 { return r.OpsPerSec }), median(t, func(r RunResult) float64 { return r.CPUMicrosPerOp })
		b.ReportMetric(uOps, "untiered-ops/s")
		b.ReportMetric(uCPU, "untiered-cpu-µs/op")
		b.ReportMetric(tOps, "tiered-ops/s")
		b.ReportMetric(tCPU, "tiered-cpu-µs/op")
		b.ReportMetric(tOps/uOps, "tiered/untiered")
	}
}

// median is the median of key over rs (the mean of the middle two for an
// even count).
func median(rs []RunResult, key func(RunResult) float64) float64 {
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

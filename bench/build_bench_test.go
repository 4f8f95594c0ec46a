package bench

import "testing"

// BenchmarkBuildBatches is the fixed cost a cell pays before its timed
// window: one thread's pre-built GET requests.
func BenchmarkBuildBatches(b *testing.B) {
	cfg := DefaultConfig()
	cfg.DBSize = 100000000
	cfg.Batch = 1024
	p, err := cfg.plan()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tb := buildBatches(p, 4, 0)
		if tb.count() == 0 {
			b.Fatal("no batches")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(prebuiltOps(p, 4)), "ns/request")
}

package results

import "testing"

// TestJudgeReadCacheRows: a read cache's cell that reads (almost) nothing
// from the device is memory-served, as any storage cell is, while a
// --memory sweep's row never is; the cache's hit share is its hits ÷
// GETs.
func TestJudgeReadCacheRows(t *testing.T) {
	for _, tt := range []struct {
		name      string
		row       Row
		readBytes int64
		want      bool
	}{
		{"cache serves", Row{Backend: "libaio", Pin: "none", ReadCache: "400m"}, 1000, true},
		{"cache and device", Row{Backend: "libaio", Pin: "none", ReadCache: "32m"}, 500_000_000, false},
		{"memory sweep", Row{Backend: "libaio", Pin: "none", Memory: "400m"}, 1000, false},
		{"memory sweep with a cache", Row{Backend: "libaio", Pin: "none", Memory: "16m", ReadCache: "400m"}, 1000, true},
		{"plain storage row", Row{Backend: "libaio", Pin: "none"}, 1000, true},
	} {
		rec := PassRecord{Row: tt.row, Ops: 1_000_000, Hits: 1_000_000, ReadBytes: tt.readBytes}
		rec.StoreCounted, rec.DeviceGets, rec.CacheHits = true, 10_000, 990_000
		JudgePass(&rec, 0.01)
		if rec.MemoryServed != tt.want {
			t.Errorf("%s: got memory-served %v, want %v", tt.name, rec.MemoryServed, tt.want)
		}
		if rec.CacheHitShare != 0.99 || rec.DeviceGetShare != 0.01 {
			t.Errorf("%s: got cache hit share %v, device share %v; want 0.99 and 0.01", tt.name, rec.CacheHitShare, rec.DeviceGetShare)
		}
	}
}

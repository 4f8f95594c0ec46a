package loghist

import (
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
)

// TestBucketBounds: every value lands in a bucket whose bounds hold it,
// and no bucket is wider than 1/SubBuckets of its low end.
func TestBucketBounds(t *testing.T) {
	values := []int64{0, 1, 7, 8, 9, 15, 16, 17, 100, 1000, 123456, 1 << 39, 1<<40 - 1}
	for i := 0; i < 10000; i++ {
		values = append(values, rand.Int64N(1<<40))
	}
	for _, v := range values {
		i := bucket(v)
		low, high := bounds(i)
		if v < low || v >= high {
			t.Fatalf("%d ns in bucket %d [%d, %d)", v, i, low, high)
		}
		if low >= SubBuckets && (high-low)*SubBuckets > low {
			t.Fatalf("bucket %d [%d, %d) is wider than 1/%d of its low end", i, low, high, SubBuckets)
		}
	}
	if got := bucket(1 << 50); got != Buckets-1 {
		t.Fatalf("2^50 ns in bucket %d, want the last (%d)", got, Buckets-1)
	}
	if got := bucket(-5); got != 0 {
		t.Fatalf("-5 ns in bucket %d, want 0", got)
	}
}

// TestQuantilesWithinBucketError compares the quantiles of a merged
// snapshot with the exact ones of the same values.
func TestQuantilesWithinBucketError(t *testing.T) {
	var a, b Hist
	var all []int64
	for i := 0; i < 20000; i++ {
		v := int64(rand.ExpFloat64()*50000) + 1000
		all = append(all, v)
		if i%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	var s Snapshot
	a.AddTo(&s)
	b.AddTo(&s)
	if s.Count != uint64(len(all)) {
		t.Fatalf("count %d, want %d", s.Count, len(all))
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := all[int(q*float64(len(all)))-1]
		got := s.Quantile(q)
		if d := float64(got-exact) / float64(exact); d > 0.07 || d < -0.07 {
			t.Errorf("p%g: %d ns, exact %d ns (%.1f %% off)", q*100, got, exact, 100*d)
		}
	}
	if m := s.Max(); m < all[len(all)-1] {
		t.Errorf("max %d below the largest value %d", m, all[len(all)-1])
	}
	a.Reset()
	var r Snapshot
	a.AddTo(&r)
	if r.Count != 0 || r.Quantile(0.5) != 0 {
		t.Errorf("after Reset: count %d p50 %d", r.Count, r.Quantile(0.5))
	}
}

// TestRecordWhileReading records from several goroutines while another
// merges; nothing is lost once they are done (go test -race checks the
// access).
func TestRecordWhileReading(t *testing.T) {
	var h Hist
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				h.Record(int64(i))
			}
		}()
	}
	for i := 0; i < 10; i++ {
		var s Snapshot
		h.AddTo(&s)
	}
	wg.Wait()
	var s Snapshot
	h.AddTo(&s)
	if s.Count != 4000 {
		t.Fatalf("count %d, want 4000", s.Count)
	}
}

func TestRecordAllocatesNothing(t *testing.T) {
	var h Hist
	if n := testing.AllocsPerRun(1000, func() { h.Record(Now() % 100000) }); n != 0 {
		t.Fatalf("Record allocates %.1f times", n)
	}
}

package bench

import (
	"math"
	"testing"
)

func TestZetaTailApproximation(t *testing.T) {
	for _, theta := range []float64{0.5, 0.99} {
		const n = 3 << 20
		exact := 0.0
		for i := 1; i <= n; i++ {
			exact += math.Pow(float64(i), -theta)
		}
		got := zeta(n, theta)
		if rel := math.Abs(got-exact) / exact; rel > 1e-9 {
			t.Errorf("zeta(%d, %v) = %v, want %v (relative error %g)", n, theta, got, exact, rel)
		}
	}
}

// TestZipfSkew draws keys as the generator does and compares the
// frequencies of the hottest ranks with the exact zipf probabilities.
func TestZipfSkew(t *testing.T) {
	tests := []struct {
		n     uint64
		theta float64
	}{
		{1000, 0.99},
		{100000, 0.99},
		{100000, 0.5},
		{100000000, 0.99}, // the reference's key count
	}
	const draws = 400000
	for _, tt := range tests {
		z := newZipf(tt.n, tt.theta)
		zetaN := zeta(tt.n, tt.theta)
		s := newKeySampler(tt.n, z, 42, 7)
		counts := make([]int, 100) // the hottest ranks only
		for range draws {
			k := s.next()
			if k >= tt.n {
				t.Fatalf("n=%d: drew key %d, want below %d", tt.n, k, tt.n)
			}
			if k < uint64(len(counts)) {
				counts[k]++
			}
		}
		// Each of the hottest ranks, and the band of ranks 10..99 as a
		// whole, must match the exact probability within five binomial
		// standard deviations.
		type band struct{ lo, hi uint64 }
		for _, b := range []band{{0, 1}, {1, 2}, {2, 3}, {4, 5}, {10, 100}} {
			want, got := 0.0, 0.0
			for r := b.lo; r < b.hi; r++ {
				want += z.probability(r, zetaN)
				got += float64(counts[r]) / draws
			}
			tol := 5 * math.Sqrt(want*(1-want)/draws)
			if math.Abs(got-want) > tol {
				t.Errorf("n=%d theta=%v: ranks [%d,%d) frequency %.5f, want %.5f ± %.5f", tt.n, tt.theta, b.lo, b.hi, got, want, tol)
			}
		}
		// The skew is real: the hottest key is drawn far more often than
		// a uniform draw would give it.
		if ratio := float64(counts[0]) / (draws / float64(tt.n)); ratio < 10 {
			t.Errorf("n=%d theta=%v: hottest key drawn %.1f× its uniform share, want ≥ 10×", tt.n, tt.theta, ratio)
		}
	}
}

func TestUniformKeysCoverRange(t *testing.T) {
	const n = 100
	s := newKeySampler(n, nil, 1, 1)
	counts := make([]int, n)
	for range 100000 {
		counts[s.next()]++
	}
	for k, c := range counts {
		if c < 700 || c > 1300 {
			t.Errorf("key %d drawn %d times in 100000 uniform draws, want about 1000", k, c)
		}
	}
}

func TestSamplerIsReproducible(t *testing.T) {
	a, b := newKeySampler(1000, nil, 9, 3), newKeySampler(1000, nil, 9, 3)
	c := newKeySampler(1000, nil, 9, 4)
	same := 0
	for range 100 {
		x, y, z := a.next(), b.next(), c.next()
		if x != y {
			t.Fatalf("same seed and stream drew %d and %d", x, y)
		}
		if x == z {
			same++
		}
	}
	if same > 10 {
		t.Errorf("streams 3 and 4 agreed on %d of 100 draws, want independent streams", same)
	}
}

func TestLoadRangeCoversEveryKeyOnce(t *testing.T) {
	for _, tt := range []struct {
		n       int64
		threads int
	}{{10007, 3}, {10, 4}, {3, 8}, {1, 1}, {1000000, 7}} {
		next := int64(0)
		for i := range tt.threads {
			lo, hi := loadRange(tt.n, tt.threads, i)
			if lo != next || hi < lo {
				t.Fatalf("n=%d threads=%d: thread %d gets [%d, %d), want it to start at %d", tt.n, tt.threads, i, lo, hi, next)
			}
			next = hi
		}
		if next != tt.n {
			t.Errorf("n=%d threads=%d: ranges end at %d, want %d", tt.n, tt.threads, next, tt.n)
		}
	}
}

func TestBuildBatches(t *testing.T) {
	tests := []struct {
		name             string
		op               string
		batch, prebuilt  int
		threads          int
		wantBatches      int
		wantRequestBytes int // per batch
	}{
		{"explicit", "GET", 100, 1000, 1, 10, 100 * len("*2\r\n$3\r\nGET\r\n$4\r\n0000\r\n")},
		{"automatic", "GET", 4096, 0, 1, 16, 4096 * len("*2\r\n$3\r\nGET\r\n$4\r\n0000\r\n")},
		{"automatic many threads", "GET", 64, 0, 64, 512, 64 * len("*2\r\n$3\r\nGET\r\n$4\r\n0000\r\n")},
		{"MGET one command per batch", "MGET", 10, 50, 1, 5, len("*11\r\n$4\r\nMGET\r\n") + 10*len("$4\r\n0000\r\n")},
		{"SET", "SET", 10, 30, 1, 3, 10 * len("*3\r\n$3\r\nSET\r\n$4\r\n0000\r\n$8\r\n12345678\r\n")},
		{"INCR", "INCR", 10, 30, 1, 3, 10 * len("*2\r\n$4\r\nINCR\r\n$4\r\n0000\r\n")},
		{"DEL", "DEL", 10, 30, 1, 3, 10 * len("*2\r\n$3\r\nDEL\r\n$4\r\n0000\r\n")},
		{"PING", "PING", 10, 30, 1, 3, 10 * len("*1\r\n$4\r\nPING\r\n")},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.DBSize = 5000
		cfg.Op = tt.op
		cfg.Batch = tt.batch
		cfg.PrebuiltOpsPerThread = tt.prebuilt
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		tb := buildBatches(p, tt.threads, 0)
		if tb.count() != tt.wantBatches || len(tb.keys) != tt.wantBatches*tt.batch {
			t.Errorf("%s: %d batches, %d keys; want %d batches of %d keys", tt.name, tb.count(), len(tb.keys), tt.wantBatches, tt.batch)
			continue
		}
		for i := range tb.count() {
			if got := tb.offsets[i+1] - tb.offsets[i]; got != tt.wantRequestBytes {
				t.Errorf("%s: batch %d is %d bytes, want %d", tt.name, i, got, tt.wantRequestBytes)
			}
		}
		for _, k := range tb.keys {
			if k >= uint64(cfg.DBSize) {
				t.Fatalf("%s: key %d outside the %d keys", tt.name, k, cfg.DBSize)
			}
		}
		// Each request is exactly what appendCommand encodes for its keys.
		var want []byte
		for i := range tb.count() {
			keys := tb.keys[i*tt.batch : (i+1)*tt.batch]
			if p.op.multiKey() {
				want = appendCommand(want, p.op, keys, p.keyLength, p.ValueLength)
			} else {
				for j := range keys {
					want = appendCommand(want, p.op, keys[j:j+1], p.keyLength, p.ValueLength)
				}
			}
		}
		if string(tb.req) != string(want) {
			t.Errorf("%s: pre-built requests differ from appendCommand's encoding", tt.name)
		}
	}
}

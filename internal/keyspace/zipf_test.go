package keyspace

import (
	"math"
	"math/rand/v2"
	"testing"
)

// zeta is sum_{i=1..n} i^-theta, the normaliser of the exact probabilities
// the draws are checked against: exact up to 2^20 terms, then the
// Euler–Maclaurin tail, whose error is far below the sampling noise of the
// checks (it keeps the 100 M-key check from costing seconds of math.Pow).
func zeta(n uint64, theta float64) float64 {
	const exactTerms = 1 << 20
	m := min(n, exactTerms)
	sum := 0.0
	for i := uint64(1); i <= m; i++ {
		sum += math.Pow(float64(i), -theta)
	}
	if n == m {
		return sum
	}
	a, b := float64(m), float64(n)
	f := func(x float64) float64 { return math.Pow(x, -theta) }
	integral := func(x float64) float64 { return math.Pow(x, 1-theta) / (1 - theta) }
	derivative := func(x float64) float64 { return -theta * math.Pow(x, -theta-1) }
	return sum + integral(b) - integral(a) + (f(b)-f(a))/2 + (derivative(b)-derivative(a))/12
}

// probability is the exact probability of rank i of n keys with skew theta,
// given zetaN = zeta(n, theta).
func probability(i uint64, theta, zetaN float64) float64 {
	return math.Pow(float64(i+1), -theta) / zetaN
}

func TestZetaTailApproximation(t *testing.T) {
	for _, tt := range []struct {
		n     uint64
		theta float64
	}{{1<<20 + 5000, 0.99}, {3 << 20, 0.5}, {3 << 20, 0.99}} {
		exact := 0.0
		for i := uint64(1); i <= tt.n; i++ {
			exact += math.Pow(float64(i), -tt.theta)
		}
		got := zeta(tt.n, tt.theta)
		if rel := math.Abs(got-exact) / exact; rel > 1e-9 {
			t.Errorf("zeta(%d, %v) = %v, want %v (relative error %g)", tt.n, tt.theta, got, exact, rel)
		}
	}
}

// TestZipfSkew draws keys as the load generators do and compares the
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
		zetaN := zeta(tt.n, tt.theta)
		s := NewSampler(tt.n, tt.theta)
		rng := rand.New(rand.NewPCG(42, 7))
		counts := make([]int, 100) // the hottest ranks only
		for range draws {
			k := s.Next(rng)
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
				want += probability(r, tt.theta, zetaN)
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

// TestZipfSmallKeySpaces covers the edges of rejection-inversion: a single
// key, two keys, and a skew of exactly 1 where the antiderivative switches
// to its series form.
func TestZipfSmallKeySpaces(t *testing.T) {
	for _, tt := range []struct {
		n     uint64
		theta float64
	}{{1, 0.99}, {2, 0.99}, {2, 0.5}, {10, 1}} {
		z := NewZipf(tt.n, tt.theta)
		rng := rand.New(rand.NewPCG(3, 5))
		const draws = 200000
		counts := make([]int, tt.n)
		for range draws {
			k := z.Rank(rng)
			if k >= tt.n {
				t.Fatalf("n=%d theta=%v: drew rank %d, want below %d", tt.n, tt.theta, k, tt.n)
			}
			counts[k]++
		}
		zetaN := zeta(tt.n, tt.theta)
		for r, c := range counts {
			want := probability(uint64(r), tt.theta, zetaN)
			got := float64(c) / draws
			if tol := 5*math.Sqrt(want*(1-want)/draws) + 1e-12; math.Abs(got-want) > tol {
				t.Errorf("n=%d theta=%v: rank %d frequency %.5f, want %.5f ± %.5f", tt.n, tt.theta, r, got, want, tol)
			}
		}
	}
}

func TestUniformKeysCoverRange(t *testing.T) {
	const n = 100
	s := NewSampler(n, 0)
	rng := rand.New(rand.NewPCG(1, 1))
	counts := make([]int, n)
	for range 100000 {
		counts[s.Next(rng)]++
	}
	for k, c := range counts {
		if c < 700 || c > 1300 {
			t.Errorf("key %d drawn %d times in 100000 uniform draws, want about 1000", k, c)
		}
	}
}

// TestSamplerIsReproducible: the keys of a run depend only on the rng, so
// one Sampler shared by threads gives each thread its own stream.
func TestSamplerIsReproducible(t *testing.T) {
	for _, theta := range []float64{0, 0.99} {
		s := NewSampler(1000, theta)
		a, b := rand.New(rand.NewPCG(9, 3)), rand.New(rand.NewPCG(9, 3))
		c := rand.New(rand.NewPCG(9, 4))
		same := 0
		for range 100 {
			x, y, z := s.Next(a), s.Next(b), s.Next(c)
			if x != y {
				t.Fatalf("theta=%v: the same seed and stream drew %d and %d", theta, x, y)
			}
			if x == z {
				same++
			}
		}
		// Zipf draws agree by chance on the hottest ranks more often.
		if limit := map[float64]int{0: 10, 0.99: 15}[theta]; same > limit {
			t.Errorf("theta=%v: streams 3 and 4 agreed on %d of 100 draws, want at most %d", theta, same, limit)
		}
	}
}

func TestSamplerAllocatesNothing(t *testing.T) {
	for _, theta := range []float64{0, 0.99} {
		s := NewSampler(1e8, theta)
		rng := rand.New(rand.NewPCG(1, 2))
		if allocs := testing.AllocsPerRun(1000, func() { s.Next(rng) }); allocs != 0 {
			t.Errorf("theta=%v: Next allocated %v times per draw, want 0", theta, allocs)
		}
	}
}

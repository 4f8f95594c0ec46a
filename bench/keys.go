package bench

import (
	"math"
	"math/rand/v2"
)

// zipfDist draws ranks 0..n-1 with P(rank i) = (i+1)^-theta / zeta(n, theta),
// by the method of Gray et al., "Quickly generating billion-record synthetic
// databases" (SIGMOD 1994), the generator YCSB uses. It is read-only after
// newZipf, so threads share it. Rank i is key index i: the hottest keys are
// the lowest indices.
type zipfDist struct {
	n         float64
	theta     float64
	alpha     float64 // 1 / (1 - theta)
	zetaN     float64
	eta       float64
	secondCut float64 // 1 + 0.5^theta: uz below it is rank 1
}

// newZipf prepares the distribution; 0 < theta < 1 and n >= 2.
func newZipf(n uint64, theta float64) *zipfDist {
	zetaN := zeta(n, theta)
	zeta2 := 1 + math.Pow(0.5, theta)
	nf := float64(n)
	return &zipfDist{
		n:         nf,
		theta:     theta,
		alpha:     1 / (1 - theta),
		zetaN:     zetaN,
		eta:       (1 - math.Pow(2/nf, 1-theta)) / (1 - zeta2/zetaN),
		secondCut: zeta2,
	}
}

// rank maps a uniform u in [0,1) to a rank.
func (z *zipfDist) rank(u float64) uint64 {
	uz := u * z.zetaN
	if uz < 1 {
		return 0
	}
	if uz < z.secondCut {
		return 1
	}
	r := uint64(z.n * math.Pow(z.eta*u-z.eta+1, z.alpha))
	if r >= uint64(z.n) {
		r = uint64(z.n) - 1
	}
	return r
}

// probability is the exact probability of rank i.
func (z *zipfDist) probability(i uint64) float64 {
	return math.Pow(float64(i+1), -z.theta) / z.zetaN
}

// zeta is sum_{i=1..n} i^-theta: exact up to 2^20 terms, then the
// Euler–Maclaurin tail, whose error is far below the sampling noise of any
// benchmark (it keeps a 100 M-key setup from costing seconds of math.Pow).
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

// keySampler draws key indices for one thread, uniform or zipf. It is owned
// by one goroutine.
type keySampler struct {
	n    uint64
	rng  *rand.Rand
	zipf *zipfDist // nil: uniform
}

// newKeySampler seeds a sampler for one stream (a thread of one cell); the
// same seed and stream give the same keys.
func newKeySampler(n uint64, zipf *zipfDist, seed, stream uint64) *keySampler {
	return &keySampler{n: n, rng: rand.New(rand.NewPCG(seed, mix64(stream))), zipf: zipf}
}

func (s *keySampler) next() uint64 {
	if s.zipf != nil {
		return s.zipf.rank(s.rng.Float64())
	}
	return s.rng.Uint64N(s.n)
}

package bench

import (
	"math"
	"math/rand/v2"
)

// zipfDist draws ranks 0..n-1 with P(rank i) = (i+1)^-theta / zeta(n, theta)
// exactly, by rejection-inversion (Hörmann and Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", 1996): no table,
// O(1) per draw, any theta > 0. Rank i is key index i: the hottest keys are
// the lowest indices. It is read-only after newZipf, so threads share it.
type zipfDist struct {
	n        float64
	theta    float64
	hX1      float64 // hIntegral(1.5) - 1
	hN       float64 // hIntegral(n + 0.5)
	sAccept  float64 // k - x at or below this is accepted without the test
	maxRankF float64
}

// newZipf prepares the distribution for n >= 1 and theta > 0.
func newZipf(n uint64, theta float64) *zipfDist {
	z := &zipfDist{n: float64(n), theta: theta, maxRankF: float64(n)}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(float64(n) + 0.5)
	z.sAccept = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// h is the unnormalised probability of the 1-based rank x.
func (z *zipfDist) h(x float64) float64 { return math.Exp(-z.theta * math.Log(x)) }

// hIntegral is an antiderivative of h, written to stay accurate near theta = 1.
func (z *zipfDist) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return expm1Over((1-z.theta)*logX) * logX
}

func (z *zipfDist) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.theta)
	if t < -1 {
		t = -1
	}
	return math.Exp(log1pOver(t) * x)
}

// log1pOver is log1p(x)/x, continued to 1 at x = 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3.0-0.25*x))
}

// expm1Over is expm1(x)/x, continued to 1 at x = 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// rank draws one rank using uniform variates from rng.
func (z *zipfDist) rank(rng *rand.Rand) uint64 {
	for {
		u := z.hN + rng.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.maxRankF {
			k = z.maxRankF
		}
		if k-x <= z.sAccept || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k) - 1
		}
	}
}

// probability is the exact probability of rank i; zetaN is zeta(n, theta).
// It costs a zeta sum, so only tests and reports call it.
func (z *zipfDist) probability(i uint64, zetaN float64) float64 {
	return math.Pow(float64(i+1), -z.theta) / zetaN
}

// zeta is sum_{i=1..n} i^-theta: exact up to 2^20 terms, then the
// Euler–Maclaurin tail, whose error is far below the sampling noise of any
// benchmark (it keeps a 100 M-key check from costing seconds of math.Pow).
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
		return s.zipf.rank(s.rng)
	}
	return s.rng.Uint64N(s.n)
}

package keyspace

import (
	"math"
	"math/rand/v2"
)

// Zipf draws ranks 0..n-1 with P(rank i) = (i+1)^-theta / zeta(n, theta)
// exactly, by rejection-inversion (Hörmann and Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", 1996): no table,
// O(1) per draw, any theta > 0. Rank i is key index i: the hottest keys are
// the lowest indices. It is read-only after NewZipf, so threads share it.
type Zipf struct {
	theta    float64
	hX1      float64 // hIntegral(1.5) - 1
	hN       float64 // hIntegral(n + 0.5)
	sAccept  float64 // k - x at or below this is accepted without the test
	maxRankF float64 // n
}

// NewZipf prepares the distribution for n >= 1 and theta > 0.
func NewZipf(n uint64, theta float64) *Zipf {
	z := &Zipf{theta: theta, maxRankF: float64(n)}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(float64(n) + 0.5)
	z.sAccept = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// h is the unnormalised probability of the 1-based rank x.
func (z *Zipf) h(x float64) float64 { return math.Exp(-z.theta * math.Log(x)) }

// hIntegral is an antiderivative of h, written to stay accurate near theta = 1.
func (z *Zipf) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return expm1Over((1-z.theta)*logX) * logX
}

func (z *Zipf) hIntegralInverse(x float64) float64 {
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

// Rank draws one rank using uniform variates from rng, which the caller
// owns (one per goroutine).
func (z *Zipf) Rank(rng *rand.Rand) uint64 {
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

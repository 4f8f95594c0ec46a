package kvbench

import (
	"math"
	"math/rand/v2"
)

// appendKey writes key index k in decimal, zero-padded to width bytes, as
// the RESP load generator does.
func appendKey(dst []byte, k uint64, width int) []byte {
	start := len(dst)
	for range width {
		dst = append(dst, '0')
	}
	for i := len(dst) - 1; i >= start && k > 0; i-- {
		dst[i] = byte('0' + k%10)
		k /= 10
	}
	return dst
}

// fillValue writes key index k's value: n bytes of a pattern drawn from k,
// so a read can be checked without remembering anything.
func fillValue(dst []byte, k uint64) {
	x := k*0x9e3779b97f4a7c15 + 1
	for i := range dst {
		if i%8 == 0 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		dst[i] = 'a' + byte(x>>(8*(i%8)))%26
	}
}

// zipfian draws ranks 0..n-1 with P(i) ∝ 1/(i+1)^theta, by the method of
// Gray et al., "Quickly generating billion-record synthetic databases"
// (SIGMOD 1994), as YCSB does; rank i is key index i.
type zipfian struct {
	n, theta, alpha, zetaN, eta, half float64
}

func newZipfian(n uint64, theta float64) *zipfian {
	z := &zipfian{n: float64(n), theta: theta, alpha: 1 / (1 - theta), zetaN: zetaSum(n, theta)}
	z.eta = (1 - math.Pow(2/z.n, 1-theta)) / (1 - zetaSum(2, theta)/z.zetaN)
	z.half = 1 + math.Pow(0.5, theta)
	return z
}

func (z *zipfian) next(r *rand.Rand) uint64 {
	u := r.Float64()
	uz := u * z.zetaN
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	k := uint64(z.n * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(k, uint64(z.n)-1)
}

// zetaSum is sum_{i=1..n} i^-theta: exact for the first million terms, the
// rest by the integral of x^-theta with a trapezoid end correction, so that
// 100 M keys cost milliseconds rather than seconds.
func zetaSum(n uint64, theta float64) float64 {
	const exact = 1 << 20
	m := min(n, exact)
	s := 0.0
	for i := uint64(1); i <= m; i++ {
		s += math.Pow(float64(i), -theta)
	}
	if n > m {
		a, b := float64(m), float64(n)
		s += (math.Pow(b, 1-theta)-math.Pow(a, 1-theta))/(1-theta) + (math.Pow(b, -theta)-math.Pow(a, -theta))/2
	}
	return s
}

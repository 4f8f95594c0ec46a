package keyspace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Kind names a key distribution.
type Kind uint8

// The key distributions a run can draw from.
const (
	// Uniform draws every key index alike.
	Uniform Kind = iota
	// Zipfian draws rank i with probability proportional to (i+1)^-Theta,
	// rank i being key index i: the lowest indices are the hottest.
	Zipfian
	// Hotspot is YCSB's hotspot generator: HotSet of the keys (the lowest
	// indices) take HotOps of the draws, uniform within the hot set and
	// within the rest.
	Hotspot
	// Latest is YCSB's latest generator: zipfian over recency, the most
	// recently written key the hottest. The latest key is index n-1 (the
	// load of one thread writes its keys in ascending order), so rank i is
	// key index n-1-i.
	Latest
	// Gaussian is memtier's gaussian key pattern: a normal distribution
	// of mean Median*(n-1) and standard deviation StdDev*n, rounded to the
	// nearest index; draws outside 0..n-1 are drawn again (truncated, not
	// clamped, so the two ends get no pile of the outside mass).
	Gaussian
)

var kindNames = [...]string{Uniform: "uniform", Zipfian: "zipf", Hotspot: "hotspot", Latest: "latest", Gaussian: "gaussian"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Defaults of the parameters a distribution's spelling may leave out:
// YCSB's zipfian constant and hotspot fractions, and memtier's gaussian
// (the middle of the range, a sixth of it as standard deviation).
const (
	DefaultTheta  = 0.99
	DefaultHotSet = 0.2
	DefaultHotOps = 0.8
	DefaultMedian = 0.5
	DefaultStdDev = 1.0 / 6
)

// MaxTheta bounds the zipfian skew a Dist accepts; rejection-inversion is
// exact for any theta > 0, beyond a few the hottest key takes nearly all.
const MaxTheta = 5

// MaxStdDev bounds the gaussian standard deviation (a fraction of the key
// count): past it most normal draws fall outside the range and are drawn
// again.
const MaxStdDev = 10

// Dist is a key distribution and its parameters; the zero value is
// uniform. Fractions are of the key count, so one Dist means the same shape
// at any dbsize.
type Dist struct {
	Kind   Kind
	Theta  float64 // Zipfian, Latest: skew, 0 < Theta <= MaxTheta
	HotSet float64 // Hotspot: fraction of the keys that are hot, 0 < HotSet < 1
	HotOps float64 // Hotspot: fraction of the draws that go to them, 0 <= HotOps <= 1
	Median float64 // Gaussian: the mean as a fraction of the index range, 0..1
	StdDev float64 // Gaussian: the standard deviation as a fraction of the key count, 0 < StdDev <= MaxStdDev
}

// DistSyntax is the spelling ParseDist reads, for help texts.
const DistSyntax = "uniform | zipf[:THETA] | hotspot[:HOTSET,HOTOPS] | latest[:THETA] | gaussian[:MEDIAN,STDDEV]"

// ParseDist reads a distribution spelled as DistSyntax: "uniform",
// "zipf:0.99", "hotspot:0.2,0.8", "latest", "gaussian:0.5,0.1". Left-out
// parameters take the Default values. The result is validated.
func ParseDist(s string) (Dist, error) {
	name, args, hasArgs := strings.Cut(s, ":")
	var kind Kind
	found := false
	for i, n := range kindNames {
		if strings.EqualFold(name, n) {
			kind, found = Kind(i), true
		}
	}
	if !found {
		return Dist{}, fmt.Errorf("key distribution %q: %q is not one of uniform, zipf, hotspot, latest, gaussian", clip(s), clip(name))
	}
	want := map[Kind]int{Uniform: 0, Zipfian: 1, Hotspot: 2, Latest: 1, Gaussian: 2}[kind]
	var vals []float64
	if hasArgs {
		for _, f := range strings.Split(args, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return Dist{}, fmt.Errorf("key distribution %q: %q is not a number", clip(s), clip(f))
			}
			vals = append(vals, v)
		}
		if len(vals) != want {
			return Dist{}, fmt.Errorf("key distribution %q: %s takes %d parameters, got %d (%s)", clip(s), kind, want, len(vals), DistSyntax)
		}
	}
	d := Dist{Kind: kind}
	switch kind {
	case Zipfian, Latest:
		d.Theta = DefaultTheta
		if hasArgs {
			d.Theta = vals[0]
		}
	case Hotspot:
		d.HotSet, d.HotOps = DefaultHotSet, DefaultHotOps
		if hasArgs {
			d.HotSet, d.HotOps = vals[0], vals[1]
		}
	case Gaussian:
		d.Median, d.StdDev = DefaultMedian, DefaultStdDev
		if hasArgs {
			d.Median, d.StdDev = vals[0], vals[1]
		}
	}
	if err := d.Validate(); err != nil {
		return Dist{}, fmt.Errorf("key distribution %q: %w", clip(s), err)
	}
	return d, nil
}

// clip bounds text from outside that an error message quotes.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Validate reports the first parameter of d outside its range.
func (d Dist) Validate() error {
	switch d.Kind {
	case Uniform:
	case Zipfian, Latest:
		if !(d.Theta > 0 && d.Theta <= MaxTheta) {
			return fmt.Errorf("%s theta %v is outside (0, %d]", d.Kind, d.Theta, MaxTheta)
		}
	case Hotspot:
		if !(d.HotSet > 0 && d.HotSet < 1) {
			return fmt.Errorf("hotspot hot-set fraction %v is outside (0, 1)", d.HotSet)
		}
		if !(d.HotOps >= 0 && d.HotOps <= 1) {
			return fmt.Errorf("hotspot hot-operation fraction %v is outside [0, 1]", d.HotOps)
		}
	case Gaussian:
		if !(d.Median >= 0 && d.Median <= 1) {
			return fmt.Errorf("gaussian median %v is outside [0, 1] (a fraction of the key range)", d.Median)
		}
		if !(d.StdDev > 0 && d.StdDev <= MaxStdDev) {
			return fmt.Errorf("gaussian standard deviation %v is outside (0, %d] (a fraction of the key count)", d.StdDev, MaxStdDev)
		}
	default:
		return fmt.Errorf("unknown key distribution %v", d.Kind)
	}
	return nil
}

// String spells d as ParseDist reads it, every parameter written out.
func (d Dist) String() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch d.Kind {
	case Zipfian, Latest:
		return d.Kind.String() + ":" + f(d.Theta)
	case Hotspot:
		return "hotspot:" + f(d.HotSet) + "," + f(d.HotOps)
	case Gaussian:
		return "gaussian:" + f(d.Median) + "," + f(d.StdDev)
	}
	return d.Kind.String()
}

// Skewed reports whether some keys are drawn more often than others.
func (d Dist) Skewed() bool { return d.Kind != Uniform }

// Sampler draws key indices 0..n-1 from one distribution. It holds no
// random state: the caller's rng carries the stream, so one Sampler serves
// every thread and the same rng seed gives the same keys. Next allocates
// nothing.
type Sampler struct {
	kind   Kind
	n      uint64
	zipf   *Zipf   // Zipfian, Latest
	hot    uint64  // Hotspot: keys 0..hot-1 are hot
	hotOps float64 // Hotspot
	mu     float64 // Gaussian, in key indices
	sigma  float64
}

// NewSampler draws from n >= 1 keys, zipf-distributed with skew theta > 0,
// or uniform for theta = 0 (the zipf law with exponent 0 is uniform, drawn
// directly).
func NewSampler(n uint64, theta float64) Sampler {
	if theta == 0 {
		return Sampler{n: n}
	}
	return Sampler{kind: Zipfian, n: n, zipf: NewZipf(n, theta)}
}

// Sampler prepares d, which must be valid, for n >= 1 keys. A hotspot's hot
// set is HotSet*n keys rounded down, at least one and, from two keys on,
// at most n-1, so both parts are drawn from.
func (d Dist) Sampler(n uint64) Sampler {
	s := Sampler{kind: d.Kind, n: n}
	switch d.Kind {
	case Zipfian, Latest:
		s.zipf = NewZipf(n, d.Theta)
	case Hotspot:
		s.hot = uint64(d.HotSet * float64(n))
		s.hot = max(s.hot, 1)
		if n >= 2 {
			s.hot = min(s.hot, n-1)
		}
		s.hotOps = d.HotOps
	case Gaussian:
		s.mu = d.Median * float64(n-1)
		s.sigma = d.StdDev * float64(n)
	}
	return s
}

// Keys is the number of key indices s draws from.
func (s Sampler) Keys() uint64 { return s.n }

// Next draws one key index with rng.
func (s Sampler) Next(rng *rand.Rand) uint64 {
	switch s.kind {
	case Zipfian:
		return s.zipf.Rank(rng)
	case Latest:
		return s.n - 1 - s.zipf.Rank(rng)
	case Hotspot:
		if s.hot >= s.n || rng.Float64() < s.hotOps {
			return rng.Uint64N(s.hot)
		}
		return s.hot + rng.Uint64N(s.n-s.hot)
	case Gaussian:
		top := float64(s.n)
		for {
			k := math.Floor(s.mu + s.sigma*rng.NormFloat64() + 0.5)
			if k >= 0 && k < top {
				return uint64(k)
			}
		}
	}
	return rng.Uint64N(s.n)
}

// MassKeys is the fewest distinct keys that carry at least q (0 < q <= 1)
// of s's draws: the hottest keys, counted until their probabilities add up
// to q. It is what a run must be able to draw for its key pattern to be
// the distribution's, not a smaller one. It costs O(n) for the zipfian
// kinds (their normaliser) and O(answer) otherwise.
func (s Sampler) MassKeys(q float64) uint64 {
	n := s.n
	target := q * (1 - 1e-12) // float sums must not miss an exact q
	switch s.kind {
	case Zipfian, Latest:
		theta := s.zipf.theta
		zeta := 0.0
		for i := n; i >= 1; i-- { // smallest first, for accuracy
			zeta += math.Exp(-theta * math.Log(float64(i)))
		}
		sum := 0.0
		for i := uint64(1); i <= n; i++ {
			sum += math.Exp(-theta*math.Log(float64(i))) / zeta
			if sum >= target {
				return i
			}
		}
		return n
	case Hotspot:
		hot, cold := s.hot, n-s.hot
		if cold == 0 {
			return min(n, uint64(math.Ceil(target*float64(hot))))
		}
		pHot, pCold := s.hotOps/float64(hot), (1-s.hotOps)/float64(cold)
		first, second, pFirst, pSecond := hot, cold, pHot, pCold
		if pCold > pHot {
			first, second, pFirst, pSecond = cold, hot, pCold, pHot
		}
		if target <= float64(first)*pFirst {
			return uint64(math.Ceil(target / pFirst))
		}
		rest := uint64(math.Ceil((target - float64(first)*pFirst) / pSecond))
		return first + min(rest, second)
	case Gaussian:
		cdf := func(x float64) float64 { return 0.5 * math.Erfc(-(x-s.mu)/(s.sigma*math.Sqrt2)) }
		p := func(k uint64) float64 { return cdf(float64(k)+0.5) - cdf(float64(k)-0.5) }
		inside := cdf(float64(n)-0.5) - cdf(-0.5)
		// Unimodal: grow [lo, hi] from the likeliest key, each step taking
		// the likelier neighbour.
		top := uint64(math.Min(math.Max(math.Floor(s.mu+0.5), 0), float64(n-1)))
		lo, hi := top, top
		sum := p(top) / inside
		for sum < target && hi-lo+1 < n {
			switch {
			case lo == 0:
				hi++
				sum += p(hi) / inside
			case hi == n-1 || p(lo-1) >= p(hi+1):
				lo--
				sum += p(lo) / inside
			default:
				hi++
				sum += p(hi) / inside
			}
		}
		return hi - lo + 1
	}
	return min(n, uint64(math.Ceil(target*float64(n))))
}

// TopMass is the share of s's draws that fall on its c hottest keys: the
// hit share of the best cache that holds c keys of s's distribution (one
// that knows each key's probability and keeps the likeliest), so 1 −
// TopMass(c) is the least share of draws any cache of c keys must miss.
// It is an exact sum: O(n) for the zipfian kinds (their normaliser),
// O(c) for gaussian, O(1) otherwise.
func (s Sampler) TopMass(c uint64) float64 {
	n := s.n
	if c >= n {
		return 1
	}
	if c == 0 {
		return 0
	}
	switch s.kind {
	case Zipfian, Latest:
		theta := s.zipf.theta
		var zeta, top float64
		for i := n; i >= 1; i-- { // smallest first, for accuracy
			p := math.Exp(-theta * math.Log(float64(i)))
			zeta += p
			if i <= c {
				top += p
			}
		}
		return top / zeta
	case Hotspot:
		hot, cold := s.hot, n-s.hot
		pHot, pCold := s.hotOps/float64(hot), (1-s.hotOps)/float64(cold)
		first, pFirst, pSecond := hot, pHot, pCold
		if pCold > pHot {
			first, pFirst, pSecond = cold, pCold, pHot
		}
		if c <= first {
			return float64(c) * pFirst
		}
		return float64(first)*pFirst + float64(c-first)*pSecond
	case Gaussian:
		cdf := func(x float64) float64 { return 0.5 * math.Erfc(-(x-s.mu)/(s.sigma*math.Sqrt2)) }
		inside := cdf(float64(n)-0.5) - cdf(-0.5)
		// The likeliest keys are a window around the mode; grow it to c
		// keys a neighbour at a time, as MassKeys does, and take its mass.
		p := func(k uint64) float64 { return cdf(float64(k)+0.5) - cdf(float64(k)-0.5) }
		top := uint64(math.Min(math.Max(math.Floor(s.mu+0.5), 0), float64(n-1)))
		lo, hi := top, top
		for hi-lo+1 < c {
			switch {
			case lo == 0:
				hi++
			case hi == n-1 || p(lo-1) >= p(hi+1):
				lo--
			default:
				hi++
			}
		}
		return (cdf(float64(hi)+0.5) - cdf(float64(lo)-0.5)) / inside
	}
	return float64(c) / float64(n)
}

package keyspace

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// histogramDraws is how many keys each histogram test draws: 10 M, or
// 1 M under the race detector, which slows each draw about tenfold and
// finds nothing more in a longer run of the same code; every wrong
// sampler below still fails at 1 M by a wide margin.
func histogramDraws() int {
	if raceEnabled {
		return 1_000_000
	}
	return 10_000_000
}

// The expected probabilities of key indices 0..n-1, written from each
// distribution's definition, apart from the samplers' code.

func zipfProbs(n uint64, theta float64) []float64 {
	p := make([]float64, n)
	z := zeta(n, theta)
	for i := range p {
		p[i] = probability(uint64(i), theta, z)
	}
	return p
}

func latestProbs(n uint64, theta float64) []float64 {
	p := zipfProbs(n, theta)
	slices.Reverse(p)
	return p
}

func hotspotProbs(n uint64, hotSet, hotOps float64) []float64 {
	hot := uint64(hotSet * float64(n))
	p := make([]float64, n)
	for i := range p {
		if uint64(i) < hot {
			p[i] = hotOps / float64(hot)
		} else {
			p[i] = (1 - hotOps) / float64(n-hot)
		}
	}
	return p
}

// gaussianProbs: index k is drawn for normal variates in [k-0.5, k+0.5),
// those outside [-0.5, n-0.5) drawn again.
func gaussianProbs(n uint64, median, stddev float64) []float64 {
	mu, sigma := median*float64(n-1), stddev*float64(n)
	cdf := func(x float64) float64 { return 0.5 * math.Erfc(-(x-mu)/(sigma*math.Sqrt2)) }
	inside := cdf(float64(n)-0.5) - cdf(-0.5)
	p := make([]float64, n)
	for k := range p {
		p[k] = (cdf(float64(k)+0.5) - cdf(float64(k)-0.5)) / inside
	}
	return p
}

func uniformProbs(n uint64) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1 / float64(n)
	}
	return p
}

// histogram draws keys with next from a fixed seed and counts each index.
func histogram(t *testing.T, next func(*rand.Rand) uint64, n, draws int) []uint32 {
	t.Helper()
	counts := make([]uint32, n)
	rng := rand.New(rand.NewPCG(20261202, 22))
	for range draws {
		k := next(rng)
		if k >= uint64(n) {
			t.Fatalf("drew key %d, want below %d", k, n)
		}
		counts[k]++
	}
	return counts
}

// ks is the Kolmogorov–Smirnov distance between the drawn and the
// expected distribution functions over the key indices.
func ks(counts []uint32, want []float64, draws int) float64 {
	var got, exp, d float64
	for k, p := range want {
		got += float64(counts[k]) / float64(draws)
		exp += p
		d = max(d, math.Abs(got-exp))
	}
	return d
}

// ksBound is the distance a right sampler stays under: the asymptotic
// Kolmogorov bound at p = 1e-9, sqrt(ln(2/p)/2)/sqrt(draws), which is
// conservative for a discrete distribution.
func ksBound(draws int) float64 { return math.Sqrt(math.Log(2/1e-9)/2) / math.Sqrt(float64(draws)) }

// chiSquare returns Pearson's statistic of the counts against want and
// its degrees of freedom. Neighbouring indices are merged into
// bins of at least minExpected expected draws, so the statistic is
// chi-square distributed even where single keys are rarely drawn.
func chiSquare(counts []uint32, want []float64, draws int) (stat float64, df int) {
	const minExpected = 20
	var obs, exp float64
	bins := 0
	flush := func() {
		stat += (obs - exp) * (obs - exp) / exp
		bins++
		obs, exp = 0, 0
	}
	for k, p := range want {
		obs += float64(counts[k])
		exp += p * float64(draws)
		// Close the bin once it is big enough and the rest would be too.
		if exp >= minExpected && k+1 < len(want) {
			flush()
		}
	}
	if exp > 0 || obs > 0 {
		if exp == 0 {
			return math.Inf(1), bins // draws where none may be
		}
		flush()
	}
	return stat, bins - 1
}

// chiBound is the statistic a right sampler stays under: the mean df
// plus six standard deviations sqrt(2 df), a p-value near 1e-9 — so a
// pass is never luck and the wrong samplers below miss it by orders of
// magnitude.
func chiBound(df int) float64 { return float64(df) + 6*math.Sqrt(2*float64(df)) }

type distCase struct {
	name string
	dist Dist
	n    uint64
	want func() []float64
}

func distCases() []distCase {
	return []distCase{
		{"uniform", Dist{Kind: Uniform}, 100_000, func() []float64 { return uniformProbs(100_000) }},
		{"zipf 0.99", Dist{Kind: Zipfian, Theta: 0.99}, 100_000, func() []float64 { return zipfProbs(100_000, 0.99) }},
		{"zipf 0.5", Dist{Kind: Zipfian, Theta: 0.5}, 100_000, func() []float64 { return zipfProbs(100_000, 0.5) }},
		{"zipf 1.2 small", Dist{Kind: Zipfian, Theta: 1.2}, 1000, func() []float64 { return zipfProbs(1000, 1.2) }},
		{"hotspot 0.2,0.8", Dist{Kind: Hotspot, HotSet: 0.2, HotOps: 0.8}, 100_000, func() []float64 { return hotspotProbs(100_000, 0.2, 0.8) }},
		{"hotspot 0.01,0.99", Dist{Kind: Hotspot, HotSet: 0.01, HotOps: 0.99}, 100_000, func() []float64 { return hotspotProbs(100_000, 0.01, 0.99) }},
		{"latest 0.99", Dist{Kind: Latest, Theta: 0.99}, 100_000, func() []float64 { return latestProbs(100_000, 0.99) }},
		{"gaussian middle", Dist{Kind: Gaussian, Median: 0.5, StdDev: 0.1}, 100_000, func() []float64 { return gaussianProbs(100_000, 0.5, 0.1) }},
		{"gaussian truncated", Dist{Kind: Gaussian, Median: 0.9, StdDev: 0.2}, 100_000, func() []float64 { return gaussianProbs(100_000, 0.9, 0.2) }},
		{"gaussian narrow", Dist{Kind: Gaussian, Median: 0.3, StdDev: 0.0001}, 100_000, func() []float64 { return gaussianProbs(100_000, 0.3, 0.0001) }},
	}
}

// TestDistHistograms draws 10 M keys from each distribution and holds the
// histogram to the exact probabilities with a chi-square bound.
func TestDistHistograms(t *testing.T) {
	for _, tc := range distCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := tc.dist.Sampler(tc.n)
			draws, want := histogramDraws(), tc.want()
			counts := histogram(t, s.Next, int(tc.n), draws)
			stat, df := chiSquare(counts, want, draws)
			if bound := chiBound(df); stat > bound {
				t.Errorf("%s over %d keys: chi-square %.1f with %d degrees of freedom, want at most %.1f", tc.dist, tc.n, stat, df, bound)
			}
			if d, bound := ks(counts, want, draws), ksBound(draws); d > bound {
				t.Errorf("%s over %d keys: Kolmogorov–Smirnov distance %.5f, want at most %.5f", tc.dist, tc.n, d, bound)
			}
		})
	}
}

// TestDistHistogramsCatchWrongSamplers: the same bound fails samplers that
// are wrong in the ways a sampler goes wrong — uniform passed off as
// zipf, a skew off by 0.01, ranks off by one, the latest not mirrored, a
// hot set 1 % too large or a hot share off by 0.1, a gaussian 10 %
// too wide or clamped instead of truncated.
func TestDistHistogramsCatchWrongSamplers(t *testing.T) {
	const n = 100_000
	zipf99 := Dist{Kind: Zipfian, Theta: 0.99}.Sampler(n)
	tests := []struct {
		name string
		next func(*rand.Rand) uint64
		want []float64
	}{
		{"uniform as zipf", Dist{Kind: Uniform}.Sampler(n).Next, zipfProbs(n, 0.99)},
		{"zipf theta 0.98 as 0.99", Dist{Kind: Zipfian, Theta: 0.98}.Sampler(n).Next, zipfProbs(n, 0.99)},
		{"zipf theta 1.0 as 0.99", Dist{Kind: Zipfian, Theta: 1.0}.Sampler(n).Next, zipfProbs(n, 0.99)},
		{"zipf ranks off by one", func(r *rand.Rand) uint64 { return min(zipf99.Next(r)+1, n-1) }, zipfProbs(n, 0.99)},
		{"zipf as latest", zipf99.Next, latestProbs(n, 0.99)},
		{"hot set 1% too large", func(r *rand.Rand) uint64 {
			const hot = n/5 + n/500
			if r.Float64() < 0.8 {
				return r.Uint64N(hot)
			}
			return hot + r.Uint64N(n-hot)
		}, hotspotProbs(n, 0.2, 0.8)},
		{"hot share 0.7 as 0.8", Dist{Kind: Hotspot, HotSet: 0.2, HotOps: 0.7}.Sampler(n).Next, hotspotProbs(n, 0.2, 0.8)},
		{"gaussian 10% too wide", Dist{Kind: Gaussian, Median: 0.5, StdDev: 0.11}.Sampler(n).Next, gaussianProbs(n, 0.5, 0.1)},
		{"gaussian clamped", func(r *rand.Rand) uint64 {
			x := math.Floor(0.9*(n-1) + 0.2*n*r.NormFloat64() + 0.5)
			return uint64(min(max(x, 0), n-1))
		}, gaussianProbs(n, 0.9, 0.2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			const draws = 1_000_000 // a tenth of the right samplers' draws: more only widens the gap
			counts := histogram(t, tt.next, n, draws)
			stat, df := chiSquare(counts, tt.want, draws)
			d := ks(counts, tt.want, draws)
			if stat <= chiBound(df) && d <= ksBound(draws) {
				t.Errorf("chi-square %.1f with %d degrees of freedom is within its bound %.1f and the Kolmogorov–Smirnov distance %.5f within %.5f: the tests cannot tell this sampler is wrong", stat, df, chiBound(df), d, ksBound(draws))
			}
		})
	}
}

func TestDistAllocatesNothing(t *testing.T) {
	for _, tc := range distCases() {
		s := tc.dist.Sampler(1e8)
		rng := rand.New(rand.NewPCG(1, 2))
		if allocs := testing.AllocsPerRun(10000, func() { s.Next(rng) }); allocs != 0 {
			t.Errorf("%s: Next allocated %v times per draw, want 0", tc.dist, allocs)
		}
	}
}

// TestDistIsReproducible: equal seeds give equal keys for every
// distribution, other streams other keys.
func TestDistIsReproducible(t *testing.T) {
	for _, tc := range distCases() {
		s := tc.dist.Sampler(tc.n)
		a, b, c := rand.New(rand.NewPCG(9, 3)), rand.New(rand.NewPCG(9, 3)), rand.New(rand.NewPCG(9, 4))
		same := 0
		for range 1000 {
			x, y, z := s.Next(a), s.Next(b), s.Next(c)
			if x != y {
				t.Fatalf("%s: the same seed and stream drew %d and %d", tc.dist, x, y)
			}
			if x == z {
				same++
			}
		}
		if same == 1000 && tc.dist.Kind != Gaussian {
			t.Errorf("%s: streams 3 and 4 drew the same 1000 keys", tc.dist)
		}
	}
}

func TestDistEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, d := range []Dist{{Kind: Uniform}, {Kind: Zipfian, Theta: 0.99}, {Kind: Latest, Theta: 0.5},
		{Kind: Hotspot, HotSet: 0.5, HotOps: 1}, {Kind: Hotspot, HotSet: 0.001, HotOps: 0}, {Kind: Gaussian, Median: 0, StdDev: 0.01}, {Kind: Gaussian, Median: 1, StdDev: 10}} {
		for _, n := range []uint64{1, 2, 3} {
			s := d.Sampler(n)
			for range 1000 {
				if k := s.Next(rng); k >= n {
					t.Fatalf("%s over %d keys drew %d", d, n, k)
				}
			}
		}
	}
}

// TestMassKeys compares MassKeys with the hottest keys counted from the
// sorted exact probabilities.
func TestMassKeys(t *testing.T) {
	for _, tc := range distCases() {
		want := tc.want()
		slices.SortFunc(want, func(a, b float64) int { return -cmpFloat(a, b) })
		for _, q := range []float64{0.5, 0.9, 0.99} {
			sum, need := 0.0, uint64(0)
			for _, p := range want {
				sum += p
				need++
				if sum >= q*(1-1e-12) {
					break
				}
			}
			got := tc.dist.Sampler(tc.n).MassKeys(q)
			if diff := int64(got) - int64(need); diff < -1 || diff > 1 {
				t.Errorf("%s over %d keys: MassKeys(%v) = %d, want %d", tc.dist, tc.n, q, got, need)
			}
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestParseDist(t *testing.T) {
	tests := []struct {
		in      string
		want    Dist
		wantErr string
	}{
		{"uniform", Dist{}, ""},
		{"UNIFORM", Dist{}, ""},
		{"zipf", Dist{Kind: Zipfian, Theta: 0.99}, ""},
		{"zipf:0.5", Dist{Kind: Zipfian, Theta: 0.5}, ""},
		{"zipf:1.5", Dist{Kind: Zipfian, Theta: 1.5}, ""},
		{"hotspot", Dist{Kind: Hotspot, HotSet: 0.2, HotOps: 0.8}, ""},
		{"hotspot:0.01, 0.99", Dist{Kind: Hotspot, HotSet: 0.01, HotOps: 0.99}, ""},
		{"latest", Dist{Kind: Latest, Theta: 0.99}, ""},
		{"latest:0.8", Dist{Kind: Latest, Theta: 0.8}, ""},
		{"gaussian", Dist{Kind: Gaussian, Median: 0.5, StdDev: 1.0 / 6}, ""},
		{"gaussian:0.25,0.05", Dist{Kind: Gaussian, Median: 0.25, StdDev: 0.05}, ""},
		{"", Dist{}, "is not one of"},
		{"pareto", Dist{}, "is not one of"},
		{"uniform:1", Dist{}, "takes 0 parameters"},
		{"zipf:", Dist{}, "is not a number"},
		{"zipf:0", Dist{}, "outside (0, 5]"},
		{"zipf:NaN", Dist{}, "is not a number"},
		{"zipf:0.5,0.5", Dist{}, "takes 1 parameters"},
		{"hotspot:0.2", Dist{}, "takes 2 parameters"},
		{"hotspot:1,0.5", Dist{}, "outside (0, 1)"},
		{"hotspot:0.2,1.5", Dist{}, "outside [0, 1]"},
		{"gaussian:1.5,0.1", Dist{}, "median"},
		{"gaussian:0.5,0", Dist{}, "standard deviation"},
		{"latest:-1", Dist{}, "outside"},
	}
	for _, tt := range tests {
		got, err := ParseDist(tt.in)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ParseDist(%q): %v, want %+v", tt.in, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("ParseDist(%q) = %+v, %v; want an error saying %q", tt.in, got, err, tt.wantErr)
		case err == nil && got != tt.want:
			t.Errorf("ParseDist(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// FuzzParseDist: any text either fails to parse, or parses to a valid
// distribution whose String parses back to it and whose sampler draws
// inside the range.
func FuzzParseDist(f *testing.F) {
	for _, s := range []string{"uniform", "zipf:0.99", "hotspot:0.2,0.8", "latest", "gaussian:0.5,0.1", "zipf:1e-300", "gaussian:0,10", "hotspot:0.9999999,0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDist(s)
		if err != nil {
			return
		}
		if err := d.Validate(); err != nil {
			t.Fatalf("ParseDist(%q) = %+v, which is invalid: %v", s, d, err)
		}
		back, err := ParseDist(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseDist(%q) = %+v spelled %q, which parses to %+v, %v", s, d, d.String(), back, err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for _, n := range []uint64{1, 7, 1 << 40} {
			smp := d.Sampler(n)
			for range 20 {
				if k := smp.Next(rng); k >= n {
					t.Fatalf("%s over %d keys drew %d", d, n, k)
				}
			}
		}
	})
}

// TestTopMass checks each distribution's top-C mass against the share of
// draws that land on its C most-drawn keys, and its ends.
func TestTopMass(t *testing.T) {
	const n = 2000
	draws := 400_000
	if raceEnabled {
		draws = 100_000
	}
	for _, spec := range []string{"uniform", "zipf:0.99", "zipf:0.5", "hotspot:0.2,0.8", "hotspot:0.9,0.05", "latest:0.99", "gaussian:0.5,0.1", "gaussian:0.05,0.3"} {
		d, err := ParseDist(spec)
		if err != nil {
			t.Fatal(err)
		}
		s := d.Sampler(n)
		// Rank the keys by one half of the draws and count the C first
		// in both halves: in the ranking half the C most drawn keys are
		// lucky as well as likely, which biases their share up; in the
		// other half they are just some C keys, biased down if the
		// ranking erred. The exact mass lies between, near the second.
		type key struct{ rank, held int }
		keys := make([]key, n)
		rng := rand.New(rand.NewPCG(7, 9))
		for range draws {
			keys[s.Next(rng)].rank++
		}
		for range draws {
			keys[s.Next(rng)].held++
		}
		slices.SortFunc(keys, func(a, b key) int { return b.rank - a.rank })
		for _, c := range []uint64{1, 20, 200, 800} {
			var ranked, held int
			for _, k := range keys[:c] {
				ranked += k.rank
				held += k.held
			}
			got := s.TopMass(c)
			hi, lo := float64(ranked)/float64(draws), float64(held)/float64(draws)
			noise := 4 * math.Sqrt(max(lo, 1e-3)*(1-lo)/float64(draws))
			if got < lo-noise || got > hi+noise || got-lo > 0.02 {
				t.Errorf("%s: TopMass(%d) = %.4f, want between the held-out share %.4f and the ranking share %.4f, within 0.02 of the first", spec, c, got, lo, hi)
			}
		}
		if got := s.TopMass(0); got != 0 {
			t.Errorf("%s: TopMass(0) = %v, want 0", spec, got)
		}
		if got := s.TopMass(n); got != 1 {
			t.Errorf("%s: TopMass(n) = %v, want 1", spec, got)
		}
		if a, b := s.TopMass(100), s.TopMass(101); b < a {
			t.Errorf("%s: TopMass(101) = %v < TopMass(100) = %v, want it not to fall", spec, b, a)
		}
	}
}

// TestTopMassZipfClosedForm checks the zipf sum against 1 − H(C,θ)/H(N,θ)'s
// complement at θ = 1, where H is the harmonic number.
func TestTopMassZipfClosedForm(t *testing.T) {
	const n, c = 100_000, 1000
	var hc, hn float64
	for i := 1; i <= n; i++ {
		hn += 1 / float64(i)
		if i <= c {
			hc += 1 / float64(i)
		}
	}
	got := NewSampler(n, 1).TopMass(c)
	if want := hc / hn; math.Abs(got-want) > 1e-9 {
		t.Errorf("TopMass(%d) of zipf θ 1 over %d keys: got %.12f, want H(C)/H(N) = %.12f", c, n, got, want)
	}
}

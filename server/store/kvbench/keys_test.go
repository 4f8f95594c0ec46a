package kvbench

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestAppendKey(t *testing.T) {
	for _, tc := range []struct {
		k     uint64
		width int
		want  string
	}{
		{0, 16, "0000000000000000"},
		{42, 16, "0000000000000042"},
		{2499999, 7, "2499999"},
		{7, 1, "7"},
	} {
		if got := string(appendKey([]byte("x"), tc.k, tc.width)); got != "x"+tc.want {
			t.Errorf("appendKey(%d, %d): got %q, want %q", tc.k, tc.width, got, "x"+tc.want)
		}
	}
}

// TestZipfian checks the draws against the exact probabilities of the
// hottest ranks, and that every draw is in range.
func TestZipfian(t *testing.T) {
	const n, draws = 100000, 400000
	z := newZipfian(n, 0.99)
	r := rand.New(rand.NewPCG(1, 2))
	counts := make([]int, 4)
	for range draws {
		k := z.next(r)
		if k >= n {
			t.Fatalf("draw %d out of range [0, %d)", k, n)
		}
		if k < 4 {
			counts[k]++
		}
	}
	// Gray's method is exact for ranks 0 and 1 and approximate beyond,
	// where it must still be decreasing.
	for i, c := range counts[:2] {
		want := math.Pow(float64(i+1), -0.99) / z.zetaN
		got := float64(c) / draws
		if math.Abs(got-want) > 0.05*want {
			t.Errorf("rank %d: got frequency %.4f, want %.4f ± 5%%", i, got, want)
		}
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] >= counts[i-1] {
			t.Errorf("rank %d drawn %d times, rank %d %d times: want fewer", i, counts[i], i-1, counts[i-1])
		}
	}
}

func TestZetaSum(t *testing.T) {
	// Above a million terms zetaSum switches to the integral; compare with
	// the exact sum just past the switch.
	const n = 1<<20 + 5000
	exact := 0.0
	for i := 1; i <= n; i++ {
		exact += math.Pow(float64(i), -0.99)
	}
	if got := zetaSum(n, 0.99); math.Abs(got-exact) > 1e-6*exact {
		t.Errorf("zetaSum(%d): got %.9f, want %.9f", n, got, exact)
	}
}

func TestValidate(t *testing.T) {
	ok := DefaultConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
	}{
		{"no keys", func(c *Config) { c.DBSize = 0 }},
		{"short keys", func(c *Config) { c.DBSize, c.KeyLength = 1000, 2 }},
		{"no threads", func(c *Config) { c.Threads = nil }},
		{"zero threads", func(c *Config) { c.Threads = []int{0} }},
		{"mix not 100", func(c *Config) { c.RUMD = [4]int{50, 0, 0, 0} }},
		{"negative share", func(c *Config) { c.RUMD = [4]int{110, -10, 0, 0} }},
		{"verify with deletes", func(c *Config) { c.RUMD, c.Verify = [4]int{90, 0, 0, 10}, true }},
		{"theta", func(c *Config) { c.Zipf, c.Theta = true, 1 }},
		{"in flight", func(c *Config) { c.InFlight = 0 }},
		{"passes", func(c *Config) { c.Passes = 0 }},
		{"fio without a disk", func(c *Config) { c.CompareFio = true }},
		{"fio on localmemory", func(c *Config) {
			c.CompareFio, c.Store.StorageTier, c.Store.DeviceType, c.Store.LogDir = true, true, "localmemory", "/var/tmp"
		}},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: got nil error, want one", tc.name)
		}
	}
}

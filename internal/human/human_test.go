package human

import "testing"

func TestOps(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{7_060_000, "7.06 M"},
		{1_820_000, "1.82 M"},
		{999_600, "1.00 M"},
		{999_000, "999 K"},
		{123_456, "123 K"},
		{12_345, "12 K"},
		{9_994, "10 K"},
		{9_940, "9.9 K"},
		{1_000, "1.0 K"},
		{999, "999"},
		{0, "0"},
	}
	for _, tt := range tests {
		if got := Ops(tt.in); got != tt.want {
			t.Errorf("Ops(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatPercentBeside(t *testing.T) {
	tests := []struct {
		v, threshold float64
		want         string
	}{
		{0.98996, 0.99, "98.996 %"},
		{0.99, 0.99, "99.00 %"},
		{0.00102, 0.001, "0.102 %"},
		{0.0010001, 0.001, "0.10001 %"},
		{0.0009999, 0.001, "0.09999 %"},
		{0.5, 0.001, "50.00 %"},
		{0.99999999, 1, "99.999999 %"},
		{0, 0, "0.00 %"},
		{0.00102, 0, "0.102 %"},
		{0.00185, 0, "0.185 %"},
		{1e-9, 0, "0.0000001 %"},
	}
	for _, tt := range tests {
		if got := PercentBeside(tt.v, tt.threshold); got != tt.want {
			t.Errorf("PercentBeside(%v, %v) = %q, want %q", tt.v, tt.threshold, got, tt.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "shards"}, {1, "shard"}, {2, "shards"}} {
		if got := Plural(c.n, "shard"); got != c.want {
			t.Errorf("Plural(%d, shard): got %q, want %q", c.n, got, c.want)
		}
	}
}

package store

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"16m", 16 << 20},
		{"4m", 4 << 20},
		{"1g", 1 << 30},
		{"8g", 8 << 30},
		{"512k", 512 << 10},
		{"100", 100},
		{"100b", 100},
		{"16MB", 16 << 20},
		{"2T", 2 << 40},
		{" 64K ", 64 << 10},
		{"0", 0},
	} {
		got, err := ParseSize(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSize(%q): got %d, %v; want %d, nil", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "m", "b", "-1", "1.5g", "16x", "16 m", "g16", "+5", "99999999999t", "9223372036854775808", "0x10", "1mm", "1bb"} {
		got, err := ParseSize(in)
		if err == nil {
			t.Errorf("ParseSize(%q): got %d, nil; want an error", in, got)
			continue
		}
		if !strings.Contains(err.Error(), "\""+strings.TrimSpace(in)) && !strings.Contains(err.Error(), in) {
			t.Errorf("ParseSize(%q): error %q does not name the input", in, err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for _, n := range []int64{0, 1, 100, 512 << 10, 16 << 20, 1 << 30, 8 << 30, 3 << 40, 1<<20 + 1} {
		got, err := ParseSize(FormatSize(n))
		if err != nil || got != n {
			t.Errorf("ParseSize(FormatSize(%d) = %q): got %d, %v; want %d", n, FormatSize(n), got, err, n)
		}
	}
	if got := FormatSize(16 << 20); got != "16m" {
		t.Errorf("FormatSize(16 MiB): got %q, want 16m", got)
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"16m", "4m", "1g", "8g", "512k", "100", "100b", "", "-1", "1.5g", "99999999999t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d: negative", s, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("ParseSize(FormatSize(%d)) = %d, %v", n, back, err)
		}
	})
}

package size

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
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
		{"4kib", 4 << 10},
		{"64MiB", 64 << 20},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q): got %d, %v; want %d, nil", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "m", "b", "-1", "1.5g", "16x", "16 m", "g16", "+5", "99999999999t", "9223372036854775808", "0x10", "1mm", "1bb", "ib", "1kbib"} {
		got, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q): got %d, nil; want an error", in, got)
			continue
		}
		if !strings.Contains(err.Error(), "\""+strings.TrimSpace(in)) && !strings.Contains(err.Error(), in) {
			t.Errorf("Parse(%q): error %q does not name the input", in, err)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, n := range []int64{0, 1, 100, 512 << 10, 16 << 20, 1 << 30, 8 << 30, 3 << 40, 1<<20 + 1} {
		got, err := Parse(Format(n))
		if err != nil || got != n {
			t.Errorf("Parse(Format(%d) = %q): got %d, %v; want %d", n, Format(n), got, err, n)
		}
	}
	if got := Format(16 << 20); got != "16m" {
		t.Errorf("Format(16 MiB): got %q, want 16m", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"16m", "4m", "1g", "8g", "512k", "100", "100b", "", "-1", "1.5g", "99999999999t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("Parse(%q) = %d: negative", s, n)
		}
		if back, err := Parse(Format(n)); err != nil || back != n {
			t.Fatalf("Parse(Format(%d)) = %d, %v", n, back, err)
		}
	})
}

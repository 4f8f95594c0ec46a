package cpulist

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"", nil, ""},
		{" 0-3,8,10-11\n", []int{0, 1, 2, 3, 8, 10, 11}, ""},
		{"3,1,2,2", []int{1, 2, 3}, ""},
		{"0-65535", nil, ""}, // checked by length below
		{"5-2", nil, `bad range "5-2"`},
		{"a", nil, `bad element "a"`},
		{"-1", nil, `bad element "-1"`},
		{"1,,2", nil, `bad element ""`},
		{"0-65536", nil, "more than 65536 numbers"},
		{"0-40000,0-40000", nil, "more than 65536 numbers"},
		{"0-999999999", nil, "more than 65536 numbers"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Parse(%q): got %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("Parse(%q): got error %v", tt.in, err)
		case tt.in == "0-65535" && len(got) != 65536:
			t.Errorf("Parse(%q): got %d numbers, want 65536", tt.in, len(got))
		case tt.in != "0-65535" && !slices.Equal(got, tt.want):
			t.Errorf("Parse(%q): got %v, want %v", tt.in, got, tt.want)
		}
	}
	if got, want := Format([]int{0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11"; got != want {
		t.Errorf("Format: got %q, want %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"0-55,112-167", "0", "", "1,3-5", "9-1", "0-70000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		xs, err := Parse(s)
		if err != nil {
			return
		}
		if len(xs) > maxCPUs || !slices.IsSorted(xs) || len(slices.Compact(slices.Clone(xs))) != len(xs) {
			t.Fatalf("Parse(%q): %d numbers, not sorted and distinct", s, len(xs))
		}
		back, err := Parse(Format(xs))
		if err != nil || !slices.Equal(back, xs) {
			t.Fatalf("round trip of %q: got %v, %v", s, back, err)
		}
	})
}

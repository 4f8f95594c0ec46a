package main

import (
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/bench"
)

// TestIdleNapFlag checks --idle-nap's spellings: auto, a duration, 0, and
// the clear errors for the rest.
func TestIdleNapFlag(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"auto", bench.IdleNapAuto, ""},
		{"50us", 50 * time.Microsecond, ""},
		{"0", 0, ""},
		{"-3us", 0, "-3µs is negative"},
		{"soon", 0, "want auto or a duration"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			d := time.Duration(12345)
			err := idleNapFlag{&d}.Set(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Set(%q): got error %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || d != tc.want {
				t.Fatalf("Set(%q): got %v, %v; want %v", tc.in, d, err, tc.want)
			}
			if got, want := (idleNapFlag{&d}).String(), map[bool]string{true: "auto", false: tc.want.String()}[tc.in == "auto"]; got != want {
				t.Errorf("String() after Set(%q): got %q, want %q", tc.in, got, want)
			}
		})
	}
	if got := (idleNapFlag{}).String(); got != "auto" {
		t.Errorf("zero flag's String(): got %q, want auto (the default shown by --help)", got)
	}
}

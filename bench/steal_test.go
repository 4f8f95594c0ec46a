package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/testenv"
)

func TestPrintSteal(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	tests := []struct {
		name  string
		share *float64
		want  string // "" : no line
		stall bool   // the line says what stolen time does
	}{
		{"not counted", nil, "", false},
		{"none", share(0), "took 0.0 % of this host's CPU time", false},
		{"a little", share(0.001), "took 0.1 %", false},
		{"noticeable", share(0.02), "took 2.0 %", true},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		printSteal(&b, tt.share)
		got := b.String()
		if tt.want == "" {
			if got != "" {
				t.Errorf("%s: got %q, want no line", tt.name, got)
			}
			continue
		}
		if !strings.HasPrefix(got, "[Host]: ") || !strings.Contains(got, tt.want) || strings.Contains(got, "stalled") != tt.stall {
			t.Errorf("%s: got %q, want a [Host] line with %q (stall clause %v)", tt.name, got, tt.want, tt.stall)
		}
	}
}

// TestStealIsReadOverTheWindow runs an offline cell and an online step
// against a real server: both report the host's steal as a share, on a
// kernel that counts it.
func TestStealIsReadOverTheWindow(t *testing.T) {
	if s, err := cpustat.Read("/"); err != nil || !s.HasSteal {
		t.Skipf("this host's /proc/stat gives no steal (%v): nothing to read", err)
	}
	r := testenv.MustRedisServer(t)
	offline := configFor(t, r.Addr)
	online := configFor(t, r.Addr)
	online.SkipLoad, online.Online, online.Rate = true, true, 2000
	online.Runtime = 300e6
	for _, cfg := range []Config{offline, online} {
		rep, human, err := runJSON(t, context.Background(), cfg)
		if err != nil {
			t.Fatalf("online %v: %v\n%s", cfg.Online, err, human)
		}
		var got []*float64
		for _, c := range rep.Cells {
			got = append(got, c.HostStealShare)
		}
		if rep.Online != nil {
			got = append(got, rep.Online.HostStealShare)
		}
		if len(got) == 0 {
			t.Fatalf("online %v: no cell or online result", cfg.Online)
		}
		for _, s := range got {
			if s == nil || *s < 0 || *s > 1 {
				t.Errorf("online %v: got host steal %v, want a share in [0, 1]", cfg.Online, s)
			}
		}
	}
}

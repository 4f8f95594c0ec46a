package bench

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string // "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"keylength exactly enough", func(c *Config) { c.DBSize = 100000; c.KeyLength = 5 }, ""},
		{"keylength too short", func(c *Config) { c.DBSize = 100001; c.KeyLength = 5 }, "--keylength 5 is too short for --dbsize 100001"},
		{"bad op", func(c *Config) { c.Op = "HGET" }, `--op "HGET"`},
		{"lower-case op", func(c *Config) { c.Op = "mget" }, ""},
		{"no keys", func(c *Config) { c.DBSize = 0 }, "--dbsize 0"},
		{"zero batch", func(c *Config) { c.Batch = 0 }, "-b 0"},
		{"zero threads", func(c *Config) { c.Threads = []int{4, 0} }, "-t 0"},
		{"empty sweep", func(c *Config) { c.Threads = nil }, "-t is empty"},
		{"port", func(c *Config) { c.Port = 70000 }, "--port 70000"},
		{"value length", func(c *Config) { c.ValueLength = 0 }, "--valuelength 0"},
		{"theta", func(c *Config) { c.Zipf = true; c.ZipfTheta = 1 }, "--zipf-theta 1"},
		{"verify SET", func(c *Config) { c.Op = "SET"; c.Verify = true }, "--verify checks GET and MGET"},
		{"offline forever", func(c *Config) { c.Runtime = -time.Second }, "offline cells need a duration"},
		{"rate offline", func(c *Config) { c.Rate = 10 }, "need --online"},
		{"online", func(c *Config) { c.Online = true; c.OpWorkload = []string{"GET", "SET"}; c.OpPercent = []int{50, 50} }, ""},
		{"online shares", func(c *Config) { c.Online = true; c.OpWorkload = []string{"GET", "SET"}; c.OpPercent = []int{50, 40} }, "adds up to 90"},
		{"online lengths", func(c *Config) { c.Online = true; c.OpWorkload = []string{"GET", "SET"}; c.OpPercent = []int{100} }, "2 commands but --op-percent has 1"},
		{"online MGET", func(c *Config) { c.Online = true; c.OpWorkload = []string{"MGET"} }, `--op-workload "MGET"`},
		{"online load only", func(c *Config) { c.Online = true; c.Runtime = 0 }, "--runtime 0"},
		{"online itp", func(c *Config) { c.Online = true; c.InFlight = 0 }, "--itp 0"},
		{"warm-up offline", func(c *Config) { c.Warmup = time.Second }, "--warmup-seconds need --online"},
		{"online warm-up negative", func(c *Config) { c.Online = true; c.Warmup = -time.Second }, "--warmup-seconds -1 is negative"},
		{"online warm-up", func(c *Config) { c.Online = true; c.Warmup = time.Second }, ""},
		{"no idle nap", func(c *Config) { c.IdleNap = 0 }, ""},
		{"negative idle nap", func(c *Config) { c.IdleNap = -time.Microsecond }, "--idle-nap -1µs is outside 0..1s"},
		{"idle nap past a second", func(c *Config) { c.IdleNap = 2 * time.Second }, "--idle-nap 2s is outside 0..1s"},
		{"window", func(c *Config) { c.Pipeline = PipelineWindow }, ""},
		{"bad pipeline", func(c *Config) { c.Pipeline = "stream" }, `--pipeline "stream" is not batch or window`},
		{"window MGET", func(c *Config) { c.Pipeline = PipelineWindow; c.Op = "MGET" }, "use --pipeline batch"},
		{"window cluster", func(c *Config) { c.Pipeline = PipelineWindow; c.Cluster = true }, "--cluster-bench routes batches by slot"},
		{"window online", func(c *Config) { c.Pipeline = PipelineWindow; c.Online = true }, "--pipeline window is an offline mode"},
		{"online verify without GET", func(c *Config) { c.Online = true; c.OpWorkload = []string{"SET"}; c.Verify = true }, "no GET"},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		tt.change(&cfg)
		err := cfg.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: got %v, want valid", tt.name, err)
		case tt.wantErr != "" && err == nil:
			t.Errorf("%s: got valid, want an error containing %q", tt.name, tt.wantErr)
		case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("%s: got %q, want it to contain %q", tt.name, err, tt.wantErr)
		case err != nil && !errors.Is(err, ErrUsage):
			t.Errorf("%s: %v does not wrap ErrUsage", tt.name, err)
		}
	}
}

func TestDefaultKeyLength(t *testing.T) {
	for _, tt := range []struct {
		dbsize int64
		want   int
	}{{1, 1}, {10, 1}, {11, 2}, {1024, 4}, {100000, 5}, {100000000, 8}} {
		cfg := DefaultConfig()
		cfg.DBSize = tt.dbsize
		p, err := cfg.plan()
		if err != nil {
			t.Fatal(err)
		}
		if p.keyLength != tt.want {
			t.Errorf("dbsize %d: key length %d, want %d", tt.dbsize, p.keyLength, tt.want)
		}
	}
}

func TestSaturated(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	tests := []struct {
		cpuSec, wallSec float64
		threads         int
		want            bool
	}{
		{0.95, 1, 1, true}, // one thread busy all the time
		{0.5, 1, 1, false}, // one thread waiting on the server half the time
		{0.95, 1, 4, procs == 1},
		{float64(procs) * 0.95, 1, 64, true},
		{0, 0, 1, false},
	}
	for _, tt := range tests {
		if got := saturated(tt.cpuSec, tt.wallSec, tt.threads); got != tt.want {
			t.Errorf("saturated(%v CPU-s, %v s, %d threads) with GOMAXPROCS %d = %v, want %v", tt.cpuSec, tt.wallSec, tt.threads, procs, got, tt.want)
		}
	}
}

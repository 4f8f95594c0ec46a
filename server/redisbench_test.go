package server

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// redisBenchmarkDefaultTests are the tests redis-benchmark 7.0 runs with
// no -t, in its order. It exits at the first error reply, so each must be
// answered without one for the run to reach the end.
var redisBenchmarkDefaultTests = []string{"PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH",
	"LPOP", "RPOP", "SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LPUSH (needed to benchmark LRANGE)",
	"LRANGE_100 (first 100 elements)", "LRANGE_300 (first 300 elements)", "LRANGE_500 (first 500 elements)",
	"LRANGE_600 (first 600 elements)", "MSET (10 keys)"}

// TestRedisBenchmarkDefaultTests runs the real redis-benchmark with its
// default test list, in memory and tiered: every test must report a rate
// and the run must end cleanly.
func TestRedisBenchmarkDefaultTests(t *testing.T) {
	bin := testenv.MustLookPath(t, "redis-benchmark")
	for _, tiered := range []bool{false, true} {
		t.Run(fmt.Sprintf("tiered=%v", tiered), func(t *testing.T) {
			cfg := Config{ScatterGatherGet: true}
			if tiered {
				cfg.Store = tieredStore(t, "native", "uring")
			}
			s := startServer(t, cfg)
			cmd := exec.Command(bin, "-h", "127.0.0.1", "-p", strconv.Itoa(s.port()), "-n", "2000", "-P", "8", "-r", "1000", "-q")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("redis-benchmark: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			if stderr.Len() > 0 {
				t.Errorf("redis-benchmark wrote to stderr:\n%s", stderr.String())
			}
			for _, test := range redisBenchmarkDefaultTests {
				re := regexp.MustCompile(`(?m)` + regexp.QuoteMeta(test) + `: ([0-9.]+) requests per second`)
				if m := re.FindStringSubmatch(stdout.String()); m == nil {
					t.Errorf("redis-benchmark printed no rate for %s:\n%s", test, stdout.String())
				} else if rate, _ := strconv.ParseFloat(m[1], 64); rate <= 0 {
					t.Errorf("redis-benchmark %s: rate %s, want above zero", test, m[1])
				}
			}
			t.Logf("redis-benchmark -n 2000 -P 8 -r 1000 -q:\n%s", regexp.MustCompile(`[^\n]*\r`).ReplaceAllString(stdout.String(), ""))
		})
	}
}

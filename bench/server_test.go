package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestAgainstTierbenchServer drives the real tierbench server, tiered onto
// O_DIRECT files with a log memory far smaller than the data, so most GETs
// are device reads: the load must be exact and every value must verify.
func TestAgainstTierbenchServer(t *testing.T) {
	bin := testenv.MustBinary(t)
	port := testenv.FreePort(t)
	srv := exec.Command(bin, "server", "--port", strconv.Itoa(port), "--storage-tier",
		"--memory", "256k", "--page", "64k", "--segment", "1m", "--index", "1m", "--logdir", testenv.MustDiskDir(t))
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.StopProcess(srv) })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	testenv.MustWaitPing(t, addr, 20*time.Second)

	cfg := configFor(t, addr)
	cfg.DBSize = 20011
	cfg.KeyLength = 16
	cfg.ValueLength = 96
	cfg.Verify = true
	cfg.Threads = []int{1, 4}
	rep, human, err := runJSON(t, context.Background(), cfg)
	if err != nil {
		t.Fatalf("load and verified GETs: %v\n%s", err, human)
	}
	if rep.Load.Acknowledged != cfg.DBSize {
		t.Errorf("acknowledged %d, want %d", rep.Load.Acknowledged, cfg.DBSize)
	}
	if got := redisInt(t, addr, "DBSIZE"); got != cfg.DBSize {
		t.Errorf("DBSIZE %d, want %d", got, cfg.DBSize)
	}
	for _, c := range rep.Cells {
		if c.Ops == 0 || c.Hits != c.Ops || c.Mismatches != 0 {
			t.Errorf("t=%d: ops %d hits %d mismatches %d: want every GET a verified hit", c.Threads, c.Ops, c.Hits, c.Mismatches)
		}
	}

	online := cfg
	online.SkipLoad = true
	online.Online = true
	online.Threads = []int{2}
	online.OpWorkload = []string{"GET", "SET"}
	online.OpPercent = []int{80, 20}
	online.InFlight = 4
	online.Runtime = 500 * time.Millisecond
	rep, human, err = runJSON(t, context.Background(), online)
	if err != nil {
		t.Fatalf("online: %v\n%s", err, human)
	}
	if o := rep.Online; o.Ops == 0 || o.Hits != o.Ops || o.LatencyMicros.P50 <= 0 {
		t.Errorf("online ops %d hits %d p50 %v: want verified hits with latencies", o.Ops, o.Hits, o.LatencyMicros.P50)
	}
}

package server

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// serverProcess is a `tierbench server` run as its own process, so that
// its memory (VmHWM) and its scheduling are its own, not the test's.
type serverProcess struct {
	addr string
	pid  int
}

// startServerProcess runs the tierbench binary's server on a free
// loopback port with extra flags, with 8 MiB log pages, in memory, or
// tiered onto a disk directory with 16 MiB of the log in memory.
func startServerProcess(t *testing.T, tiered bool, extra ...string) serverProcess {
	t.Helper()
	port := testenv.FreePort(t)
	args := []string{"server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--index", "16m", "--page", "8m"}
	if tiered {
		args = append(args, "--storage-tier", "--logdir", testenv.MustDiskDir(t), "--memory", "16m", "--segment", "64m")
	}
	args = append(args, extra...)
	cmd := exec.Command(testenv.MustBinary(t), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testenv.StopProcess(cmd)
		if t.Failed() {
			t.Logf("tierbench server stderr:\n%s", stderr.String())
		}
	})
	p := serverProcess{addr: fmt.Sprintf("127.0.0.1:%d", port), pid: cmd.Process.Pid}
	testenv.MustWaitPing(t, p.addr, 20*time.Second)
	return p
}

// statusBytes reads a "kB" field of /proc/<pid>/status (VmRSS, VmHWM) in
// bytes.
func statusBytes(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("read the status of pid %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status %s: %q", pid, field, line)
			}
			return kb << 10
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

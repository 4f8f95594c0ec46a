package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

// processCPU returns the user+system CPU a process has used, from
// /proc/<pid>/stat fields 14 and 15 (clock ticks, 100 a second on Linux).
func processCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatalf("read the CPU time of pid %d: %v", pid, err)
	}
	// comm (field 2) may hold spaces: split after its closing parenthesis.
	rest := b[bytes.LastIndexByte(b, ')')+2:]
	f := strings.Fields(string(rest)) // f[0] is field 3
	utime, err1 := strconv.ParseInt(f[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: utime %q stime %q", pid, f[14-3], f[15-3])
	}
	const ticksPerSecond = 100
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// bytesRead is rchar of /proc/<pid>/io: the bytes the process has read
// with read(2) and its kin, sockets included.
func bytesRead(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatalf("read the I/O counters of pid %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/io: %q", pid, line)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/io has no rchar", pid)
	return 0
}

// slowSend writes req to the server at addr (process pid) in pieces of
// pieceBytes, each only once the server has read the one before (its
// rchar), so both servers compared read every piece apart whatever the
// machine's load: a pause alone lets a server that was not scheduled in
// time read several pieces at once, and the CPU compared then depends on
// how many wakeups each server happened to get. It reads the whole reply.
func slowSend(t *testing.T, pid int, addr string, req []byte, pieceBytes int, replyBytes int) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetNoDelay(true)
	nc.SetDeadline(time.Now().Add(5 * time.Minute))
	done := make(chan error, 1)
	go func() {
		n, err := io.CopyN(io.Discard, bufio.NewReader(nc), int64(replyBytes))
		if err == nil && n != int64(replyBytes) {
			err = fmt.Errorf("reply of %d bytes, want %d", n, replyBytes)
		}
		done <- err
	}()
	base := bytesRead(t, pid)
	for off := 0; off < len(req); off += pieceBytes {
		end := min(off+pieceBytes, len(req))
		if _, err := nc.Write(req[off:end]); err != nil {
			t.Fatalf("write to %s: %v", addr, err)
		}
		for deadline := time.Now().Add(10 * time.Second); bytesRead(t, pid) < base+int64(end); {
			if time.Now().After(deadline) {
				t.Fatalf("%s read %d of the %d bytes sent in 10 s", addr, bytesRead(t, pid)-base, end)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("reply from %s: %v", addr, err)
	}
}

// TestSlowSenderCPU sends an 8 MB MGET of 800,000 keys in 2 KB writes to
// redis-server and to the tierbench server (a separate process, in
// memory), alternating, each piece read apart, and compares the CPU each
// spent: parsing resumes where it stopped, so tierbench must stay within 4x
// of Redis. Before the resumable parser it was 29x (every piece re-parsed
// the request); with it, one wakeup per 2 KB piece costs the Go server
// 1.6x to 2.6x what it costs redis-server (8 runs, with and without two
// busy loops beside), which is why the bound is not 2x: at 2x the test
// failed one fresh-clone run of scripts/test.sh in three.
func TestSlowSenderCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 2 x 8 MB to two servers; skipped with -short")
	}
	const keys, pieceBytes, passes = 800000, 2048, 2
	args := make([]string, 0, keys+1)
	args = append(args, "MGET")
	for i := 0; i < keys; i++ {
		args = append(args, strconv.FormatInt(int64(i), 36)) // at most 4 bytes: 8 MB in all
	}
	req := encodeArgs(args...)
	replyBytes := len(appendArray(nil, keys)) + keys*len(null)

	redis := testenv.MustRedisServer(t)
	port := testenv.FreePort(t)
	cmd := exec.Command(testenv.MustBinary(t), "server", "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--index", "16m")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.StopProcess(cmd) })
	tbAddr := fmt.Sprintf("127.0.0.1:%d", port)
	testenv.MustWaitPing(t, tbAddr, 20*time.Second)

	var redisCPU, tbCPU time.Duration
	for pass := 0; pass < passes; pass++ {
		for _, side := range []struct {
			addr string
			pid  int
			cpu  *time.Duration
		}{{redis.Addr, redis.Cmd.Process.Pid, &redisCPU}, {tbAddr, cmd.Process.Pid, &tbCPU}} {
			before := processCPU(t, side.pid)
			slowSend(t, side.pid, side.addr, req, pieceBytes, replyBytes)
			*side.cpu += processCPU(t, side.pid) - before
		}
	}
	ratio := float64(tbCPU) / float64(max(redisCPU, 10*time.Millisecond))
	t.Logf("%d B MGET of %d keys in %d B writes, %d passes: tierbench %v CPU, redis-server %v CPU: ratio %.2f",
		len(req), keys, pieceBytes, passes, tbCPU, redisCPU, ratio)
	if ratio > 4 {
		t.Errorf("tierbench used %.2fx redis-server's CPU for the same slow MGET (%v vs %v), want at most 4x", ratio, tbCPU, redisCPU)
	}
}

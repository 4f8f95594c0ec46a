// Package testenv starts the real peers that tierbench's tests run against:
// a redis-server on a free loopback port, and the tierbench binary itself,
// built once per test binary. Helpers follow the MustX(t testing.TB)
// convention: they fail the test rather than return an error, and clean up
// after it with t.Cleanup.
package testenv

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// MustLookPath returns the path of a program the tests need; it fails the
// test naming the script that installs it when the program is missing.
func MustLookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("testenv: %s not found on PATH: run scripts/install-deps.sh", name)
	}
	return p
}

// Redis is a redis-server started for one test.
type Redis struct {
	Addr string // 127.0.0.1:port
	Port int
	Cmd  *exec.Cmd
}

// MustRedisServer starts a redis-server with no persistence on a free
// loopback port, waits until it answers PING, and stops it when the test ends.
// Extra arguments are passed to redis-server (for example "--requirepass", "x").
func MustRedisServer(t testing.TB, extra ...string) *Redis {
	t.Helper()
	bin := MustLookPath(t, "redis-server")
	port := FreePort(t)
	args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir()}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("testenv: start redis-server: %v", err)
	}
	r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, Cmd: cmd}
	t.Cleanup(func() { StopProcess(cmd) })
	MustWaitPing(t, r.Addr, 10*time.Second)
	return r
}

// MustWaitPing waits until a RESP server at addr answers PING (+PONG or a
// -NOAUTH error, which also proves it is up), or fails the test.
func MustWaitPing(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			_, err = c.Write([]byte("PING\r\n"))
			if err == nil {
				var line string
				line, err = bufio.NewReader(c).ReadString('\n')
				if err == nil && (strings.HasPrefix(line, "+PONG") || strings.HasPrefix(line, "-NOAUTH")) {
					c.Close()
					return
				}
				if err == nil {
					err = fmt.Errorf("answered %q", line)
				}
			}
			c.Close()
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("testenv: no PING answer from %s within %v: %v", addr, timeout, last)
}

// StopProcess sends SIGTERM, waits up to 10 s, then SIGKILLs, and reaps.
func StopProcess(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// MustBinary builds the tierbench binary (static, CGO_ENABLED=0) once per
// test binary and returns its path.
func MustBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "tierbench-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "tierbench")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/tierbench")
		cmd.Dir = RepoRoot(t)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/tierbench: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("testenv: %v", buildErr)
	}
	return buildPath
}

// RepoRoot returns the module root, found from this source file's location.
func RepoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatalf("testenv: cannot locate the repository root")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// MustDiskDir returns a temporary directory on a real disk filesystem (not
// tmpfs), suitable for O_DIRECT: under $TIERBENCH_TEST_DIR when set, else
// under /var/tmp, removed when the test ends.
func MustDiskDir(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TIERBENCH_TEST_DIR")
	if base == "" {
		base = "/var/tmp"
	}
	dir, err := os.MkdirTemp(base, "tierbench-test-")
	if err != nil {
		t.Fatalf("testenv: make a disk directory under %s: %v", base, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Package testenv starts the real peers that tierbench's tests run against:
// a redis-server on a free loopback port, and the tierbench binary itself,
// built once per test binary. Helpers follow the MustX(t testing.TB)
// convention: they fail the test rather than return an error, and clean up
// after it with t.Cleanup.
package testenv

import (
	"bufio"
	"bytes"
	"errors"
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

// handedOut holds every port FreePort returned in this process. A port is
// free only until something binds it, and the servers started on FreePort's
// ports bind them some time later (all six ports of MustRedisCluster's three
// nodes are drawn before the first node listens): handing the same port out
// twice would start two servers on one address.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago and
// that FreePort has not returned before in this process. Another process can
// still take it before it is bound: startRedis checks who answers there.
func FreePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("testenv: find a free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatalf("testenv: find a free port: 100 draws gave only ports already handed out (%d so far)", len(handedOut.ports))
	return 0
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

	exited <-chan struct{} // closed once Cmd has been reaped
	out    bytes.Buffer    // what redis-server printed; read only after exited
}

// MustRedisServer starts a redis-server with no persistence on a free
// loopback port, waits until it answers PING, and stops it when the test ends.
// Extra arguments are passed to redis-server (for example "--requirepass", "x").
func MustRedisServer(t testing.TB, extra ...string) *Redis {
	t.Helper()
	password := ""
	for i, a := range extra {
		if a == "--requirepass" && i+1 < len(extra) {
			password = extra[i+1]
		}
	}
	return startRedis(t, FreePort, password, func(port int) []string {
		return append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", t.TempDir()}, extra...)
	})
}

// startRedis starts redis-server with the arguments args gives for a port
// from pick (FreePort but in its own test) and returns once the process it started is the one answering
// on that port (INFO's process_id is its pid). A port from FreePort is only
// free until someone binds it: when another process of the test run binds it
// first, the redis-server started here exits with "Address already in use"
// while the other one answers, so answering PING alone proves nothing. Such a
// node is started again on fresh ports, a few times at most.
func startRedis(t testing.TB, pick func(testing.TB) int, password string, args func(port int) []string) *Redis {
	t.Helper()
	bin := MustLookPath(t, "redis-server")
	var why []string
	for range 5 {
		port := pick(t)
		r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port}
		r.Cmd = exec.Command(bin, args(port)...)
		r.Cmd.Stdout, r.Cmd.Stderr = &r.out, &r.out
		r.Cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		exited, err := startHeld(r.Cmd)
		if err != nil {
			t.Fatalf("testenv: start redis-server: %v", err)
		}
		r.exited = exited
		t.Cleanup(r.stop)
		err = r.waitOwn(password, 10*time.Second)
		if err == nil {
			return r
		}
		if !errors.Is(err, errExited) {
			t.Fatalf("testenv: redis-server on %s: %v", r.Addr, err)
		}
		why = append(why, fmt.Sprintf("%s: %v", r.Addr, err))
	}
	t.Fatalf("testenv: redis-server never came up on a port of its own:\n%s", strings.Join(why, "\n"))
	return nil
}

// errExited is waitOwn's error for a redis-server that ended before it
// answered, most often because its port was taken.
var errExited = errors.New("testenv: redis-server exited")

// waitOwn waits until r's own process answers INFO on r.Addr.
func (r *Redis) waitOwn(password string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-r.exited:
			return fmt.Errorf("%w (%v): %s", errExited, r.Cmd.ProcessState, tail(r.out.Bytes(), 300))
		default:
		}
		pid, err := serverPid(r.Addr, password)
		if err == nil && pid == r.Cmd.Process.Pid {
			return nil
		}
		if err == nil {
			// Someone else holds the port: this redis-server cannot bind it
			// and is about to exit.
			err = fmt.Errorf("answered by pid %d, not by the redis-server started here (pid %d)", pid, r.Cmd.Process.Pid)
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no answer from pid %d within %v: %v", r.Cmd.Process.Pid, timeout, last)
}

// stop sends SIGTERM, waits up to 10 s, then SIGKILLs, and waits for the reap.
func (r *Redis) stop() {
	r.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		r.Cmd.Process.Kill()
		<-r.exited
	}
}

// serverPid asks the RESP server at addr for INFO server's process_id,
// authenticating first when password is set.
func serverPid(addr, password string) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	req := "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"
	if password != "" {
		req = fmt.Sprintf("*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password) + req
	}
	if _, err := conn.Write([]byte(req)); err != nil {
		return 0, err
	}
	br := bufio.NewReader(conn)
	var out strings.Builder
	if password != "" {
		if err := readFlat(br, &out); err != nil {
			return 0, err
		}
	}
	if err := readFlat(br, &out); err != nil {
		return 0, err
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("INFO server from %s has no process_id: %q", addr, tail([]byte(out.String()), 200))
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

// Main runs a package's tests and then removes what they left on this
// machine for the whole test binary: the binary MustBinary built. A
// package whose tests call MustBinary has TestMain call it.
func Main(m *testing.M) {
	code := m.Run()
	if buildPath != "" {
		os.RemoveAll(filepath.Dir(buildPath))
	}
	os.Exit(code)
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

// Run runs bin to its end in the directory dir ("" is the test's) with env
// added to this process's environment, killed if the test process dies,
// and returns its stdout, stderr and exit status; it fails the test only
// when bin cannot be started.
func Run(t testing.TB, dir string, env []string, bin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("testenv: run %s %s: %v", bin, strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

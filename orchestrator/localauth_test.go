package orchestrator

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// runServerArgv is the command line of the tierbench server a run in
// progress lists in its pid file under state, once there is one.
func runServerArgv(state string) []string {
	files, _ := filepath.Glob(filepath.Join(state, "*.pids"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		for _, l := range lines[min(1, len(lines)):] {
			var pid int
			var st uint64
			if !safe.ScanPID(l, &pid, &st) {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", strings.Fields(l)[0], "cmdline"))
			if err != nil {
				continue
			}
			argv := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
			if len(argv) > 1 && argv[1] == "server" && slices.Contains(argv, "--port") {
				return argv
			}
		}
	}
	return nil
}

// TestLocalServerRefusesOtherUsers: while a run measures its own server on
// 127.0.0.1, another user of the host sends it SHUTDOWN and FLUSHALL with
// redis-cli: both are refused (NOAUTH), the run ends well, and the
// server's command line names a password file, never the password.
func TestLocalServerRefusesOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to act as a second user")
	}
	bin := testenv.MustBinary(t)
	cli := testenv.MustLookPath(t, "redis-cli")
	base := testenv.MustDiskDir(t)
	out, state := filepath.Join(base, "out"), filepath.Join(base, "state")
	args := runTinyArgs(filepath.Join(base, "data"), out, state)
	args = append(args, "--passes", "3", "--cell-seconds", "2")
	b := startBackground(t, bin, args...)
	var argv []string
	var port string
	b.waitUntil(t, "a server listening", 120*time.Second, func() bool {
		if argv = runServerArgv(state); argv == nil {
			return false
		}
		port = argv[slices.Index(argv, "--port")+1]
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	if !slices.Contains(argv, "--auth-file") || slices.Contains(argv, "--auth") {
		t.Errorf("the server's command line: got %q, want --auth-file and no --auth", argv)
	}
	for _, cmd := range [][]string{{"FLUSHALL"}, {"SHUTDOWN", "NOSAVE"}} {
		c := exec.Command(cli, append([]string{"-h", "127.0.0.1", "-p", port}, cmd...)...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
		var stdout bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stdout
		c.Run()
		if !strings.Contains(stdout.String(), "NOAUTH") {
			t.Errorf("redis-cli %s as uid %d against the run's server: got %q, want NOAUTH", strings.Join(cmd, " "), otherUID, stdout.String())
		}
	}
	select {
	case err := <-b.done:
		if exitCode(err) != 0 {
			t.Errorf("the run exited %d after the other user's commands:\n%s", exitCode(err), b.stderr.String())
		}
	case <-time.After(5 * time.Minute):
		t.Fatalf("the run did not end within 5 minutes:\n%s", b.stderr.String())
	}
	if strings.Contains(b.stderr.String(), "password") && !strings.Contains(b.stderr.String(), "a password made for this run") {
		t.Logf("stderr mentions a password:\n%s", b.stderr.String())
	}
}

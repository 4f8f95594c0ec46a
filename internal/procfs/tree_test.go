package procfs

import (
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
)

const proc = Root("/proc")

// launcher starts sh running script (with $REDIS, $PORT and $DIR set) in
// a process group of its own, as the run starts a server, and reaps it
// in the background; the test's cleanup SIGKILLs whatever of its tree is
// left, so a failing test leaks nothing.
func launcher(t *testing.T, script string) (cmd *exec.Cmd, addr string, exited <-chan struct{}) {
	t.Helper()
	redis := testenv.MustLookPath(t, "redis-server")
	port := testenv.FreePort(t)
	cmd = exec.Command("sh", "-c", script)
	cmd.Env = []string{"REDIS=" + redis, fmt.Sprintf("PORT=%d", port), "DIR=" + t.TempDir(), "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		for _, p := range proc.Tree(cmd.Process.Pid) {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	testenv.MustWaitPing(t, addr, 10*time.Second)
	return cmd, addr, done
}

// redisLine is the launcher's child: a redis-server with nothing to save.
const redisLine = `"$REDIS" --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$DIR"`

// TestLauncherTreeIsFoundAndStopped: a launcher that forks redis-server
// and itself keeps running (as dotnet runs GarnetServer.dll): the child
// is the socket's owner, found below the launcher, and stopping the tree
// leaves nothing: no process of it, nothing listening. The cases cover a
// launcher that ignores SIGTERM and a child that left the process group
// (setsid), which a signal to the group alone would miss.
func TestLauncherTreeIsFoundAndStopped(t *testing.T) {
	for _, c := range []struct{ name, script string }{
		{"waits for its child", redisLine + " & wait"},
		{"ignores SIGTERM", "trap '' TERM; " + redisLine + " & while :; do sleep 1; done"},
		{"child left the group", "trap '' TERM; setsid " + redisLine + " & while :; do sleep 1; done"},
		{"child behind two launchers", "sh -c '" + strings.ReplaceAll(redisLine, "'", `"`) + " & wait' & wait"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, addr, exited := launcher(t, c.script)
			root := cmd.Process.Pid
			owner, err := proc.ListenerInTree(root, addr)
			if err != nil {
				t.Fatal(err)
			}
			if owner == root || proc.Command(owner) != "redis-server" {
				t.Fatalf("got owner %s, want the redis-server below launcher %d", proc.Describe(owner), root)
			}
			tree := proc.Tree(root)
			if !slices.ContainsFunc(tree, func(p Proc) bool { return p.PID == owner }) {
				t.Fatalf("got tree %v, want it to hold the owner %d", tree, owner)
			}
			start := time.Now()
			if err := proc.StopTree(root, 2*time.Second); err != nil {
				t.Fatal(err)
			}
			<-exited
			for _, p := range tree {
				if proc.alive(p) {
					t.Errorf("got %s alive after StopTree, want the whole tree gone", proc.Describe(p.PID))
				}
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("got something listening on %s after StopTree, want nothing", addr)
			}
			t.Logf("stopped %d processes in %v", len(tree), time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestListenerOutsideTheTreeIsNamed: when the socket belongs to a process
// the launcher did not start, the error names that process.
func TestListenerOutsideTheTreeIsNamed(t *testing.T) {
	r := testenv.MustRedisServer(t)
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	_, err := proc.ListenerInTree(cmd.Process.Pid, r.Addr)
	want := fmt.Sprintf("owns the socket listening on %s: pid %d (redis-server) does", r.Addr, r.Cmd.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error containing %q", err, want)
	}
	if _, err := proc.ListenerInTree(1<<22+7, r.Addr); err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("got %v, want pid gone", err)
	}
}

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Stat
		err  bool
	}{
		{"4242 (a) b) c) S 1 4200 4200 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 9876 1 1", Stat{'S', 1, 4200, 9876}, false},
		{"7 (x) Z 3 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0", Stat{'Z', 3, 7, 55}, false},
		{"7 (x) S 3", Stat{}, true},
		{"7 x S 3 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55", Stat{}, true},
		{"7 (x) S y 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55", Stat{}, true},
	} {
		got, err := ParseStat([]byte(c.in))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseStat(%q): got %+v, %v; want %+v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

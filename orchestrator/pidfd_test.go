package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/rig/process"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// startAtPid starts `sleep 300` as the leader of a process group of its
// own with pid want, by setting the kernel's last pid just below it
// (root only); other processes forking meanwhile can take it, so it
// tries a number of times and reports false when it never got it.
func startAtPid(t *testing.T, want int) (*exec.Cmd, bool) {
	t.Helper()
	for range 200 {
		if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(want-1)), 0); err != nil {
			t.Skipf("cannot set the next pid (needs root): %v", err)
		}
		cmd := exec.Command("sleep", "300")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if cmd.Process.Pid == want {
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			return cmd, true
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
	return nil, false
}

// TestRecycledPidIsNotSignalled: a server that exits on its own is
// reaped; a process that then gets its number, leading a group of its
// own as the server did, is left alone by the server's stop and the
// driver's close (before, close signalled the number's tree and group).
func TestRecycledPidIsNotSignalled(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to set the next pid")
	}
	d := process.NewDriver("", nil)
	ps, err := d.StartProgram(context.Background(), []string{"sh", "-c", "sleep 0.3; exit 3"}, rig.ServerSpec{Name: "short", LogPath: filepath.Join(t.TempDir(), "short.log")})
	if err != nil {
		t.Fatal(err)
	}
	old := ps.Cmd.Process.Pid
	select {
	case <-ps.Proc.Done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server that exits at once was not reaped within 10 s")
	}
	victim, ok := startAtPid(t, old)
	if !ok {
		t.Skipf("never got pid %d back for the test: the host forks too much", old)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	d.Close(ctx)
	ps.Stop(ctx)
	time.Sleep(100 * time.Millisecond)
	if st, err := procfs.Root("/proc").ReadStat(victim.Process.Pid); err != nil || st.State == 'Z' {
		t.Errorf("process %d, which took the reaped server's number, was killed", old)
	}
}

// TestChildKillReachesItsGroup: kill of an unreaped child takes its
// whole group, and the child's exit is known (done, Wait's error).
func TestChildKillReachesItsGroup(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c, err := safe.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var grandchild int
	for end := time.Now().Add(5 * time.Second); grandchild == 0 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for _, p := range procfs.Root("/proc").Tree(c.Pid()) {
			if p.PID != c.Pid() {
				grandchild = p.PID
			}
		}
	}
	if grandchild == 0 {
		t.Fatal("the child's sleep never started")
	}
	start := safe.StartTime(grandchild)
	c.Kill()
	if err := c.Wait(); err == nil {
		t.Errorf("Wait after kill: got nil, want the signal")
	}
	for end := time.Now().Add(5 * time.Second); safe.Alive(grandchild, start); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the child's group member %d survived kill", grandchild)
		}
	}
	c.Kill() // reaped: nothing to do, no number signalled
}

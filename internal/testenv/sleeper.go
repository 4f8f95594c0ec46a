package testenv

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// StartSleeper starts `sleep 300` in a process group of its own with the
// extra environment; it is killed when the test ends.
func StartSleeper(t testing.TB, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

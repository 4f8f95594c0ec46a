package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/results"
)

// processDriver runs server and client as child processes of this one:
// each in its own process group, killed if this process dies (Pdeathsig),
// pinned by ExecPinnedChild in the child, and listed in a pid file so a
// later run can remove them if this one is killed outright.
type processDriver struct {
	binary string
	proc   procRoot
	pids   *pidFile

	mu       sync.Mutex
	children map[int]*exec.Cmd
}

func newProcessDriver(binary string, pids *pidFile) *processDriver {
	return &processDriver{binary: binary, proc: "/proc", pids: pids, children: map[int]*exec.Cmd{}}
}

func (d *processDriver) name() string             { return RuntimeProcess }
func (d *processDriver) dataPath(h string) string { return h }
func (d *processDriver) host() serverHost         { return localHost{} }

func (d *processDriver) command(args []string, cpus, mems string) *exec.Cmd {
	cmd := exec.Command(d.binary, args...)
	cmd.Env = os.Environ()
	if cpus != "" {
		cmd.Env = append(cmd.Env, envPinCPUs+"="+cpus)
	}
	if mems != "" {
		cmd.Env = append(cmd.Env, envPinMems+"="+mems)
	}
	if d.pids != nil {
		cmd.Env = append(cmd.Env, envRunID+"="+d.pids.runID)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

func (d *processDriver) start(cmd *exec.Cmd) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("orchestrator: start %s: %w", strings.Join(cmd.Args, " "), err)
	}
	d.children[cmd.Process.Pid] = cmd
	if d.pids != nil {
		if err := d.pids.add(cmd.Process.Pid); err != nil {
			killGroup(cmd)
			cmd.Wait()
			delete(d.children, cmd.Process.Pid)
			return err
		}
	}
	return nil
}

func (d *processDriver) forget(pid int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.children, pid)
	if d.pids != nil {
		d.pids.remove(pid)
	}
}

// waitPlacement waits until a pinned child has pinned itself and
// re-executed, then reads its placement and checks it against the
// request. The child has re-executed when /proc/<pid>/cmdline is its own
// argv (between fork and execve it is still this process's) and its
// environment no longer holds the pin request (the first image has it,
// the re-executed one not). The memory policy set with set_mempolicy is
// per task and does not show in /proc/<pid>/status; the child exits
// rather than run unbound when the call fails, so a re-executed child
// carries bind:<mems>.
func (d *processDriver) waitPlacement(cmd *exec.Cmd, cpus, mems string, deadline time.Duration) (results.Placement, error) {
	pid := cmd.Process.Pid
	end := time.Now().Add(deadline)
	if cpus != "" || mems != "" {
		argv := []byte(strings.Join(cmd.Args, "\x00") + "\x00")
		for {
			cmdline, err1 := os.ReadFile(fmt.Sprintf("%s/%d/cmdline", d.proc, pid))
			env, err2 := os.ReadFile(fmt.Sprintf("%s/%d/environ", d.proc, pid))
			if err := errors.Join(err1, err2); err != nil {
				return results.Placement{WantCPUs: cpus, WantMems: mems}, fmt.Errorf("orchestrator: child %d exited before it was pinned: %w", pid, err)
			}
			if bytes.Equal(cmdline, argv) && !bytes.Contains(env, []byte(envPinCPUs+"=")) && !bytes.Contains(env, []byte(envPinMems+"=")) {
				break
			}
			if time.Now().After(end) {
				return results.Placement{WantCPUs: cpus, WantMems: mems}, fmt.Errorf("orchestrator: child %d did not pin itself within %v", pid, deadline)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	pl, err := d.proc.placement(pid)
	pl.WantCPUs, pl.WantMems = cpus, mems
	if err != nil {
		return pl, err
	}
	if mems != "" && (pl.Policy == "" || pl.Policy == "default") {
		pl.Policy = "bind:" + mems
	}
	return pl, checkPlacement("child", pl)
}

type processServer struct {
	d    *processDriver
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
	pl   results.Placement
}

func (d *processDriver) startServer(ctx context.Context, s serverSpec) (serverHandle, error) {
	logf, err := os.Create(s.LogPath)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: server log: %w", err)
	}
	cmd := d.command(s.Args, s.CPUs, s.Mems)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := d.start(cmd); err != nil {
		logf.Close()
		return nil, err
	}
	ps := &processServer{d: d, cmd: cmd, done: make(chan struct{}), log: logf}
	go func() { cmd.Wait(); close(ps.done) }()
	pl, err := d.waitPlacement(cmd, s.CPUs, s.Mems, 3*time.Second)
	ps.pl = pl
	if err != nil {
		ps.stop(context.Background())
		return nil, fmt.Errorf("orchestrator: server placement: %w", err)
	}
	return ps, nil
}

func (p *processServer) pid() int                     { return p.cmd.Process.Pid }
func (p *processServer) mode() string                 { return "process" }
func (p *processServer) placement() results.Placement { return p.pl }
func (p *processServer) probe(addr string) serverProbe {
	return localProbe{addr: addr, pid: p.pid(), proc: p.d.proc}
}

// stop sends SIGTERM to the server's process group, waits up to 30 s as
// the reference does, then SIGKILLs it.
func (p *processServer) stop(ctx context.Context) error {
	defer p.log.Close()
	defer p.d.forget(p.cmd.Process.Pid)
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	fmt.Fprintf(p.log, "tierbench run: server %d did not stop on SIGTERM in time; SIGKILL\n", p.cmd.Process.Pid)
	killGroup(p.cmd)
	<-p.done
	return nil
}

func killGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Process.Kill()
}

func (d *processDriver) runClient(ctx context.Context, s clientSpec) ([]byte, results.Placement, error) {
	logf, err := os.Create(s.LogPath)
	if err != nil {
		return nil, results.Placement{}, fmt.Errorf("orchestrator: client log: %w", err)
	}
	defer logf.Close()
	var stdout bytes.Buffer
	cmd := d.command(s.Args, s.CPUs, s.Mems)
	cmd.Stdout = io.MultiWriter(&stdout, logf)
	cmd.Stderr = logf
	if err := d.start(cmd); err != nil {
		return nil, results.Placement{}, err
	}
	defer d.forget(cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pl, plErr := d.waitPlacement(cmd, s.CPUs, s.Mems, 3*time.Second)
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd)
		<-done
		return nil, pl, ctx.Err()
	}
	if err != nil {
		return stdout.Bytes(), pl, fmt.Errorf("orchestrator: client %s: %w (log %s)", s.Name, err, s.LogPath)
	}
	if plErr != nil && (s.CPUs != "" || s.Mems != "") {
		return stdout.Bytes(), pl, fmt.Errorf("orchestrator: client placement: %w", plErr)
	}
	return stdout.Bytes(), pl, nil
}

func (d *processDriver) preflightAt(ctx context.Context, _ serverHandle, dataDir string, args []string) ([]byte, error) {
	return runPreflight(ctx, d.binary, dataDir, args)
}

// runPreflight runs `tierbench preflight --json` on this host. Its exit
// status 1 (a check failed) is not an error here: the caller reads the
// checks; any other failure is.
func runPreflight(ctx context.Context, binary, dataDir string, extra []string) ([]byte, error) {
	args := append([]string{"preflight", "--data-dir", dataDir, "--json"}, extra...)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1 && stdout.Len() > 0) {
		return stdout.Bytes(), fmt.Errorf("orchestrator: %s: %w: %s", strings.Join(cmd.Args, " "), err, clip(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

func (d *processDriver) close(ctx context.Context) error {
	d.mu.Lock()
	cmds := make([]*exec.Cmd, 0, len(d.children))
	for _, c := range d.children {
		cmds = append(cmds, c)
	}
	d.mu.Unlock()
	for _, c := range cmds {
		killGroup(c)
		d.forget(c.Process.Pid)
	}
	return nil
}

// startTime is field 22 of /proc/<pid>/stat (clock ticks since boot); 0
// when the process is gone.
func startTime(pid int) uint64 {
	st, err := procfs.Root("/proc").ReadStat(pid)
	if err != nil {
		return 0
	}
	return st.StartTime
}

// alive reports whether pid is still the process that started at st.
func alive(pid int, st uint64) bool {
	return st != 0 && startTime(pid) == st
}

func scanPid(line string, pid *int, st *uint64) bool {
	_, err := fmt.Sscanf(line, "%d %d", pid, st)
	return err == nil && *pid > 0
}

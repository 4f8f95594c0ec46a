package process

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// Driver runs server and client as child processes of this one:
// each in its own process group, killed if this process dies (Pdeathsig),
// pinned by ExecPinnedChild in the child, and listed in a pid file so a
// later run can remove them if this one is killed outright.
type Driver struct {
	binary string
	Proc   rig.ProcRoot
	pids   *safe.PIDFile

	mu       sync.Mutex
	children map[int]*safe.Child
}

func NewDriver(binary string, pids *safe.PIDFile) *Driver {
	return &Driver{binary: binary, Proc: "/proc", pids: pids, children: map[int]*safe.Child{}}
}

func (d *Driver) Name() string             { return plan.RuntimeProcess }
func (d *Driver) DataPath(h string) string { return h }
func (d *Driver) Host() rig.ServerHost     { return rig.LocalHost{} }

// Give does nothing: the run's processes read the files in its state dir.
func (d *Driver) Give(map[string][]byte) {}

// Capabilities: programs of this machine, reading files where they are.
func (d *Driver) Capabilities() rig.Capabilities { return rig.Capabilities{} }

func (d *Driver) command(args []string, cpus, mems string) *exec.Cmd {
	return d.commandOf(nil, args, cpus, mems)
}

// commandOf is a child running prog (nil: the tierbench binary) with
// args. A program other than tierbench that is to be pinned starts as the
// tierbench binary, which pins itself and then runs prog in its place
// (envPinExec): that program has no pinning of its own.
func (d *Driver) commandOf(prog, args []string, cpus, mems string) *exec.Cmd {
	var cmd *exec.Cmd
	pinned := cpus != "" || mems != ""
	switch {
	case prog == nil:
		cmd = exec.Command(d.binary, args...)
	case pinned:
		cmd = exec.Command(d.binary, append(slices.Clone(prog), args...)...)
	default:
		cmd = exec.Command(prog[0], append(slices.Clone(prog[1:]), args...)...)
	}
	cmd.Env = os.Environ()
	if prog != nil && pinned {
		cmd.Env = append(cmd.Env, envPinExec+"=1")
	}
	if cpus != "" {
		cmd.Env = append(cmd.Env, EnvPinCPUs+"="+cpus)
	}
	if mems != "" {
		cmd.Env = append(cmd.Env, EnvPinMems+"="+mems)
	}
	if d.pids != nil {
		cmd.Env = append(cmd.Env, safe.EnvRunID+"="+d.pids.RunID)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

func (d *Driver) start(cmd *exec.Cmd) (*safe.Child, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c, err := safe.StartChild(cmd)
	if err != nil {
		return nil, err
	}
	d.children[c.Pid()] = c
	if d.pids != nil {
		if err := d.pids.Add(c.Pid()); err != nil {
			c.Kill()
			c.Wait()
			delete(d.children, c.Pid())
			return nil, err
		}
	}
	return c, nil
}

func (d *Driver) forget(pid int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.children, pid)
	if d.pids != nil {
		d.pids.Remove(pid)
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
//
// A program other than tierbench, run in place of the pinning tierbench
// (envPinExec), has re-executed when its argv is the command's without the
// tierbench binary, or, for one that rewrites its process title as
// redis-server does, when /proc/<pid>/exe is no longer tierbench.
func (d *Driver) waitPlacement(cmd *exec.Cmd, cpus, mems string, deadline time.Duration) (results.Placement, error) {
	pid := cmd.Process.Pid
	end := time.Now().Add(deadline)
	if cpus != "" || mems != "" {
		args := cmd.Args
		execs := slices.Contains(cmd.Env, envPinExec+"=1")
		if execs {
			args = args[1:]
		}
		argv := []byte(strings.Join(args, "\x00") + "\x00")
		self, _ := filepath.Abs(d.binary)
		if r, err := filepath.EvalSymlinks(self); err == nil {
			self = r
		}
		for {
			cmdline, err1 := os.ReadFile(fmt.Sprintf("%s/%d/cmdline", d.Proc, pid))
			env, err2 := os.ReadFile(fmt.Sprintf("%s/%d/environ", d.Proc, pid))
			if err := errors.Join(err1, err2); err != nil {
				return results.Placement{WantCPUs: cpus, WantMems: mems}, fmt.Errorf("orchestrator: child %d exited before it was pinned: %w", pid, err)
			}
			if bytes.Equal(cmdline, argv) && !bytes.Contains(env, []byte(EnvPinCPUs+"=")) && !bytes.Contains(env, []byte(EnvPinMems+"=")) {
				break
			}
			if exe, err := os.Readlink(fmt.Sprintf("%s/%d/exe", d.Proc, pid)); execs && err == nil && self != "" && exe != self {
				break
			}
			if time.Now().After(end) {
				return results.Placement{WantCPUs: cpus, WantMems: mems}, fmt.Errorf("orchestrator: child %d did not pin itself within %v", pid, deadline)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	pl, err := d.Proc.Placement(pid)
	pl.WantCPUs, pl.WantMems = cpus, mems
	if err != nil {
		return pl, err
	}
	if mems != "" && (pl.Policy == "" || pl.Policy == "default") {
		pl.Policy = "bind:" + mems
	}
	return pl, rig.CheckPlacement("child", pl)
}

type processServer struct {
	d    *Driver
	Cmd  *exec.Cmd
	Proc *safe.Child
	log  *os.File
	// logPath is the log's name, whose last lines say why it exited.
	logPath string
	pl      results.Placement
	acc     rig.Access // how the run's probes reach it
	// server is the process of the tree that listens (findServer): the
	// command's own, or the real server behind a launcher; 0 until found.
	// serverStart is its start time, which names it with the pid.
	server      int
	serverStart uint64
}

func (d *Driver) StartServer(ctx context.Context, s rig.ServerSpec) (rig.ServerHandle, error) {
	return d.StartProgram(ctx, s.Program, s)
}

// StartProgram starts the server s as prog (nil: the tierbench binary)
// with s.Args, pinned as s asks.
func (d *Driver) StartProgram(ctx context.Context, prog []string, s rig.ServerSpec) (*processServer, error) {
	logf, err := safe.CreateOrTruncate(s.LogPath, 0o644)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: server log: %w", err)
	}
	cmd := d.commandOf(prog, s.Args, s.CPUs, s.Mems)
	cmd.Stdout, cmd.Stderr = logf, logf
	proc, err := d.start(cmd)
	if err != nil {
		logf.Close()
		return nil, err
	}
	ps := &processServer{d: d, Cmd: cmd, Proc: proc, log: logf, logPath: s.LogPath, acc: s.Access}
	pl, err := d.waitPlacement(cmd, s.CPUs, s.Mems, 3*time.Second)
	ps.pl = pl
	if err != nil {
		ps.Stop(context.Background())
		return nil, fmt.Errorf("orchestrator: server placement: %w", err)
	}
	return ps, nil
}

// Pid is the server's process: the one findServer proved listens, else
// the command's.
func (p *processServer) Pid() int {
	if p.server > 0 {
		return p.server
	}
	return p.Cmd.Process.Pid
}

// FindServer takes the process of the command's tree that owns the socket
// listening on addr as the server from then on: the command itself, or
// the real server a launcher started (dotnet running GarnetServer.dll, a
// script). It lists that process in the pid file too, so a later run
// removes it even when the launcher is gone.
func (p *processServer) FindServer(ctx context.Context, addr string, timeout time.Duration) error {
	root := p.Cmd.Process.Pid
	var pid int
	err := rig.WaitFor(ctx, timeout, func(context.Context) error {
		var err error
		pid, err = procfs.Root(p.d.Proc).ListenerInTree(root, addr)
		return err
	})
	if err != nil {
		return fmt.Errorf("orchestrator: the server started as pid %d: %w", root, err)
	}
	p.server, p.serverStart = pid, safe.StartTime(pid)
	if pid != root && p.d.pids != nil {
		return p.d.pids.Add(pid)
	}
	return nil
}
func (p *processServer) Exited() <-chan struct{} { return p.Proc.Done }

// ExitReport says how the server exited and what it last wrote.
func (p *processServer) ExitReport() error {
	<-p.Proc.Done
	status := "exited"
	if st := p.Cmd.ProcessState; st != nil {
		status = st.String()
	}
	return fmt.Errorf("the server %s before it answered; the last lines of its log %s:\n%s", status, p.logPath, lastLines(p.logPath, 10))
}

// lastLines is the last n lines of the file at path, indented.
func lastLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "  (" + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	return "  " + strings.Join(lines, "\n  ")
}

func (p *processServer) Mode() string                 { return "process" }
func (p *processServer) Placement() results.Placement { return p.pl }
func (p *processServer) Probe(addr string) rig.ServerProbe {
	return rig.LocalProbe{Addr: addr, Pid: p.Pid(), Proc: p.d.Proc, Acc: p.acc}
}

// Stop stops the server's whole tree: SIGTERM to its process group and
// to every process below it (a launcher's server that left the group
// too), up to 30 s as the reference waits (less when ctx ends sooner),
// then SIGKILL to what is left.
func (p *processServer) Stop(ctx context.Context) error {
	defer p.log.Close()
	root := p.Cmd.Process.Pid
	defer p.d.forget(root)
	if p.server > 0 && p.server != root {
		defer p.d.forget(p.server)
	}
	grace := 30 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		grace = min(grace, max(time.Until(dl), 0))
	}
	if ctx.Err() != nil {
		grace = 0
	}
	// The tree by its root only while the root is unreaped (child): a
	// reaped root's number may be another process's by now. A launcher's
	// server outlives it in its own right, named by pid and start time.
	var err error
	if !p.Proc.WhileUnreaped(func(pid int) { err = procfs.Root(p.d.Proc).StopTree(pid, grace) }) &&
		p.server > 0 && p.server != root && safe.Alive(p.server, p.serverStart) {
		err = procfs.Root(p.d.Proc).StopTree(p.server, grace)
	}
	if err != nil {
		fmt.Fprintf(p.log, "tierbench run: %v\n", err)
	}
	select {
	case <-p.Proc.Done:
	case <-time.After(10 * time.Second):
		err = errors.Join(err, fmt.Errorf("orchestrator: server pid %d not reaped 10 s after it was stopped", root))
	}
	return err
}

func (d *Driver) RunClient(ctx context.Context, s rig.ClientSpec) ([]byte, results.Placement, error) {
	logf, err := safe.CreateOrTruncate(s.LogPath, 0o644)
	if err != nil {
		return nil, results.Placement{}, fmt.Errorf("orchestrator: client log: %w", err)
	}
	defer logf.Close()
	var stdout bytes.Buffer
	cmd := d.command(s.Args, s.CPUs, s.Mems)
	cmd.Stdout = io.MultiWriter(&stdout, logf)
	cmd.Stderr = logf
	proc, err := d.start(cmd)
	if err != nil {
		return nil, results.Placement{}, err
	}
	defer d.forget(proc.Pid())
	pl, plErr := d.waitPlacement(cmd, s.CPUs, s.Mems, 3*time.Second)
	select {
	case <-proc.Done:
		err = proc.Err
	case <-ctx.Done():
		proc.Kill()
		proc.Wait()
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

func (d *Driver) PreflightAt(ctx context.Context, _ rig.ServerHandle, dataDir string, args []string) ([]byte, error) {
	return RunPreflight(ctx, d.binary, dataDir, args, io.Discard)
}

// RunPreflight runs `tierbench preflight --json` on this host. Its exit
// status 1 (a check failed) is not an error here: the caller reads the
// checks; any other failure is.
func RunPreflight(ctx context.Context, binary, dataDir string, extra []string, progress io.Writer) ([]byte, error) {
	args := append([]string{"preflight", "--data-dir", dataDir, "--json"}, extra...)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stdout, stderr bytes.Buffer
	// The fio sweep's step lines reach the run's progress as they come.
	cmd.Stdout, cmd.Stderr = &stdout, io.MultiWriter(&stderr, progress)
	err := cmd.Run()
	if ctx.Err() != nil {
		// Killed because the run is stopping: its exit says nothing more.
		return stdout.Bytes(), context.Cause(ctx)
	}
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1 && stdout.Len() > 0) {
		if msg := strings.TrimSpace(rig.Clip(stderr.Bytes())); msg != "" {
			err = fmt.Errorf("%w: %s", err, msg)
		}
		return stdout.Bytes(), fmt.Errorf("orchestrator: %s: %w", strings.Join(cmd.Args, " "), err)
	}
	return stdout.Bytes(), nil
}

func (d *Driver) Close(ctx context.Context) error {
	d.mu.Lock()
	procs := make([]*safe.Child, 0, len(d.children))
	for _, c := range d.children {
		procs = append(procs, c)
	}
	d.mu.Unlock()
	var errs []error
	for _, c := range procs {
		// The whole tree (a launcher's server may have left the group),
		// while the child is unreaped: a reaped child's number may be
		// another process's.
		c.WhileUnreaped(func(pid int) {
			if err := procfs.Root(d.Proc).StopTree(pid, 0); err != nil {
				errs = append(errs, err)
			}
			syscall.Kill(-pid, syscall.SIGKILL)
		})
		d.forget(c.Pid())
	}
	return errors.Join(errs...)
}

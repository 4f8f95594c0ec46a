package safe

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/orchestrator/fault"
)

// The state dir holds one pid file per run in progress, so that a later
// run can remove the children of one that was killed outright. What is
// read from it decides which processes are killed, so:
//
//   - it belongs to the user and nobody else may write it (0700 when the
//     run creates it; refused when another user owns it or others may
//     write it, or when it is a symbolic link);
//   - a run holds an exclusive flock on its pid file for its life: the
//     kernel drops it when the run dies, however it dies, so a pid file
//     whose lock can be taken belongs to a run that is gone;
//   - a process listed there is killed only when its start time matches
//     and its environment carries envRunID naming that run: the variable
//     the run set when it started the child. A file planted to name any
//     other process kills nothing.

// EnvRunID carries the run id into every child the process runtime
// starts, as the proof, read from /proc/<pid>/environ, that the child is
// that run's.
const EnvRunID = "TIERBENCH_RUN"

// EnsureStateDir creates dir (0700) or checks that the existing one is a
// directory of this user's that nobody else may write, under directories
// nobody else may write (checkPrivateDir). It runs before anything reads
// the state dir or writes in it: the sweep of stale runs, the password
// and TLS files.
func EnsureStateDir(dir string) error {
	if err := CheckStateDir(dir); err != nil {
		return err
	}
	_, err := MakePrivateDir("--state-dir", dir, 0o700)
	return err
}

// CheckStateDir is ensureStateDir's check alone, making nothing: a run
// checks its state dir first, and makes it only once its other
// directories passed too.
func CheckStateDir(dir string) error {
	if st, err := os.Lstat(dir); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%w: --state-dir %s is a symbolic link: give the directory itself", fault.ErrConfig, dir)
	}
	return CheckPrivateDir("--state-dir", dir)
}

// PIDFile lists the children of one run: its first line is the owner
// (this process), each further line a child, as "pid starttime" so a
// recycled pid is never mistaken for ours. The run holds an exclusive
// flock on it while it lives.
type PIDFile struct {
	path  string
	RunID string
	f     *os.File
	mu    sync.Mutex
	Pids  map[int]uint64
}

func NewPIDFile(stateDir, runID string) (*PIDFile, error) {
	if err := EnsureStateDir(stateDir); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, runID+".pids")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("orchestrator: pid file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("orchestrator: lock pid file %s: %w", path, err)
	}
	p := &PIDFile{path: path, RunID: runID, f: f, Pids: map[int]uint64{}}
	return p, p.write()
}

func (p *PIDFile) write() error {
	var b strings.Builder
	self := os.Getpid()
	fmt.Fprintf(&b, "%d %d\n", self, StartTime(self))
	for pid, st := range p.Pids {
		fmt.Fprintf(&b, "%d %d\n", pid, st)
	}
	if err := p.f.Truncate(0); err != nil {
		return fmt.Errorf("orchestrator: pid file: %w", err)
	}
	if _, err := p.f.WriteAt([]byte(b.String()), 0); err != nil {
		return fmt.Errorf("orchestrator: pid file: %w", err)
	}
	return nil
}

func (p *PIDFile) Add(pid int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Pids[pid] = StartTime(pid)
	return p.write()
}

func (p *PIDFile) Remove(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.Pids, pid)
	p.write()
}

func (p *PIDFile) Close() {
	os.Remove(p.path)
	p.f.Close()
}

// RemoveStaleProcesses kills the proven children listed in pid files
// whose run is gone, and removes those files (and unreadable ones); it
// returns what it did. A file whose lock is held belongs to a run in
// progress, here or in another session on this host, and is left alone.
func RemoveStaleProcesses(stateDir string) []string {
	if CheckPrivateDir("--state-dir", stateDir) != nil {
		return nil // what others may write decides nothing (ensureStateDir refuses it)
	}
	files, _ := filepath.Glob(filepath.Join(stateDir, "*.pids"))
	var did []string
	for _, path := range files {
		did = append(did, removeStaleRun(path)...)
	}
	return did
}

func removeStaleRun(path string) []string {
	f, err := OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // its run ended since
	}
	if err != nil {
		return []string{fmt.Sprintf("left %s alone: %v", path, err)}
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil // its run holds it: in progress
	}
	var data bytes.Buffer
	if _, err := data.ReadFrom(f); err != nil {
		return nil
	}
	runID := strings.TrimSuffix(filepath.Base(path), ".pids")
	lines := strings.Split(strings.TrimSpace(data.String()), "\n")
	var did []string
	var owner int
	var ownerStart uint64
	if len(lines) == 0 || !ScanPID(lines[0], &owner, &ownerStart) {
		if os.Remove(path) == nil {
			did = append(did, fmt.Sprintf("removed pid file %s (no owner line)", path))
		}
		return did
	}
	if owner == os.Getpid() || Alive(owner, ownerStart) {
		return nil // a run of an earlier version, which took no lock, still alive
	}
	for _, l := range lines[1:] {
		var pid int
		var st uint64
		if !ScanPID(l, &pid, &st) || !Alive(pid, st) {
			continue
		}
		if !childOfRun(pid, runID) {
			did = append(did, fmt.Sprintf("left process %d alone: %s lists it, but it is not a child that run started (no %s=%s in its environment)", pid, filepath.Base(path), EnvRunID, runID))
			continue
		}
		// Children run in process groups of their own (Setpgid), so the
		// group goes with its leader.
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
		did = append(did, fmt.Sprintf("killed process %d left by the run in %s", pid, filepath.Base(path)))
	}
	for _, dir := range SecretDirs(filepath.Dir(path), runID) {
		if _, err := os.Lstat(dir); err == nil && os.RemoveAll(dir) == nil {
			did = append(did, fmt.Sprintf("removed %s, the TLS keys or password file of that run", dir))
		}
	}
	if os.Remove(path) == nil {
		did = append(did, fmt.Sprintf("removed pid file %s (its run, pid %d, is gone)", path, owner))
	}
	return did
}

// childOfRun reports whether pid's environment names runID in envRunID.
func childOfRun(pid int, runID string) bool {
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return false
	}
	want := []byte(EnvRunID + "=" + runID)
	for v := range bytes.SplitSeq(env, []byte{0}) {
		if bytes.Equal(v, want) {
			return true
		}
	}
	return false
}

// StartTime is field 22 of /proc/<pid>/stat (clock ticks since boot); 0
// when the process is gone.
func StartTime(pid int) uint64 {
	st, err := procfs.Root("/proc").ReadStat(pid)
	if err != nil {
		return 0
	}
	return st.StartTime
}

// Alive reports whether pid is still the process that started at st.
func Alive(pid int, st uint64) bool {
	return st != 0 && StartTime(pid) == st
}

func ScanPID(line string, pid *int, st *uint64) bool {
	_, err := fmt.Sscanf(line, "%d %d", pid, st)
	return err == nil && *pid > 0
}

// SecretDirs are the directories of a run's secrets under the state dir:
// its TLS files, and the password file of --server-addr's clients. A run
// removes them when it ends; the next run removes those of a run killed
// before it could (removeStaleRun).
func SecretDirs(stateDir, runID string) []string {
	return []string{filepath.Join(stateDir, "tls-"+runID), filepath.Join(stateDir, "auth-"+runID)}
}

package orchestrator

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/procfs"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// otherUID is the uid the multi-user tests act as: a throwaway one no
// account on the host has, so whatever it owns is plainly not the run's.
const otherUID = 64123

// asOther runs name with args as otherUID (the test runs as root), and
// fails the test when it fails.
func asOther(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s as uid %d: %v\n%s", name, strings.Join(args, " "), otherUID, err, out)
	}
}

// sharedDir is a directory like /tmp, any user's to write in (1777),
// under a base every user may walk through.
func sharedDir(t *testing.T, base string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root, to act as a second user")
	}
	for p := base; p != "/"; p = filepath.Dir(p) {
		if st, err := os.Stat(p); err == nil && st.Mode().Perm()&0o005 != 0o005 {
			os.Chmod(p, st.Mode().Perm()|0o055)
		}
	}
	shared := filepath.Join(base, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	return shared
}

// TestCheckPrivateDir: each directory a run uses is refused, with the
// command that fixes it, when another user owns it or may write it or a
// directory above it, as ssh's StrictModes refuses ~/.ssh.
func TestCheckPrivateDir(t *testing.T) {
	base := t.TempDir()
	shared := sharedDir(t, base)
	mine := filepath.Join(base, "mine")
	os.Mkdir(mine, 0o755)
	groupWritable := filepath.Join(base, "group")
	os.Mkdir(groupWritable, 0o755)
	os.Chmod(groupWritable, 0o775)
	below := filepath.Join(groupWritable, "data")
	os.Mkdir(below, 0o700)
	asOther(t, "mkdir", "-m", "0755", filepath.Join(shared, "theirs"))
	asOther(t, "ln", "-s", mine, filepath.Join(shared, "their-link"))
	stickyMine := filepath.Join(base, "sticky-mine")
	os.Mkdir(stickyMine, 0o755)
	os.Chmod(stickyMine, 0o777|os.ModeSticky)
	os.WriteFile(filepath.Join(stickyMine, "a"), nil, 0o600)
	stickyTheirs := filepath.Join(base, "sticky-theirs")
	os.Mkdir(stickyTheirs, 0o755)
	os.Chmod(stickyTheirs, 0o777|os.ModeSticky)
	asOther(t, "touch", filepath.Join(stickyTheirs, "planted"))
	for _, tc := range []struct {
		name, dir, want string
	}{
		{"mine", mine, ""},
		{"missing below mine", filepath.Join(mine, "new", "deeper"), ""},
		{"in a sticky shared dir", filepath.Join(shared, "new"), ""},
		{"another user's", filepath.Join(shared, "theirs"), fmt.Sprintf("belongs to uid %d", otherUID)},
		{"below another user's", filepath.Join(shared, "theirs", "new"), fmt.Sprintf("belongs to uid %d", otherUID)},
		{"another user's link", filepath.Join(shared, "their-link"), fmt.Sprintf("their-link belongs to uid %d", otherUID)},
		{"group-writable", groupWritable, "chmod go-w " + groupWritable},
		{"below a group-writable one", below, "chmod go-w " + groupWritable},
		{"sticky, only mine in it", stickyMine, ""},
		{"sticky, another user's file in it", stickyTheirs, fmt.Sprintf("holds planted of uid %d", otherUID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := safe.CheckPrivateDir("--data", tc.dir)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("checkPrivateDir(%s): got %v, want nil", tc.dir, err)
			case tc.want != "" && (!errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("checkPrivateDir(%s): got %v, want ErrConfig saying %q", tc.dir, err, tc.want)
			}
		})
	}
}

// TestNewFilesRefuseLinks: the marker, logs and password files the run
// writes are never written through a link someone put in their place.
func TestNewFilesRefuseLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o600)
	for name, write := range map[string]func(string) error{
		"writeNewFile":      func(p string) error { return safe.WriteNewFile(p, []byte("x"), 0o600) },
		"writeFileNoFollow": func(p string) error { return safe.WriteFileNoFollow(p, []byte("x"), 0o600) },
		"createOrTruncate": func(p string) error {
			f, err := safe.CreateOrTruncate(p, 0o600)
			if err == nil {
				f.Write([]byte("x"))
				f.Close()
			}
			return err
		},
	} {
		link := filepath.Join(dir, name)
		os.Symlink(victim, link)
		write(link)
		if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
			t.Errorf("%s through a link: the victim holds %q, want it untouched", name, got)
		}
	}
}

// TestDefaultDataDirIsTheUsers: the default data dir is in a directory
// named for the user, made 0700 when the run makes it.
func TestDefaultDataDirIsTheUsers(t *testing.T) {
	if want := fmt.Sprintf("/var/tmp/tierbench-%d/data", os.Geteuid()); safe.DefaultDataDir != want {
		t.Errorf("DefaultDataDir = %s, want %s", safe.DefaultDataDir, want)
	}
	parent := filepath.Join(t.TempDir(), "tierbench-u")
	c, err := safe.LockDataDir(filepath.Join(parent, "data"), safe.MarkerRecord{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if st, err := os.Stat(parent); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the data dir's new parent: got %v %v, want mode 0700", st.Mode().Perm(), err)
	}
}

// TestRemoveStaleProcessesFIFO: a FIFO named like a pid file does not
// hang the sweep (it blocked in open before) and is left alone, said so.
func TestRemoveStaleProcessesFIFO(t *testing.T) {
	state := t.TempDir()
	fifo := filepath.Join(state, "x.pids")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan []string, 1)
	go func() { done <- safe.RemoveStaleProcesses(state) }()
	select {
	case did := <-done:
		if len(did) != 1 || !strings.Contains(did[0], "not a regular file") {
			t.Errorf("sweep of a FIFO x.pids: got %q, want it left alone as not a regular file", did)
		}
	case <-time.After(10 * time.Second):
		// The opener is stuck; a writer end releases it.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		t.Fatal("the sweep of a FIFO x.pids did not return within 10 s: it blocks in open")
	}
	if _, err := os.Lstat(fifo); err != nil {
		t.Errorf("the FIFO was removed: %v", err)
	}
}

// runTinyArgs are the flags of a run small enough to end quickly.
func runTinyArgs(data, out, state string) []string {
	return []string{"run", "--runtime", "process", "--no-fio", "--dbsize", "200000", "--memory", "1m", "--page", "64k",
		"--segment", "16m", "--index", "16m", "--threads", "2", "--passes", "1", "--cell-seconds", "1",
		"--data", data, "--out", out, "--state-dir", state}
}

// TestRunRefusesAnotherUsersStateDir: another user makes the state dir
// first and plants R.pids naming a live child of this user's run R. The
// run is refused naming the owner before it reads the directory, and the
// child lives (before, the sweep killed it and only then was the
// directory refused).
func TestRunRefusesAnotherUsersStateDir(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	shared := sharedDir(t, base)
	state := filepath.Join(shared, "tierbench-0")
	asOther(t, "mkdir", "-m", "0755", state)
	child := testenv.StartSleeper(t, safe.EnvRunID+"=R")
	planted := fmt.Sprintf("999999999 1\n%d %d\n", child.Process.Pid, safe.StartTime(child.Process.Pid))
	asOther(t, "sh", "-c", `printf "$1" > "$2"`, "sh", planted, filepath.Join(state, "R.pids"))

	r := runBinaryIn(t, base, nil, bin, runTinyArgs(filepath.Join(base, "data"), filepath.Join(base, "out"), state)...)
	if r.code != ExitUsage || !strings.Contains(r.stderr, fmt.Sprintf("belongs to uid %d", otherUID)) {
		t.Errorf("run with another user's --state-dir: exit %d, want %d naming its owner:\n%s", r.code, ExitUsage, r.stderr)
	}
	// A killed child stays a zombie until the test reaps it.
	if st, err := procfs.Root("/proc").ReadStat(child.Process.Pid); err != nil || st.State == 'Z' {
		t.Errorf("the planted R.pids had process %d killed:\n%s", child.Process.Pid, r.stderr)
	}
}

// TestRunRefusesAnotherUsersDataDir: another user makes the --data dir
// first (where they could plant segment.0 -> a victim's file between the
// wipe and the server's open); the run is refused naming the owner and
// writes nothing there.
func TestRunRefusesAnotherUsersDataDir(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	shared := sharedDir(t, base)
	for _, tc := range []struct{ name, mode, want string }{
		{"theirs", "0755", fmt.Sprintf("belongs to uid %d", otherUID)},
		{"theirs-open", "0777", fmt.Sprintf("belongs to uid %d", otherUID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(shared, tc.name)
			asOther(t, "mkdir", "-m", tc.mode, data)
			r := runBinaryIn(t, base, nil, bin, runTinyArgs(data, filepath.Join(base, "out-"+tc.name), filepath.Join(base, "state"))...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("run --data %s (uid %d, %s): exit %d, want %d saying %q:\n%s", data, otherUID, tc.mode, r.code, ExitUsage, tc.want, r.stderr)
			}
			if entries, _ := os.ReadDir(data); len(entries) != 0 {
				t.Errorf("the refused run wrote %d entries in %s", len(entries), data)
			}
		})
	}
}

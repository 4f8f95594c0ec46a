package safe

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fault"
)

func TestCheckDataPath(t *testing.T) {
	at := DataPlaces{cwd: "/home/ann/project", home: "/home/ann", out: "/srv/results/a"}
	for _, tc := range []struct {
		dir  string
		want string // in the refusal; "" accepted
	}{
		{"/", "the root directory"},
		{"/home/ann", "your home directory /home/ann"},
		{"/home", "your home directory /home/ann or a parent of it"},
		{"/home/ann/project", "the current directory /home/ann/project"},
		{"/srv/results/a", "the results bundle --out /srv/results/a"},
		{"/srv/results", "the results bundle --out /srv/results/a or a parent of it"},
		{"/srv/results/a/data", "inside the results bundle"},
		{"/home/ann/project/tierbench-data", ""},
		{"/home/ann/projects", ""}, // a sibling sharing a prefix is not a parent
		{"/var/tmp/tierbench-data", ""},
		{"/srv/results/b", ""},
	} {
		err := checkDataPath(tc.dir, at)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("checkDataPath(%s): got %v, want accepted", tc.dir, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, fault.ErrConfig)):
			t.Errorf("checkDataPath(%s): got %v, want a configuration error saying %q", tc.dir, err, tc.want)
		}
	}
}

// listTree lists every path below dir, directories with a trailing /.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	return out
}

func TestWipeDirDeletesOnlyTierbenchFiles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tree    []string
		foreign []string // named in the refusal; none: wiped
		left    []string // what stays after a wipe
	}{
		{name: "segments, probes, ladder and shards",
			tree: []string{"segment.0", "segment.17", "tierbench-fio.3", ".tierbench-odirect-42", "ladder-kv/segment.0", "shard-1/segment.2", "shard-0/", DataMarker, "lost+found/"},
			left: []string{DataMarker, "lost+found/"}},
		{name: "a user's file", tree: []string{"segment.0", "notes.txt"}, foreign: []string{"notes.txt"}},
		{name: "names that look like ours", tree: []string{"segment.01", "segment.x", "segment.0.bak"}, foreign: []string{"segment.0.bak", "segment.01", "segment.x"}},
		{name: "a user's file in a shard dir", tree: []string{"shard-0/segment.0", "shard-0/thesis.tex"}, foreign: []string{"shard-0"}},
		{name: "a user's directory", tree: []string{"photos/cat.jpg"}, foreign: []string{"photos"}},
		// A server's directory goes whole when the run marked it.
		{name: "a server's directory", tree: []string{"server-redis/" + serverDirMarker, "server-redis/dump.rdb", "server-garnet/" + serverDirMarker, "server-garnet/Store/hlog.0", DataMarker},
			left: []string{DataMarker}},
		{name: "a server's directory without the marker", tree: []string{"server-redis/dump.rdb"}, foreign: []string{"server-redis"}},
		{name: "a marker that is a directory", tree: []string{"server-redis/" + serverDirMarker + "/x"}, foreign: []string{"server-redis"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			testenv.WriteTree(t, dir, tc.tree...)
			before := listTree(t, dir)
			err := WipeDir(dir)
			if len(tc.foreign) > 0 {
				if !errors.Is(err, ErrForeignData) {
					t.Fatalf("wipeDir: got %v, want ErrForeignData", err)
				}
				for _, f := range tc.foreign {
					if !strings.Contains(err.Error(), f) {
						t.Errorf("refusal %q does not name %s", err, f)
					}
				}
				if after := listTree(t, dir); !slices.Equal(after, before) {
					t.Errorf("a refused wipe changed the tree: got %v, want %v", after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("wipeDir: %v", err)
			}
			if got := listTree(t, dir); !slices.Equal(got, tc.left) {
				t.Errorf("after the wipe: got %v, want %v", got, tc.left)
			}
		})
	}
}

func TestServerDir(t *testing.T) {
	data := t.TempDir()
	d, err := ServerDir(data, "redis")
	if err != nil || d != filepath.Join(data, "server-redis") {
		t.Fatalf("got %s, %v; want %s/server-redis", d, err, data)
	}
	testenv.WriteTree(t, d, "appendonly.aof")
	if err := WipeDir(data); err != nil {
		t.Fatalf("wipeDir after a server wrote in its directory: %v", err)
	}
	if got := listTree(t, data); len(got) != 0 {
		t.Errorf("after the wipe: got %v, want nothing", got)
	}
	if _, err := ServerDir(data, "../x"); err == nil {
		t.Errorf("serverDir(../x): got nil error, want a refusal")
	}
}

func TestClaimDataDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "data")
	first, err := ClaimDataDir(dir, DataPlaces{}, "run-one")
	if err != nil {
		t.Fatal(err)
	}
	if !first.created {
		t.Errorf("a missing data dir was not recorded as created by the run")
	}
	// A second claim is refused while the first holds it, naming it.
	_, err = ClaimDataDir(dir, DataPlaces{}, "run-two")
	if !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), "run run-one (pid ") {
		t.Fatalf("second claim: got %v, want a refusal naming run-one", err)
	}
	if _, err := os.Stat(filepath.Join(dir, DataMarker)); err != nil {
		t.Errorf("the refused claim removed the holder's marker: %v", err)
	}
	testenv.WriteTree(t, dir, "segment.0")
	if err := WipeDir(dir); err != nil {
		t.Fatal(err)
	}
	first.Release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the data dir the run made is still there after release: %v", err)
	}

	// A directory holding a user's file is refused and keeps it.
	foreign := filepath.Join(base, "foreign")
	testenv.WriteTree(t, foreign, "notes.txt")
	if _, err := ClaimDataDir(foreign, DataPlaces{}, "run-three"); !errors.Is(err, fault.ErrConfig) || !errors.Is(err, ErrForeignData) {
		t.Errorf("claim of a directory with notes.txt: got %v, want ErrConfig and ErrForeignData", err)
	}
	if got := listTree(t, foreign); !slices.Equal(got, []string{"notes.txt"}) {
		t.Errorf("after a refused claim: got %v, want [notes.txt]", got)
	}
	// A file is no data dir.
	if _, err := ClaimDataDir(filepath.Join(foreign, "notes.txt"), DataPlaces{}, "run-four"); !errors.Is(err, fault.ErrConfig) {
		t.Errorf("claim of a file: got %v, want ErrConfig", err)
	}
}

func TestEnsureStateDir(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh")
	if err := EnsureStateDir(fresh); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o700 {
		t.Errorf("a new state dir has mode %04o, want 0700", st.Mode().Perm())
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	if err := EnsureStateDir(open); !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), "may be written by group or others") {
		t.Errorf("a world-writable state dir: got %v, want a refusal", err)
	}
	link := filepath.Join(base, "link")
	os.Symlink(fresh, link)
	if err := EnsureStateDir(link); !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a state dir behind a link: got %v, want a refusal", err)
	}
	if os.Geteuid() == 0 {
		other := filepath.Join(base, "other")
		os.Mkdir(other, 0o700)
		if err := os.Chown(other, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := EnsureStateDir(other); !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("another user's state dir: got %v, want a refusal", err)
		}
	}
}

func TestRemoveStaleProcessesKillsOnlyProvenChildren(t *testing.T) {
	state := t.TempDir()
	child := testenv.StartSleeper(t, EnvRunID+"=old-run")
	planted := testenv.StartSleeper(t)
	otherRun := testenv.StartSleeper(t, EnvRunID+"=another-run")
	lines := "999999999 1\n"
	for _, c := range []*exec.Cmd{child, planted, otherRun} {
		lines += fmt.Sprintf("%d %d\n", c.Process.Pid, StartTime(c.Process.Pid))
	}
	os.WriteFile(filepath.Join(state, "old-run.pids"), []byte(lines), 0o600)
	// The keys and password file of the run that died; the live run's stay.
	for _, d := range append(SecretDirs(state, "old-run"), SecretDirs(state, "live-run")...) {
		os.Mkdir(d, 0o700)
		os.WriteFile(filepath.Join(d, "server.key"), []byte("key"), 0o600)
	}

	// A pid file its run still holds is not touched, whatever it lists.
	live, err := NewPIDFile(state, "live-run")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	fmt.Fprintf(live.f, "%d %d\n", child.Process.Pid, StartTime(child.Process.Pid))

	did := RemoveStaleProcesses(state)
	exited := make(chan struct{})
	go func() { child.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Errorf("the proven child %d survived: %v", child.Process.Pid, did)
	}
	for _, c := range []*exec.Cmd{planted, otherRun} {
		if !Alive(c.Process.Pid, StartTime(c.Process.Pid)) || syscall.Kill(c.Process.Pid, 0) != nil {
			t.Errorf("process %d, not a child of old-run, was killed: %v", c.Process.Pid, did)
		}
		if !slices.ContainsFunc(did, func(s string) bool { return strings.Contains(s, fmt.Sprintf("left process %d alone", c.Process.Pid)) }) {
			t.Errorf("the sweep does not say it left %d alone: %v", c.Process.Pid, did)
		}
	}
	if _, err := os.Stat(live.path); err != nil {
		t.Errorf("the live run's pid file was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "old-run.pids")); !os.IsNotExist(err) {
		t.Errorf("the stale pid file is still there: %v", err)
	}
	for _, d := range SecretDirs(state, "old-run") {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the dead run's %s: got %v, want it removed", d, err)
		}
	}
	for _, d := range SecretDirs(state, "live-run") {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the live run's %s: got %v, want it kept", d, err)
		}
	}
}

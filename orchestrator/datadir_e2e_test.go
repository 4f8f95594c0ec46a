package orchestrator

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/safe"
)

// snapshot maps every path below root to the sha256 of its content (a
// directory to "dir"), to show a refused run left a tree byte for byte.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		out[p] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// userHome is a home directory as a new user has one: a thesis, a
// project with notes and an earlier run's bundle, and photos.
func userHome(t *testing.T, base string) string {
	home := filepath.Join(base, "home")
	testenv.WriteTree(t, home, "thesis.tex", "project/notes.txt", "project/results/old/table.md", "photos/cat.jpg")
	return home
}

// TestRunRefusesDataItDidNotMake runs `tierbench run` as a new user would,
// in a home of their own, with a --data that would have emptied their
// files: each is refused with exit 2 before anything is created, naming
// the path, and every file is still there byte for byte.
func TestRunRefusesDataItDidNotMake(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	home := userHome(t, base)
	project := filepath.Join(home, "project")
	for _, tc := range []struct {
		name, cwd, data, out string
		want                 string
	}{
		{"the current directory", project, ".", "results/a", "is the current directory " + project},
		{"the home directory", base, home, filepath.Join(base, "out"), "is your home directory " + home},
		{"a parent of --out", base, project, filepath.Join(project, "results", "a"), "is the results bundle --out " + filepath.Join(project, "results", "a") + " or a parent of it"},
		{"a directory of the user's", base, filepath.Join(home, "photos"), filepath.Join(base, "out"), "holds cat.jpg, which tierbench did not make"},
		{"the root", base, "/", filepath.Join(base, "out"), "--data / is the root directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, base)
			args := []string{"run", "--runtime", "process", "--no-fio", "--dbsize", "200000", "--memory", "1m", "--page", "64k",
				"--segment", "16m", "--index", "16m", "--threads", "2", "--passes", "1", "--cell-seconds", "1",
				"--data", tc.data, "--out", tc.out, "--state-dir", filepath.Join(base, "state")}
			r := runBinaryIn(t, tc.cwd, []string{"HOME=" + home}, bin, args...)
			if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("run --data %s in %s: exit %d, want %d saying %q:\n%s", tc.data, tc.cwd, r.code, ExitUsage, tc.want, r.stderr)
			}
			after := snapshot(t, base)
			for p, sum := range before {
				if after[p] != sum {
					t.Errorf("%s: got %q after the refused run, want %q", p, after[p], sum)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("the refused run created %s", p)
				}
			}
		})
	}

	// TIERBENCH_DATA from the environment is held to the same rules, and
	// the old unprefixed DATA is refused naming the new name.
	r := runBinaryIn(t, project, []string{"HOME=" + home, "TIERBENCH_DATA=" + home}, bin, "run", "--runtime", "process", "--no-fio", "--out", filepath.Join(base, "out"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "is your home directory") {
		t.Errorf("TIERBENCH_DATA=$HOME: exit %d, want %d refusing it:\n%s", r.code, ExitUsage, r.stderr)
	}
	r = runBinaryIn(t, project, []string{"HOME=" + home, "DATA=" + filepath.Join(base, "old-name")}, bin, "run", "--runtime", "process", "--no-fio", "--out", filepath.Join(base, "out"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "set TIERBENCH_DATA") {
		t.Errorf("DATA=…: exit %d, want %d naming TIERBENCH_DATA:\n%s", r.code, ExitUsage, r.stderr)
	}
}

// TestTwoRunsOneDataDir starts a run and then a second on the same data
// dir: the second is refused at once naming the first, which finishes as
// if alone.
func TestTwoRunsOneDataDir(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data := filepath.Join(base, "data")
	out1, out2 := filepath.Join(base, "out1"), filepath.Join(base, "out2")
	first := startBackground(t, bin, append(tinyArgs(t, data, out1), "--runtime", "process", "--backends", "libaio", "--pin", "none")...)
	var marker safe.MarkerRecord
	first.waitUntil(t, "the data dir's marker", 60*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(data, safe.DataMarker))
		return err == nil && json.Unmarshal(b, &marker) == nil && marker.RunID != ""
	})
	second := runBinary(t, bin, append(tinyArgs(t, data, out2), "--runtime", "process", "--backends", "libaio", "--pin", "none")...)
	if second.code != ExitUsage || !strings.Contains(second.stderr, "is in use by run "+marker.RunID) ||
		!strings.Contains(second.stderr, "(pid "+strconv.Itoa(first.cmd.Process.Pid)) {
		t.Errorf("second run on %s: exit %d, want %d naming run %s (pid %d):\n%s", data, second.code, ExitUsage, marker.RunID, first.cmd.Process.Pid, second.stderr)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("the refused run created its bundle %s: %v", out2, err)
	}
	select {
	case err := <-first.done:
		if code := exitCode(err); code != 0 {
			t.Fatalf("the first run exited %d:\n%s", code, first.stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("the first run did not finish:\n%s", first.stderr.String())
	}
	checkBundle(t, out1, first.stdout.String(), 1, 1)
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Errorf("the data dir the first run made is still there: %v", err)
	}
}

// TestRunDockerRefusesRelativeForeignData: a relative --data is made
// absolute before Docker sees it, so it is the directory the user named,
// held to the same rules — and Docker creates no named volume for it.
func TestRunDockerRefusesRelativeForeignData(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	home := userHome(t, base)
	volumes := func() map[string]bool {
		list, err := cli.VolumeList(t.Context(), client.VolumeListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, v := range list.Items {
			names[v.Name] = true
		}
		return names
	}
	beforeVolumes := volumes()
	before := snapshot(t, base)
	r := runBinaryIn(t, home, []string{"HOME=" + base}, bin, "run", "--runtime", "docker", "--no-fio", "--dbsize", "200000", "--memory", "1m", "--page", "64k",
		"--data", "project", "--out", filepath.Join(base, "out"), "--state-dir", filepath.Join(base, "state"))
	if r.code != ExitUsage || !strings.Contains(r.stderr, "--data "+filepath.Join(home, "project")+" holds notes.txt, results") {
		t.Errorf("run --data project in %s: exit %d, want %d naming %s and its files:\n%s", home, r.code, ExitUsage, filepath.Join(home, "project"), r.stderr)
	}
	if after := snapshot(t, base); !maps.Equal(after, before) {
		t.Errorf("the refused run changed %s", base)
	}
	for name := range volumes() {
		if !beforeVolumes[name] {
			t.Errorf("the refused run left Docker volume %q", name)
		}
	}
}

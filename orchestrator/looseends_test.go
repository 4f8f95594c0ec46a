package orchestrator

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/fault"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/orchestrator/safe"
	"github.com/tierbench/tierbench/results"
)

// TestLadderFioIsOwned: the ladder's fio directory, left by a run killed
// during the ladder's fio step, is tierbench's: the next run takes the
// data dir and wipes it (before, it refused the dir as not made by
// tierbench).
func TestLadderFioIsOwned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	testenv.WriteTree(t, dir, "ladder-fio/tierbench-fio.0", "segment.0")
	c, err := safe.LockDataDir(dir, safe.MarkerRecord{RunID: "next"})
	if err != nil {
		t.Fatalf("a data dir holding a killed run's ladder-fio/: got %v, want it taken", err)
	}
	defer c.Release()
	if err := safe.WipeDir(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ladder-fio")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ladder-fio/ after the wipe: got %v, want it gone", err)
	}
	// A ladder-fio/ holding a user's file is not ours.
	testenv.WriteTree(t, dir, "ladder-fio/notes.txt")
	if err := safe.WipeDir(dir); !errors.Is(err, safe.ErrForeignData) {
		t.Errorf("ladder-fio/ holding notes.txt: got %v, want ErrForeignData", err)
	}
}

// TestPlanRefusesRowsTheServerWould: sizes tierbench's server refuses at
// start are refused with the plan, by the server's own rule, before
// anything starts.
func TestPlanRefusesRowsTheServerWould(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct {
		name string
		cfg  plan.Config
		want string
	}{
		{"one row", plan.Config{Workload: results.Workload{Memory: "4m", Page: "4m", Force: true}}, "--memory 4m holds fewer than two --page 4m pages"},
		{"a memory sweep", plan.Config{Workload: results.Workload{Memory: "4m,32m", Page: "4m", Force: true}}, "--memory 4m holds fewer than two --page 4m pages"},
		{"a read cache below the server's least", plan.Config{Workload: results.Workload{ReadCacheMemory: "1k", Force: true}}, "--readcache-memory 1k: want 0 (off) or at least"},
		{"a read-cache sweep", plan.Config{Workload: results.Workload{ReadCacheMemory: "1k,16m", Force: true}}, "--readcache-memory 1k: want 0 (off) or at least"},
	} {
		_, err := tc.cfg.Resolve(none, parts)
		if !errors.Is(err, fault.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want a configuration error saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := (plan.Config{Workload: results.Workload{Memory: "8m", Page: "4m", Force: true}}).Resolve(none, parts); err != nil && strings.Contains(err.Error(), "fewer than two") {
		t.Errorf("--memory 8m --page 4m: got %v, want no page refusal", err)
	}
}

// TestServerExitReportedAtOnce: a server that exits at start-up is
// reported with its exit status and its own last line, not as a server
// that "never answered … connection refused" after the whole wait.
func TestServerExitReportedAtOnce(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	args := append(runTinyArgs(filepath.Join(base, "data"), filepath.Join(base, "out"), filepath.Join(base, "state")),
		"--server-cmd", "sh -c 'echo kvd: unknown flag --frobnicate {port} >&2; exit 7'")
	r := runBinary(t, bin, args...)
	if r.code == 0 || !strings.Contains(r.stderr, "exit status 7") || !strings.Contains(r.stderr, "kvd: unknown flag --frobnicate") || strings.Contains(r.stderr, "never answered") {
		t.Errorf("a server that exits 7 at start: exit %d, want a failure naming exit status 7 and its last line:\n%s", r.code, r.stderr)
	}
}

// TestServerExitReportedAtOnceDocker: the same under --runtime docker. A
// server the plan cannot foresee failing (redis-server given a directive
// it does not know) stops its container at once; the run
// says so with the exit status and the server's own line well within the
// 60 s it would wait for a port (before, it waited them all and said the
// server "never answered … connection refused"), and leaves no container.
func TestServerExitReportedAtOnceDocker(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	removeImageAfter(t, cli, bin)
	// The image is built first, so the time measured is the run's.
	d, err := docker.NewDriver(t.Context(), docker.Endpoint{}, bin, "exit-"+strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	d.Engine.Close()
	// A server the plan cannot foresee failing: redis-server refuses a
	// directive it does not know, and exits 1.
	image := testenv.MustRedisImage(t)
	base := testenv.MustDiskDir(t)
	out := filepath.Join(base, "out")
	args := scenarioArgs(base, results.ScenarioMemory, "--server-cmd", "redis-server --port {port} --frobnicate 1", "--server-image", image)
	args[slices.Index(args, "--runtime")+1] = "docker"
	start := time.Now()
	r := runBinary(t, bin, args...)
	took := time.Since(start)
	for _, want := range []string{"exit status 1", "frobnicate"} {
		if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "never answered") {
			t.Errorf("a server container that exits 1 at start: exit %d, want a failure saying %q:\n%s", r.code, want, r.stderr)
		}
	}
	if took > 30*time.Second {
		t.Errorf("the run took %v, want it to end within 30 s of the server's exit, not after the 60 s wait for its port", took.Round(time.Second))
	}
	var bundlePlan results.Plan
	if err := results.ReadJSON(out, results.FilePlan, &bundlePlan); err != nil {
		t.Fatal(err)
	}
	if left := containersLabelled(t, cli, docker.LabelRun+"="+bundlePlan.RunID); len(left) != 0 {
		t.Errorf("%d containers of run %s left after the failed run", len(left), bundlePlan.RunID)
	}
}

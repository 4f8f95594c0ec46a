package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/orchestrator/latency"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/orchestrator/rig/docker"
	"github.com/tierbench/tierbench/results"
)

// TestRunLadder measures the layers below a tiny storage run on libaio,
// and says an external server has nothing below RESP.
func TestRunLadder(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	r := runBinary(t, bin, append(tinyArgs(t, data, out), "--runtime", "process", "--backends", "libaio", "--pin", "none", "--ladder")...)
	if r.code != 0 {
		t.Fatalf("run --ladder: exit %d, want 0:\n%s", r.code, r.stderr)
	}
	var ls []results.Ladder
	if err := results.ReadJSON(out, results.FileLadder, &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].Backend != "libaio" || len(ls[0].Layers) != 4 || ls[0].Layers[3].Layer != ladder.LayerRESP {
		t.Fatalf("ladder.json: got %+v, want one libaio ladder of four layers", ls)
	}
	for _, x := range ls[0].Layers[1:] {
		// --no-fio: the Device layer has no fio below it to be a share of.
		if x.OpsPerSec <= 0 || x.CPUMicrosPerOp <= 0 || x.Share <= 0 && x.Layer != ladder.LayerDevice || x.Error != "" {
			t.Errorf("layer %+v: want ops/s, CPU µs per op and a share of the layer below", x)
		}
		if x.Layer != ladder.LayerRESP {
			if st, err := os.Stat(filepath.Join(out, x.Raw)); err != nil || st.Size() == 0 {
				t.Errorf("layer %s: raw JSON %q: %v, want it in the bundle", x.Layer, x.Raw, err)
			}
		}
	}
	// A gap, or, when every layer kept all of the one below, the words
	// that no gap is named.
	if !strings.Contains(r.stdout, "## Where the time goes") || !strings.Contains(r.stdout, "The gap is between") && !strings.Contains(r.stdout, "No gap is named") {
		t.Errorf("stdout lacks the ladder and its gap:\n%s", r.stdout)
	}
	if segs, _ := filepath.Glob(filepath.Join(data, "ladder-*")); len(segs) != 0 {
		t.Errorf("the ladder left %v in the data dir", segs)
	}
	// The estimate counts at least every timed run the ladder said it
	// started (a KV round's line starts two runs, one per thread count).
	var bundlePlan results.Plan
	if err := results.ReadJSON(out, results.FilePlan, &bundlePlan); err != nil {
		t.Fatal(err)
	}
	runs, _, _ := ladder.Work(plan.ConfigOf(bundlePlan.Workload), bundlePlan.Rows, true, 0)
	if said := strings.Count(r.stderr, "\nladder libaio: "); said == 0 || runs < said {
		t.Errorf("the ladder said %d runs, its estimate counted %d: want at least as many counted", said, runs)
	} else {
		t.Logf("the ladder said %d runs, its estimate counted %d", said, runs)
	}
	assertNoProcesses(t, bin)

	_, addr, port := startTieredServer(t, bin, filepath.Join(base, "srv"))
	loadKeys(t, bin, port, 200000)
	r = runBinary(t, bin, externalArgs(base, "ext", addr, "--dbsize", "200000", "--skip-load", "--ladder")...)
	if r.code != 0 || !strings.Contains(r.stdout, "An external server has no layers below RESP") {
		t.Errorf("--ladder with --server-addr: exit %d, stdout\n%s\nwant 0 and the note", r.code, r.stdout)
	}
	ls = nil
	results.ReadJSON(filepath.Join(base, "ext"), results.FileLadder, &ls)
	if len(ls) != 1 || len(ls[0].Layers) != 2 || ls[0].Layers[0].Layer != ladder.LayerFio || ls[0].Layers[1].Layer != ladder.LayerRESP || ls[0].Layers[1].OpsPerSec <= 0 {
		t.Errorf("external ladder: got %+v, want fio and RESP only", ls)
	}
}

// TestRunLadderAndLatencyDocker: under the Docker runtime the ladder's
// layers (run as processes beside the data dir) and the fixed-rate
// latency steps (clients in containers) both complete, --resume completes
// what the bundle lacks, and nothing of the run is left.
func TestRunLadderAndLatencyDocker(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	removeImageAfter(t, cli, bin)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	r := runBinary(t, bin, append(tinyArgs(t, data, out), "--runtime", "docker", "--backends", "libaio", "--pin", "none", "--threads", "2", "--ladder", "--latency")...)
	if r.code != 0 {
		t.Fatalf("run --runtime docker --ladder --latency: exit %d, want 0:\n%s", r.code, r.stderr)
	}
	var bundlePlan results.Plan
	if err := results.ReadJSON(out, results.FilePlan, &bundlePlan); err != nil {
		t.Fatal(err)
	}
	if table, _ := os.ReadFile(filepath.Join(out, results.FileTable)); len(table) == 0 || !strings.HasPrefix(r.stdout, string(table)) {
		t.Errorf("stdout does not begin with table.md:\n%s", r.stdout)
	}
	if bundlePlan.Runtime != plan.RuntimeDocker {
		t.Errorf("bundlePlan runtime %q, want docker", bundlePlan.Runtime)
	}
	var ls []results.Ladder
	if err := results.ReadJSON(out, results.FileLadder, &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || len(ls[0].Layers) != 4 {
		t.Fatalf("ladder.json: got %+v, want one libaio ladder of four layers", ls)
	}
	for _, x := range ls[0].Layers[1:] {
		if x.OpsPerSec <= 0 || x.Error != "" {
			t.Errorf("layer %+v: want ops/s and no error", x)
		}
	}
	steps, err := readLatencySteps(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(latency.Shares) {
		t.Fatalf("latency.jsonl: %d steps, want %d", len(steps), len(latency.Shares))
	}
	// On a loaded 2-CPU machine the upper steps may fall short of their
	// offered rate (recorded as such and marked in the report); the lowest
	// must not.
	for i, s := range steps {
		if s.Row != bundlePlan.Rows[0] || s.InFlight != 64 || s.OfferedOpsPerSec <= 0 || s.Hlog == "" {
			t.Errorf("latency step %+v: want the row's step offered at -b 64 with its histogram log", s)
		}
		if (i == 0 || !s.Short) && (s.AchievedOpsPerSec <= 0 || s.P99Micros < s.P50Micros || s.P50Micros <= 0) {
			t.Errorf("latency step %+v: want it achieved, p99 ≥ p50 > 0", s)
		}
	}
	if left := containersLabelled(t, cli, docker.LabelRun+"="+bundlePlan.RunID); len(left) != 0 {
		t.Errorf("containers left with label %s=%s: %d", docker.LabelRun, bundlePlan.RunID, len(left))
	}
	assertNoProcesses(t, bin)

	// --resume under docker: without its last pass and last latency step,
	// the bundle is completed with just those, in containers again.
	dropLastPass(t, out)
	lat := filepath.Join(out, results.FileLatency)
	b, err := os.ReadFile(lat)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	if err := os.WriteFile(lat, []byte(strings.Join(lines[:len(lines)-1], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	resumeBundle(t, bin, out, filepath.Join(data, "..", "state"), "runtime: docker", "cell 1/1: Libaio", "at 90 % of")
	if steps, err := readLatencySteps(out); err != nil || len(steps) != len(latency.Shares) {
		t.Errorf("after resume: %d latency steps (%v), want %d", len(steps), err, len(latency.Shares))
	}
	if passes, _, err := results.ReadCells(out); err != nil || len(passes) != 1 {
		t.Errorf("after resume: %d passes (%v), want 1", len(passes), err)
	}
	if left := containersLabelled(t, cli, docker.LabelRun+"="+bundlePlan.RunID); len(left) != 0 {
		t.Errorf("containers left after resume: %d", len(left))
	}
}

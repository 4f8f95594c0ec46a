package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/results"
)

// sweepNoise is how far a sweep's device share may rise from one size to
// the next larger and still count as falling: the draws of two 1 s cells
// of a skewed distribution differ by about a percent.
const sweepNoise = 0.03

// TestRunMemorySweep sweeps the in-memory log over one dataset with
// zipf keys, at the ratios of --memory 4m,32m,128m,512m over 2.7 M keys
// of 128 B (1.2, 9.5, 38 and 152 % of the data) scaled to 270 000 keys:
// a row per size, every cell shown, the share of GETs that read the
// device falling as memory grows (within sweepNoise), ops/s higher at the
// largest size than at the smallest, and both charts drawn.
func TestRunMemorySweep(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	args := []string{"run", "--dbsize", "270000", "--keylength", "16", "--valuelength", "96", "--memory", "384k,3200k,12800k,51200k",
		"--page", "64k", "--segment", "16m", "--index", "16m", "--key-dist", "zipf",
		"--threads", "4", "--batch", "64", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "1",
		"--load-threads", "4", "--no-fio", "--data", data, "--out", out, "--state-dir", filepath.Join(base, "state"),
		"--runtime", "process", "--backends", "libaio", "--pin", "none"}
	r := runBinary(t, bin, args...)
	if r.code != 0 {
		t.Fatalf("sweep: exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	res, err := results.Derive(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cells []results.Cell
	for _, c := range res.Cells {
		if c.Row.Memory != "" && c.Passes > 0 {
			cells = append(cells, c)
		}
	}
	if len(cells) != 4 {
		t.Fatalf("got %d sweep cells, want 4 (one per size)", len(cells))
	}
	for i, c := range cells {
		t.Logf("--memory %s: %.0f ops/s, %.3f of GETs from the device, %.0f device B/GET", c.Row.Memory, c.Median, c.DeviceGetShare, c.ReadBytesPerGet)
		if c.Excluded != "" || !c.StoreCounted {
			t.Errorf("--memory %s: kept out (%q) or without the store's counters (%v); want every sweep cell shown and counted", c.Row.Memory, c.Excluded, c.StoreCounted)
		}
		if i > 0 && c.DeviceGetShare > cells[i-1].DeviceGetShare+sweepNoise {
			t.Errorf("--memory %s: %.3f of GETs read the device, up from %.3f at %s: want it to fall as memory grows (noise %.2f)",
				c.Row.Memory, c.DeviceGetShare, cells[i-1].DeviceGetShare, cells[i-1].Row.Memory, sweepNoise)
		}
	}
	first, last := cells[0], cells[len(cells)-1]
	if last.DeviceGetShare > 0.01 || first.DeviceGetShare < 0.5 {
		t.Errorf("device share %.3f at %s and %.3f at %s: want most GETs from the device at 1 %% of the data and none when it all fits",
			first.DeviceGetShare, first.Row.Memory, last.DeviceGetShare, last.Row.Memory)
	}
	if last.Median <= first.Median {
		t.Errorf("ops/s %.0f at %s and %.0f at %s: want more with the data in memory", first.Median, first.Row.Memory, last.Median, last.Row.Memory)
	}
	for _, f := range []string{"sweep-throughput.svg", "sweep-device-share.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("chart %s: %v, want it drawn", f, err)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	if !strings.Contains(string(report), "## Memory-tier sweep") || !strings.Contains(string(report), "](sweep-device-share.svg)") {
		t.Errorf("report.md lacks the sweep's section or its chart")
	}
	if !strings.Contains(r.stdout, "(dev ") {
		t.Errorf("the table does not show each cell's device share:\n%s", r.stdout)
	}
	assertNoProcesses(t, bin)
}

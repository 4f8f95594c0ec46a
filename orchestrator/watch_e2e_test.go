package orchestrator

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/watch"
	"github.com/tierbench/tierbench/results"
)

// scrape reads the endpoint's text format into name{labels} → value.
func scrape(t *testing.T, url string) (map[string]float64, string, error) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, string(body), errors.New(resp.Status)
	}
	got := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		name := line[:i]
		if j := strings.IndexByte(name, '{'); j >= 0 {
			name = name[:j]
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		got[name] = v
	}
	return got, string(body), nil
}

// TestMetricsScrapedDuringQuickRun runs a small quick-profile run with
// --metrics-addr on a loopback port of the kernel's choosing, scrapes the
// endpoint while a cell is under way and checks the progress gauges and
// a non-zero GET/s; then that status.json ends done with every pass
// counted, and that the bundle's seal covers it.
func TestMetricsScrapedDuringQuickRun(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, out := filepath.Join(base, "data"), filepath.Join(base, "out")
	b := startBackground(t, bin, "run", "--profile", "quick", "--backends", "uring", "--pin", "none", "--runtime", "process",
		"--dbsize", "200000", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "2,4", "--batch", "64", "--cell-seconds", "3", "--passes", "1", "--warmup-seconds", "1",
		"--load-threads", "4", "--no-fio", "--data", data, "--out", out, "--state-dir", filepath.Join(base, "state"),
		"--metrics-addr", "127.0.0.1:0")
	addr := regexp.MustCompile(`metrics: (http://127\.0\.0\.1:\d+/metrics)`)
	var url string
	b.waitUntil(t, "the metrics address", 60*time.Second, func() bool {
		if m := addr.FindStringSubmatch(b.stderr.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	var during map[string]float64
	var body string
	b.waitUntil(t, "a scrape with GET/s of a cell under way", 120*time.Second, func() bool {
		got, text, err := scrape(t, url)
		if err != nil {
			return false
		}
		if got["tierbench_cell_running"] == 1 && got["tierbench_cell_gets_per_second"] > 0 {
			during, body = got, text
			return true
		}
		return false
	})
	if during["tierbench_run_cells_total"] != 2 || during["tierbench_run_rows"] != 1 || during["tierbench_run_row"] != 1 {
		t.Errorf("during a cell: got cells_total %v, rows %v, row %v; want 2, 1, 1:\n%s", during["tierbench_run_cells_total"], during["tierbench_run_rows"], during["tierbench_run_row"], body)
	}
	if during["tierbench_cell_gets_total"] <= 0 || during["tierbench_cell_get_latency_seconds"] <= 0 || during["tierbench_run_eta_seconds"] <= 0 {
		t.Errorf("during a cell: got %v GETs, latency %v s, ETA %v s; want all above 0:\n%s", during["tierbench_cell_gets_total"], during["tierbench_cell_get_latency_seconds"], during["tierbench_run_eta_seconds"], body)
	}
	if !strings.Contains(body, `phase="cells"`) || !strings.Contains(body, `state="running"`) {
		t.Errorf("during a cell: want tierbench_run_info with state running, phase cells:\n%s", body)
	}
	select {
	case err := <-b.done:
		if code := exitCode(err); code != 0 {
			t.Fatalf("run exited %d:\n%s", code, b.stderr.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("run did not end within 3 minutes:\n%s", b.stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, watch.FileStatus))
	if err != nil {
		t.Fatal(err)
	}
	var st watch.RunStatus
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, raw)
	}
	if st.State != watch.StateDone || st.CellsDone != 2 || st.CellsTotal != 2 || st.ETASeconds != 0 || st.RunID == "" || st.UpdatedAt.Before(st.StartedAt) {
		t.Errorf("final status.json: got %+v; want done, 2 of 2 passes, nothing left", st)
	}
	in, err := results.Check(out)
	if err != nil || !in.Holds() {
		t.Errorf("the sealed bundle with its status: got %+v, %v; want it to hold", in, err)
	}
	if left, _ := filepath.Glob(filepath.Join(out, "."+watch.FileStatus+".*")); len(left) > 0 {
		t.Errorf("got temp files %v left in the bundle, want none", left)
	}
	if !strings.Contains(b.stderr.String(), "left (cells") {
		t.Errorf("progress lines lack the phases counted in the estimate:\n%s", b.stderr.String())
	}
}

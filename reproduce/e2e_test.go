package reproduce_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/report/reporttest"
	"github.com/tierbench/tierbench/reproduce"
	"github.com/tierbench/tierbench/results"
)

// TestReproduceProcessRun runs a tiny storage run from a plan file
// (tierbench plan, then run --plan) under the process runtime with a
// short fio ceiling, then reproduces its bundle on this
// host with run --reproduce: the new bundle holds reproduction.md, .html
// and .json with a verdict per cell, covered by its sums, and the exit
// status says what the verdicts say. A bundle edited since is refused.
func TestReproduceProcessRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two tiny benchmarks (about a minute and a half)")
	}
	testenv.MustLookPath(t, "fio")
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	data, state := filepath.Join(base, "data"), filepath.Join(base, "state")
	orig, here := filepath.Join(base, "orig"), filepath.Join(base, "here")
	tiny := []string{"plan", "--dbsize", "200000", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "2,4", "--batch", "64", "--cell-seconds", "1", "--passes", "2", "--warmup-seconds", "1",
		"--load-threads", "4", "--backends", "uring", "--pin", "none", "--runtime", "process",
		"--data", data}
	// The original runs from a plan file, as a published run would.
	yaml, stderr, code := testenv.Run(t, "", nil, bin, tiny...)
	if code != 0 {
		t.Fatalf("plan exited %d:\n%s", code, stderr)
	}
	planFile := filepath.Join(base, "tiny.yaml")
	if err := os.WriteFile(planFile, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := testenv.Run(t, "", nil, bin, "run", "--plan", planFile, "--state-dir", state, "--out", orig); code != 0 {
		t.Fatalf("the original run --plan exited %d:\n%s", code, stderr)
	}
	var op results.Plan
	if err := results.ReadJSON(orig, results.FilePlan, &op); err != nil || op.Workload.DBSize != 200_000 || op.Workload.DataDir != data || len(op.Rows) != 1 {
		t.Fatalf("run --plan's bundle: %v, dbsize %d data %q rows %v; want the plan's", err, op.Workload.DBSize, op.Workload.DataDir, op.Rows)
	}

	stdout, stderr, code := testenv.Run(t, "", nil, bin, "run", "--reproduce", orig, "--data", data, "--state-dir", state, "--out", here)
	var rep reproduce.Reproduction
	b, err := os.ReadFile(filepath.Join(here, reproduce.FileJSON))
	if err != nil {
		t.Fatalf("run --reproduce exited %d and wrote no %s (%v):\n%s", code, reproduce.FileJSON, err, stderr)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	// Both cells had a ceiling on both runs: each is reproduced or differs.
	if len(rep.Cells) != 2 {
		t.Fatalf("got %d cells, want 2 (t=2 and t=4)", len(rep.Cells))
	}
	for _, c := range rep.Cells {
		if c.Verdict != reproduce.Reproduced && c.Verdict != reproduce.Differs || c.Original.Ceiling == 0 || c.Here.Ceiling == 0 || c.Why == "" {
			t.Errorf("cell %s t=%d: verdict %q (%s), ceilings %.0f and %.0f; want reproduced or differs, against both ceilings",
				c.Row, c.Threads, c.Verdict, c.Why, c.Original.Ceiling, c.Here.Ceiling)
		}
	}
	if want := rep.ExitCode(); code != want {
		t.Errorf("exit %d, want %d for the verdicts\n%s", code, want, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(here, reproduce.FileMarkdown))
	rows := regexp.MustCompile(`(?m)^\| storage \| uring none \| (2|4) \|.*\*\*(reproduced|differs)\*\*`).FindAllString(string(md), -1)
	if len(rows) != 2 || !strings.Contains(string(md), "## Hosts") {
		t.Errorf("reproduction.md: got %d verdict rows, want 2 and the hosts:\n%s", len(rows), md)
	}
	if !strings.Contains(stdout, "## Reproduction of "+orig) || !strings.Contains(stdout, "| verdict |") {
		t.Errorf("stdout lacks the verdict table:\n%s", stdout)
	}
	browseReproduction(t, here, rep)
	if v, verr, vcode := testenv.Run(t, "", nil, bin, "report", "--verify", here); vcode != 0 || !strings.HasPrefix(v, "ok ") {
		t.Errorf("report --verify of the reproduction's bundle exited %d: %s%s", vcode, v, verr)
	}
	var p results.Plan
	if err := results.ReadJSON(here, results.FilePlan, &p); err != nil || p.Workload.DBSize != 200_000 || !slices.Equal(p.Workload.Threads, []int{2, 4}) || p.Runtime != "process" {
		t.Errorf("the reproduction's plan: %v, dbsize %d threads %v runtime %s; want the original's", err, p.Workload.DBSize, p.Workload.Threads, p.Runtime)
	}

	// An original edited since its seal is refused before anything runs.
	os.WriteFile(filepath.Join(orig, results.FileTable), []byte("| edited |\n"), 0o644)
	again := filepath.Join(base, "again")
	_, stderr, code = testenv.Run(t, "", nil, bin, "run", "--reproduce", orig, "--data", data, "--state-dir", state, "--out", again)
	if code != 2 || !strings.Contains(stderr, "--unverified") {
		t.Errorf("an edited original: exit %d, stderr %q; want 2 naming --unverified", code, stderr)
	}
	if _, err := os.Stat(again); !os.IsNotExist(err) {
		t.Errorf("the refused reproduction left %s", again)
	}
}

// browseReproduction opens the bundle's reproduction.html from file:// in
// headless Chromium behind a recording proxy, as report.html is checked:
// a screenshot is a PNG, the page's table holds every cell's verdict and
// its GET/s on both hosts as reproduction.json has them, and the browser
// asked the network for nothing.
func browseReproduction(t *testing.T, dir string, rep reproduce.Reproduction) {
	t.Helper()
	got := reporttest.Browse(t, filepath.Join(dir, reproduce.FileHTML))
	if len(got.Screenshot) < 1000 || !bytes.HasPrefix(got.Screenshot, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("got a screenshot of %d bytes, want a PNG", len(got.Screenshot))
	}
	if len(got.Requests) > 0 {
		t.Errorf("got requests %q, want the page to ask the network for nothing", got.Requests)
	}
	t.Logf("reproduction.html: screenshot %d bytes of PNG; DOM %d bytes; requests through the proxy: %d", len(got.Screenshot), len(got.DOM), len(got.Requests))
	// The page's table rows, each as its cells' text.
	var rows [][]string
	for _, tr := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(got.DOM, -1) {
		var cells []string
		for _, td := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(tr[1], -1) {
			cells = append(cells, strings.TrimSpace(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(td[1], "")))
		}
		rows = append(rows, cells)
	}
	for _, c := range rep.Cells {
		// The verdict table's columns: scenario, row, t, GET/s there,
		// share there, GET/s here, share here, two CPU ratios, verdict.
		want := map[int]string{0: c.Scenario, 1: c.Row, 2: fmt.Sprint(c.Threads), 3: fmt.Sprintf("%.0f", c.Original.Median), 5: fmt.Sprintf("%.0f", c.Here.Median), 9: c.Verdict}
		found := slices.ContainsFunc(rows, func(r []string) bool {
			if len(r) < 10 {
				return false
			}
			for i, w := range want {
				if r[i] != w {
					return false
				}
			}
			return true
		})
		if !found {
			t.Errorf("cell %s t=%d: the page's table lacks a row with GET/s %.0f there, %.0f here and verdict %q", c.Row, c.Threads, c.Original.Median, c.Here.Median, c.Verdict)
		} else {
			t.Logf("cell %s t=%d: %.0f → %.0f GET/s, %s, in the page's table", c.Row, c.Threads, c.Original.Median, c.Here.Median, c.Verdict)
		}
	}
	if !strings.Contains(got.DOM, "<h2") || !strings.Contains(got.DOM, "Hosts") {
		t.Errorf("the page's DOM lacks the hosts' section")
	}
}

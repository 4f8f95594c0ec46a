package orchestrator

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/ladder"
	"github.com/tierbench/tierbench/results"
)

// These tests run each scenario through the real binary at a tiny size:
// real untiered and tiered servers, 1 s cells.

// scenarioArgs runs scenario s with two thread counts and 1 s cells.
func scenarioArgs(base, s string, extra ...string) []string {
	return append([]string{"run", "--scenario", s, "--dbsize", "200000", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "1,2", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "0", "--load-threads", "4", "--no-fio",
		"--runtime", "process", "--pin", "none", "--data", filepath.Join(base, "data"), "--out", filepath.Join(base, "out"), "--state-dir", filepath.Join(base, "state")}, extra...)
}

func TestRunScenarioMemory(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioMemory)...)
	if r.code != 0 {
		t.Fatalf("--scenario memory: exit %d, want 0:\n%s", r.code, r.stderr)
	}
	if !strings.HasPrefix(r.stdout, "| backend | NUMA   | t=1 ") || !strings.Contains(r.stdout, "| Memory ") || strings.Contains(r.stdout, "*") {
		t.Errorf("table: got\n%s\nwant the t=1 … header and a Memory row with every cell shown", r.stdout)
	}
	out := filepath.Join(base, "out")
	recs, loads, _ := results.ReadCells(out)
	if len(recs) != 2 || len(loads) != 1 || loads[0].Acknowledged != 200000 || loads[0].ServerKeys != 200000 {
		t.Fatalf("cells.jsonl: got %d passes and loads %+v, want 2 and one exact load of 200000", len(recs), loads)
	}
	for _, rec := range recs {
		if rec.ReadBytes < 0 || rec.ReadBytesPerGet >= results.MaxMemorySectorShare*results.SectorBytes || rec.Batch != 1024 {
			t.Errorf("pass t=%d: %d device bytes (%.2f per GET), -b %d; want under 1 %% of a sector per GET at the seed's -b 1024", rec.Threads, rec.ReadBytes, rec.ReadBytesPerGet, rec.Batch)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, results.FileReport))
	if !strings.Contains(string(report), "Scenario 1, Memory-bound — data in RAM") || !strings.Contains(string(report), "in the untiered server") || strings.Contains(string(report), "tiered with --memory") {
		t.Errorf("report.md does not describe scenario 1's server and check:\n%s", report)
	}
	var res results.Results
	results.ReadJSON(out, results.FileResults, &res)
	if res.Scenario != results.ScenarioMemory || res.Schema != results.SchemaVersion {
		t.Errorf("results.json: scenario %q schema %d, want %q %d", res.Scenario, res.Schema, results.ScenarioMemory, results.SchemaVersion)
	}
	assertNoProcesses(t, bin)
}

func TestRunScenarioLocalMemory(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioLocalMemory, "--ladder")...)
	if r.code != 0 {
		t.Fatalf("--scenario localmemory: exit %d, want 0:\n%s", r.code, r.stderr)
	}
	for _, row := range []string{"| Localmemory | -b 1024, no pin |", "| Localmemory | -b 256, no pin  |"} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("table: got\n%s\nwant the row %q", r.stdout, row)
		}
	}
	recs, _, _ := results.ReadCells(filepath.Join(base, "out"))
	if len(recs) != 4 {
		t.Fatalf("cells.jsonl: got %d passes, want 2 rows × 2 thread counts", len(recs))
	}
	batches := map[int]bool{}
	for _, rec := range recs {
		batches[rec.Batch] = true
		if rec.DeviceReadsPerGet < results.MinDeviceReadsPerGet || rec.NoDeviceReads || rec.DeviceRead {
			t.Errorf("pass %s t=%d: %.2f device reads per GET from INFO store, %d bytes through the kernel; want ≥ %.1f and none", rec.Row.ID(), rec.Threads, rec.DeviceReadsPerGet, rec.ReadBytes, results.MinDeviceReadsPerGet)
		}
	}
	if !batches[1024] || !batches[256] {
		t.Errorf("passes ran at -b %v, want 1024 and 256", batches)
	}
	// Each -b row keeps its own logs: the second once wrote over the first's.
	for _, name := range []string{"server-localmemory-none-b1024.log", "server-localmemory-none-b256.log", "client-localmemory-none-b1024-load.log", "client-localmemory-none-b256-load.log"} {
		if _, err := os.Stat(filepath.Join(base, "out", results.DirLogs, name)); err != nil {
			t.Errorf("logs: %v, want each row's own", err)
		}
	}
	var ls []results.Ladder
	results.ReadJSON(filepath.Join(base, "out"), results.FileLadder, &ls)
	var names []string
	for _, x := range ls[0].Layers {
		names = append(names, x.Layer)
	}
	if want := []string{ladder.LayerDevice, ladder.LayerKV, ladder.LayerRESP, ladder.LayerInMemory}; len(ls) != 1 || !slices.Equal(names, want) {
		t.Fatalf("ladder.json: got %+v, want the localmemory ladder %v", ls, want)
	}
	for i, x := range ls[0].Layers {
		if x.OpsPerSec <= 0 || x.CPUMicrosPerOp <= 0 || x.Error != "" || i > 0 && x.Share <= 0 {
			t.Errorf("localmemory layer %+v: want ops/s, CPU µs per op and a share", x)
		}
		if rounds := len(x.RoundsRaw); i < 2 && (rounds != ladder.Rounds || !slices.Contains(x.RoundsRaw, x.Raw)) {
			t.Errorf("localmemory layer %s: %d rounds %v, raw %q; want %d alternated rounds, the median's raw among them", x.Layer, rounds, x.RoundsRaw, x.Raw, ladder.Rounds)
		}
	}
	resp, top := ls[0].Layers[2], ls[0].Layers[3]
	if want := top.PairOpsPerSec / top.OpsPerSec; top.PairOpsPerSec <= 0 || top.Share < want-1e-9 || top.Share > want+1e-9 {
		t.Errorf("in-memory top: share %.3f, tiered beside it %.0f ops/s; want the tiered server's median ÷ the untiered one's = %.3f", top.Share, top.PairOpsPerSec, want)
	}
	var raw ladder.InMemoryRaw
	if err := results.ReadJSON(filepath.Join(base, "out"), top.Raw, &raw); err != nil || len(raw.Passes) != ladder.Rounds || raw.Load.ServerKeys != 200000 || slices.Contains(raw.ServerArgs, "--storage-tier") {
		t.Errorf("in-memory raw JSON %q: %+v, %v; want %d passes on the untiered server holding 200000 keys", top.Raw, raw, err, ladder.Rounds)
	}
	if tr := raw.Tiered; len(tr.Passes) != ladder.Rounds || tr.Load.ServerKeys != 200000 || !slices.Contains(tr.ServerArgs, "--storage-tier") {
		t.Errorf("in-memory raw JSON's tiered server: %+v; want %d passes on the tiered server holding 200000 keys", tr, ladder.Rounds)
	} else {
		// Alternated: each round's two passes ran before the next round's.
		for p := 1; p < ladder.Rounds; p++ {
			if last := raw.Passes[p-1].Time; !tr.Passes[p-1].Time.Before(raw.Passes[p].Time) || !last.Before(tr.Passes[p].Time) {
				t.Errorf("round %d: the two servers' passes did not alternate (untiered %v, tiered %v)", p, raw.Passes[p-1].Time, tr.Passes[p-1].Time)
			}
		}
	}
	if p := raw.Passes; len(p) > 0 && !strings.Contains(resp.Detail, fmt.Sprintf("-b %d, no pin t=%d ", p[0].Batch, p[0].Threads)) {
		t.Errorf("in-memory pass at -b %d t=%d, want the best localmemory cell's (%s)", p[0].Batch, p[0].Threads, resp.Detail)
	}
	// The ladder's files were written after the table: results.json's
	// checksums must cover them all the same.
	if v := runBinary(t, bin, "report", "--verify", filepath.Join(base, "out")); v.code != 0 {
		t.Errorf("report --verify of a --ladder bundle: exit %d\n%s%s", v.code, v.stdout, v.stderr)
	}
	assertNoProcesses(t, bin)
}

// TestRunScenarioChecksCatchTheWrongServer points scenarios 1 and 3 at a
// tiered server on the native device: scenario 1's inverted check sees it
// read a sector per GET, scenario 3's sees its reads go through the kernel.
func TestRunScenarioChecksCatchTheWrongServer(t *testing.T) {
	bin := testenv.MustBinary(t)
	base := testenv.MustDiskDir(t)
	_, addr, port := startTieredServer(t, bin, filepath.Join(base, "srv"))
	loadKeys(t, bin, port, 200000)
	for _, tc := range []struct{ scenario, mark string }{
		{results.ScenarioMemory, "device-read*"},
		{results.ScenarioLocalMemory, "device-read*"},
	} {
		r := runBinary(t, bin, externalArgs(base, tc.scenario, addr, "--scenario", tc.scenario, "--dbsize", "200000", "--skip-load")...)
		if r.code != ExitNothing {
			t.Errorf("--scenario %s on a native tiered server: exit %d, want %d:\n%s", tc.scenario, r.code, ExitNothing, r.stderr)
		}
		if strings.Count(r.stdout, tc.mark) != 2 { // the cell and the note
			t.Errorf("--scenario %s on a native tiered server: table\n%s\nwant the cell marked %s and its note", tc.scenario, r.stdout, tc.mark)
		}
	}
}

// TestRunScenarioAll runs the three scenarios in Docker containers (the
// scenario tests above run them as processes), so each scenario is
// exercised under both runtimes.
func TestRunScenarioAll(t *testing.T) {
	cli := testenv.MustDocker(t)
	bin := testenv.MustBinary(t)
	removeImageAfter(t, cli, bin)
	base := testenv.MustDiskDir(t)
	r := runBinary(t, bin, scenarioArgs(base, results.ScenarioAll, "--batch", "64", "--backends", "libaio", "--runtime", "docker")...)
	if r.code != 0 {
		t.Fatalf("--scenario all: exit %d, want 0:\n%s", r.code, r.stderr)
	}
	out := filepath.Join(base, "out")
	for _, s := range results.Scenarios {
		if !strings.Contains(r.stdout, "## "+results.ScenarioTitle[s]) {
			t.Errorf("stdout lacks the section %q:\n%s", results.ScenarioTitle[s], r.stdout)
		}
		var res results.Results
		if err := results.ReadJSON(filepath.Join(out, s), results.FileResults, &res); err != nil || res.Scenario != s {
			t.Errorf("%s/results.json: scenario %q (%v), want %q", s, res.Scenario, err, s)
		}
	}
	for _, row := range []string{"| Memory ", "| Libaio ", "| Localmemory "} {
		if !strings.Contains(r.stdout, row) {
			t.Errorf("stdout lacks a %q row:\n%s", row, r.stdout)
		}
	}
	again := runBinary(t, bin, "report", out)
	if again.code != 0 || again.stdout != r.stdout {
		t.Errorf("report of the all bundle: exit %d, stdout\n%s\nwant the run's\n%s", again.code, again.stdout, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(out, results.FileScenarios)); err != nil {
		t.Errorf("the bundle lacks %s: %v", results.FileScenarios, err)
	}
	// One file to open: the top report.md holds each scenario's table
	// and links its own report.
	top, err := os.ReadFile(filepath.Join(out, results.FileReport))
	if err != nil {
		t.Fatalf("the all bundle has no report.md at its top: %v", err)
	}
	for _, s := range results.Scenarios {
		table, _ := os.ReadFile(filepath.Join(out, s, results.FileTable))
		for _, want := range []string{"## " + results.ScenarioTitle[s] + "\n\n" + string(table), "[report](" + s + "/report.md)"} {
			if len(table) == 0 || !strings.Contains(string(top), want) {
				t.Errorf("top report.md lacks %q:\n%s", want, top)
			}
		}
	}
	if v := runBinary(t, bin, "report", "--verify", out); v.code != 0 || strings.Count(v.stdout, "ok ") != 4 {
		t.Errorf("report --verify of the all bundle: exit %d, want 0 and three scenarios and the top report.md checked:\n%s%s", v.code, v.stdout, v.stderr)
	}
	if !strings.Contains(r.stderr, "runtime: docker") {
		t.Errorf("the scenarios did not run in Docker:\n%s", r.stderr)
	}
	assertNoProcesses(t, bin)
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/plan"
)

// Every flag of run has the fields it sets in plan.FlagFields: one
// missing would be dropped silently beside --plan.
func TestFlagFieldsCoverRun(t *testing.T) {
	var cfg plan.Config
	fs, _ := runFlags("run", &cfg)
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := plan.FlagFields[f.Name]; !ok {
			t.Errorf("run's --%s has no entry in plan.FlagFields", f.Name)
		}
	})
}

// tinyPlanArgs is a small storage run's flags, as the e2e tests make it.
func tinyPlanArgs(dir string) []string {
	return []string{"--dbsize", "200000", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "2,4", "--batch", "64", "--cell-seconds", "1", "--passes", "2", "--warmup-seconds", "1",
		"--load-threads", "4", "--backends", "uring", "--data", filepath.Join(dir, "data"), "--state-dir", filepath.Join(dir, "state")}
}

func TestPlanCommand(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := dispatch(append([]string{"plan", "--format", "json"}, tinyPlanArgs(dir)...), &stdout, &stderr); code != 0 {
		t.Fatalf("plan exited %d: %s", code, stderr.String())
	}
	var f plan.File
	if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
		t.Fatalf("plan --format json: %v\n%s", err, stdout.String())
	}
	if f.Schema != plan.FileSchema || f.Kind != plan.FileKind {
		t.Errorf("got schema %d kind %q, want %d %q", f.Schema, f.Kind, plan.FileSchema, plan.FileKind)
	}
	if len(f.Rows) != 2 || f.Rows[0].Pin != plan.PinPinned || f.Rows[1].Pin != plan.PinNone || f.Rows[0].Backend != "uring" {
		t.Errorf("rows %+v, want uring pinned and none", f.Rows)
	}
	if f.Dataset == nil || f.Dataset.Keys != 200_000 || f.Dataset.Bytes != 200_000*128 || f.Dataset.DiskBytes < f.Dataset.Bytes || f.Dataset.MemoryBytes != (1<<20)+(16<<20) {
		t.Errorf("dataset %+v, want 200000 keys × 128 B, the disk at least that, memory --memory + --index", f.Dataset)
	}
	// 2 rows × 2 passes × 2 thread counts.
	if f.Estimate == nil || f.Estimate.Seconds <= 0 || !slices.ContainsFunc(f.Estimate.Phases, func(p plan.Phase) bool { return p.Name == "cells" && p.Count == 8 }) {
		t.Errorf("estimate %+v, want 8 cells among its phases", f.Estimate)
	}
	if f.Needs.NUMANodes < 1 || !slices.Equal(f.Needs.Backends, []string{"uring"}) {
		t.Errorf("needs %+v, want the pinned row's nodes and uring", f.Needs)
	}
	if f.Workload.OutDir != "" || f.Workload.StateDir != "" || f.Workload.Binary != "" {
		t.Errorf("workload names this host's out %q state %q binary %q", f.Workload.OutDir, f.Workload.StateDir, f.Workload.Binary)
	}

	// The YAML default, read back as --plan with one flag beside it.
	stdout.Reset()
	if code := dispatch(append([]string{"plan"}, tinyPlanArgs(dir)...), &stdout, &stderr); code != 0 {
		t.Fatalf("plan exited %d: %s", code, stderr.String())
	}
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := dispatch([]string{"plan", "--plan", path, "--passes", "3", "--format", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("plan --plan exited %d: %s", code, stderr.String())
	}
	var g plan.File
	if err := json.Unmarshal(stdout.Bytes(), &g); err != nil {
		t.Fatal(err)
	}
	if g.Workload.Passes != 3 || g.Workload.DBSize != 200_000 || !strings.Contains(stderr.String(), "--passes 3 overrides the plan's 2") {
		t.Errorf("got passes %d dbsize %d, stderr %q; want 3 over the plan's 200000 keys, the override said", g.Workload.Passes, g.Workload.DBSize, stderr.String())
	}
}

// A plan whose pinned rows were planned on more NUMA nodes than this
// host has is refused before anything starts, with the reason.
func TestRunPlanRefusesHost(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := dispatch(append([]string{"plan", "--format", "json"}, tinyPlanArgs(dir)...), &stdout, &stderr); code != 0 {
		t.Fatalf("plan exited %d: %s", code, stderr.String())
	}
	var f plan.File
	if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	f.Needs.NUMANodes = 64
	b, _ := f.Marshal("yaml")
	path := filepath.Join(dir, "p.yaml")
	os.WriteFile(path, b, 0o644)
	out := filepath.Join(dir, "out")
	stderr.Reset()
	code := dispatch([]string{"run", "--plan", path, "--out", out}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "planned on 64 NUMA node(s)") {
		t.Errorf("got exit %d, stderr %q; want 2 and the NUMA reason", code, stderr.String())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s (stat %v)", out, err)
	}
	// --pin none drops the pinned rows, and with them the need: the run
	// gets past the host check to its own refusal of --passes 0.
	stderr.Reset()
	code = dispatch([]string{"run", "--plan", path, "--out", out, "--pin", "none", "--passes", "0"}, &stdout, &stderr)
	if code != 2 || strings.Contains(stderr.String(), "NUMA") || !strings.Contains(stderr.String(), "--passes") {
		t.Errorf("run --plan --pin none --passes 0: got exit %d, stderr %q; want 2 for --passes, not the NUMA need", code, stderr.String())
	}
}

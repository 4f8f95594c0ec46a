package reproduce_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/reproduce"
	"github.com/tierbench/tierbench/results"
)

// TestReproduceAcrossHosts makes a tiny bundle across the two-engine host
// harness (the server on engine a, the client on b) and reproduces it
// with run --reproduce: the bundle's plan carries --server-host and
// --client-hosts, so the reproduction runs across the same hosts, and
// every cell gets a verdict. Across hosts there is no fio ceiling (the
// image holds tierbench alone), so each cell is not comparable with that
// reason and the exit status is 4, as docs/reproduction.md says.
func TestReproduceAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two tiny benchmarks across two Docker engines")
	}
	bin := testenv.MustBinary(t)
	hosts := testenv.MustHosts(t, 2, testenv.HostsOptions{})
	a, b := hosts[0], hosts[1]
	base := testenv.MustDiskDir(t)
	data, state := filepath.Join(base, "data"), filepath.Join(base, "state")
	orig, here := filepath.Join(base, "orig"), filepath.Join(base, "here")
	_, stderr, code := testenv.Run(t, "", nil, bin, "run", "--dbsize", "200000", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "2,4", "--batch", "64", "--cell-seconds", "1", "--passes", "2", "--warmup-seconds", "1",
		"--load-threads", "4", "--backends", "libaio", "--data", data, "--state-dir", state, "--out", orig,
		"--server-host", a.Name+"="+a.Socket, "--client-hosts", b.Name+"="+b.Socket)
	if code != 0 {
		t.Fatalf("the original run across hosts exited %d:\n%s", code, stderr)
	}

	// Nothing but the bundle: the hosts come from its plan.
	stdout, stderr, code := testenv.Run(t, "", nil, bin, "run", "--reproduce", orig, "--state-dir", state, "--out", here)
	js, err := os.ReadFile(filepath.Join(here, reproduce.FileJSON))
	if err != nil {
		t.Fatalf("run --reproduce across hosts exited %d and wrote no %s (%v):\n%s", code, reproduce.FileJSON, err, stderr)
	}
	var rep reproduce.Reproduction
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "(server on host a, clients b") {
		t.Errorf("the reproduction's progress does not run across the hosts:\n%s", stderr)
	}
	var p results.Plan
	if err := results.ReadJSON(here, results.FilePlan, &p); err != nil || p.Workload.ServerHost != a.Name+"="+a.Socket || p.Workload.ClientHosts != b.Name+"="+b.Socket {
		t.Errorf("the reproduction's plan: %v, server host %q client hosts %q; want the original's a and b", err, p.Workload.ServerHost, p.Workload.ClientHosts)
	}
	if len(rep.Cells) != 2 {
		t.Fatalf("got %d cells, want 2 (t=2 and t=4)", len(rep.Cells))
	}
	for _, c := range rep.Cells {
		t.Logf("cell %s t=%d: %.0f → %.0f GET/s: %s (%s)", c.Row, c.Threads, c.Original.Median, c.Here.Median, c.Verdict, c.Why)
		if !c.Original.Present || !c.Here.Present || c.Original.Median == 0 || c.Here.Median == 0 {
			t.Errorf("cell %s t=%d: got %+v there and %+v here, want GET/s measured on both runs", c.Row, c.Threads, c.Original, c.Here)
		}
		if c.Verdict != reproduce.NotComparable || !strings.Contains(c.Why, "no fio ceiling on either host (run across hosts") {
			t.Errorf("cell %s t=%d: verdict %q (%s); want not comparable for want of a fio ceiling across hosts", c.Row, c.Threads, c.Verdict, c.Why)
		}
	}
	if want := rep.ExitCode(); code != want || code != 4 {
		t.Errorf("exit %d, want %d for the verdicts (4: none comparable)\n%s", code, want, stderr)
	}
	if !strings.Contains(stdout, "## Reproduction of "+orig) || !strings.Contains(stdout, "**not comparable**") {
		t.Errorf("stdout lacks the verdict table:\n%s", stdout)
	}
	if v, verr, vcode := testenv.Run(t, "", nil, bin, "report", "--verify", here); vcode != 0 || !strings.HasPrefix(v, "ok ") {
		t.Errorf("report --verify of the reproduction's bundle exited %d: %s%s", vcode, v, verr)
	}
}

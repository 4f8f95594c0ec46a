package ladder

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/testenv"
	"github.com/tierbench/tierbench/orchestrator/plan"
	"github.com/tierbench/tierbench/results"
)

// TestFioAgain runs the fio rung again with the real fio over a real
// file, as the ladder does between its Device and KV rounds: at the
// curve's best point, read-only (the file is unchanged after), and pinned
// where the curve was. The rung's median replaces the preflight's figure,
// which its detail keeps; a fio that cannot run leaves the preflight's
// rung, saying why.
func TestFioAgain(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	dir := testenv.MustDiskDir(t)
	file := filepath.Join(dir, "segment.0")
	content := make([]byte, 8<<20)
	rand.Read(content)
	if err := os.WriteFile(file, content, 0o644); err != nil {
		t.Fatal(err)
	}
	r := &run{cfg: plan.Config{Workload: results.Workload{CellSeconds: 1}}}
	for _, tt := range []struct {
		name  string
		base  *hostcheck.FIOBaseline
		place rungPlace
		where string
	}{
		{"free", &hostcheck.FIOBaseline{Engine: "io_uring", Registered: true,
			Sweep: []hostcheck.FIOPoint{{Depth: 8, Jobs: 1, IODepth: 8, FIOResult: hostcheck.FIOResult{IOPS: 10}}, {Depth: 32, Jobs: 2, IODepth: 16, FIOResult: hostcheck.FIOResult{IOPS: 20}}}},
			rungPlace{cpuCount: 2}, "2 × 16 in flight, 512 B random reads over the Device rung's file (read-only), free on the host"},
		{"pinned", &hostcheck.FIOBaseline{Engine: "libaio", CPUs: "0", CPUCount: 1,
			Sweep: []hostcheck.FIOPoint{{Depth: 16, Jobs: 1, IODepth: 16, FIOResult: hostcheck.FIOResult{IOPS: 20}}}},
			rungPlace{cpus: "0", cpuCount: 1}, "fio libaio at the ceiling's best point, 1 × 16 in flight, 512 B random reads over the Device rung's file (read-only), on the server's CPUs 0"},
	} {
		l := r.fioAgain(t.Context(), tt.base, tt.place, file)
		if l.Error != "" || l.OpsPerSec <= 0 || l.CPUMicrosPerOp <= 0 || !strings.Contains(l.Detail, tt.where) {
			t.Errorf("%s: got %+v, want IOPS, CPU per read and a detail with %q", tt.name, l, tt.where)
		}
		pre := results.LadderLayer{Layer: LayerFio, OpsPerSec: 123e3, Detail: "the preflight's depth-sweep ceiling"}
		if got := fioRung(pre, medianRound([]results.LadderLayer{l})); got.OpsPerSec != l.OpsPerSec || !strings.Contains(got.Detail, "the preflight's ceiling was 123 K IOPS") {
			t.Errorf("%s: rung %+v, want the measured IOPS and the preflight's figure in the detail", tt.name, got)
		}
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != string(content) {
		t.Errorf("the file changed under a read-only fio (err %v)", err)
	}
	failed := r.fioAgain(t.Context(), &hostcheck.FIOBaseline{Engine: "io_uring", Sweep: []hostcheck.FIOPoint{{Depth: 8, Jobs: 1, IODepth: 8}}},
		rungPlace{cpuCount: 2}, filepath.Join(dir, "no-such-file"))
	pre := results.LadderLayer{Layer: LayerFio, OpsPerSec: 123e3, Detail: "the preflight's depth-sweep ceiling"}
	if got := fioRung(pre, failed); failed.Error == "" || got.OpsPerSec != 123e3 || !strings.Contains(got.Detail, "so the preflight's figure stands") {
		t.Errorf("missing file: fio layer %+v, rung %+v; want an error and the preflight's rung, saying so", failed, got)
	}
	if l := r.fioAgain(t.Context(), &hostcheck.FIOBaseline{Engine: "io_uring"}, rungPlace{}, file); l.Error == "" {
		t.Errorf("a curve without points: got %+v, want an error", l)
	}
}

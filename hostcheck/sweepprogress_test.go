package hostcheck

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestSweepPrintsEachStep runs the real fio sweep at a tiny size and
// checks a line saying fio's files are laid out, then one progress line
// per step as it finished, in order, naming its depth and the IOPS the
// report then holds for it.
func TestSweepPrintsEachStep(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	dir := testenv.MustDiskDir(t)
	var progress bytes.Buffer
	rep, err := Run(context.Background(), Config{DataDir: dir, FIO: true, FIOFileBytes: 4 << 20, FIOFiles: 2, FIORuntimeSeconds: 1,
		FIOMaxDepth: 4, FIOFullSweep: true, JSON: true, Progress: &progress}, io.Discard)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.FIO == nil || len(rep.FIO.Sweep) < 2 {
		t.Fatalf("got fio baseline %+v, want a sweep of two steps or more", rep.FIO)
	}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if want := "fio lays out its 2 file(s) of 4.0 MiB (8.0 MiB in all) in " + dir; !strings.Contains(lines[0], want) {
		t.Fatalf("first line: got %q, want %q", lines[0], want)
	}
	lines = lines[1:]
	if len(lines) != len(rep.FIO.Sweep) {
		t.Fatalf("got %d progress lines, want one per step (%d):\n%s", len(lines), len(rep.FIO.Sweep), progress.String())
	}
	for i, p := range rep.FIO.Sweep {
		want := fmt.Sprintf("step %d/%d: %d in flight", i+1, len(rep.FIO.Sweep), p.Depth)
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], countLabel(p.IOPS)+" IOPS") || !strings.Contains(lines[i], "elapsed") {
			t.Errorf("line %d: got %q, want %q with %s IOPS and the time elapsed", i, lines[i], want, countLabel(p.IOPS))
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "≤ 1s left (1 step(s)") {
		t.Errorf("last line: got %q, want only the 4 KiB read (1 s) left", last)
	}
}

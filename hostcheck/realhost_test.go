package hostcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestRealProbes runs the kernel probes on this machine.
func TestRealProbes(t *testing.T) {
	if err := probeIOUring(); err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			t.Skipf("kernel refuses io_uring: %v", err)
		}
		t.Errorf("io_uring probe: %v", err)
	}
	if err := probeLibAIO(); err != nil {
		t.Errorf("libaio probe: %v", err)
	}
	dir := testenv.MustDiskDir(t)
	if err := probeODirect(dir, 512); err != nil {
		t.Errorf("O_DIRECT probe in %s: %v", dir, err)
	}
	if err := probeODirect(dir, 16384); err != nil {
		t.Errorf("O_DIRECT probe with 16 KiB blocks in %s: %v", dir, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tierbench-odirect-*"))
	if len(left) > 0 {
		t.Errorf("got probe files %v left behind, want none", left)
	}
}

// TestRealHost runs every check against this machine, with the real fio
// at a tiny size and --json, and reads the document back.
func TestRealHost(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	dir := testenv.MustDiskDir(t)
	var out bytes.Buffer
	rep, err := Run(context.Background(), Config{DataDir: dir, FIO: true, FIOFileBytes: 4 << 20, FIOFiles: 2, FIORuntimeSeconds: 1, JSON: true}, &out)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, name := range []string{CheckODirect, CheckIOUring, CheckLibAIO, CheckFIO, CheckDiskSpace} {
		if c := mustCheck(t, rep, name); c.Status != Pass {
			t.Errorf("got %s %v %q, want pass on this machine", name, c.Status, c.Detail)
		}
	}
	var doc struct {
		Checks []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"checks"`
		Fingerprint map[string]any `json:"fingerprint"`
		FIO         *struct {
			Engine string `json:"engine"`
			Sweep  []struct {
				Depth       int     `json:"depth"`
				IOPS        float64 `json:"iops"`
				DriverDepth int     `json:"driver_depth"`
			} `json:"sweep"`
			Results []struct {
				BlockBytes int                `json:"block_bytes"`
				IOPS       float64            `json:"iops"`
				BW         float64            `json:"bw_kib_per_sec"`
				ClatUs     map[string]float64 `json:"clat_us"`
			} `json:"results"`
		} `json:"fio"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, out.String())
	}
	var names []string
	for _, c := range doc.Checks {
		names = append(names, c.Name)
		if c.Status != "pass" && c.Status != "warn" && c.Status != "fail" {
			t.Errorf("got status %q for %s, want pass, warn or fail", c.Status, c.Name)
		}
	}
	want := "numa aio-max-nr odirect io_uring libaio disk-space memory docker fio"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("got checks %q, want %q", got, want)
	}
	if doc.FIO == nil || len(doc.FIO.Results) != 2 {
		t.Fatalf("got fio %+v, want two results", doc.FIO)
	}
	if doc.FIO.Engine != "io_uring" {
		t.Errorf("got engine %q, want io_uring", doc.FIO.Engine)
	}
	if len(doc.FIO.Sweep) < 3 || doc.FIO.Sweep[0].Depth != 64 || doc.FIO.Sweep[0].IOPS <= 0 {
		t.Errorf("got sweep %+v, want at least 3 depths from 64 reads in flight", doc.FIO.Sweep)
	}
	// Each step sampled the data disk's driver, where the kernel says it.
	readable := len(rep.Fingerprint.Storage.Disks) > 0
	for _, d := range rep.Fingerprint.Storage.Disks {
		if _, err := os.Stat(filepath.Join("/sys/block", d.Name, "inflight")); err != nil {
			readable = false
		}
	}
	for _, p := range doc.FIO.Sweep {
		if readable && p.DriverDepth <= 0 {
			t.Errorf("step at %d in flight: got driver depth %d, want what /sys/block/*/inflight held under fio", p.Depth, p.DriverDepth)
		}
	}
	fioBlockSizes := []int{512, 4096}
	for i, r := range doc.FIO.Results {
		if r.BlockBytes != fioBlockSizes[i] || r.IOPS <= 0 || r.BW <= 0 || r.ClatUs["p99"] < r.ClatUs["p50"] || r.ClatUs["p999"] < r.ClatUs["p99"] {
			t.Errorf("got fio result %+v, want %d B with positive IOPS and ordered percentiles", r, fioBlockSizes[i])
		}
	}
	for _, key := range []string{"kernel", "kernel_cmdline", "cpu_model", "microcode", "logical_cpus", "numa_nodes", "tierbench", "storage", "aio", "io_uring", "vulnerabilities"} {
		if _, ok := doc.Fingerprint[key]; !ok {
			t.Errorf("got fingerprint without %q", key)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) > 0 {
		t.Errorf("got %v left in the data dir, want fio's files removed", left)
	}
}

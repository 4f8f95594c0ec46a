package orchestrator

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig"
	"github.com/tierbench/tierbench/results"
	"github.com/tierbench/tierbench/results/bundletest"
)

func TestParseBench(t *testing.T) {
	tests := []struct {
		file     string
		wantErr  string
		wantOps  int64
		wantLoad int64
	}{
		{"bench-load.json", "", 0, 20000},
		{"bench-cell.json", "", 839360, -1},
		{"bench-warning.txt", "", 839360, -1},
		{"bench-error.txt", "no JSON document", 0, -1},
		{"bench-negative.json", "negative counts", 0, -1},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		out, err := rig.ParseBench(data)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: got error %v, want %q", tt.file, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.file, err)
			continue
		}
		if tt.wantOps > 0 && (len(out.Cells) != 1 || out.Cells[0].Ops != tt.wantOps || out.Cells[0].Threads != 2) {
			t.Errorf("%s: got cells %+v, want one with %d ops at t=2", tt.file, out.Cells, tt.wantOps)
		}
		if tt.wantLoad >= 0 && (out.Load == nil || out.Load.Acknowledged != tt.wantLoad) {
			t.Errorf("%s: got load %+v, want %d acknowledged", tt.file, out.Load, tt.wantLoad)
		}
	}
}

func TestParsePreflight(t *testing.T) {
	data, err := bundletest.PreflightNoFio, error(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := results.ParsePreflight(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Failed()) != 0 || p.FioIOPS(512) != 0 || len(p.Fingerprint) == 0 {
		t.Errorf("got %d failed checks, fio %v, fingerprint %d bytes; want 0, 0, some", len(p.Failed()), p.FioIOPS(512), len(p.Fingerprint))
	}
	if err := uringUsable(p); err != nil {
		t.Errorf("uringUsable: %v", err)
	}
	side := serverSide(p)
	var names []string
	for _, c := range side.Checks {
		names = append(names, c.Name)
	}
	if want := []string{"odirect", "io_uring", "libaio"}; !slices.Equal(names, want) {
		t.Errorf("serverSide checks: got %v, want %v", names, want)
	}
	failed := bytes.Replace(data, []byte(`"status": "pass",
      "detail": "kernel.io_uring_disabled`), []byte(`"status": "fail",
      "detail": "kernel.io_uring_disabled`), 1)
	p, err = results.ParsePreflight(failed)
	if err != nil {
		t.Fatal(err)
	}
	if err := uringUsable(p); !errors.Is(err, errUringRefused) {
		t.Errorf("uringUsable with a failed io_uring check: got %v, want errUringRefused", err)
	}
	if _, err := results.ParsePreflight([]byte(`{"checks":[]}`)); err == nil {
		t.Errorf("no checks: got nil error")
	}
}

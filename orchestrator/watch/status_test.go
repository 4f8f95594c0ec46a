package watch

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/fault"
)

func TestResolveMetricsAddr(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: ":9464", want: "127.0.0.1:9464"},
		{in: "localhost:9464", want: "127.0.0.1:9464"},
		{in: "127.0.0.1:0", want: "127.0.0.1:0"},
		{in: "[::1]:9464", want: "[::1]:9464"},
		{in: "0.0.0.0:9464", want: "0.0.0.0:9464"},
		{in: "192.168.1.5:9464", wantErr: "loopback only; give 0.0.0.0:9464"},
		{in: "[::]:9464", wantErr: "loopback only"},
		{in: "example.com:9464", wantErr: "loopback only"},
		{in: "9464", wantErr: "want HOST:PORT or :PORT"},
		{in: ":http", wantErr: "is not 0-65535"},
		{in: ":70000", wantErr: "is not 0-65535"},
	}
	for _, tc := range tests {
		got, err := ResolveMetricsAddr(tc.in)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, fault.ErrConfig) {
				t.Errorf("%q: got %q, %v; want a config error with %q", tc.in, got, err, tc.wantErr)
			}
		case err != nil || got != tc.want:
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestWriteStatusFileReplacesWhole checks status.json is replaced whole,
// a link planted at its name is replaced and not written through, and no
// temp file stays.
func TestWriteStatusFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, FileStatus)); err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"load", "cells"} {
		if err := writeStatusFile(dir, RunStatus{RunID: "r", State: StateRunning, Phase: phase}); err != nil {
			t.Fatal(err)
		}
	}
	var got RunStatus
	raw, _ := os.ReadFile(filepath.Join(dir, FileStatus))
	if err := json.Unmarshal(raw, &got); err != nil || got.Phase != "cells" {
		t.Errorf("got %q (%v), want the last status, phase cells", raw, err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target holds %q, want it untouched", b)
	}
	if fi, _ := os.Lstat(filepath.Join(dir, FileStatus)); fi == nil || !fi.Mode().IsRegular() {
		t.Errorf("status.json is %v, want a regular file", fi)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("got temp files %v, want none", left)
	}
}

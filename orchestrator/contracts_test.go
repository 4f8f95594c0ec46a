package orchestrator

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig"
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

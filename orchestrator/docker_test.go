package orchestrator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/orchestrator/rig/docker"
)

// TestDockerfilesAgree keeps the root Dockerfile's instructions equal to
// the embedded one the Docker runtime builds from.
func TestDockerfilesAgree(t *testing.T) {
	instructions := func(s string) []string {
		var out []string
		for line := range strings.SplitSeq(s, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
		return out
	}
	root, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	embedded, err := os.ReadFile(filepath.Join("..", "images", "tierbench.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := instructions(string(root)), instructions(string(embedded)); !slices.Equal(got, want) {
		t.Errorf("root Dockerfile instructions %q differ from images/tierbench.Dockerfile %q", got, want)
	}
	if got := instructions(string(embedded)); len(got) == 0 || got[0] != "FROM scratch" {
		t.Errorf("image must be FROM scratch, got %q", got)
	}
}

func TestCheckStatic(t *testing.T) {
	if err := docker.CheckStatic("/bin/ls"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("checkStatic(/bin/ls) = %v, want a dynamically-linked refusal", err)
	}
	if err := docker.CheckStatic(filepath.Join("testdata", "bench-cell.json")); err == nil || !strings.Contains(err.Error(), "not an ELF binary") {
		t.Errorf("checkStatic(a JSON file) = %v, want not an ELF binary", err)
	}
}

package hostcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// TestBinaryExitCodes runs the built tierbench binary as a user would.
func TestBinaryExitCodes(t *testing.T) {
	bin := testenv.MustBinary(t)
	ref, err := filepath.Abs(filepath.Join("testdata", "reference-host"))
	if err != nil {
		t.Fatal(err)
	}
	shm := filepath.Join("/dev/shm", fmt.Sprintf("tierbench-e2e-%d", os.Getpid()))
	tests := []struct {
		name       string
		args       []string
		wantExit   int
		wantStdout string // substring
		wantStderr string // substring
		wantJSON   bool
	}{
		{"ext4 data dir passes", []string{"--data-dir", testenv.MustDiskDir(t)}, 0, "│ odirect    │ PASS", "", false},
		{"tmpfs data dir fails", []string{"--data-dir", shm}, 1, "is on tmpfs", "", false},
		{"json", []string{"--data-dir", testenv.MustDiskDir(t), "--json"}, 0, `"checks"`, "", true},
		{"json on a fake reference tree", []string{"--root", ref, "--data-dir", testenv.MustDiskDir(t), "--json"}, 0, `"logical_cpus": 224`, "", true},
		{"short aio budget fails", []string{"--data-dir", testenv.MustDiskDir(t), "--queue-depth", "100000"}, 1, "sysctl -w fs.aio-max-nr=", "", false},
		{"help", []string{"--help"}, 0, "Example:", "", false},
		{"unknown flag", []string{"--bogus"}, 2, "", "flag provided but not defined: -bogus", false},
		{"bad threads", []string{"--threads", "8,x"}, 2, "", `invalid value "8,x" for flag -threads`, false},
		{"bad size", []string{"--index", "lots"}, 2, "", `"lots" is not a size`, false},
		{"stray argument", []string{"extra"}, 2, "", `unexpected argument "extra"`, false},
		{"negative queue depth", []string{"--queue-depth", "-1"}, 2, "", "queue depth -1 is negative", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"preflight"}, tt.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			exit := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("run %s: %v", bin, err)
			}
			if exit != tt.wantExit {
				t.Errorf("got exit %d, want %d\nstdout:\n%s\nstderr:\n%s", exit, tt.wantExit, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("got stdout\n%s\nwant it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("got stderr\n%s\nwant it to contain %q", stderr.String(), tt.wantStderr)
			}
			if tt.wantJSON {
				var doc map[string]json.RawMessage
				if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
					t.Fatalf("stdout is not one JSON document: %v\n%s", err, stdout.String())
				}
				for _, k := range []string{"checks", "fingerprint", "fio"} {
					if _, ok := doc[k]; !ok {
						t.Errorf("got keys %v, want %q", keys(doc), k)
					}
				}
				if string(doc["fio"]) != "null" {
					t.Errorf("got fio %s without --fio, want null", doc["fio"])
				}
			}
		})
	}
	if _, err := os.Stat(shm); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v for %s, want it removed after preflight created it", err, shm)
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

// TestVerify renders a bundle, then changes it the ways a published
// bundle could be changed, and checks that --verify names each change.
func TestVerify(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string // substrings of the error and the printed lines
	}{
		{"as written", func(*testing.T, string) {}, nil},
		{"edited report", func(t *testing.T, dir string) {
			edit(t, dir, results.FileReport, func(b []byte) []byte { return bytes.Replace(b, []byte("7.06 M"), []byte("7.60 M"), 1) })
		}, []string{"report.md was edited: sha256 "}},
		{"edited pass", func(t *testing.T, dir string) {
			edit(t, dir, results.FileCells, func(b []byte) []byte { return bytes.Replace(b, []byte(`"ops_per_sec":`), []byte(`"ops_per_sec":1`), 1) })
		}, []string{"cells.jsonl was edited", "results.json: cell Libaio srv node-0 / cli node-1 t=8"}},
		{"edited median in results.json", func(t *testing.T, dir string) {
			editResults(t, dir, func(r *results.Results) { r.Cells[1].Median *= 1.1 })
		}, []string{"results.json: cell Libaio srv node-0 / cli node-1 t=32 (median 6.27 M", "preflight.json give (edited, or rendered by another tierbench version): median 5.70 M"}},
		{"edited ceiling in results.json", func(t *testing.T, dir string) {
			editResults(t, dir, func(r *results.Results) { r.FioIOPS512 = 9e6 })
		}, []string{"results.json: its fio_iops_512 differs from what"}},
		{"missing chart", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, FileThroughputSVG)); err != nil {
				t.Fatal(err)
			}
		}, []string{"throughput.svg is missing (recorded with sha256 "}},
		{"added log", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, results.DirLogs, "extra.log"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []string{"logs/extra.log is not covered by SHA256SUMS: added after it was written"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeBundle(t, true)
			if err := os.MkdirAll(filepath.Join(dir, results.DirLogs), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, results.DirLogs, "server-libaio-pinned.log"), []byte("listening\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := render(dir, nil); err != nil {
				t.Fatal(err)
			}
			tt.change(t, dir)
			var out bytes.Buffer
			err := runReport(dir, true, &out)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("got %v, want the untouched bundle to verify", err)
				}
				if !strings.HasPrefix(out.String(), "ok ") {
					t.Errorf("got %q, want an ok line", out.String())
				}
				return
			}
			if !errors.Is(err, results.ErrTampered) {
				t.Fatalf("got %v, want ErrTampered", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) || !strings.Contains(out.String(), w) {
					t.Errorf("got error %q and output %q, want both to contain %q", err, out.String(), w)
				}
			}
		})
	}
}

// TestSumsCoverEveryOtherFile: SHA256SUMS lists every file of the
// bundle but itself, results.json included, and coreutils' sha256sum
// checks it as it is.
func TestSumsCoverEveryOtherFile(t *testing.T) {
	dir, _ := renderedBundle(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range entries {
		if !e.IsDir() && e.Name() != results.FileSums {
			want = append(want, e.Name())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, results.FileSums))
	if err != nil {
		t.Fatal(err)
	}
	sums, problems := results.ParseSums(b)
	if len(problems) > 0 {
		t.Fatalf("got problems %q in the sums as written", problems)
	}
	var got []string
	for _, f := range sums {
		got = append(got, f.Path)
		data, err := os.ReadFile(filepath.Join(dir, f.Path))
		if sum := fmt.Sprintf("%x", sha256.Sum256(data)); err != nil || sum != f.SHA256 {
			t.Errorf("%s: recorded sha256 %s, file has %s, err %v", f.Path, f.SHA256, sum, err)
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got sums of %q, want every file but SHA256SUMS: %q", got, want)
	}
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Fatalf("sha256sum (coreutils) not on PATH: %v", err)
	}
	cmd := exec.Command("sha256sum", "--check", "--strict", results.FileSums)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check: got %v, want the bundle to pass:\n%s", err, out)
	}
}

func edit(t *testing.T, dir, name string, f func([]byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	changed := f(b)
	if bytes.Equal(changed, b) {
		t.Fatalf("the edit of %s changed nothing", name)
	}
	if err := os.WriteFile(p, changed, 0o644); err != nil {
		t.Fatal(err)
	}
}

func editResults(t *testing.T, dir string, f func(*results.Results)) {
	t.Helper()
	var r results.Results
	if err := results.ReadJSON(dir, results.FileResults, &r); err != nil {
		t.Fatal(err)
	}
	f(&r)
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.FileResults), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyAll: the report.md at the top of a --scenario all bundle is
// checked against what its scenarios' bundles give; an edit there, which
// no scenario's checksums cover, is named.
func TestVerifyAll(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, top string)
		want   string
	}{
		{"as written", func(*testing.T, string) {}, ""},
		{"edited top report", func(t *testing.T, top string) {
			edit(t, top, results.FileReport, func(b []byte) []byte { return bytes.Replace(b, []byte("7.06 M"), []byte("7.60 M"), 1) })
		}, "report.md was edited: it is not what the scenarios' bundles give"},
		{"edited scenarios.json", func(t *testing.T, top string) {
			edit(t, top, results.FileScenarios, func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"dir":"storage"`), []byte(`"dir":"storage","error":"x"`), 1)
			})
		}, "scenarios.json was edited"},
		{"a file added below a scenario", func(t *testing.T, top string) {
			if err := os.WriteFile(filepath.Join(top, results.ScenarioStorage, "x.md"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "storage/x.md is not covered by SHA256SUMS"},
		{"missing top report", func(t *testing.T, top string) {
			if err := os.Remove(filepath.Join(top, results.FileReport)); err != nil {
				t.Fatal(err)
			}
		}, "report.md is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := t.TempDir()
			if err := os.Rename(writeBundle(t, true), filepath.Join(top, results.ScenarioStorage)); err != nil {
				t.Fatal(err)
			}
			index := results.ScenarioIndex{Scenarios: []results.ScenarioEntry{{Scenario: results.ScenarioStorage, Dir: results.ScenarioStorage}}}
			b, err := json.Marshal(index)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(top, results.FileScenarios), b, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := Render(top); err != nil {
				t.Fatal(err)
			}
			tt.change(t, top)
			var out bytes.Buffer
			err = Verify(top, &out)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want the untouched bundle to verify:\n%s", err, out.String())
				}
				if !strings.Contains(out.String(), "ok "+top+": its report.md and report.html are what the scenarios' bundles give, and ") {
					t.Errorf("got %q, want an ok line for the top report.md", out.String())
				}
				// One ok line per scenario and one for the top, as the run's
				// end-to-end test of an all bundle counts them.
				if n := strings.Count(out.String(), "ok "); n != 2 {
					t.Errorf("got %d ok lines, want 2 (the scenario's and the top's):\n%s", n, out.String())
				}
				return
			}
			if !errors.Is(err, results.ErrTampered) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(out.String(), "FAIL "+tt.want) {
				t.Errorf("got error %v and output %q, want ErrTampered naming %q", err, out.String(), tt.want)
			}
		})
	}
}

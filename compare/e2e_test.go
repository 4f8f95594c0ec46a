package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

// These tests compare bundles written by real runs of the binary at a
// tiny size (real tiered and untiered servers, 1 s cells, one pass): two
// --scenario all runs, whose scenarios are bundles of their own, and two
// --shards 1,2 runs.

// run runs the binary to its end and returns stdout, stderr and the exit
// status.
func run(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	return testenv.Run(t, "", nil, bin, args...)
}

// tinyRun runs `tierbench run` into base/out with the given flags and the
// tiny shape, and returns the bundle.
func tinyRun(t *testing.T, bin, base string, extra ...string) string {
	t.Helper()
	out := filepath.Join(base, "out")
	args := append([]string{"run", "--memory", "1m", "--page", "64k", "--segment", "16m", "--index", "16m",
		"--threads", "1,2", "--cell-seconds", "1", "--passes", "1", "--warmup-seconds", "0", "--load-threads", "4", "--no-fio",
		"--runtime", "process", "--pin", "none", "--data", filepath.Join(base, "data"), "--out", out, "--state-dir", filepath.Join(base, "state")}, extra...)
	if stdout, stderr, code := run(t, bin, args...); code != 0 {
		t.Fatalf("run %q: exit %d\nstdout:\n%s\nstderr:\n%s", extra, code, stdout, stderr)
	}
	return out
}

// compareJSON runs `tierbench compare --json` and decodes its document.
func compareJSON(t *testing.T, bin string, args ...string) Comparison {
	t.Helper()
	stdout, stderr, code := run(t, bin, append([]string{"compare", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("compare %q: exit %d: %s", args, code, stderr)
	}
	var c Comparison
	if err := json.Unmarshal([]byte(stdout), &c); err != nil {
		t.Fatalf("compare %q: %v\n%s", args, err, stdout)
	}
	return c
}

// rowsOf lists each scenario's rows as "scenario: label (b=…, shards=…)"
// with how many of the bundles have a median for each of its cells.
func rowsOf(c Comparison) map[string][]int {
	out := map[string][]int{}
	for _, s := range c.Scenarios {
		for _, cell := range s.Cells {
			k := s.Name + ": " + cell.Label + " b=" + strconv.Itoa(cell.Batch) + " shards=" + strconv.Itoa(cell.Shards)
			n := 0
			for _, v := range cell.Values {
				if v.Present {
					n++
				}
			}
			out[k] = append(out[k], n)
		}
	}
	return out
}

func TestCompareRealBundles(t *testing.T) {
	bin := testenv.MustBinary(t)
	all := []string{"--scenario", "all", "--dbsize", "200000", "--backends", "libaio"}
	allA := tinyRun(t, bin, testenv.MustDiskDir(t), all...)
	allB := tinyRun(t, bin, testenv.MustDiskDir(t), all...)

	t.Run("localmemory rows by -b", func(t *testing.T) {
		c := compareJSON(t, bin, filepath.Join(allA, "localmemory"), filepath.Join(allB, "localmemory"))
		if len(c.Scenarios) != 1 || c.Scenarios[0].Name != "localmemory" {
			t.Fatalf("got scenarios %+v, want one named localmemory", c.Scenarios)
		}
		rows := rowsOf(c)
		for _, want := range []string{"localmemory: -b 1024, no pin b=1024 shards=0", "localmemory: -b 256, no pin b=256 shards=0"} {
			if got := rows[want]; len(got) != 2 || got[0] != 2 || got[1] != 2 {
				t.Errorf("row %q: got cells %v, want 2 thread counts each with both bundles' medians; rows %v", want, got, rows)
			}
		}
		md, _, _ := run(t, bin, "compare", filepath.Join(allA, "localmemory"), filepath.Join(allB, "localmemory"))
		if !strings.Contains(md, "## localmemory (GET ops/sec)") || strings.Contains(md, "## storage") {
			t.Errorf("Markdown: want the section headed localmemory, none storage:\n%s", md)
		}
	})

	t.Run("all bundles scenario by scenario", func(t *testing.T) {
		c := compareJSON(t, bin, allA, allB)
		var names []string
		for _, s := range c.Scenarios {
			names = append(names, s.Name)
			for _, cell := range s.Cells {
				if !cell.Values[0].Present || !cell.Values[1].Present {
					t.Errorf("%s %s t=%d: a bundle lacks the cell: %+v", s.Name, cell.Label, cell.Threads, cell.Values)
				}
			}
		}
		if got := strings.Join(names, ","); got != "memory,storage,localmemory" {
			t.Errorf("got scenarios %s, want memory,storage,localmemory", got)
		}
		md, _, _ := run(t, bin, "compare", allA, allB)
		for _, h := range []string{"## memory (GET ops/sec)", "## storage (GET ops/sec)", "## localmemory (GET ops/sec)"} {
			if !strings.Contains(md, h) {
				t.Errorf("Markdown lacks %q:\n%s", h, md)
			}
		}
	})

	t.Run("edited cells.jsonl", func(t *testing.T) {
		// A copy of a bundle whose every pass was lowered by 3 %.
		edited := filepath.Join(t.TempDir(), "edited")
		if err := os.CopyFS(edited, os.DirFS(filepath.Join(allA, "storage"))); err != nil {
			t.Fatal(err)
		}
		cells := filepath.Join(edited, "cells.jsonl")
		b, err := os.ReadFile(cells)
		if err != nil {
			t.Fatal(err)
		}
		b = regexp.MustCompile(`"ops_per_sec":([0-9.e+]+)`).ReplaceAllFunc(b, func(m []byte) []byte {
			v, _ := strconv.ParseFloat(string(m[len(`"ops_per_sec":`):]), 64)
			return []byte(`"ops_per_sec":` + strconv.FormatFloat(v*0.97, 'g', -1, 64))
		})
		if err := os.WriteFile(cells, b, 0o644); err != nil {
			t.Fatal(err)
		}
		other := filepath.Join(allB, "storage")
		stdout, stderr, code := run(t, bin, "compare", edited, other)
		if code != 2 || !strings.Contains(stderr, "cells.jsonl was edited") || !strings.Contains(stderr, "edited failed verification") || stdout != "" {
			t.Errorf("compare of an edited bundle: exit %d, stderr %q, stdout %q; want exit 2 naming cells.jsonl and nothing compared", code, stderr, stdout)
		}
		stdout, stderr, code = run(t, bin, "compare", "--unverified", edited, other)
		if code != 0 || !strings.Contains(stdout, "**`edited` failed verification and was compared only because of --unverified: ") || !strings.Contains(stdout, "cells.jsonl was edited") || !strings.Contains(stdout, " † |") {
			t.Errorf("compare --unverified of an edited bundle: exit %d (%s), want 0, the table saying it failed verification and its figures marked:\n%s", code, stderr, stdout)
		}
		// The medians shown are those of the edited passes the test ran on.
		c := compareJSON(t, bin, "--unverified", edited, filepath.Join(allA, "storage"))
		for _, cell := range c.Scenarios[0].Cells {
			e, o := cell.Values[0], cell.Values[1]
			if !e.Unverified || o.Unverified {
				t.Errorf("%s t=%d: got unverified %v and %v, want only the edited bundle's value marked", cell.Label, cell.Threads, e.Unverified, o.Unverified)
			}
			if len(e.Passes) != 1 || e.Median != e.Passes[0] || o.Median == 0 || e.Median/o.Median < 0.969 || e.Median/o.Median > 0.971 {
				t.Errorf("%s t=%d: edited median %v from passes %v, original %v; want the edited pass, 0.97 × the original", cell.Label, cell.Threads, e.Median, e.Passes, o.Median)
			}
		}
	})

	t.Run("shards", func(t *testing.T) {
		shards := []string{"--shards", "1,2", "--backends", "uring", "--dbsize", "400000", "--batch", "64", "--threads", "2"}
		a := tinyRun(t, bin, testenv.MustDiskDir(t), shards...)
		b := tinyRun(t, bin, testenv.MustDiskDir(t), shards...)
		c := compareJSON(t, bin, a, b)
		rows := rowsOf(c)
		for _, want := range []string{"storage: 1 shard / no pin b=0 shards=0", "storage: 2 shards / no pin b=0 shards=2"} {
			if got := rows[want]; len(got) != 1 || got[0] != 2 {
				t.Errorf("row %q: got %v, want one cell with both bundles' medians; rows %v", want, got, rows)
			}
		}
	})
}

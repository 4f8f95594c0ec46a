package report

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/results"
)

var tester = Signer{By: "tester@host", Version: "tierbench test"}

// TestPlantedEdits plants the edits a reader of a published bundle could
// make and checks that --verify names each and that a plain `tierbench
// report` refuses to render (and so seal) the bundle, leaving its sums
// as they were.
func TestPlantedEdits(t *testing.T) {
	tests := []struct {
		name  string
		plant func(t *testing.T, dir string)
		want  string // in the error, the printed lines and the refusal
		is    error
	}{
		{"results.json's scenario edited", func(t *testing.T, dir string) {
			edit(t, dir, results.FileResults, func(b []byte) []byte {
				return bytes.Replace(b, []byte(`"scenario": "storage"`), []byte(`"scenario": "memory"`), 1)
			})
		}, "results.json was edited: sha256 ", results.ErrTampered},
		{"results.json's fio ceilings edited", func(t *testing.T, dir string) {
			editResults(t, dir, func(r *results.Results) { r.FioCeilings.Host.IOPS *= 2 })
		}, "results.json was edited", results.ErrTampered},
		{"cells.jsonl edited", func(t *testing.T, dir string) {
			edit(t, dir, results.FileCells, func(b []byte) []byte { return bytes.Replace(b, []byte(`"ops_per_sec":`), []byte(`"ops_per_sec":1`), 1) })
		}, "cells.jsonl was edited", results.ErrTampered},
		{"a file added", func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("faster than it looks\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "notes.md is not covered by SHA256SUMS: added after it was written", results.ErrTampered},
		{"SHA256SUMS truncated", func(t *testing.T, dir string) {
			edit(t, dir, results.FileSums, func(b []byte) []byte { return b[:len(b)/2] })
		}, "SHA256SUMS", results.ErrTampered},
		{"SHA256SUMS emptied", func(t *testing.T, dir string) {
			edit(t, dir, results.FileSums, func([]byte) []byte { return []byte{} })
		}, "SHA256SUMS is empty", results.ErrTampered},
		{"results.json's line dropped from SHA256SUMS", func(t *testing.T, dir string) {
			edit(t, dir, results.FileSums, func(b []byte) []byte {
				var kept []string
				for _, l := range strings.SplitAfter(string(b), "\n") {
					if !strings.HasSuffix(l, "  "+results.FileResults+"\n") {
						kept = append(kept, l)
					}
				}
				return []byte(strings.Join(kept, ""))
			})
		}, "SHA256SUMS does not list results.json", results.ErrTampered},
		{"a symlink swapped in for cells.jsonl", func(t *testing.T, dir string) {
			// The link's target has the very bytes the sums recorded: only
			// what it is, not what it holds, gives it away.
			elsewhere := filepath.Join(t.TempDir(), "cells.jsonl")
			b, err := os.ReadFile(filepath.Join(dir, results.FileCells))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(elsewhere, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(dir, results.FileCells)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Join(dir, results.FileCells)); err != nil {
				t.Fatal(err)
			}
		}, "cells.jsonl is a symlink (to ", results.ErrTampered},
		{"a symlinked directory added", func(t *testing.T, dir string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(dir, "extra")); err != nil {
				t.Fatal(err)
			}
		}, "extra is a symlink", results.ErrTampered},
		{"SHA256SUMS deleted", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, results.FileSums)); err != nil {
				t.Fatal(err)
			}
		}, "nothing vouches for any of its files", results.ErrNoChecksums},
		{"SHA256SUMS and cells.jsonl deleted", func(t *testing.T, dir string) {
			for _, f := range []string{results.FileSums, results.FileCells} {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
		}, "nothing vouches for any of its files", results.ErrNoChecksums},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := renderedBundle(t)
			tt.plant(t, dir)
			sumsBefore, _ := os.ReadFile(filepath.Join(dir, results.FileSums))
			var out bytes.Buffer
			err := Verify(dir, &out)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(out.String(), tt.want) {
				t.Errorf("verify: got error %v and output %q, want %v naming %q", err, out.String(), tt.is, tt.want)
			}
			_, err = Rerender(dir, tester, "")
			if !errors.Is(err, ErrUnsealed) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--resign") {
				t.Errorf("report: got %v, want a refusal naming %q and --resign", err, tt.want)
			}
			if sumsAfter, _ := os.ReadFile(filepath.Join(dir, results.FileSums)); !bytes.Equal(sumsBefore, sumsAfter) {
				t.Errorf("report: the refused render rewrote SHA256SUMS")
			}
		})
	}
}

// TestResign: an edited bundle is sealed again only with a reason, which
// signings.jsonl records with who, when and what the check found, and the
// new sums cover; then the bundle verifies, and a plain report renders it.
func TestResign(t *testing.T) {
	dir, _ := renderedBundle(t)
	edit(t, dir, results.FileCells, func(b []byte) []byte { return bytes.Replace(b, []byte(`"ops_per_sec":`), []byte(`"ops_per_sec":1`), 1) })
	if _, err := Rerender(dir, tester, ""); !errors.Is(err, ErrUnsealed) {
		t.Fatalf("got %v, want the edited bundle refused", err)
	}
	const why = "a pass's ops/s was mistyped by hand; fixed from the client log"
	if _, err := Rerender(dir, tester, why); err != nil {
		t.Fatalf("resign: %v", err)
	}
	signings, err := results.ReadSignings(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(signings) != 1 {
		t.Fatalf("got %d signings, want 1", len(signings))
	}
	s := signings[0]
	if s.Kind != "resign" || s.Why != why || s.By != tester.By || s.Version != tester.Version || s.Time.IsZero() ||
		!slices.ContainsFunc(s.Findings, func(f string) bool { return strings.Contains(f, "cells.jsonl was edited") }) {
		t.Errorf("got signing %+v, want a resign by %s saying why and naming the edited cells.jsonl", s, tester.By)
	}
	var out bytes.Buffer
	if err := Verify(dir, &out); err != nil {
		t.Fatalf("got %v, want the re-signed bundle to verify:\n%s", err, out.String())
	}
	sums, _ := os.ReadFile(filepath.Join(dir, results.FileSums))
	if !bytes.Contains(sums, []byte("  "+results.FileSignings+"\n")) {
		t.Errorf("got sums\n%s\nwant them to cover %s", sums, results.FileSignings)
	}
	if _, err := Rerender(dir, tester, ""); err != nil {
		t.Errorf("got %v, want a plain report of the re-signed bundle to render", err)
	}
	// Editing the record of the signing is itself an edit.
	edit(t, dir, results.FileSignings, func(b []byte) []byte { return bytes.Replace(b, []byte("mistyped"), []byte("measured"), 1) })
	if err := Verify(dir, &bytes.Buffer{}); !errors.Is(err, results.ErrTampered) || !strings.Contains(err.Error(), "signings.jsonl was edited") {
		t.Errorf("got %v, want the edited signing record named", err)
	}
}

// TestOlderBundles: a bundle sealed before results.json was covered (its
// sums in results.json, no SHA256SUMS) verifies as far as it goes and
// says what nothing covers; a plain report seals it whole and records the
// upgrade. One with no sums at all takes --resign.
func TestOlderBundles(t *testing.T) {
	t.Run("legacy sums", func(t *testing.T) {
		dir := legacyBundle(t)
		var out bytes.Buffer
		err := Verify(dir, &out)
		if !errors.Is(err, results.ErrLegacySums) || !strings.Contains(out.String(), "nothing vouches for results.json itself") {
			t.Fatalf("got %v and %q, want ErrLegacySums saying results.json is not covered", err, out.String())
		}
		if _, err := Rerender(dir, tester, ""); err != nil {
			t.Fatalf("got %v, want the legacy bundle rendered and sealed", err)
		}
		if err := Verify(dir, &bytes.Buffer{}); err != nil {
			t.Errorf("got %v, want the upgraded bundle to verify", err)
		}
		signings, _ := results.ReadSignings(dir)
		if len(signings) != 1 || signings[0].Kind != "upgrade" {
			t.Errorf("got signings %+v, want one upgrade", signings)
		}
	})
	t.Run("legacy sums, results.json's scenario edited", func(t *testing.T) {
		// The hole of the old seal: results.json's scenario is in no sum,
		// and derived again by nothing. The old check passes; the render
		// that seals it writes the scenario the plan gives.
		dir := legacyBundle(t)
		edit(t, dir, results.FileResults, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"scenario": "storage"`), []byte(`"scenario": "memory"`), 1)
		})
		if _, err := Rerender(dir, tester, ""); err != nil {
			t.Fatal(err)
		}
		var res results.Results
		if err := results.ReadJSON(dir, results.FileResults, &res); err != nil || res.Scenario != results.ScenarioStorage {
			t.Errorf("got scenario %q (%v), want the plan's %q", res.Scenario, err, results.ScenarioStorage)
		}
	})
	t.Run("legacy sums, cells.jsonl edited", func(t *testing.T) {
		dir := legacyBundle(t)
		edit(t, dir, results.FileCells, func(b []byte) []byte { return bytes.Replace(b, []byte(`"ops_per_sec":`), []byte(`"ops_per_sec":1`), 1) })
		if _, err := Rerender(dir, tester, ""); !errors.Is(err, ErrUnsealed) || !strings.Contains(err.Error(), "cells.jsonl was edited") {
			t.Errorf("got %v, want the refusal naming cells.jsonl", err)
		}
	})
	t.Run("no sums at all", func(t *testing.T) {
		dir := legacyBundle(t)
		editResults(t, dir, func(r *results.Results) { r.Files = nil })
		if err := Verify(dir, &bytes.Buffer{}); !errors.Is(err, results.ErrNoChecksums) {
			t.Errorf("verify: got %v, want ErrNoChecksums", err)
		}
		if _, err := Rerender(dir, tester, ""); !errors.Is(err, ErrUnsealed) || !strings.Contains(err.Error(), "--resign") {
			t.Errorf("report: got %v, want a refusal pointing at --resign", err)
		}
		if _, err := Rerender(dir, tester, "testdata from before sums"); err != nil {
			t.Fatal(err)
		}
		signings, _ := results.ReadSignings(dir)
		if len(signings) != 1 || signings[0].Kind != "resign" || !strings.Contains(strings.Join(signings[0].Findings, " "), "nothing vouches") {
			t.Errorf("got signings %+v, want a resign saying nothing vouched for the bundle", signings)
		}
	})
}

// legacyBundle is a rendered bundle sealed the way tierbench did before
// SHA256SUMS: the sums of every file but results.json in results.json.
func legacyBundle(t *testing.T) string {
	t.Helper()
	dir, _ := renderedBundle(t)
	if err := os.Remove(filepath.Join(dir, results.FileSums)); err != nil {
		t.Fatal(err)
	}
	var sums []results.FileSum
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == results.FileResults {
			return nil
		}
		b, err := os.ReadFile(path)
		sums = append(sums, results.FileSum{Path: filepath.ToSlash(rel), Bytes: int64(len(b)), SHA256: fmt.Sprintf("%x", sha256.Sum256(b))})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	editResults(t, dir, func(r *results.Results) { r.Files = sums })
	return dir
}

// TestSealRefusesLinks: the run's own render will not seal a bundle that
// holds a symlink, which no sum could vouch for.
func TestSealRefusesLinks(t *testing.T) {
	dir := writeBundle(t, true)
	if err := os.Symlink("/etc/hostname", filepath.Join(dir, "host")); err != nil {
		t.Fatal(err)
	}
	if _, err := Render(dir); err == nil || !strings.Contains(err.Error(), "host is a symlink") {
		t.Errorf("got %v, want the symlink named", err)
	}
}

// TestInterruptedRun: a bundle whose run stopped before rendering (no
// results.json, no sums) is rendered only with --resign, which records it.
func TestInterruptedRun(t *testing.T) {
	dir := writeBundle(t, true)
	if _, err := Rerender(dir, tester, ""); !errors.Is(err, ErrUnsealed) || !strings.Contains(err.Error(), "--resign") {
		t.Fatalf("got %v, want a refusal pointing at --resign", err)
	}
	if _, err := Rerender(dir, tester, "the run was interrupted before its render"); err != nil {
		t.Fatal(err)
	}
	if err := Verify(dir, &bytes.Buffer{}); err != nil {
		t.Errorf("got %v, want the rendered bundle sealed", err)
	}
	if err := Verify(filepath.Join(dir, "nowhere"), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no such directory") {
		t.Errorf("got %v, want a missing directory named as missing", err)
	}
}

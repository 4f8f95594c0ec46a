package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingBundleErrors: a path with no bundle behind it gets an error
// that says what is missing, names the path once, and is still
// fs.ErrNotExist to a caller that asks.
func TestMissingBundleErrors(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "notes.txt")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	nowhere := filepath.Join(empty, "no-such-dir")
	for _, tc := range []struct {
		name string
		read func() error
		want string
	}{
		{"Open, no directory", func() error { _, err := Open(nowhere); return err }, "results: no results bundle at " + nowhere + ": no such file or directory"},
		{"Open, no results.json", func() error { _, err := Open(empty); return err }, "results: " + empty + " has no results.json: not a results bundle, or not a finished one"},
		{"Derive, no directory", func() error { _, err := Derive(nowhere, nil); return err }, "results: no results bundle at " + nowhere + ": no such directory"},
		{"Derive, no plan.json", func() error { _, err := Derive(empty, nil); return err }, "results: " + empty + " has no plan.json: not a results bundle, or not a finished one"},
		{"ReadJSON, a file for a directory", func() error { return ReadJSON(file, FilePlan, &Plan{}) }, "results: no results bundle at " + file + ": not a directory"},
	} {
		err := tc.read()
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
		if !errors.Is(err, fs.ErrNotExist) && !strings.Contains(tc.name, "a file for") {
			t.Errorf("%s: got %v, want it to be fs.ErrNotExist", tc.name, err)
		}
	}
}

// FuzzParseSums feeds arbitrary bytes as SHA256SUMS: every line either
// parses into a plain path inside the bundle and a sha256, or is named as
// a problem; nothing panics.
func FuzzParseSums(f *testing.F) {
	f.Add([]byte("0de2c2293cdfbc09c6ad60d74ac3771a49a493167ae77ae3b78a7ffb5dfefa1f  cells.jsonl\n"))
	f.Add([]byte("0de2c2293cdfbc09c6ad60d74ac3771a49a493167ae77ae3b78a7ffb5dfefa1f  ../etc/passwd\n"))
	f.Add([]byte("0de2c2293cdfbc09c6ad60d74ac3771a49a493167ae77ae3b78a7ffb5dfefa1f  cells"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, b []byte) {
		sums, problems := ParseSums(b)
		lines := strings.Count(string(b), "\n") + 1
		if len(sums) > lines {
			t.Fatalf("got %d sums from %d lines", len(sums), lines)
		}
		for _, s := range sums {
			if !filepath.IsLocal(s.Path) || len(s.SHA256) != 64 {
				t.Fatalf("got sum %+v, want a 64-hex sum of a path inside the bundle", s)
			}
		}
		if len(b) > 0 && b[len(b)-1] != '\n' && len(problems) == 0 {
			t.Fatalf("got no problem for bytes without a final newline")
		}
	})
}

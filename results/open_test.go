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

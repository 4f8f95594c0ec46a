package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEdited: only what the seal vouched for and that changed is an
// edit; files added since and the live files named are not.
func TestEdited(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(dir string)
		want   string // "" for no edit
	}{
		{"untouched", func(string) {}, ""},
		{"a record edited", func(d string) { os.WriteFile(filepath.Join(d, FileCells), []byte("{}\n"), 0o644) }, FileCells + " was edited"},
		{"a file gone", func(d string) { os.Remove(filepath.Join(d, "table.md")) }, "table.md is missing"},
		{"a file added", func(d string) { os.WriteFile(filepath.Join(d, "ladder.json"), []byte("[]"), 0o644) }, ""},
		{"the live status rewritten", func(d string) { os.WriteFile(filepath.Join(d, "status.json"), []byte(`{"state":"running"}`), 0o644) }, ""},
	} {
		dir := t.TempDir()
		for name, body := range map[string]string{FileCells: `{"kind":"pass"}` + "\n", "table.md": "| t |\n", "status.json": `{"state":"done"}`} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := Seal(dir, nil); err != nil {
			t.Fatal(err)
		}
		tc.change(dir)
		got, err := Edited(dir, "status.json")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: got %q, want no edit", tc.name, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: got %q, want one saying %q", tc.name, got, tc.want)
		}
	}
	if got, err := Edited(t.TempDir()); err != nil || got != nil {
		t.Errorf("a bundle never sealed: got %q, %v; want nothing", got, err)
	}
}

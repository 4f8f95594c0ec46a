package device

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestMkdirAllNamesTheDirOnce: a directory that cannot be made is named
// once, with why; a parent that could not be made is named as well.
func TestMkdirAllNamesTheDirOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		want string
	}{
		{"/proc/no-such-dir", "device: create directory /proc/no-such-dir: no such file or directory"},
		{"/proc/1/no/such", "device: create directory /proc/1/no/such: mkdir /proc/1/no: no such file or directory"},
		{filepath.Join(file, "x"), "device: create directory " + filepath.Join(file, "x") + ": mkdir " + file + ": not a directory"},
	} {
		err := mkdirAll(tc.dir)
		if err == nil || err.Error() != tc.want {
			t.Errorf("mkdirAll(%s): got %v, want %q", tc.dir, err, tc.want)
		}
	}
	if err := mkdirAll("/proc/no-such-dir"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("got %v, want it to be fs.ErrNotExist", err)
	}
	if err := mkdirAll(filepath.Join(t.TempDir(), "a", "b")); err != nil {
		t.Errorf("mkdirAll of a new path: got %v, want nil", err)
	}
}

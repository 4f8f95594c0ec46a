package device

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
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

// TestPlantedLinksRefused: a segment file planted in the data directory as
// a link to another file (symbolic or hard), or as something other than a
// regular file, is refused with an error naming it, whether it was there
// when the device opened or appeared before its first write; the file the
// link names is untouched.
func TestPlantedLinksRefused(t *testing.T) {
	const victimContent = "the victim's own bytes\n"
	for _, backend := range []string{BackendLibaio, BackendUring} {
		for _, tc := range []struct {
			name    string
			plant   func(t *testing.T, segment, victim string)
			wantErr string
		}{
			{"symbolic link", func(t *testing.T, segment, victim string) {
				if err := os.Symlink(victim, segment); err != nil {
					t.Fatal(err)
				}
			}, "is a symbolic link: the device never writes through a link"},
			{"dangling symbolic link", func(t *testing.T, segment, victim string) {
				if err := os.Symlink(victim+".new", segment); err != nil {
					t.Fatal(err)
				}
			}, "is a symbolic link"},
			{"hard link", func(t *testing.T, segment, victim string) {
				if err := os.Link(victim, segment); err != nil {
					t.Fatal(err)
				}
			}, "has 2 hard links"},
			{"fifo", func(t *testing.T, segment, victim string) {
				if err := syscall.Mkfifo(segment, 0o600); err != nil {
					t.Fatal(err)
				}
			}, "is not a regular file"},
		} {
			for _, when := range []string{"before open", "before the first write"} {
				t.Run(backend+"/"+tc.name+"/"+when, func(t *testing.T) {
					dir := testenv.MustDiskDir(t)
					victim := filepath.Join(dir, "victim") // same filesystem, for the hard link
					if err := os.WriteFile(victim, []byte(victimContent), 0o600); err != nil {
						t.Fatal(err)
					}
					data := filepath.Join(dir, "data")
					if err := os.Mkdir(data, 0o700); err != nil {
						t.Fatal(err)
					}
					const segmentBytes = 1 << 20
					segment := filepath.Join(data, "segment.1")
					cfg := Config{Backend: backend, Dir: data, SegmentBytes: segmentBytes, OnComplete: newCollector(4).onComplete}
					var err error
					if when == "before open" {
						tc.plant(t, segment, victim)
						var d Device
						if d, err = Open(cfg); err == nil {
							d.Close()
						}
					} else {
						d := openTest(t, cfg)
						tc.plant(t, segment, victim)
						buf := mustBuffer(t, 4096)
						stamp(buf, segmentBytes)
						_, err = d.Submit([]Request{{Op: OpWrite, Offset: segmentBytes, Buf: buf}})
					}
					if err == nil || !strings.Contains(err.Error(), segment) || !strings.Contains(err.Error(), tc.wantErr) {
						t.Errorf("got %v, want an error naming %s with %q", err, segment, tc.wantErr)
					}
					if got, _ := os.ReadFile(victim); string(got) != victimContent {
						t.Errorf("the victim holds %d bytes %.40q, want its own %q", len(got), got, victimContent)
					}
					if _, err := os.Stat(victim + ".new"); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("the dangling link's target: got %v, want it never created", err)
					}
				})
			}
		}
	}
}

package diskstats

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestParseInFlight(t *testing.T) {
	for _, tt := range []struct {
		in            string
		reads, writes int
		bad           bool
	}{
		{"      85        0\n", 85, 0, false},
		{"3 7", 3, 7, false},
		{"", 0, 0, true},
		{"1 2 3", 0, 0, true},
		{"-1 0", 0, 0, true},
		{"x 0", 0, 0, true},
		{"99999999999 0", 0, 0, true},
	} {
		r, w, err := ParseInFlight([]byte(tt.in))
		if tt.bad {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("%q: got %d, %d, %v, want ErrFormat", tt.in, r, w, err)
			}
			continue
		}
		if err != nil || r != tt.reads || w != tt.writes {
			t.Errorf("%q: got %d, %d, %v, want %d, %d", tt.in, r, w, err, tt.reads, tt.writes)
		}
	}
}

func TestDriverInFlight(t *testing.T) {
	for _, tt := range []struct {
		tree          string
		devices       []string
		reads, writes int
		bad           bool
	}{
		{"vm", []string{"vda"}, 85, 0, false},
		{"md-nvme", []string{"nvme0n1", "nvme1n1"}, 1390, 3, false},
		{"md-nvme", []string{"nvme0n1", "nvme7n1"}, 0, 0, true},
	} {
		r, w, err := DriverInFlight(filepath.Join("testdata", tt.tree), tt.devices)
		if (err != nil) != tt.bad || r != tt.reads || w != tt.writes {
			t.Errorf("%s %v: got %d, %d, %v, want %d, %d (error %v)", tt.tree, tt.devices, r, w, err, tt.reads, tt.writes, tt.bad)
		}
	}
}

// TestDriverWatch: the watch reports the reads the file said in nine
// samples of ten that had any while it ran, neither the last nor a rare
// peak nor a long stretch of writes alone, and says nothing was read when
// the file is missing.
func TestDriverWatch(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys", "block", "vdb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(reads int) {
		t.Helper()
		tmp := filepath.Join(dir, "inflight.tmp")
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(reads)+" 7\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "inflight")); err != nil {
			t.Fatal(err)
		}
	}
	write(0) // fio laying out its files: writes alone, for most of the step
	w := WatchDriver(root, []string{"vdb"}, time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	write(10)
	time.Sleep(100 * time.Millisecond)
	write(40)
	time.Sleep(400 * time.Millisecond)
	write(500) // a peak: a sample or two
	time.Sleep(2 * time.Millisecond)
	write(5)
	time.Sleep(10 * time.Millisecond)
	if depth, ok := w.Stop(); !ok || depth != 40 {
		t.Errorf("got %d, %v, want 40 reads, true", depth, ok)
	}
	missing := WatchDriver(root, []string{"vdz"}, time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	if depth, ok := missing.Stop(); ok || depth != 0 {
		t.Errorf("missing disk: got %d, %v, want 0, false", depth, ok)
	}
}

func FuzzParseInFlight(f *testing.F) {
	f.Add([]byte("      85        0\n"))
	f.Add([]byte("1 2 3"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, w, err := ParseInFlight(in)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("got %v, want ErrFormat", err)
			}
			return
		}
		if r < 0 || w < 0 {
			t.Fatalf("got %d, %d from %q: negative", r, w, in)
		}
	})
}

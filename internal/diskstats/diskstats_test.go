package diskstats

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/testenv"
)

func TestParseTrees(t *testing.T) {
	tests := []struct {
		tree    string
		lines   int
		want    Stat // one line, checked field by field
		devices []string
		wantSum Sample
	}{
		{"vm", 3, Stat{Major: 254, Minor: 0, Name: "vda", ReadsCompleted: 50297370, SectorsRead: 72234368, ReadMs: 55136697,
			InFlight: 3, IOMs: 372476, WeightedMs: 55323195}, []string{"vda"},
			Sample{ReadsCompleted: 50297370, SectorsRead: 72234368, WeightedMs: 55323195, IOMs: 372476}},
		// The members of an md array: the array's own line counts no
		// in-flight time, so the depth is the members' sum.
		{"md-nvme", 10, Stat{Major: 259, Minor: 14, Name: "nvme7n1", ReadsCompleted: 1007777, SectorsRead: 1007777, ReadMs: 100777,
			InFlight: 0, IOMs: 300007, WeightedMs: 700070}, []string{"nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1", "nvme4n1", "nvme5n1", "nvme6n1", "nvme7n1"},
			Sample{ReadsCompleted: 8031108, SectorsRead: 8031108, WeightedMs: 5600280, IOMs: 2400028}},
		{"old-kernel", 2, Stat{Major: 8, Minor: 1, Name: "sda1", ReadsCompleted: 200, SectorsRead: 3300, ReadMs: 130,
			InFlight: 0, IOMs: 400, WeightedMs: 420}, []string{"sda"},
			Sample{ReadsCompleted: 220, SectorsRead: 3500, WeightedMs: 450, IOMs: 410}},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			root := filepath.Join("testdata", tt.tree)
			data, err := os.ReadFile(filepath.Join(root, "proc", "diskstats"))
			if err != nil {
				t.Fatal(err)
			}
			stats, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(stats) != tt.lines {
				t.Errorf("got %d lines, want %d", len(stats), tt.lines)
			}
			found := false
			for _, s := range stats {
				if s.Name == tt.want.Name {
					found = true
					if s != tt.want {
						t.Errorf("got %+v, want %+v", s, tt.want)
					}
				}
			}
			if !found {
				t.Errorf("no line for %s", tt.want.Name)
			}
			got, err := Read(root, tt.devices)
			if err != nil {
				t.Fatal(err)
			}
			if got.ReadsCompleted != tt.wantSum.ReadsCompleted || got.SectorsRead != tt.wantSum.SectorsRead ||
				got.WeightedMs != tt.wantSum.WeightedMs || got.IOMs != tt.wantSum.IOMs || len(got.Devices) != len(tt.devices) {
				t.Errorf("sum over %v: got %+v, want %+v", tt.devices, got, tt.wantSum)
			}
		})
	}
	if _, err := Read(filepath.Join("testdata", "vm"), []string{"vda", "nvme0n1"}); err == nil || !strings.Contains(err.Error(), `"nvme0n1"`) {
		t.Errorf("missing disk: got %v, want an error naming it", err)
	}
	if _, err := Read(filepath.Join("testdata", "vm"), nil); err == nil {
		t.Errorf("no disks: got no error, want one")
	}
	if _, err := Read(filepath.Join("testdata", "nosuch"), []string{"vda"}); err == nil || !strings.Contains(err.Error(), "diskstats") {
		t.Errorf("missing file: got %v, want an error naming diskstats", err)
	}
}

func TestParseGarbage(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"short line", " 254 0 vda 1 2 3\n", "line 1 has 6 fields"},
		{"name only", "vda\n", "line 1 has 1 fields"},
		{"bad major", " x 0 vda 1 2 3 4 5 6 7 8 9 10 11\n", `device number "x":"0"`},
		{"negative counter", " 254 0 vda 1 2 -3 4 5 6 7 8 9 10 11\n", `field 6 "-3"`},
		{"word counter on line 2", "\n 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n 8 1 sda1 1 2 3 4 5 6 7 8 9 10 many\n", `line 3 (sda1): field 14 "many"`},
		{"huge counter", " 8 0 sda 99999999999999999999999 2 3 4 5 6 7 8 9 10 11\n", "field 4"},
		{"binary", "\x00\x01\x02 \xff\xfe 1 2 3 4 5 6 7 8 9 10 11 12\n", "device number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want ErrFormat containing %q", err, tt.want)
			}
		})
	}
	if got, err := Parse(nil); err != nil || len(got) != 0 {
		t.Errorf("empty input: got %v, %v; want no lines and no error", got, err)
	}
}

func TestDelta(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	a := Sample{Time: t0, Devices: []string{"vda"}, ReadsCompleted: 1000, SectorsRead: 8000, WeightedMs: 50_000, IOMs: 900}
	b := Sample{Time: t0.Add(2 * time.Second), Devices: []string{"vda"}, ReadsCompleted: 201_000, SectorsRead: 208_000, WeightedMs: 306_000, IOMs: 2900}
	d, err := b.Since(a)
	if err != nil {
		t.Fatal(err)
	}
	// 200 000 reads in 2 s; 256 000 request-ms over 2000 ms = 128 in flight.
	if got := d.ReadsPerSec(d.Seconds); got != 100_000 {
		t.Errorf("r/s: got %v, want 100000", got)
	}
	if got := d.QueueDepth(d.Seconds); got != 128 {
		t.Errorf("aqu-sz: got %v, want 128", got)
	}
	if got := d.ReadsPerSec(0); got != 0 {
		t.Errorf("r/s over no time: got %v, want 0", got)
	}
	if _, err := a.Since(b); !errors.Is(err, ErrBackwards) {
		t.Errorf("backwards: got %v, want ErrBackwards", err)
	}
}

// diskOf names the whole disk below path from sysfs, stepping from a
// partition to its disk.
func diskOf(t *testing.T, path string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not on a block device: %v", path, err)
	}
	if err != nil {
		t.Fatalf("the block device of %s: %v", path, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir)
	}
	return filepath.Base(dir)
}

// TestReadRealDisk really reads 256 blocks with O_DIRECT and finds at
// least as many completed reads on the disk between two samples (other
// processes on the machine only add to them).
func TestReadRealDisk(t *testing.T) {
	dir := testenv.MustDiskDir(t)
	disk := diskOf(t, dir)
	const blocks, block = 256, 4096
	mem, err := unix.Mmap(-1, 0, blocks*block, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	path := filepath.Join(dir, "blocks")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if uintptr(unsafe.Pointer(&mem[0]))%block != 0 {
		t.Fatal("buffer not aligned")
	}
	if n, err := unix.Pwrite(fd, mem, 0); err != nil || n != len(mem) {
		t.Fatalf("write: %d, %v", n, err)
	}
	before, err := Read("/", []string{disk})
	if err != nil {
		t.Fatal(err)
	}
	for i := range blocks {
		if _, err := unix.Pread(fd, mem[:block], int64(i*block)); err != nil {
			t.Fatal(err)
		}
	}
	after, err := Read("/", []string{disk})
	if err != nil {
		t.Fatal(err)
	}
	d, err := after.Since(before)
	if err != nil {
		t.Fatal(err)
	}
	if d.ReadsCompleted < blocks || d.SectorsRead < blocks*block/512 || d.Seconds <= 0 {
		t.Errorf("got %+v on %s, want ≥ %d reads and ≥ %d sectors", d, disk, blocks, blocks*block/512)
	}
}

func FuzzParse(f *testing.F) {
	for _, tree := range []string{"vm", "md-nvme", "old-kernel"} {
		data, err := os.ReadFile(filepath.Join("testdata", tree, "proc", "diskstats"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(" 8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"))
	f.Add([]byte(" 8 0 sda 1 2 3\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		stats, err := Parse(in)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("got %v, want ErrFormat", err)
			}
			return
		}
		for _, s := range stats {
			if s.Name == "" {
				t.Fatalf("accepted a line without a name: %+v", s)
			}
		}
	})
}

package device

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/testenv"
)

func TestConfigErrors(t *testing.T) {
	cb := func(uint64, int, error) {}
	dir := testenv.MustDiskDir(t)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no backend", Config{SegmentBytes: 4096, OnComplete: cb}, "Backend is empty"},
		{"unknown backend", Config{Backend: "spdk", SegmentBytes: 4096, OnComplete: cb}, `unknown backend "spdk"`},
		{"no callback", Config{Backend: BackendLocalMemory, SegmentBytes: 4096}, "OnComplete is nil"},
		{"no dir", Config{Backend: BackendLibaio, SegmentBytes: 4096, OnComplete: cb}, "Dir is empty"},
		{"zero segment", Config{Backend: BackendLocalMemory, OnComplete: cb}, "segment size 0"},
		{"unaligned segment", Config{Backend: BackendUring, Dir: dir, SegmentBytes: 1000, SectorSize: 512, OnComplete: cb}, "segment size 1000"},
		{"odd sector", Config{Backend: BackendLocalMemory, SegmentBytes: 4096, SectorSize: 768, OnComplete: cb}, "sector size 768"},
		{"small sector", Config{Backend: BackendLocalMemory, SegmentBytes: 4096, SectorSize: 256, OnComplete: cb}, "sector size 256"},
		{"negative throttle", Config{Backend: BackendLocalMemory, SegmentBytes: 4096, ThrottleLimit: -1, OnComplete: cb}, "negative knob"},
		{"huge throttle", Config{Backend: BackendLocalMemory, SegmentBytes: 4096, ThrottleLimit: 1 << 21, OnComplete: cb}, "throttle limit"},
		{"many threads", Config{Backend: BackendLocalMemory, SegmentBytes: 4096, CompletionThreads: 5000, OnComplete: cb}, "completion threads"},
		{"many contexts", Config{Backend: BackendLibaio, Dir: dir, SegmentBytes: 4096, IOContexts: 5000, OnComplete: cb}, "io contexts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Open(tt.cfg)
			if err == nil {
				d.Close()
				t.Fatalf("Open: got nil error, want one containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open: got error %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	cfg, err := Config{Backend: BackendUring, Dir: testenv.MustDiskDir(t), SegmentBytes: 1 << 20, OnComplete: func(uint64, int, error) {}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	threads := min(4, runtime.GOMAXPROCS(0))
	if cfg.ThrottleLimit != 4096 || cfg.CompletionThreads != threads {
		t.Errorf("defaults: got throttle %d, completion threads %d, want 4096, %d (4, at most GOMAXPROCS)", cfg.ThrottleLimit, cfg.CompletionThreads, threads)
	}
	if want := DefaultIOContexts(BackendUring, threads); cfg.IOContexts != want || want < threads || want > 64 {
		t.Errorf("uring rings: got %d, want %d within [%d, 64]", cfg.IOContexts, want, threads)
	}
	if got := DefaultIOContexts(BackendLibaio, 3); got != 3 {
		t.Errorf("libaio contexts for 3 completion threads: got %d, want 3", got)
	}
	if cfg.SectorSize < 512 || cfg.SectorSize&(cfg.SectorSize-1) != 0 {
		t.Errorf("detected sector size %d, want a power of two ≥ 512", cfg.SectorSize)
	}
}

func TestCompletionThreadsFor(t *testing.T) {
	for _, tt := range []struct{ procs, want int }{{1, 1}, {2, 2}, {3, 3}, {4, 4}, {64, 4}, {0, 1}} {
		if got := CompletionThreadsFor(tt.procs); got != tt.want {
			t.Errorf("CompletionThreadsFor(%d): got %d, want %d", tt.procs, got, tt.want)
		}
	}
}

func TestLogicalBlockSize(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	disk := filepath.Join(root, "devices", "virtio1", "block", "vda")
	write(filepath.Join(disk, "queue", "logical_block_size"), "4096\n")
	write(filepath.Join(disk, "vda1", "partition"), "1\n")
	write(filepath.Join(root, "devices", "bad", "queue", "logical_block_size"), "4000\n")
	if err := os.MkdirAll(filepath.Join(root, "dev", "block"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"254:0": "../../devices/virtio1/block/vda",
		"254:1": "../../devices/virtio1/block/vda/vda1",
		"9:9":   "../../devices/bad",
	} {
		if err := os.Symlink(target, filepath.Join(root, "dev", "block", link)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		major, minor uint32
		want         int
		wantErr      bool
	}{
		{254, 0, 4096, false},
		{254, 1, 4096, false}, // partition: the parent disk's queue
		{9, 9, 0, true},       // not a power of two
		{0, 42, 0, true},      // no block device (tmpfs, overlay)
	}
	for _, tt := range tests {
		got, err := LogicalBlockSize(root, tt.major, tt.minor)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("LogicalBlockSize(%d:%d): got (%d, %v), want %d, error %v", tt.major, tt.minor, got, err, tt.want, tt.wantErr)
		}
	}
	if got := SectorSizeOf(testenv.MustDiskDir(t)); got < 512 {
		t.Errorf("SectorSizeOf(disk dir): got %d, want ≥ 512", got)
	}
}

package hostcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tierbench/tierbench/device"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/testenv"
)

// fakeProbes stands in for the kernel and engine where a fake tree
// describes another host; it records the fio jobs it was given.
type fakeProbes struct {
	mu   sync.Mutex
	jobs []fio.Job
}

func (f *fakeProbes) probes() Probes {
	return Probes{
		IOUring: func() error { return nil },
		LibAIO:  func() error { return nil },
		Docker: func(context.Context) (DockerInfo, error) {
			return DockerInfo{Host: "unix:///var/run/docker.sock", Version: "27.5.1", APIVersion: "1.47",
				StorageDriver: "overlay2", CgroupVersion: "2", Privileged: true}, nil
		},
		FIO: func(_ context.Context, job fio.Job) (fio.Result, error) {
			f.mu.Lock()
			f.jobs = append(f.jobs, job)
			f.mu.Unlock()
			// The reference's ceiling: 8.20 M IOPS at 512 B, 8.24 M at 4 K,
			// reached from 2048 reads in flight on.
			share := min(1, float64(job.Jobs*job.IODepth)/2048)
			r := fio.Result{Version: "fio-3.36", Engine: job.Engine, BlockBytes: job.BlockBytes, Jobs: job.Jobs, IODepth: job.IODepth, IOPS: 8.20e6 * share}
			if job.BlockBytes == 4096 {
				r.IOPS = 8.24e6 * share
			}
			r.BandwidthKiBps = r.IOPS * float64(job.BlockBytes) / 1024
			r.ClatUs.P50, r.ClatUs.P99, r.ClatUs.P999 = 200, 600, 1200
			return r, nil
		},
	}
}

var fixedTime = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func runTree(t *testing.T, root string, mutate func(*Config)) (Report, string) {
	t.Helper()
	fp := &fakeProbes{}
	cfg := Config{Root: root, DataDir: testenv.MustDiskDir(t), Probes: fp.probes(), Now: func() time.Time { return fixedTime }}
	if mutate != nil {
		mutate(&cfg)
	}
	var out bytes.Buffer
	rep, err := Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep, out.String()
}

func mustCheck(t *testing.T, rep Report, name string) Check {
	t.Helper()
	c, ok := rep.Check(name)
	if !ok {
		t.Fatalf("no %s check in %+v", name, rep.Checks)
	}
	return c
}

func TestTrees(t *testing.T) {
	tests := []struct {
		tree            string
		wantNodes       []NUMANode
		wantNUMA        Status
		wantSockets     int
		wantCores       int
		wantThreads     int
		wantLogical     int
		wantDevice      string
		wantPartition   string
		wantRAID        string
		wantDisks       int
		wantModel       string
		wantFirmware    string
		wantAIO         Status
		wantFIOJobs     int
		wantVirt        string
		wantMicrocode   string
		wantVulnerable  []string
		wantIOUringNote string
		wantParagraph   string
	}{
		{
			tree: "reference-host",
			wantNodes: []NUMANode{
				{ID: 0, CPUList: "0-55,112-167", CPUs: 112, MemoryBytes: 1056704150 * 1024},
				{ID: 1, CPUList: "56-111,168-223", CPUs: 112, MemoryBytes: 1056704150 * 1024},
			},
			wantNUMA: Pass, wantSockets: 2, wantCores: 56, wantThreads: 2, wantLogical: 224,
			wantDevice: "md1", wantRAID: "raid0", wantDisks: 8, wantModel: "KIOXIA KCM6DRUL3T84", wantFirmware: "0106",
			wantAIO: Pass, wantFIOJobs: 32, wantVirt: "none", wantMicrocode: "0x2b000603",
			wantIOUringNote: "kernel.io_uring_disabled = 0",
			wantParagraph: "Host — 2× Intel Xeon Platinum 8480CL (56 cores × 2 threads/socket, 224 logical CPUs, 2 NUMA nodes), ~2 TB; " +
				"8× KIOXIA KCM6DRUL3T84 3.84 TB NVMe in Linux md RAID-0 (/dev/md1, 512 KB chunks, ext4, ≈30.7 TB); " +
				"Ubuntu 24.04.4 LTS, kernel 6.8.0-136-generic; fs.aio-max-nr = 4194304. " +
				"fio random-read ceiling on this array: 8.24 M IOPS at 4 K and 8.20 M IOPS at 512 B (the best of a depth sweep over 64–4096 reads in flight: 8 jobs × QD256, io_uring, O_DIRECT, 8 files).",
		},
		{
			tree:      "vm-host",
			wantNodes: []NUMANode{{ID: 0, CPUList: "0-1", CPUs: 2, MemoryBytes: 24683652 * 1024}},
			wantNUMA:  Warn, wantSockets: 1, wantCores: 2, wantThreads: 1, wantLogical: 2,
			wantDevice: "vda", wantPartition: "vda1", wantDisks: 1, wantModel: "virtio_blk",
			wantAIO: Pass, wantFIOJobs: 2, wantVirt: "QEMU Standard PC (Q35 + ICH9, 2009)", wantMicrocode: "0x1000065",
			wantVulnerable:  []string{"retbleed"},
			wantIOUringNote: "kernel.io_uring_disabled absent",
			wantParagraph: "Host — 1× AMD EPYC 7B13 (2 cores × 1 thread/socket, 2 logical CPUs, 1 NUMA node), ~24 GB; " +
				"1× virtio_blk 275 GB virtio disk (/dev/vda, ext4); Debian GNU/Linux 12 (bookworm), kernel 6.1.0-18-amd64, " +
				"virtual machine (QEMU Standard PC (Q35 + ICH9, 2009)); fs.aio-max-nr = 65536. " +
				"fio random-read ceiling on this disk: 8.24 M IOPS at 4 K and 8.20 M IOPS at 512 B (the best of a depth sweep over 64–4096 reads in flight: 2 jobs × QD1024, io_uring, O_DIRECT, 8 files).",
		},
	}
	for _, tt := range tests {
		t.Run(tt.tree, func(t *testing.T) {
			var probes *fakeProbes
			rep, out := runTree(t, filepath.Join("testdata", tt.tree), func(c *Config) {
				c.FIO = true
				probes = &fakeProbes{}
				c.Probes = probes.probes()
			})
			fp := rep.Fingerprint
			if len(fp.NUMANodes) != len(tt.wantNodes) {
				t.Fatalf("got nodes %+v, want %+v", fp.NUMANodes, tt.wantNodes)
			}
			for i, n := range fp.NUMANodes {
				if n != tt.wantNodes[i] {
					t.Errorf("got node %+v, want %+v", n, tt.wantNodes[i])
				}
			}
			if c := mustCheck(t, rep, CheckNUMA); c.Status != tt.wantNUMA {
				t.Errorf("got numa %v (%s), want %v", c.Status, c.Detail, tt.wantNUMA)
			}
			if fp.Sockets != tt.wantSockets || fp.CoresPerSocket != tt.wantCores || fp.ThreadsPerCore != tt.wantThreads || fp.LogicalCPUs != tt.wantLogical {
				t.Errorf("got %d sockets × %d cores × %d threads = %d CPUs, want %d × %d × %d = %d", fp.Sockets, fp.CoresPerSocket,
					fp.ThreadsPerCore, fp.LogicalCPUs, tt.wantSockets, tt.wantCores, tt.wantThreads, tt.wantLogical)
			}
			if fp.Microcode != tt.wantMicrocode || fp.Virtualization != tt.wantVirt {
				t.Errorf("got microcode %q virtualization %q, want %q %q", fp.Microcode, fp.Virtualization, tt.wantMicrocode, tt.wantVirt)
			}
			st := fp.Storage
			if st.Device == nil || st.Device.Name != tt.wantDevice || st.Device.Partition != tt.wantPartition || st.Device.RAIDLevel != tt.wantRAID {
				t.Fatalf("got device %+v (note %q), want %s partition %q raid %q", st.Device, st.Note, tt.wantDevice, tt.wantPartition, tt.wantRAID)
			}
			if len(st.Disks) != tt.wantDisks {
				t.Fatalf("got %d disks %+v, want %d", len(st.Disks), st.Disks, tt.wantDisks)
			}
			for _, d := range st.Disks {
				if d.Model != tt.wantModel || d.FirmwareRev != tt.wantFirmware {
					t.Errorf("got disk %s model %q firmware %q, want %q %q", d.Name, d.Model, d.FirmwareRev, tt.wantModel, tt.wantFirmware)
				}
			}
			if c := mustCheck(t, rep, CheckODirect); c.Status != Pass {
				t.Errorf("got odirect %v (%s), want pass", c.Status, c.Detail)
			}
			if c := mustCheck(t, rep, CheckAIOMaxNr); c.Status != tt.wantAIO {
				t.Errorf("got aio-max-nr %v (%s), want %v", c.Status, c.Detail, tt.wantAIO)
			}
			if c := mustCheck(t, rep, CheckIOUring); !strings.Contains(c.Detail, tt.wantIOUringNote) {
				t.Errorf("got io_uring detail %q, want it to contain %q", c.Detail, tt.wantIOUringNote)
			}
			if got := vulnerableCount(fp.Vulnerabilities); fmt.Sprint(got) != fmt.Sprint(tt.wantVulnerable) && len(got)+len(tt.wantVulnerable) > 0 {
				t.Errorf("got vulnerable %v, want %v", got, tt.wantVulnerable)
			}
			if len(fp.Gaps) > 0 {
				t.Errorf("got fingerprint gaps %q, want none", fp.Gaps)
			}
			// The depth sweep at 512 B up to the throttle limit (the fake
			// disk saturates at 2048 in flight, so it runs to the end), then
			// 4 KiB at the best depth, the first to reach the ceiling.
			steps := fio.DepthLadder(4096, tt.wantFIOJobs)
			want := append(slices.Clone(steps), steps[3])
			if len(probes.jobs) != len(want) {
				t.Fatalf("got %d fio jobs, want %d (the 512 B sweep and 4 KiB)", len(probes.jobs), len(want))
			}
			for i, j := range probes.jobs {
				bs := 512
				if i == len(want)-1 {
					bs = 4096
				}
				if j.Jobs != want[i].Jobs || j.IODepth != want[i].IODepth || j.Files != 8 || j.Engine != "io_uring" || j.BlockBytes != bs {
					t.Errorf("got fio job %+v, want %v, 8 files, io_uring, %d B", j, want[i], bs)
				}
			}
			if f := rep.FIO; f == nil || len(f.Sweep) != len(steps) || f.StoppedEarly || f.Footprint != FootprintFioFiles ||
				f.FootprintBytes != 8*DefaultFIOFileBytes || f.Results[0].IOPS != 8.20e6 || f.Sweep[0].IOPS >= f.Sweep[3].IOPS {
				t.Errorf("got baseline %+v, want the whole %d-step curve over 8 × 64 MiB of fio files and the 8.20 M ceiling", f, len(steps))
			}
			if got := HostParagraph(rep); got != tt.wantParagraph {
				t.Errorf("got paragraph\n%s\nwant\n%s", got, tt.wantParagraph)
			}
			if !strings.Contains(out, tt.wantParagraph) || !strings.Contains(out, "│ odirect") {
				t.Errorf("got output\n%s\nwant the table and the paragraph", out)
			}
			if rep.Failed() {
				t.Errorf("got a failed check in %+v, want none", rep.Checks)
			}
		})
	}
}

// copyTree copies a fake tree, symlinks included, so a test can break it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

func TestBadTrees(t *testing.T) {
	tests := []struct {
		name       string
		tree       string
		file       string // relative to the root; "" content with remove=true deletes it
		content    string
		remove     bool
		check      string
		wantStatus Status
		wantDetail string
	}{
		{"cpulist missing", "vm-host", "sys/devices/system/node/node0/cpulist", "", true, CheckNUMA, Fail, "/sys/devices/system/node/node0/cpulist"},
		{"cpulist garbage", "reference-host", "sys/devices/system/node/node1/cpulist", "56-oops", false, CheckNUMA, Fail, "/sys/devices/system/node/node1/cpulist"},
		{"node meminfo garbage", "vm-host", "sys/devices/system/node/node0/meminfo", "Node 0 MemTotal: lots kB", false, CheckNUMA, Fail, "node0/meminfo"},
		{"no node dir", "vm-host", "sys/devices/system/node", "", true, CheckNUMA, Fail, "/sys/devices/system/node"},
		{"aio-max-nr garbage", "vm-host", "proc/sys/fs/aio-max-nr", "plenty", false, CheckAIOMaxNr, Fail, `/proc/sys/fs/aio-max-nr (under root`},
		{"aio-nr missing", "vm-host", "proc/sys/fs/aio-nr", "", true, CheckAIOMaxNr, Fail, "/proc/sys/fs/aio-nr"},
		{"aio short", "vm-host", "proc/sys/fs/aio-max-nr", "1024", false, CheckAIOMaxNr, Fail, "sysctl -w fs.aio-max-nr=16384"},
		{"aio used up", "reference-host", "proc/sys/fs/aio-nr", "4193000", false, CheckAIOMaxNr, Fail, "sysctl -w fs.aio-max-nr=8388608"},
		{"io_uring off", "reference-host", "proc/sys/kernel/io_uring_disabled", "2", false, CheckIOUring, Fail, "sysctl -w kernel.io_uring_disabled=0"},
		{"io_uring knob garbage", "reference-host", "proc/sys/kernel/io_uring_disabled", "no", false, CheckIOUring, Fail, "/proc/sys/kernel/io_uring_disabled"},
		{"meminfo garbage", "vm-host", "proc/meminfo", "MemTotal: x kB", false, CheckMemory, Fail, "/proc/meminfo"},
		{"meminfo no MemAvailable", "vm-host", "proc/meminfo", "MemTotal: 1000 kB", false, CheckMemory, Fail, "no MemAvailable line"},
		{"meminfo too small", "vm-host", "proc/meminfo", "MemTotal: 1000 kB\nMemAvailable: 900 kB", false, CheckMemory, Fail, "more than the host has"},
		{"mountinfo garbage", "vm-host", "proc/self/mountinfo", "this is not mountinfo", false, CheckODirect, Warn, "/proc/self/mountinfo"},
		{"block size garbage", "reference-host", "sys/devices/pci0000_30/0000_31_00.0/nvme/nvme2/nvme2n1/queue/logical_block_size", "4097", false, CheckODirect, Warn, "nvme2n1/queue"},
		{"rotational missing", "vm-host", "sys/devices/pci0000_00/0000_00_04.0/virtio2/block/vda/queue/rotational", "", true, CheckODirect, Warn, "/sys/devices/pci0000_00/0000_00_04.0/virtio2/block/vda/queue/rotational"},
		{"block device not in sysfs", "vm-host", "sys/class/block/vda1", "", true, CheckODirect, Warn, "find block device 253:1"},
		{"class/block missing", "vm-host", "sys/class/block", "", true, CheckODirect, Warn, "/sys/class/block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyTree(t, filepath.Join("testdata", tt.tree))
			p := filepath.Join(root, tt.file)
			if tt.remove {
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(p, []byte(tt.content+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, _ := runTree(t, root, nil)
			c := mustCheck(t, rep, tt.check)
			if c.Status != tt.wantStatus || !strings.Contains(c.Detail, tt.wantDetail) {
				t.Errorf("got %s %v %q, want %v naming %q", tt.check, c.Status, c.Detail, tt.wantStatus, tt.wantDetail)
			}
		})
	}
}

// TestGarbageFingerprint breaks files only the fingerprint reads: the gaps
// name them, and nothing panics.
func TestGarbageFingerprint(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "vm-host"))
	for _, f := range []string{"proc/cpuinfo", "etc/os-release", "proc/sys/kernel/osrelease"} {
		os.Remove(filepath.Join(root, f))
	}
	os.WriteFile(filepath.Join(root, "sys/kernel/mm/transparent_hugepage/enabled"), nil, 0o644)
	rep, out := runTree(t, root, nil)
	gaps := strings.Join(rep.Fingerprint.Gaps, "\n")
	for _, want := range []string{"/proc/cpuinfo", "/etc/os-release", "/proc/sys/kernel/osrelease"} {
		if !strings.Contains(gaps, want) {
			t.Errorf("got gaps %q, want one naming %s", gaps, want)
		}
	}
	if !strings.Contains(out, "Not recorded: ") {
		t.Errorf("got output\n%s\nwant the gaps listed", out)
	}
}

func TestAIOCheck(t *testing.T) {
	tests := []struct {
		max, nr    int64
		threads    []int
		qd         int
		wantStatus Status
		wantFix    string
	}{
		{65536, 0, []int{8, 32, 48, 64}, 64, Pass, ""},
		{65536, 0, []int{64}, 1024, Pass, ""},
		{65536, 0, []int{64}, 4096, Fail, "sysctl -w fs.aio-max-nr=262144"},
		{65536, 1000, []int{64}, 1024, Fail, "sysctl -w fs.aio-max-nr=131072"},
		{4194304, 0, []int{8, 32, 48, 64}, 4096, Pass, ""},
	}
	for _, tt := range tests {
		c := aioCheck(AIOBudget{MaxNr: tt.max, Nr: tt.nr}, nil, tt.threads, tt.qd)
		if c.Status != tt.wantStatus || !strings.Contains(c.Detail, tt.wantFix) {
			t.Errorf("aio-max-nr %d nr %d threads %v qd %d: got %v %q, want %v with %q", tt.max, tt.nr, tt.threads, tt.qd, c.Status, c.Detail, tt.wantStatus, tt.wantFix)
		}
	}
	server := device.AIOEventsNeeded(device.Config{Backend: device.BackendLibaio})
	if server < 4096 {
		t.Errorf("device.AIOEventsNeeded(defaults) = %d, want at least one context of 4096", server)
	}
	needs := []struct{ threads, qd, want int }{
		{64, 64, max(4096, server)},
		{64, 1024, max(65536, server)},
		{0, 64, server},
	}
	for _, n := range needs {
		if got := AIONeed(n.threads, n.qd); got != n.want {
			t.Errorf("AIONeed(%d, %d) = %d, want %d", n.threads, n.qd, got, n.want)
		}
	}
}

func TestDataDirs(t *testing.T) {
	file := filepath.Join(testenv.MustDiskDir(t), "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	shm := filepath.Join("/dev/shm", fmt.Sprintf("tierbench-test-%d", os.Getpid()))
	tests := []struct {
		name, dir, want string
	}{
		{"parent is a file", filepath.Join(file, "data"), "cannot be used: not a directory"},
		{"parent cannot be made", "/proc/tierbench-test/data", "cannot be created"},
		{"dir is a file", file, "is not a directory"},
		{"tmpfs", shm, "is on tmpfs"},
		{"proc refuses files", "/proc/sys", "/proc/sys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) { c.DataDir = tt.dir; c.FIO = true })
			c := mustCheck(t, rep, CheckODirect)
			if c.Status != Fail || !strings.Contains(c.Detail, tt.want) {
				t.Errorf("got odirect %v %q, want fail containing %q", c.Status, c.Detail, tt.want)
			}
			if f := mustCheck(t, rep, CheckFIO); f.Status != Fail {
				t.Errorf("got fio %v %q, want fail (not run on a bad data dir)", f.Status, f.Detail)
			}
			if !rep.Failed() {
				t.Error("got Failed() false, want true")
			}
		})
	}
	if _, err := os.Stat(shm); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v for %s, want it removed again after preflight created it", err, shm)
	}
}

// TestRealProbes runs the kernel probes on this machine.
func TestRealProbes(t *testing.T) {
	if err := probeIOUring(); err != nil {
		if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			t.Skipf("kernel refuses io_uring: %v", err)
		}
		t.Errorf("io_uring probe: %v", err)
	}
	if err := probeLibAIO(); err != nil {
		t.Errorf("libaio probe: %v", err)
	}
	dir := testenv.MustDiskDir(t)
	if err := probeODirect(dir, 512); err != nil {
		t.Errorf("O_DIRECT probe in %s: %v", dir, err)
	}
	if err := probeODirect(dir, 16384); err != nil {
		t.Errorf("O_DIRECT probe with 16 KiB blocks in %s: %v", dir, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tierbench-odirect-*"))
	if len(left) > 0 {
		t.Errorf("got probe files %v left behind, want none", left)
	}
}

// TestRealHost runs every check against this machine, with the real fio
// at a tiny size and --json, and reads the document back.
func TestRealHost(t *testing.T) {
	testenv.MustLookPath(t, "fio")
	dir := testenv.MustDiskDir(t)
	var out bytes.Buffer
	rep, err := Run(context.Background(), Config{DataDir: dir, FIO: true, FIOFileBytes: 4 << 20, FIOFiles: 2, FIORuntimeSeconds: 1, JSON: true}, &out)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, name := range []string{CheckODirect, CheckIOUring, CheckLibAIO, CheckFIO, CheckDiskSpace} {
		if c := mustCheck(t, rep, name); c.Status != Pass {
			t.Errorf("got %s %v %q, want pass on this machine", name, c.Status, c.Detail)
		}
	}
	var doc struct {
		Checks []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"checks"`
		Fingerprint map[string]any `json:"fingerprint"`
		FIO         *struct {
			Engine string `json:"engine"`
			Sweep  []struct {
				Depth int     `json:"depth"`
				IOPS  float64 `json:"iops"`
			} `json:"sweep"`
			Results []struct {
				BlockBytes int                `json:"block_bytes"`
				IOPS       float64            `json:"iops"`
				BW         float64            `json:"bw_kib_per_sec"`
				ClatUs     map[string]float64 `json:"clat_us"`
			} `json:"results"`
		} `json:"fio"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("output is not one JSON document: %v\n%s", err, out.String())
	}
	var names []string
	for _, c := range doc.Checks {
		names = append(names, c.Name)
		if c.Status != "pass" && c.Status != "warn" && c.Status != "fail" {
			t.Errorf("got status %q for %s, want pass, warn or fail", c.Status, c.Name)
		}
	}
	want := "numa aio-max-nr odirect io_uring libaio disk-space memory docker fio"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("got checks %q, want %q", got, want)
	}
	if doc.FIO == nil || len(doc.FIO.Results) != 2 {
		t.Fatalf("got fio %+v, want two results", doc.FIO)
	}
	if doc.FIO.Engine != "io_uring" {
		t.Errorf("got engine %q, want io_uring", doc.FIO.Engine)
	}
	if len(doc.FIO.Sweep) < 3 || doc.FIO.Sweep[0].Depth != 64 || doc.FIO.Sweep[0].IOPS <= 0 {
		t.Errorf("got sweep %+v, want at least 3 depths from 64 reads in flight", doc.FIO.Sweep)
	}
	fioBlockSizes := []int{512, 4096}
	for i, r := range doc.FIO.Results {
		if r.BlockBytes != fioBlockSizes[i] || r.IOPS <= 0 || r.BW <= 0 || r.ClatUs["p99"] < r.ClatUs["p50"] || r.ClatUs["p999"] < r.ClatUs["p99"] {
			t.Errorf("got fio result %+v, want %d B with positive IOPS and ordered percentiles", r, fioBlockSizes[i])
		}
	}
	for _, key := range []string{"kernel", "kernel_cmdline", "cpu_model", "microcode", "logical_cpus", "numa_nodes", "tierbench", "storage", "aio", "io_uring", "vulnerabilities"} {
		if _, ok := doc.Fingerprint[key]; !ok {
			t.Errorf("got fingerprint without %q", key)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) > 0 {
		t.Errorf("got %v left in the data dir, want fio's files removed", left)
	}
}

func TestFIOTooBigForDisk(t *testing.T) {
	var probes *fakeProbes
	rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) {
		c.FIO = true
		c.FIOFiles = 1 << 20
		c.FIOFileBytes = 1 << 30 // 1 PiB in all
		probes = &fakeProbes{}
		c.Probes = probes.probes()
	})
	c := mustCheck(t, rep, CheckFIO)
	if c.Status != Fail || !strings.Contains(c.Detail, "lower --fio-size") {
		t.Errorf("got fio %v %q, want fail asking for a smaller --fio-size", c.Status, c.Detail)
	}
	if len(probes.jobs) != 0 {
		t.Errorf("got %d fio runs, want none", len(probes.jobs))
	}
	if d := mustCheck(t, rep, CheckDiskSpace); d.Status != Fail {
		t.Errorf("got disk-space %v %q, want fail", d.Status, d.Detail)
	}
}

func TestFIOFailures(t *testing.T) {
	tests := []struct {
		name, script string
		wantStatus   Status
		wantDetail   string
	}{
		{"exits non-zero", "#!/bin/sh\necho 'fio: engine io_uring not loadable' >&2\nexit 1\n", Fail, "engine io_uring not loadable"},
		{"prints non-JSON", "#!/bin/sh\necho 'Segmentation fault'\n", Fail, "Segmentation fault"},
		{"missing", "", Warn, "apt-get install fio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			if tt.script != "" {
				if err := os.WriteFile(filepath.Join(bin, "fio"), []byte(tt.script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", bin)
			rep, _ := runTree(t, filepath.Join("testdata", "vm-host"), func(c *Config) {
				c.FIO = true
				c.Probes.FIO = nil // the real fio.Run, finding the fake fio on PATH
			})
			c := mustCheck(t, rep, CheckFIO)
			if c.Status != tt.wantStatus || !strings.Contains(c.Detail, tt.wantDetail) || !strings.Contains(c.Detail, "fio") {
				t.Errorf("got fio %v %q, want %v naming fio and %q", c.Status, c.Detail, tt.wantStatus, tt.wantDetail)
			}
			if rep.FIO != nil {
				t.Errorf("got fio baseline %+v, want none", rep.FIO)
			}
		})
	}
}

func TestDocker(t *testing.T) {
	t.Run("dead socket", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "docker.sock")
		t.Setenv("DOCKER_HOST", "unix://"+sock)
		info, err := probeDocker(context.Background())
		c := dockerCheck(info, err)
		if c.Status != Warn || !strings.Contains(c.Detail, sock) {
			t.Errorf("got %v %q, want warn naming %s", c.Status, c.Detail, sock)
		}
	})
	t.Run("engine answers an error", func(t *testing.T) {
		sock := filepath.Join(t.TempDir(), "docker.sock")
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"message":"engine is shutting down"}`))
		})}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
		t.Setenv("DOCKER_HOST", "unix://"+sock)
		info, err := probeDocker(context.Background())
		c := dockerCheck(info, err)
		if c.Status != Warn || !strings.Contains(c.Detail, sock) {
			t.Errorf("got %v %q, want warn naming %s", c.Status, c.Detail, sock)
		}
	})
	t.Run("real engine", func(t *testing.T) {
		if _, err := os.Stat("/var/run/docker.sock"); err != nil && os.Getenv("DOCKER_HOST") == "" {
			t.Skipf("no Docker engine on this machine: %v", err)
		}
		info, err := probeDocker(context.Background())
		if err != nil {
			t.Fatalf("probe the real engine: %v", err)
		}
		if info.Version == "" || info.APIVersion == "" || info.StorageDriver == "" || info.CgroupVersion == "" {
			t.Errorf("got %+v, want version, API version, storage driver and cgroup version", info)
		}
	})
}

func TestParsers(t *testing.T) {
	cpuTests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0-55,112-167", "0-55,112-167", true}, {"0", "0", true}, {"", "", true}, {"3,1,2", "1-3", true},
		{"5-2", "", false}, {"a", "", false}, {"-1", "", false}, {"0-999999999", "", false},
	}
	for _, tt := range cpuTests {
		got, err := parseCPUList(tt.in)
		if (err == nil) != tt.ok || (err == nil && formatCPUList(got) != tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
	mounts, err := parseMountinfo([]byte("36 35 98:0 /mnt1 /mnt\\040data rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n"))
	if err != nil || len(mounts) != 1 || mounts[0].point != "/mnt data" || mounts[0].major != 98 || mounts[0].fsType != "ext3" {
		t.Errorf("parseMountinfo: got %+v, %v; want /mnt data on 98:0 ext3", mounts, err)
	}
	m, ok := mountOf([]mount{{point: "/"}, {point: "/var"}, {point: "/var/tmp"}, {point: "/var/tmpx"}}, "/var/tmp/a")
	if !ok || m.point != "/var/tmp" {
		t.Errorf("mountOf: got %q, want /var/tmp", m.point)
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0-55,112-167", "0", "", "1,3-5", "9-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := parseCPUList(s)
		if err != nil {
			return
		}
		again, err := parseCPUList(formatCPUList(cpus))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(cpus) {
			t.Fatalf("round trip of %q: got %v, %v; want %v", s, again, err, cpus)
		}
	})
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add([]byte("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n"))
	f.Add([]byte("36 35 98:0 /mnt1 /mnt\\040x rw - ext3 /dev/root rw\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		mounts, err := parseMountinfo(b)
		if err == nil {
			mountOf(mounts, "/var/tmp")
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte("MemTotal: 1000 kB\nMemAvailable: 900 kB\n"))
	f.Add([]byte("Node 0 MemTotal:       24683652 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseMeminfo(b)
		if err != nil {
			return
		}
		for k, v := range m {
			if v < 0 {
				t.Fatalf("key %s: negative %d", k, v)
			}
		}
	})
}

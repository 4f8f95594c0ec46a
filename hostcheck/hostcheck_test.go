package hostcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tierbench/tierbench/internal/fio"
)

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
		wantLine        string // HostLine: the report's head
		wantIRQCPUs     string // where the data disks' completions interrupt
		wantIRQDetail   string // in the odirect check's detail
		wantQueue       string // in each disk's facts: its queues and tags
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
			wantLine: "2× Intel Xeon Platinum 8480CL, 224 logical CPUs, 2 NUMA nodes, ~2 TB; " +
				"8× KIOXIA KCM6DRUL3T84 3.84 TB NVMe in Linux md RAID-0 (/dev/md1, 512 KB chunks, ext4, ≈30.7 TB); kernel 6.8.0-136-generic",
		},
		{
			tree:      "vm-host",
			wantNodes: []NUMANode{{ID: 0, CPUList: "0-1", CPUs: 2, MemoryBytes: 24683652 * 1024}},
			wantNUMA:  Warn, wantSockets: 1, wantCores: 2, wantThreads: 1, wantLogical: 2,
			wantDevice: "vda", wantPartition: "vda1", wantDisks: 1, wantModel: "virtio_blk",
			wantAIO: Pass, wantFIOJobs: 2, wantVirt: "QEMU Standard PC (Q35 + ICH9, 2009)", wantMicrocode: "0x1000065",
			wantVulnerable:  []string{"retbleed"},
			wantIOUringNote: "kernel.io_uring_disabled absent",
			wantIRQCPUs:     "1", wantIRQDetail: "; vda's completions interrupt CPU 1 (IRQ 25 virtio2-req.0)",
			wantQueue: ", 1 hardware queue(s) taking 128 requests at once",
			wantParagraph: "Host — 1× AMD EPYC 7B13 (2 cores × 1 thread/socket, 2 logical CPUs, 1 NUMA node), ~24 GB; " +
				"1× virtio_blk 275 GB virtio disk (/dev/vda, ext4); Debian GNU/Linux 12 (bookworm), kernel 6.1.0-18-amd64, " +
				"virtual machine (QEMU Standard PC (Q35 + ICH9, 2009)); fs.aio-max-nr = 65536. " +
				"fio random-read ceiling on this disk: 8.24 M IOPS at 4 K and 8.20 M IOPS at 512 B (the best of a depth sweep over 64–4096 reads in flight: 2 jobs × QD1024, io_uring, O_DIRECT, 8 files).",
			wantLine: "1× AMD EPYC 7B13, 2 logical CPUs, 1 NUMA node, ~24 GB; 1× virtio_blk 275 GB virtio disk (/dev/vda, ext4); kernel 6.1.0-18-amd64, virtual machine",
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
				if facts := diskFacts(d); tt.wantQueue != "" && !strings.HasSuffix(facts, tt.wantQueue) || tt.wantQueue == "" && strings.Contains(facts, "queue") {
					t.Errorf("disk %s facts %q: want its queues said as %q", d.Name, facts, tt.wantQueue)
				}
			}
			if c := mustCheck(t, rep, CheckODirect); c.Status != Pass {
				t.Errorf("got odirect %v (%s), want pass", c.Status, c.Detail)
			}
			if got := formatCPUList(st.InterruptCPUs()); got != tt.wantIRQCPUs {
				t.Errorf("got the disks' interrupts on CPUs %q (%+v), want %q", got, st.Disks, tt.wantIRQCPUs)
			}
			if c := mustCheck(t, rep, CheckODirect); !strings.Contains(c.Detail, tt.wantIRQDetail) || (tt.wantIRQDetail == "" && strings.Contains(c.Detail, "interrupt")) {
				t.Errorf("odirect detail %q: want it to say %q", c.Detail, tt.wantIRQDetail)
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
			if n := SweepSteps(4096, tt.wantFIOJobs); n != len(probes.jobs) {
				t.Errorf("SweepSteps(4096, %d) = %d, want the %d fio runs the sweep made", tt.wantFIOJobs, n, len(probes.jobs))
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
			if got := HostLine(rep); got != tt.wantLine {
				t.Errorf("got host line\n%s\nwant\n%s", got, tt.wantLine)
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
		// The server's libaio contexts follow its completion goroutines,
		// which follow this process's CPUs: 8192 on 2 CPUs, 16384 on 4 or more.
		{"aio short", "vm-host", "proc/sys/fs/aio-max-nr", "1024", false, CheckAIOMaxNr, Fail, fmt.Sprintf("sysctl -w fs.aio-max-nr=%d", AIONeed(64, 64))},
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

// TestDiskFactsQueue: a disk's facts say how many requests it takes at
// once, and how many more its scheduler holds, only where sysfs said so.
func TestDiskFactsQueue(t *testing.T) {
	base := BlockDevice{Name: "vda", LogicalBlockBytes: 512, PhysicalBlockBytes: 512, Model: "virtio_blk"}
	for _, tc := range []struct {
		name                   string
		scheduler              string
		queues, tags, requests int
		want                   string
	}{
		{"none read", "none", 0, 0, 0, "scheduler none"},
		{"no scheduler", "none", 1, 128, 256, "scheduler none, 1 hardware queue(s) taking 128 requests at once"},
		{"mq-deadline", "mq-deadline", 1, 128, 256, "scheduler mq-deadline, 1 hardware queue(s) taking 128 requests at once (256 a queue with the scheduler)"},
		{"nvme", "none", 64, 64 * 1023, 1023, "scheduler none, 64 hardware queue(s) taking 65472 requests at once"},
	} {
		d := base
		d.Scheduler, d.HWQueues, d.QueueTags, d.QueueRequests = tc.scheduler, tc.queues, tc.tags, tc.requests
		if got := diskFacts(d); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%s: got %q, want it to end %q", tc.name, got, tc.want)
		}
	}
}

package hostcheck

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fake /sys, /proc and /etc trees under testdata are written by this
// file: go test ./hostcheck -run TestTreesUpToDate -args -write-trees
var writeTrees = flag.Bool("write-trees", false, "regenerate the fake host trees under testdata")

// fakeTree writes files and relative symlinks below a root.
type fakeTree struct {
	t    *testing.T
	root string
}

func (f fakeTree) file(path, content string) {
	f.t.Helper()
	p := filepath.Join(f.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content+"\n"), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// link makes path a symlink to target, written relative to path's folder
// as sysfs does, so the tree works wherever it is checked out.
func (f fakeTree) link(path, target string) {
	f.t.Helper()
	p := filepath.Join(f.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Dir(path), target)
	if err != nil {
		f.t.Fatal(err)
	}
	os.Remove(p)
	if err := os.Symlink(rel, p); err != nil {
		f.t.Fatal(err)
	}
}

func (f fakeTree) queue(dev string, sectors int64, logical, physical int, rotational int, scheduler string) {
	f.file(dev+"/size", fmt.Sprint(sectors))
	f.file(dev+"/queue/logical_block_size", fmt.Sprint(logical))
	f.file(dev+"/queue/physical_block_size", fmt.Sprint(physical))
	f.file(dev+"/queue/rotational", fmt.Sprint(rotational))
	f.file(dev+"/queue/scheduler", scheduler)
}

func (f fakeTree) cpuinfo(n int, model, microcode, flags string, socketOf, coreOf func(int) int, coresPerSocket int) {
	sockets := map[int]bool{}
	for c := range n {
		sockets[socketOf(c)] = true
	}
	siblings := n / len(sockets)
	var b strings.Builder
	for cpu := range n {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: %s\nstepping\t: 8\nmicrocode\t: %s\ncpu MHz\t\t: 2000.000\ncache size\t: 107520 KB\nphysical id\t: %d\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\nflags\t\t: %s\n\n",
			cpu, model, microcode, socketOf(cpu), siblings, coreOf(cpu), coresPerSocket, flags)
	}
	f.file("proc/cpuinfo", strings.TrimRight(b.String(), "\n"))
}

func (f fakeTree) vulnerabilities(v map[string]string) {
	for k, s := range v {
		f.file("sys/devices/system/cpu/vulnerabilities/"+k, s)
	}
}

// writeReferenceTree is the reference host of the Garnet README: 2 sockets
// of Xeon Platinum 8480CL (56 cores × 2 threads), 224 logical CPUs, 2 NUMA
// nodes, ~2 TB, ext4 on md RAID-0 /dev/md1 over 8 KIOXIA NVMe disks.
func writeReferenceTree(t *testing.T, root string) {
	f := fakeTree{t, root}
	os.RemoveAll(root)
	f.file("etc/os-release", "PRETTY_NAME=\"Ubuntu 24.04.4 LTS\"\nNAME=\"Ubuntu\"\nVERSION_ID=\"24.04\"\nID=ubuntu\nID_LIKE=debian")
	f.file("proc/sys/kernel/hostname", "garnet-ref")
	f.file("proc/sys/kernel/osrelease", "6.8.0-136-generic")
	f.file("proc/sys/kernel/numa_balancing", "0")
	f.file("proc/sys/kernel/io_uring_disabled", "0")
	f.file("proc/sys/fs/aio-max-nr", "4194304")
	f.file("proc/sys/fs/aio-nr", "2048")
	f.file("proc/cmdline", "BOOT_IMAGE=/vmlinuz-6.8.0-136-generic root=/dev/md1 ro intel_iommu=on iommu=pt")
	f.file("proc/meminfo", "MemTotal:       2113408300 kB\nMemFree:        2090000000 kB\nMemAvailable:   2095000000 kB\nBuffers:          100000 kB\nCached:          4000000 kB")
	f.file("proc/self/mountinfo", strings.Join([]string{
		"22 28 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
		"23 28 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw",
		"28 1 9:1 / / rw,relatime shared:1 - ext4 /dev/md1 rw,stripe=1024",
		"30 24 0:25 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,inode64",
	}, "\n"))
	// CPUs 0-55 are socket 0 thread 0, 56-111 socket 1 thread 0, 112-167
	// socket 0 thread 1 and 168-223 socket 1 thread 1, as Linux numbers them.
	socket := func(c int) int { return (c / 56) % 2 }
	core := func(c int) int { return c % 56 }
	f.cpuinfo(224, "Intel(R) Xeon(R) Platinum 8480CL", "0x2b000603", "fpu vme de pse tsc msr pae mce cx8 apic sep ht avx512f", socket, core, 56)
	f.file("sys/devices/system/node/online", "0-1")
	f.file("sys/devices/system/node/possible", "0-1")
	f.file("sys/devices/system/node/node0/cpulist", "0-55,112-167")
	f.file("sys/devices/system/node/node1/cpulist", "56-111,168-223")
	f.file("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1056704150 kB\nNode 0 MemFree:        1040000000 kB")
	f.file("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       1056704150 kB\nNode 1 MemFree:        1040000000 kB")
	f.file("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance")
	f.file("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
	f.file("sys/class/dmi/id/sys_vendor", "Supermicro")
	f.file("sys/class/dmi/id/product_name", "SYS-421GE-TNRT")
	f.vulnerabilities(map[string]string{
		"meltdown":             "Not affected",
		"spectre_v1":           "Mitigation: usercopy/swapgs barriers and __user pointer sanitization",
		"spectre_v2":           "Mitigation: Enhanced / Automatic IBRS; IBPB: conditional; RSB filling; PBRSB-eIBRS: SW sequence; BHI: BHI_DIS_S",
		"spec_store_bypass":    "Mitigation: Speculative Store Bypass disabled via prctl",
		"mds":                  "Not affected",
		"gather_data_sampling": "Not affected",
	})
	md := "sys/devices/virtual/block/md1"
	const diskSectors = 7501476528 // 3.84 TB
	f.queue(md, 8*diskSectors, 512, 4096, 0, "none")
	f.file(md+"/md/level", "raid0")
	f.file(md+"/md/chunk_size", "524288")
	f.file(md+"/md/raid_disks", "8")
	f.file(md+"/dev", "9:1")
	f.link("sys/class/block/md1", md)
	f.link("sys/block/md1", md)
	for i := range 8 {
		// Real sysfs names PCI devices pci0000:10/0000:11:00.0; the fake tree
		// drops the colons, which Go module zips refuse in file names.
		pci := fmt.Sprintf("sys/devices/pci0000_%02x/0000_%02x_00.0", 0x10*(i+1), 0x10*(i+1)+1)
		ctrl := fmt.Sprintf("%s/nvme/nvme%d", pci, i)
		ns := fmt.Sprintf("%s/nvme%dn1", ctrl, i)
		f.file(ctrl+"/model", "KIOXIA KCM6DRUL3T84")
		f.file(ctrl+"/firmware_rev", "0106")
		f.file(ctrl+"/serial", fmt.Sprintf("X2G0A00%dTF9R", i))
		f.queue(ns, diskSectors, 512, 4096, 0, "[none] mq-deadline")
		f.link(ns+"/device", ctrl)
		f.link(fmt.Sprintf("sys/block/nvme%dn1", i), ns)
		f.file(ns+"/dev", fmt.Sprintf("259:%d", i))
		f.link(fmt.Sprintf("sys/class/block/nvme%dn1", i), ns)
		f.link(fmt.Sprintf("%s/slaves/nvme%dn1", md, i), ns)
	}
}

// writeVMTree is a one-node cloud VM like the build machine: 2 vCPUs, a
// virtio disk with the root filesystem on its first partition, an older
// kernel without io_uring_disabled, no cpufreq.
func writeVMTree(t *testing.T, root string) {
	f := fakeTree{t, root}
	os.RemoveAll(root)
	f.file("etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\nID=debian")
	f.file("proc/sys/kernel/hostname", "vm-1")
	f.file("proc/sys/kernel/osrelease", "6.1.0-18-amd64")
	f.file("proc/sys/kernel/numa_balancing", "0")
	f.file("proc/sys/fs/aio-max-nr", "65536")
	f.file("proc/sys/fs/aio-nr", "0")
	f.file("proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=0b4c ro console=ttyS0")
	f.file("proc/meminfo", "MemTotal:       24683652 kB\nMemFree:        20000000 kB\nMemAvailable:   23000000 kB")
	f.file("proc/self/mountinfo", strings.Join([]string{
		"22 27 0:21 / /proc rw,relatime - proc proc rw",
		"27 1 253:1 / / rw,relatime - ext4 /dev/vda1 rw,discard,errors=remount-ro",
		"30 24 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24683652k",
	}, "\n"))
	f.cpuinfo(2, "AMD EPYC 7B13", "0x1000065", "fpu vme de pse tsc msr pae ht hypervisor avx2", func(int) int { return 0 }, func(c int) int { return c }, 2)
	f.file("sys/devices/system/node/online", "0")
	f.file("sys/devices/system/node/node0/cpulist", "0-1")
	f.file("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       24683652 kB\nNode 0 MemFree:        20000000 kB")
	f.file("sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
	f.file("sys/class/dmi/id/sys_vendor", "QEMU")
	f.file("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)")
	f.vulnerabilities(map[string]string{
		"meltdown":   "Not affected",
		"spectre_v2": "Mitigation: Retpolines; IBPB: conditional; STIBP: disabled; RSB filling",
		"retbleed":   "Vulnerable",
	})
	vda := "sys/devices/pci0000_00/0000_00_04.0/virtio2/block/vda"
	f.queue(vda, 536870912, 512, 512, 1, "[none] mq-deadline")
	// One blk-mq hardware queue of 128 tags, as on the test VM.
	f.file(vda+"/mq/0/nr_tags", "128")
	f.file(vda+"/queue/nr_requests", "256")
	// What its driver holds under load, as on the test VM: its virtio ring
	// takes 85 reads at once, fewer than the tags.
	f.file(vda+"/inflight", "      85        0")
	f.file(vda+"/vda1/partition", "1")
	f.file(vda+"/vda1/size", "536868864")
	f.link(vda+"/device", "sys/devices/pci0000_00/0000_00_04.0/virtio2")
	f.link("sys/devices/pci0000_00/0000_00_04.0/virtio2/driver", "sys/bus/virtio/drivers/virtio_blk")
	f.file("sys/bus/virtio/drivers/virtio_blk/uevent", "DRIVER=virtio_blk")
	f.link("sys/block/vda", vda)
	f.file(vda+"/dev", "253:0")
	f.file(vda+"/vda1/dev", "253:1")
	f.link("sys/class/block/vda", vda)
	f.link("sys/class/block/vda1", vda+"/vda1")
	// The PCI function's two MSI-X vectors, as on the test VM: the config
	// interrupt (no completions) and the one request queue's, on CPU 1.
	for irq, name := range map[string]string{"24": "virtio2-config", "25": "virtio2-req.0"} {
		f.file("sys/devices/pci0000_00/0000_00_04.0/msi_irqs/"+irq, "msix")
		f.file("sys/kernel/irq/"+irq+"/actions", name)
	}
	f.file("proc/irq/24/effective_affinity_list", "0")
	f.file("proc/irq/25/effective_affinity_list", "1")
	f.file("proc/irq/25/smp_affinity_list", "0-1")
}

// TestTreesUpToDate regenerates both fake trees in a temporary directory and
// compares them with the committed ones, so a change to the generator that
// is not written to testdata fails here. With -write-trees it rewrites
// testdata instead.
func TestTreesUpToDate(t *testing.T) {
	trees := []struct {
		name  string
		write func(*testing.T, string)
	}{
		{"reference-host", writeReferenceTree},
		{"vm-host", writeVMTree},
	}
	for _, tree := range trees {
		committed := filepath.Join("testdata", tree.name)
		if *writeTrees {
			tree.write(t, committed)
			continue
		}
		fresh := filepath.Join(t.TempDir(), tree.name)
		tree.write(t, fresh)
		got, err := snapshotTree(committed)
		if err != nil {
			t.Fatalf("read committed tree: %v", err)
		}
		want, err := snapshotTree(fresh)
		if err != nil {
			t.Fatalf("read generated tree: %v", err)
		}
		for path, w := range want {
			if g, ok := got[path]; !ok {
				t.Errorf("%s: got no %s, want %q (go test ./hostcheck -run TestTreesUpToDate -args -write-trees)", committed, path, w)
			} else if g != w {
				t.Errorf("%s/%s: got %q, want %q (regenerate with -write-trees)", committed, path, g, w)
			}
		}
		for path := range got {
			if _, ok := want[path]; !ok {
				t.Errorf("%s: got %s, which the generator no longer writes", committed, path)
			}
		}
	}
}

// snapshotTree maps every file and symlink below root to its content or
// "-> target".
func snapshotTree(root string) (map[string]string, error) {
	snap := map[string]string{}
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			snap[rel] = "-> " + target
		case info.Mode().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			snap[rel] = string(b)
		}
		return nil
	})
	return snap, err
}

package hostcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DiskInterrupt is one of a disk's queue interrupts as the kernel routes
// it. A read's completion interrupts these CPUs; a reader waiting on
// another CPU is then woken across CPUs (an inter-processor interrupt,
// a VM exit on a virtual machine). On the 2-CPU test VM, moving the
// disk's one interrupt onto a pinned server's CPU cut the server's own p99
// at a fixed rate well beyond the noise
// (docs/notes/2026-12-07-comment-figures.md has the figures); where it
// lands is the host's setting, which tierbench reports and never changes.
type DiskInterrupt struct {
	IRQ  int    `json:"irq"`
	Name string `json:"name"` // /sys/kernel/irq/N/actions: "virtio1-req.0", "nvme0q3"
	// CPUs is /proc/irq/N/effective_affinity_list, where the interrupt
	// is delivered (smp_affinity_list, where it may be, on kernels
	// without it); "" when neither could be read.
	CPUs string `json:"cpus"`
}

// pciLevels is how far above a disk's sysfs directory its PCI function
// may sit: virtio (vda → block → virtio1 → 0000:00:02.0) and NVMe
// (nvme0n1 → nvme0 → nvme → 0000:00:04.0) are three levels.
const pciLevels = 4

// diskInterrupts lists the queue interrupts of the PCI function above the
// disk at sysfs directory dir: its msi_irqs, without the ones that carry
// no I/O completions (virtio's config change, NVMe's admin queue q0).
// Nil for a disk with no MSI function above it (md, dm, a loop device).
func (t tree) diskInterrupts(dir string) []DiskInterrupt {
	fn := dir
	for range pciLevels {
		fn = filepath.Dir(fn)
		if _, err := os.Stat(filepath.Join(fn, "msi_irqs")); err == nil {
			break
		}
	}
	entries, err := os.ReadDir(filepath.Join(fn, "msi_irqs"))
	if err != nil {
		return nil
	}
	var out []DiskInterrupt
	for _, e := range entries {
		irq, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		name, _ := t.string(fmt.Sprintf("/sys/kernel/irq/%d/actions", irq))
		if !queueInterrupt(name) {
			continue
		}
		cpus, err := t.string(fmt.Sprintf("/proc/irq/%d/effective_affinity_list", irq))
		if err != nil || cpus == "" {
			cpus, _ = t.string(fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq))
		}
		out = append(out, DiskInterrupt{IRQ: irq, Name: name, CPUs: cpus})
	}
	slices.SortFunc(out, func(a, b DiskInterrupt) int { return a.IRQ - b.IRQ })
	return out
}

// queueInterrupt reports whether an interrupt named name (its actions,
// "" when unused) completes I/O: not virtio's config-change interrupt,
// not NVMe's admin queue.
func queueInterrupt(name string) bool {
	switch {
	case name == "", strings.HasSuffix(name, "-config"):
		return false
	case strings.HasPrefix(name, "nvme") && strings.HasSuffix(name, "q0"):
		return false
	}
	return true
}

// InterruptCPUs is every CPU the disk's queue interrupts are delivered to;
// nil where none was read.
func (d BlockDevice) InterruptCPUs() []int {
	var all []int
	for _, irq := range d.Interrupts {
		cpus, err := parseCPUList(irq.CPUs)
		if err != nil {
			continue
		}
		all = append(all, cpus...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// InterruptCPUs is every CPU any of the data dir's physical disks
// interrupts on completion; nil where none was read.
func (s Storage) InterruptCPUs() []int {
	var all []int
	for _, d := range s.Disks {
		all = append(all, d.InterruptCPUs()...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// interruptPhrase says where the disk's completions interrupt: each
// interrupt for up to three, a count and the CPUs for more; "" when
// none were read.
func interruptPhrase(d BlockDevice) string {
	switch n := len(d.Interrupts); {
	case n == 0:
		return ""
	case n <= 3:
		var parts []string
		for _, irq := range d.Interrupts {
			parts = append(parts, fmt.Sprintf("CPU %s (IRQ %d %s)", cpusOrUnknown(irq.CPUs), irq.IRQ, irq.Name))
		}
		return "completions interrupt " + strings.Join(parts, ", ")
	default:
		return fmt.Sprintf("completions interrupt %d queues' IRQs on CPUs %s", n, cpusOrUnknown(formatCPUList(d.InterruptCPUs())))
	}
}

// cpusOrUnknown is a CPU list, or "unknown" where it was not read.
func cpusOrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

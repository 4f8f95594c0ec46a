package hostcheck

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"
)

// Fingerprint is everything needed to say exactly what the host was.
type Fingerprint struct {
	Time      time.Time `json:"time"`
	Tierbench Build     `json:"tierbench"`

	Hostname        string `json:"hostname"`
	OS              string `json:"os"` // PRETTY_NAME of /etc/os-release
	Platform        string `json:"platform"`
	PlatformVersion string `json:"platform_version"`
	Kernel          string `json:"kernel"`
	KernelCmdline   string `json:"kernel_cmdline"`
	Virtualization  string `json:"virtualization"` // "none" on bare metal

	CPUModel       string     `json:"cpu_model"`
	Microcode      string     `json:"microcode"`
	Sockets        int        `json:"sockets"`
	CoresPerSocket int        `json:"cores_per_socket"`
	ThreadsPerCore int        `json:"threads_per_core"`
	LogicalCPUs    int        `json:"logical_cpus"`
	NUMANodes      []NUMANode `json:"numa_nodes"`
	NUMABalancing  string     `json:"numa_balancing"` // kernel.numa_balancing
	MemoryBytes    int64      `json:"memory_bytes"`
	Governor       string     `json:"cpu_governor"`
	THP            string     `json:"transparent_hugepages"`
	// Vulnerabilities maps each file of /sys/devices/system/cpu/vulnerabilities
	// to its one-line state.
	Vulnerabilities map[string]string `json:"vulnerabilities"`

	Storage Storage     `json:"storage"`
	AIO     AIOBudget   `json:"aio"`
	IOUring string      `json:"io_uring"` // "available", or why not
	Docker  *DockerInfo `json:"docker"`   // nil when unreachable

	// Gaps names what could not be read, and where.
	Gaps []string `json:"gaps,omitempty"`
}

// Build is tierbench's own version, from the Go build info.
type Build struct {
	Module    string `json:"module_version"`
	Revision  string `json:"vcs_revision"`
	Dirty     bool   `json:"vcs_modified"`
	GoVersion string `json:"go_version"`
}

func readBuild() Build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{Module: "unknown"}
	}
	b := Build{Module: info.Main.Version, GoVersion: info.GoVersion}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Dirty = s.Value == "true"
		}
	}
	return b
}

// psutilContext points gopsutil at the tree instead of the real /proc,
// /sys and /etc.
func (t tree) psutilContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, common.EnvKey, common.EnvMap{
		common.HostProcEnvKey: t.path("/proc"),
		common.HostSysEnvKey:  t.path("/sys"),
		common.HostEtcEnvKey:  t.path("/etc"),
	})
}

// fingerprint reads the host facts that do not come from a check. Each
// unreadable fact leaves a gap that names its file.
func (t tree) fingerprint(ctx context.Context, fp *Fingerprint) {
	gap := func(err error) {
		if err != nil {
			fp.Gaps = append(fp.Gaps, err.Error())
		}
	}
	var err error
	fp.Tierbench = readBuild()
	fp.Hostname, err = t.string("/proc/sys/kernel/hostname")
	gap(err)
	fp.Kernel, err = t.string("/proc/sys/kernel/osrelease")
	gap(err)
	fp.KernelCmdline, err = t.string("/proc/cmdline")
	gap(err)
	fp.OS, err = t.osPrettyName()
	gap(err)
	pctx := t.psutilContext(ctx)
	if p, _, v, err := host.PlatformInformationWithContext(pctx); err == nil {
		fp.Platform, fp.PlatformVersion = p, v
	} else {
		gap(fmt.Errorf("platform from %s: %w", t.where("/etc/os-release"), err))
	}

	infos, err := cpu.InfoWithContext(pctx)
	if err != nil || len(infos) == 0 {
		gap(fmt.Errorf("cpu info from %s: %v (%d CPUs)", t.where("/proc/cpuinfo"), err, len(infos)))
	} else {
		fp.CPUModel, fp.Microcode = infos[0].ModelName, infos[0].Microcode
		fp.LogicalCPUs = len(infos)
		sockets := map[string]bool{}
		cores := map[string]bool{}
		for _, c := range infos {
			sockets[c.PhysicalID] = true
			cores[c.PhysicalID+"/"+c.CoreID] = true
		}
		fp.Sockets = len(sockets)
		fp.CoresPerSocket = len(cores) / fp.Sockets
		if len(cores) > 0 {
			fp.ThreadsPerCore = fp.LogicalCPUs / len(cores)
		}
	}
	fp.Virtualization = t.virtualization(infos)

	if vm, err := mem.VirtualMemoryWithContext(pctx); err == nil {
		fp.MemoryBytes = int64(vm.Total)
	} else {
		gap(fmt.Errorf("memory from %s: %w", t.where("/proc/meminfo"), err))
	}
	fp.NUMABalancing, err = t.string("/proc/sys/kernel/numa_balancing")
	gap(err)
	if t.exists("/sys/devices/system/cpu/cpu0/cpufreq") {
		fp.Governor, err = t.string("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
		gap(err)
	} else {
		fp.Governor = "none (no cpufreq)"
	}
	if thp, err := t.string("/sys/kernel/mm/transparent_hugepage/enabled"); err == nil {
		fp.THP = activeScheduler(thp)
	} else {
		gap(err)
	}
	fp.Vulnerabilities, err = t.vulnerabilities()
	gap(err)
}

// osPrettyName reads PRETTY_NAME from /etc/os-release.
func (t tree) osPrettyName() (string, error) {
	const p = "/etc/os-release"
	f, err := os.Open(t.path(p))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", t.where(p), err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read %s: %w", t.where(p), err)
	}
	return "", fmt.Errorf("read %s: no PRETTY_NAME line", t.where(p))
}

// virtualization names the hypervisor: from /sys/hypervisor/type, the DMI
// vendor, or the cpuinfo "hypervisor" flag; "none" when all are silent.
// (gopsutil's detection caches one answer per process, which a fake tree
// cannot use.)
func (t tree) virtualization(infos []cpu.InfoStat) string {
	if v, err := t.string("/sys/hypervisor/type"); err == nil && v != "" {
		return v
	}
	guest := false
	if len(infos) > 0 {
		for _, f := range infos[0].Flags {
			if f == "hypervisor" {
				guest = true
			}
		}
	}
	vendor, _ := t.string("/sys/class/dmi/id/sys_vendor")
	product, _ := t.string("/sys/class/dmi/id/product_name")
	for _, known := range []string{"QEMU", "KVM", "VMware", "Xen", "Amazon EC2", "Google", "Microsoft Corporation", "innotek", "Firecracker"} {
		if strings.Contains(vendor+" "+product, known) {
			return strings.TrimSpace(vendor + " " + product)
		}
	}
	if guest {
		// Firecracker has no DMI tables; its init leaves its name on the
		// kernel command line.
		if cmdline, err := t.string("/proc/cmdline"); err == nil && strings.Contains(cmdline, "firecracker") {
			return "Firecracker"
		}
		return "unidentified hypervisor"
	}
	return "none"
}

func (t tree) vulnerabilities() (map[string]string, error) {
	const dir = "/sys/devices/system/cpu/vulnerabilities"
	entries, err := os.ReadDir(t.path(dir))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", t.where(dir), err)
	}
	out := map[string]string{}
	for _, e := range entries {
		v, err := t.string(filepath.Join(dir, e.Name()))
		if err != nil {
			return out, err
		}
		out[e.Name()] = v
	}
	return out, nil
}

// vulnerableCount counts entries not reported as mitigated or unaffected.
func vulnerableCount(v map[string]string) (names []string) {
	for k, s := range v {
		if strings.HasPrefix(s, "Vulnerable") {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

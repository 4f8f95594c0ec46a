package hostcheck

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

func writeJSON(w io.Writer, rep Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("hostcheck: write JSON report: %w", err)
	}
	return nil
}

// detailWidth is where the detail column wraps, so the table stays
// readable in a terminal.
const detailWidth = 100

func writeText(w io.Writer, rep Report) error {
	table := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithColumnWidths(tw.NewMapper[int, int]().Set(2, detailWidth)),
	)
	table.Header("check", "status", "detail")
	for _, c := range rep.Checks {
		if err := table.Append(c.Name, strings.ToUpper(c.Status.String()), c.Detail); err != nil {
			return fmt.Errorf("hostcheck: table row %s: %w", c.Name, err)
		}
	}
	if err := table.Render(); err != nil {
		return fmt.Errorf("hostcheck: render table: %w", err)
	}
	_, err := fmt.Fprintf(w, "\n%s\n", HostParagraph(rep))
	if len(rep.Fingerprint.Gaps) > 0 && err == nil {
		_, err = fmt.Fprintf(w, "\nNot recorded: %s\n", strings.Join(rep.Fingerprint.Gaps, "; "))
	}
	if err != nil {
		return fmt.Errorf("hostcheck: write report: %w", err)
	}
	return nil
}

var trademark = regexp.MustCompile(`\((R|TM|r|tm)\)|\bCPU\b|@.*$|\b\d+-Core Processor\b`)

// cpuName shortens a /proc/cpuinfo model name the way people write it:
// "Intel(R) Xeon(R) Platinum 8480CL" becomes "Intel Xeon Platinum 8480CL".
func cpuName(model string) string {
	s := trademark.ReplaceAllString(model, "")
	return strings.Join(strings.Fields(s), " ")
}

// HostLine is the host in one line, for the head of a report: CPUs,
// NUMA nodes and memory, the storage under the data dir and the kernel,
// with "virtual machine" where it is one. HostParagraph says the rest.
func HostLine(rep Report) string {
	fp := rep.Fingerprint
	nodes := "1 NUMA node"
	if n := len(fp.NUMANodes); n != 1 {
		nodes = fmt.Sprintf("%d NUMA nodes", n)
	}
	s := fmt.Sprintf("%d× %s, %d logical CPUs, %s, ~%s", fp.Sockets, cpuName(fp.CPUModel), fp.LogicalCPUs, nodes, roughBytes(fp.MemoryBytes))
	if st := storagePhrase(fp.Storage); st != "" {
		s += "; " + st
	}
	s += "; kernel " + fp.Kernel
	if fp.Virtualization != "" && fp.Virtualization != "none" {
		s += ", virtual machine"
	}
	return s
}

// HostParagraph writes the fingerprint in the reference's style: CPUs and
// topology, memory, the storage under the data dir, OS and kernel, the aio
// budget and the fio ceiling.
func HostParagraph(rep Report) string {
	fp := rep.Fingerprint
	var b strings.Builder
	b.WriteString("Host — ")
	nodes := len(fp.NUMANodes)
	plural := "s"
	if nodes == 1 {
		plural = ""
	}
	threads := "threads"
	if fp.ThreadsPerCore == 1 {
		threads = "thread"
	}
	fmt.Fprintf(&b, "%d× %s (%d cores × %d %s/socket, %d logical CPUs, %d NUMA node%s), ~%s",
		fp.Sockets, cpuName(fp.CPUModel), fp.CoresPerSocket, fp.ThreadsPerCore, threads, fp.LogicalCPUs, nodes, plural, roughBytes(fp.MemoryBytes))
	if s := storagePhrase(fp.Storage); s != "" {
		b.WriteString("; " + s)
	}
	fmt.Fprintf(&b, "; %s, kernel %s", fp.OS, fp.Kernel)
	if fp.Virtualization != "" && fp.Virtualization != "none" {
		fmt.Fprintf(&b, ", virtual machine (%s)", fp.Virtualization)
	}
	fmt.Fprintf(&b, "; fs.aio-max-nr = %d.", fp.AIO.MaxNr)
	if f := rep.FIO; f != nil && len(f.Results) > 0 {
		where := "this disk"
		if d := fp.Storage.Device; d != nil && d.RAIDLevel != "" {
			where = "this array"
		}
		var parts []string
		for i := len(f.Results) - 1; i >= 0; i-- { // 4 K first, as the reference writes it
			r := f.Results[i]
			parts = append(parts, fmt.Sprintf("%s IOPS at %s", countLabel(r.IOPS), shortBlock(r.BlockBytes)))
		}
		depth := ""
		if n := len(f.Sweep); n > 0 {
			depth = fmt.Sprintf("the best of a depth sweep over %d–%d reads in flight: ", f.Sweep[0].Depth, f.Sweep[n-1].Depth)
		}
		fmt.Fprintf(&b, " fio random-read ceiling on %s: %s (%s%d jobs × QD%d, %s, O_DIRECT, %d files).",
			where, strings.Join(parts, " and "), depth, f.Jobs, f.IODepth, f.Engine, f.Files)
	} else {
		b.WriteString(" fio random-read ceiling not measured (run preflight with --fio).")
	}
	return b.String()
}

// storagePhrase: "8× KIOXIA KCM6DRUL3T84 3.84 TB NVMe in Linux md RAID-0
// (/dev/md1, 512 KB chunks, ext4, ≈30.7 TB)".
func storagePhrase(s Storage) string {
	d := s.Device
	if d == nil {
		if s.FSType == "" {
			return ""
		}
		return fmt.Sprintf("data dir on %s (no block device)", s.FSType)
	}
	disks := s.Disks
	if len(disks) == 0 {
		disks = []BlockDevice{*d}
	}
	first := disks[0]
	same := true
	for _, x := range disks[1:] {
		if x.Model != first.Model || x.SizeBytes != first.SizeBytes {
			same = false
		}
	}
	kind := "SSD"
	switch {
	case strings.HasPrefix(first.Name, "nvme"):
		kind = "NVMe"
	case strings.HasPrefix(first.Name, "vd"):
		kind = "virtio disk"
	case first.Rotational:
		kind = "HDD"
	}
	var what string
	if same {
		what = fmt.Sprintf("%d× %s %s %s", len(disks), orUnknown(first.Model), decimalBytes(first.SizeBytes), kind)
	} else {
		what = fmt.Sprintf("%d mixed disks", len(disks))
	}
	if d.RAIDLevel != "" {
		level := strings.ToUpper(strings.Replace(d.RAIDLevel, "raid", "RAID-", 1))
		return fmt.Sprintf("%s in Linux md %s (/dev/%s, %s chunks, %s, ≈%s)", what, level, d.Name,
			strings.TrimSuffix(strings.Replace(humanBytes(d.ChunkBytes), "KiB", "KB", 1), ".0"), s.FSType, decimalBytes(d.SizeBytes))
	}
	if d.DMName != "" {
		return fmt.Sprintf("%s under device-mapper %s (/dev/%s, %s, ≈%s)", what, d.DMName, d.Name, s.FSType, decimalBytes(d.SizeBytes))
	}
	return fmt.Sprintf("%s (/dev/%s, %s)", what, d.Name, s.FSType)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown-model"
	}
	return s
}

// decimalBytes writes a disk size the way vendors label disks: "3.84 TB".
func decimalBytes(n int64) string {
	v := float64(n)
	for _, u := range []struct {
		div  float64
		name string
	}{{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}} {
		if v >= u.div {
			return trimZeros(fmt.Sprintf("%.3g", v/u.div)) + " " + u.name
		}
	}
	return fmt.Sprintf("%d B", n)
}

func trimZeros(s string) string {
	if strings.Contains(s, "e") {
		return s
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// roughBytes writes memory as the reference does: "~2 TB", "~24 GB"
// (binary units under decimal names, as DIMMs are sold).
func roughBytes(n int64) string {
	gib := float64(n) / (1 << 30)
	if gib >= 1000 {
		return fmt.Sprintf("%.0f TB", math.Round(gib/1024))
	}
	return fmt.Sprintf("%.0f GB", math.Round(gib))
}

// countLabel writes an operation rate as the reference's table does:
// "8.24 M", "121.3 K".
func countLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f K", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func blockLabel(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

// shortBlock is the reference's "4 K" / "512 B".
func shortBlock(n int) string {
	if n >= 1024 && n%1024 == 0 {
		return fmt.Sprintf("%d K", n/1024)
	}
	return fmt.Sprintf("%d B", n)
}

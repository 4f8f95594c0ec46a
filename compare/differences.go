package compare

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/results"
)

// noFingerprint stands for a field of a bundle without a fingerprint
// (its preflight failed, or the file is missing).
const noFingerprint = "(no fingerprint)"

// hostField is one fingerprint fact a reader needs to judge whether two
// numbers can differ for reasons other than the code.
type hostField struct {
	name string
	get  func(*hostcheck.Fingerprint) string
}

var hostFields = []hostField{
	{"hostname", func(f *hostcheck.Fingerprint) string { return f.Hostname }},
	{"CPU model", func(f *hostcheck.Fingerprint) string { return f.CPUModel }},
	{"microcode", func(f *hostcheck.Fingerprint) string { return f.Microcode }},
	{"logical CPUs", func(f *hostcheck.Fingerprint) string { return strconv.Itoa(f.LogicalCPUs) }},
	{"NUMA nodes", func(f *hostcheck.Fingerprint) string { return strconv.Itoa(len(f.NUMANodes)) }},
	{"memory", func(f *hostcheck.Fingerprint) string { return fmt.Sprintf("%.1f GiB", float64(f.MemoryBytes)/(1<<30)) }},
	{"virtualization", func(f *hostcheck.Fingerprint) string { return f.Virtualization }},
	{"OS", func(f *hostcheck.Fingerprint) string { return f.OS }},
	{"kernel", func(f *hostcheck.Fingerprint) string { return f.Kernel }},
	{"mitigations", mitigations},
	{"disk model", func(f *hostcheck.Fingerprint) string {
		return DiskFacts(f, func(d hostcheck.BlockDevice) string { return d.Model })
	}},
	{"disk firmware", func(f *hostcheck.Fingerprint) string {
		return DiskFacts(f, func(d hostcheck.BlockDevice) string { return d.FirmwareRev })
	}},
	{"I/O scheduler", func(f *hostcheck.Fingerprint) string {
		return DiskFacts(f, func(d hostcheck.BlockDevice) string { return d.Scheduler })
	}},
	{"filesystem", func(f *hostcheck.Fingerprint) string {
		return strings.TrimSpace(f.Storage.FSType + " on " + f.Storage.Source)
	}},
	{"fs.aio-max-nr", func(f *hostcheck.Fingerprint) string { return strconv.FormatInt(f.AIO.MaxNr, 10) }},
	{"transparent hugepages", func(f *hostcheck.Fingerprint) string { return f.THP }},
	{"CPU governor", func(f *hostcheck.Fingerprint) string { return f.Governor }},
	{"NUMA balancing", func(f *hostcheck.Fingerprint) string { return f.NUMABalancing }},
	{"io_uring", func(f *hostcheck.Fingerprint) string { return f.IOUring }},
	{"Docker", func(f *hostcheck.Fingerprint) string {
		if f.Docker == nil {
			return "unreachable"
		}
		return fmt.Sprintf("%s (%s, cgroup %s)", f.Docker.Version, f.Docker.StorageDriver, f.Docker.CgroupVersion)
	}},
	{"tierbench version", func(f *hostcheck.Fingerprint) string { return f.Tierbench.Module }},
	{"VCS revision", func(f *hostcheck.Fingerprint) string {
		rev := f.Tierbench.Revision
		if rev == "" {
			rev = "unknown (built without VCS stamping)"
		}
		if f.Tierbench.Dirty {
			rev += " (modified)"
		}
		return rev
	}},
	{"Go version", func(f *hostcheck.Fingerprint) string { return f.Tierbench.GoVersion }},
}

// mitigations is the kernel's mitigations= switch as booted ("auto" when
// the command line does not set it); the per-vulnerability states are
// fields of their own.
func mitigations(f *hostcheck.Fingerprint) string {
	for _, w := range strings.Fields(f.KernelCmdline) {
		if v, ok := strings.CutPrefix(w, "mitigations="); ok {
			return v
		}
	}
	return "auto (not on the kernel command line)"
}

// DiskFacts joins one fact of the data dir's physical disks ("vda: x";
// "—" where the fingerprint has none).
func DiskFacts(f *hostcheck.Fingerprint, get func(hostcheck.BlockDevice) string) string {
	var parts []string
	for _, d := range f.Storage.Disks {
		v := get(d)
		if v == "" {
			v = "—"
		}
		parts = append(parts, d.Name+": "+v)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// fingerprint decodes a bundle's fingerprint.json; nil when it has none.
func fingerprint(o results.Opened) *hostcheck.Fingerprint {
	var fp *hostcheck.Fingerprint
	if len(o.Fingerprint) == 0 || json.Unmarshal(o.Fingerprint, &fp) != nil {
		return nil
	}
	return fp
}

// hostDifferences lists the fingerprint fields whose values are not the
// same in every bundle, each vulnerability state as a field of its own.
func hostDifferences(bundles []Bundle) []Difference {
	fps := make([]*hostcheck.Fingerprint, len(bundles))
	var vulns []string
	for i, b := range bundles {
		fps[i] = fingerprint(b.Opened)
		if fps[i] != nil {
			for k := range fps[i].Vulnerabilities {
				if !slices.Contains(vulns, k) {
					vulns = append(vulns, k)
				}
			}
		}
	}
	slices.Sort(vulns)
	fields := slices.Clone(hostFields)
	for _, k := range vulns {
		fields = append(fields, hostField{"vulnerability " + k, func(f *hostcheck.Fingerprint) string {
			if v, ok := f.Vulnerabilities[k]; ok {
				return v
			}
			return "—"
		}})
	}
	out := []Difference{}
	for _, field := range fields {
		vals := make([]string, len(fps))
		for i, fp := range fps {
			if fp == nil {
				vals[i] = noFingerprint
				continue
			}
			vals[i] = field.get(fp)
		}
		if differ(vals) {
			out = append(out, Difference{Field: field.name, Values: vals})
		}
	}
	return out
}

// workloadField is one flag of `tierbench run` as a plan records it.
type workloadField struct {
	flag string
	get  func(results.Plan) string
}

var workloadFields = []workloadField{
	{"--profile", func(p results.Plan) string { return p.Workload.Profile }},
	{"--dbsize", func(p results.Plan) string { return strconv.FormatInt(p.Workload.DBSize, 10) }},
	{"--keylength", func(p results.Plan) string { return strconv.Itoa(p.Workload.KeyLength) }},
	{"--valuelength", func(p results.Plan) string { return strconv.Itoa(p.Workload.ValueLength) }},
	{"--threads", func(p results.Plan) string { return joinInts(p.Workload.Threads) }},
	{"--batch", func(p results.Plan) string { return strconv.Itoa(p.Workload.Batch) }},
	{"--cell-seconds", func(p results.Plan) string { return strconv.Itoa(p.Workload.CellSeconds) }},
	{"--passes", func(p results.Plan) string { return strconv.Itoa(p.Workload.Passes) }},
	{"--warmup-seconds", func(p results.Plan) string { return strconv.Itoa(p.Workload.WarmupSeconds) }},
	{"--load-threads", func(p results.Plan) string { return strconv.Itoa(p.Workload.LoadThreads) }},
	{"--memory", func(p results.Plan) string { return p.Workload.Memory }},
	{"--page", func(p results.Plan) string { return p.Workload.Page }},
	{"--segment", func(p results.Plan) string { return p.Workload.Segment }},
	{"--index", func(p results.Plan) string { return p.Workload.Index }},
	{"--backends", func(p results.Plan) string { return strings.Join(p.Workload.Backends, ",") }},
	{"--pin", func(p results.Plan) string { return strings.Join(p.Workload.Pins, ",") }},
	{"--runtime", func(p results.Plan) string { return p.Runtime }},
	{"--server-addr", func(p results.Plan) string { return p.Workload.ServerAddr }},
	{"--max-miss-ratio", func(p results.Plan) string { return strconv.FormatFloat(p.MaxMisses, 'g', -1, 64) }},
}

// workloadDifferences lists the run flags whose values are not the same
// in every bundle, scenario by scenario; with more than one scenario, each
// flag is named with its scenario ("--dbsize (memory)").
func workloadDifferences(bundles []Bundle, scenarios []string) []Difference {
	out := []Difference{}
	for _, s := range scenarios {
		for _, f := range workloadFields {
			vals := make([]string, len(bundles))
			for i, b := range bundles {
				if p, ok := b.part(s); ok {
					vals[i] = f.get(p.Opened.Results.Plan)
				} else {
					vals[i] = "(no " + s + " bundle)"
				}
			}
			if differ(vals) {
				field := f.flag
				if len(scenarios) > 1 {
					field += " (" + s + ")"
				}
				out = append(out, Difference{Field: field, Values: vals})
			}
		}
	}
	return out
}

// incomparabilities names each way a bundle's workload differs from the
// first bundle's in what a cell measures, scenario by scenario: the record
// size (a longer value is a larger read) or the key count (a smaller
// dataset caches better).
func incomparabilities(bundles []Bundle, scenarios []string) []string {
	first := bundles[0]
	var out []string
	for _, s := range scenarios {
		p0, ok := first.part(s)
		if !ok {
			continue
		}
		in := ""
		if len(scenarios) > 1 {
			in = " (scenario " + s + ")"
		}
		c0 := p0.Opened.Results.Plan.Workload
		for _, b := range bundles[1:] {
			p, ok := b.part(s)
			if !ok {
				continue
			}
			c := p.Opened.Results.Plan.Workload
			if c.KeyLength != c0.KeyLength || c.ValueLength != c0.ValueLength {
				out = append(out, fmt.Sprintf("record size %d+%d B in %s, %d+%d B in %s%s (--keylength/--valuelength)",
					c0.KeyLength, c0.ValueLength, first.Name, c.KeyLength, c.ValueLength, b.Name, in))
			}
			if c.DBSize != c0.DBSize {
				out = append(out, fmt.Sprintf("--dbsize %d in %s, %d in %s%s", c0.DBSize, first.Name, c.DBSize, b.Name, in))
			}
		}
	}
	return out
}

func differ(vals []string) bool {
	for _, v := range vals[1:] {
		if v != vals[0] {
			return true
		}
	}
	return false
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

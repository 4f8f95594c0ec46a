// Package reproduce judges whether a bundle run again on another host
// (tierbench run --reproduce) reproduced the original, cell by cell.
//
// Two hosts' disks differ, so raw GET/s differ; what must reproduce is
// each cell's share of its own host's fio ceiling. A cell is reproduced
// when the two medians' shares lie within a stated tolerance (in
// percentage points) and the Mann–Whitney U test over the passes' shares
// (compare's statistics, golang.org/x/perf/benchmath) finds no
// significant difference; it differs otherwise, with the direction and
// the evidence; it is not comparable when the two cells do not measure
// the same thing or a share cannot be taken (a different dataset, a
// ceiling not measured, a cell kept out of a table such as a
// memory-served one, pinned rows on different NUMA layouts).
package reproduce

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/tierbench/tierbench/compare"
	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/results"
)

// Verdicts of a cell.
const (
	Reproduced    = "reproduced"
	Differs       = "differs"
	NotComparable = "not comparable"
)

// DefaultTolerance is the largest difference of the two shares of the
// ceiling, in percentage points, a reproduced cell may show.
const DefaultTolerance = 10.0

// Options are run --reproduce's switches of the judgement.
type Options struct {
	// Tolerance in percentage points of each host's ceiling.
	Tolerance float64
}

// Side is one host's figures of a cell.
type Side struct {
	Present  bool    `json:"present"`
	Median   float64 `json:"median_ops_per_sec"`
	Excluded string  `json:"excluded,omitempty"`
	// Ceiling is the fio ceiling the cell is held against on its host
	// (the pinned one for a pinned row); 0 when not measured.
	Ceiling float64 `json:"ceiling_iops,omitempty"`
	// Share is Median ÷ Ceiling; Shares each pass's.
	Share  float64   `json:"share,omitempty"`
	Shares []float64 `json:"pass_shares,omitempty"`
	// CPUPerGet is the cell's server + client CPU per GET; FioPerRead
	// fio's per read (at the cell's depth, else at the ceiling); Ratio
	// the one over the other, 0 where either is missing.
	CPUPerGet  float64 `json:"cpu_us_per_get,omitempty"`
	FioPerRead float64 `json:"fio_cpu_us_per_read,omitempty"`
	Ratio      float64 `json:"cpu_ratio,omitempty"`
	NUMALabel  string  `json:"label"`
}

// Cell is one cell's verdict.
type Cell struct {
	Scenario string `json:"scenario"`
	Row      string `json:"row"` // as a table names it: backend, pin, …
	Threads  int    `json:"threads"`
	Original Side   `json:"original"`
	Here     Side   `json:"here"`
	Verdict  string `json:"verdict"`
	// Why is the evidence: the shares' difference, the test, the
	// direction; or the reason a cell is not comparable.
	Why string `json:"why"`
	// DeltaPoints is Here.Share − Original.Share in percentage points;
	// P the test's p (NaN-free: 1 when untested).
	DeltaPoints float64 `json:"delta_points,omitempty"`
	P           float64 `json:"p,omitempty"`
	Stat        string  `json:"stat,omitempty"`
}

// HostRow is one fingerprint fact of the two hosts.
type HostRow struct {
	Field    string `json:"field"`
	Original string `json:"original"`
	Here     string `json:"here"`
}

// Reproduction is the whole judgement.
type Reproduction struct {
	Original  string    `json:"original"` // the original bundle's directory
	Here      string    `json:"here"`
	Tolerance float64   `json:"tolerance_points"`
	Alpha     float64   `json:"alpha"`
	Hosts     []HostRow `json:"hosts"`
	Cells     []Cell    `json:"cells"`
	// Notes are findings of the whole (unverified bundles, a different
	// dataset, too few passes for the test).
	Notes []string `json:"notes,omitempty"`
}

// Counts is the verdicts by kind.
func (r *Reproduction) Counts() (reproduced, differs, notComparable int) {
	for _, c := range r.Cells {
		switch c.Verdict {
		case Reproduced:
			reproduced++
		case Differs:
			differs++
		default:
			notComparable++
		}
	}
	return
}

// Exit statuses of a reproduction (run --reproduce, when the run itself
// finished): 0 every cell reproduced, 1 a cell differs, 3 none differs
// but some are not comparable, 4 no cell could be compared.
func (r *Reproduction) ExitCode() int {
	rep, diff, nc := r.Counts()
	switch {
	case diff > 0:
		return 1
	case rep == 0:
		return 4
	case nc > 0:
		return 3
	}
	return 0
}

// Judge sets the reproduction here beside the original, scenario by
// scenario (a part of one with no part in the other is not compared).
func Judge(original, here compare.Bundle, opts Options) *Reproduction {
	if opts.Tolerance <= 0 {
		opts.Tolerance = DefaultTolerance
	}
	r := &Reproduction{Original: original.Opened.Dir, Here: here.Opened.Dir, Tolerance: opts.Tolerance, Alpha: benchmath.DefaultThresholds.CompareAlpha}
	r.Hosts = hostRows(original, here)
	for _, b := range []compare.Bundle{original, here} {
		for _, p := range b.Parts {
			switch {
			case p.Tampered != nil:
				r.Notes = append(r.Notes, fmt.Sprintf("UNVERIFIED: %v (read with --unverified)", p.Tampered))
			case p.Unverified != "":
				r.Notes = append(r.Notes, fmt.Sprintf("UNVERIFIED: %s: %s (read with --unverified)", p.Opened.Dir, p.Unverified))
			}
		}
	}
	for _, op := range parts(original) {
		hp, ok := findPart(here, op.Scenario)
		if !ok {
			r.Notes = append(r.Notes, fmt.Sprintf("scenario %s: the reproduction has no bundle of it", op.Scenario))
			continue
		}
		r.judgePart(op, hp)
	}
	return r
}

func parts(b compare.Bundle) []compare.Part {
	if len(b.Parts) > 0 {
		return b.Parts
	}
	return []compare.Part{{Scenario: b.Opened.Results.Plan.Workload.ScenarioName(), Opened: b.Opened}}
}

func findPart(b compare.Bundle, s string) (compare.Part, bool) {
	for _, p := range parts(b) {
		if p.Scenario == s && p.Missing == "" {
			return p, true
		}
	}
	return compare.Part{}, false
}

// datasetDiffers names what makes two workloads measure different data
// or operations; "" when they are the same.
func datasetDiffers(a, b results.Workload) string {
	var d []string
	add := func(name, x, y string) {
		if x != y {
			d = append(d, fmt.Sprintf("%s %s there, %s here", name, x, y))
		}
	}
	add("--dbsize", strconv.FormatInt(a.DBSize, 10), strconv.FormatInt(b.DBSize, 10))
	add("--keylength", strconv.Itoa(a.KeyLength), strconv.Itoa(b.KeyLength))
	add("--valuelength", strconv.Itoa(a.ValueLength), strconv.Itoa(b.ValueLength))
	add("--workload", orGets(a.Mix), orGets(b.Mix))
	add("--key-dist", orUniform(a.KeyDist), orUniform(b.KeyDist))
	add("--batch", strconv.Itoa(a.Batch), strconv.Itoa(b.Batch))
	add("--memory", a.Memory, b.Memory)
	add("--readcache-memory", orOff(a.ReadCacheMemory), orOff(b.ReadCacheMemory))
	return strings.Join(d, "; ")
}

func orGets(s string) string {
	if s == "" {
		return "GETs"
	}
	return s
}

func orUniform(s string) string {
	if s == "" {
		return "uniform"
	}
	return s
}

func orOff(s string) string {
	if s == "" {
		return "off"
	}
	return s
}

// judgePart judges every cell of the original's part o against h's.
func (r *Reproduction) judgePart(o, h compare.Part) {
	ores, hres := o.Opened.Results, h.Opened.Results
	dataset := datasetDiffers(ores.Plan.Workload, hres.Plan.Workload)
	if dataset != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("scenario %s: a different dataset (%s): no cell is comparable", o.Scenario, dataset))
	}
	opasses := results.CountedPasses(ores.Plan, o.Opened.Passes)
	hpasses := results.CountedPasses(hres.Plan, h.Opened.Passes)
	hcells := map[string]results.Cell{}
	for _, c := range hres.Cells {
		hcells[results.CellKey(c.Row, c.Threads)] = c
	}
	tooFew := false
	for _, oc := range ores.Cells {
		k := results.CellKey(oc.Row, oc.Threads)
		c := Cell{Scenario: o.Scenario, Row: rowName(oc.Row), Threads: oc.Threads, P: 1}
		c.Original = side(oc, true, ores, opasses[k])
		hc, ok := hcells[k]
		c.Here = side(hc, ok, hres, hpasses[k])
		reason := ""
		switch {
		case dataset != "":
			reason = "a different dataset: " + dataset
		case oc.Passes == 0:
			reason = "not measured in the original"
		case !ok || hc.Passes == 0:
			reason = "not measured here"
		case oc.Excluded != "":
			reason = "kept out of the original's table: " + oc.Excluded
		case hc.Excluded != "":
			reason = "kept out of this host's table: " + hc.Excluded
		case oc.Row.Pin == results.PinPinned && ores.Plan.Nodes != hres.Plan.Nodes:
			reason = fmt.Sprintf("pinned on %d NUMA node(s) there (%s), %d here (%s): not the same placement", ores.Plan.Nodes, oc.Row.Label, hres.Plan.Nodes, hc.Row.Label)
		case c.Original.Ceiling == 0 && c.Here.Ceiling == 0:
			reason = "no fio ceiling on either host (" + noCeilingWhy(ores.Plan.Workload) + "): no share to compare"
		case c.Original.Ceiling == 0:
			reason = "no fio ceiling on the original host (" + noCeilingWhy(ores.Plan.Workload) + ")"
		case c.Here.Ceiling == 0:
			reason = "no fio ceiling on this host (" + noCeilingWhy(hres.Plan.Workload) + ")"
		}
		if reason != "" {
			c.Verdict, c.Why = NotComparable, reason
			r.Cells = append(r.Cells, c)
			continue
		}
		c.DeltaPoints = 100 * (c.Here.Share - c.Original.Share)
		significant, evidence := false, ""
		if len(c.Original.Shares) > 0 && len(c.Here.Shares) > 0 {
			s1 := benchmath.NewSample(slices.Clone(c.Original.Shares), &benchmath.DefaultThresholds)
			s2 := benchmath.NewSample(slices.Clone(c.Here.Shares), &benchmath.DefaultThresholds)
			cmp := benchmath.AssumeNothing.Compare(s1, s2)
			c.P, c.Stat = cmp.P, cmp.String()
			significant = cmp.P <= cmp.Alpha
			if minP := minTwoSidedP(len(s1.Values), len(s2.Values)); minP > cmp.Alpha {
				tooFew = true
				evidence = fmt.Sprintf("; %s, which %d against %d passes cannot make significant (smallest p %.2f)", c.Stat, len(s1.Values), len(s2.Values), minP)
			} else if significant {
				evidence = "; the passes' shares differ significantly (" + c.Stat + ")"
			} else {
				evidence = "; the passes' shares do not differ significantly (" + c.Stat + ")"
			}
		} else {
			evidence = "; no passes to test (cells.jsonl missing)"
		}
		shares := fmt.Sprintf("%.1f %% of its ceiling here against %.1f %% there (%+.1f points", 100*c.Here.Share, 100*c.Original.Share, c.DeltaPoints)
		within := math.Abs(c.DeltaPoints) <= r.Tolerance
		switch {
		case within && !significant:
			c.Verdict = Reproduced
			c.Why = shares + fmt.Sprintf(", within ±%g)%s", r.Tolerance, evidence)
		default:
			c.Verdict = Differs
			dir := "higher"
			if c.DeltaPoints < 0 {
				dir = "lower"
			}
			beyond := fmt.Sprintf(", beyond ±%g)", r.Tolerance)
			if within {
				beyond = fmt.Sprintf(", within ±%g but significant)", r.Tolerance)
			}
			c.Why = dir + " here: " + shares + beyond + evidence
		}
		r.Cells = append(r.Cells, c)
	}
	if tooFew {
		r.Notes = append(r.Notes, "with this few passes no difference of shares can be significant at α = 0.05: a cell is then judged by the tolerance alone (5 against 5 passes can reach p = 0.008)")
	}
}

// noCeilingWhy says why a workload's cells have no ceiling.
func noCeilingWhy(w results.Workload) string {
	switch {
	case !w.CeilingApplies():
		return "scenario " + w.ScenarioName() + " reads no disk"
	case w.NoFio:
		return "run with --no-fio"
	case w.ServerHost != "" || w.ClientHosts != "":
		// preflightHosts measures no baseline: the image has no fio.
		return "run across hosts, whose image holds no fio"
	}
	return "fio did not measure one"
}

// side is one host's figures of cell c (ok: the bundle has it).
func side(c results.Cell, ok bool, res results.Results, passes []results.PassRecord) Side {
	if !ok {
		return Side{}
	}
	s := Side{Present: true, Median: c.Median, Excluded: c.Excluded, CPUPerGet: c.CPUMicrosPerOp, NUMALabel: c.Row.Label}
	var ceiling results.FioCeiling
	if res.FioCeilings != nil {
		ceiling, _ = res.FioCeilings.For(c.Row)
	}
	s.Ceiling = ceiling.IOPS
	if s.Ceiling == 0 {
		s.Ceiling = res.FioIOPS512
	}
	if !res.Plan.Workload.CeilingApplies() {
		s.Ceiling = 0
	}
	if s.Ceiling > 0 {
		s.Share = c.Median / s.Ceiling
		for _, p := range passes {
			s.Shares = append(s.Shares, p.OpsPerSec/s.Ceiling)
		}
	}
	if f, ok := results.FioCPUFor(res.FioCPU, c.Row, c.Threads); ok {
		s.FioPerRead = f.CPUMicrosPerRead
	} else {
		s.FioPerRead = ceiling.MicrosPerRead
	}
	if s.CPUPerGet > 0 && s.FioPerRead > 0 {
		s.Ratio = s.CPUPerGet / s.FioPerRead
	}
	return s
}

// rowName names a row as the tables do, without its NUMA label (which
// is the host's).
func rowName(r results.Row) string {
	parts := []string{r.Backend, r.Pin}
	if r.Server != "" {
		parts = append(parts, r.Server)
	}
	if r.Batch > 0 {
		parts = append(parts, fmt.Sprintf("-b %d", r.Batch))
	}
	if r.Shards > 1 {
		parts = append(parts, fmt.Sprintf("%d shards", r.Shards))
	}
	if r.Memory != "" {
		parts = append(parts, "memory "+r.Memory)
	}
	if r.ReadCache != "" {
		parts = append(parts, "read cache "+r.ReadCache)
	}
	if r.TLS {
		parts = append(parts, "TLS")
	}
	return strings.Join(parts, " ")
}

// minTwoSidedP is the smallest two-sided p of the Mann–Whitney U test
// with n1 and n2 values and no ties: 2 / C(n1+n2, n1).
func minTwoSidedP(n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return 1
	}
	c := 1.0
	for i := 1; i <= n1; i++ {
		c = c * float64(n2+i) / float64(i)
	}
	return math.Min(1, 2/c)
}

// hostRows are the two fingerprints' facts a reader weighs a
// reproduction by, side by side.
func hostRows(o, h compare.Bundle) []HostRow {
	fo, fh := fingerprint(o.Opened), fingerprint(h.Opened)
	type fact struct {
		name string
		get  func(*hostcheck.Fingerprint) string
	}
	facts := []fact{
		{"hostname", func(f *hostcheck.Fingerprint) string { return f.Hostname }},
		{"CPU", func(f *hostcheck.Fingerprint) string { return f.CPUModel }},
		{"cores", func(f *hostcheck.Fingerprint) string {
			return fmt.Sprintf("%d logical (%d socket(s) × %d cores × %d threads)", f.LogicalCPUs, f.Sockets, f.CoresPerSocket, f.ThreadsPerCore)
		}},
		{"NUMA nodes", func(f *hostcheck.Fingerprint) string { return strconv.Itoa(len(f.NUMANodes)) }},
		{"kernel", func(f *hostcheck.Fingerprint) string { return f.Kernel }},
		{"virtualization", func(f *hostcheck.Fingerprint) string { return f.Virtualization }},
		{"disk model", func(f *hostcheck.Fingerprint) string {
			return compare.DiskFacts(f, func(d hostcheck.BlockDevice) string { return d.Model })
		}},
		{"disk queue", func(f *hostcheck.Fingerprint) string {
			return compare.DiskFacts(f, func(d hostcheck.BlockDevice) string {
				return fmt.Sprintf("%s, %d hw queues × %d tags, nr_requests %d", d.Scheduler, d.HWQueues, d.QueueTags, d.QueueRequests)
			})
		}},
		{"tierbench", func(f *hostcheck.Fingerprint) string {
			rev := f.Tierbench.Revision
			if f.Tierbench.Dirty {
				rev += " (modified)"
			}
			return strings.TrimSpace(f.Tierbench.Module + " " + rev)
		}},
	}
	var out []HostRow
	for _, f := range facts {
		out = append(out, HostRow{Field: f.name, Original: fact1(fo, f.get), Here: fact1(fh, f.get)})
	}
	out = append(out,
		HostRow{Field: "fio ceiling (512 B random reads)", Original: ceilingText(o.Opened.Results), Here: ceilingText(h.Opened.Results)},
		HostRow{Field: "runtime", Original: o.Opened.Results.Plan.Runtime, Here: h.Opened.Results.Plan.Runtime},
		HostRow{Field: "servers", Original: serversText(o.Opened.Results), Here: serversText(h.Opened.Results)},
	)
	return out
}

func fact1(f *hostcheck.Fingerprint, get func(*hostcheck.Fingerprint) string) string {
	if f == nil {
		return "(no fingerprint)"
	}
	if v := get(f); v != "" {
		return v
	}
	return "—"
}

func fingerprint(o results.Opened) *hostcheck.Fingerprint {
	var fp *hostcheck.Fingerprint
	if len(o.Fingerprint) == 0 || json.Unmarshal(o.Fingerprint, &fp) != nil {
		return nil
	}
	return fp
}

func ceilingText(res results.Results) string {
	if res.FioCeilings == nil || res.FioCeilings.Host.IOPS == 0 {
		if res.FioIOPS512 > 0 {
			return fmt.Sprintf("%.0f IOPS", res.FioIOPS512)
		}
		return "not measured"
	}
	s := fmt.Sprintf("%.0f IOPS on the host", res.FioCeilings.Host.IOPS)
	if res.FioCeilings.Host.MicrosPerRead > 0 {
		s += fmt.Sprintf(" (fio %.2f µs CPU per read)", res.FioCeilings.Host.MicrosPerRead)
	}
	if p := res.FioCeilings.Pinned; p.IOPS > 0 {
		s += fmt.Sprintf(", %.0f on the pinned server's CPUs %s", p.IOPS, p.CPUs)
	}
	return s
}

// serversText names each server the bundle measured with its version,
// as its load records say.
func serversText(res results.Results) string {
	var seen []string
	for _, l := range res.Loads {
		name := l.Row.ServerName()
		if l.ServerInfo != nil {
			name = strings.TrimSpace(l.ServerInfo.Name + " " + l.ServerInfo.Version)
		}
		if !slices.Contains(seen, name) {
			seen = append(seen, name)
		}
	}
	if len(seen) == 0 {
		return "—"
	}
	return strings.Join(seen, ", ")
}

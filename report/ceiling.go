package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
	"github.com/tierbench/tierbench/internal/fio"
	"github.com/tierbench/tierbench/internal/human"
	"github.com/tierbench/tierbench/results"
)

// FIOBaseline is the fio baseline of a bundle's preflight.json; nil
// when preflight ran without fio or failed.
func FIOBaseline(preRaw []byte) *hostcheck.FIOBaseline {
	var rep hostcheck.Report
	if len(preRaw) == 0 || json.Unmarshal(preRaw, &rep) != nil {
		return nil
	}
	return rep.FIO
}

// FIOPinned is the fio baseline pinned to the pinned server's CPUs; nil
// when preflight measured none (no pinned row, or a bundle from before).
func FIOPinned(preRaw []byte) *hostcheck.FIOBaseline {
	var rep hostcheck.Report
	if len(preRaw) == 0 || json.Unmarshal(preRaw, &rep) != nil {
		return nil
	}
	return rep.FIOPinned
}

// footprintPhrase says what fio read, for the report.
func footprintPhrase(f *hostcheck.FIOBaseline, c results.Workload) string {
	if f.Footprint == hostcheck.FootprintFioFiles || f.Footprint == "" {
		s := fmt.Sprintf("%d fio files × %s = %s", f.Files, human.Bytes(f.FileBytes), human.Bytes(int64(f.Files)*f.FileBytes))
		data := c.DatasetBytes()
		switch {
		case int64(f.Files)*f.FileBytes >= data:
			s += fmt.Sprintf(", as large as the dataset (%d × %d B = %s)", c.DBSize, results.RecordBytes(c.KeyLength, c.ValueLength), human.Bytes(data))
		default:
			s += fmt.Sprintf(", **smaller than the dataset** (%s): caches may serve part of fio's reads, so the ceiling may be too high", human.Bytes(data))
		}
		return s
	}
	return fmt.Sprintf("%s (%s)", f.Footprint, human.Bytes(f.FootprintBytes))
}

// renderCurve writes the fio depth curve of one preflight baseline, with
// fio's own CPU at each point.
func renderCurve(b *strings.Builder, f *hostcheck.FIOBaseline, c results.Workload) {
	if f == nil || len(f.Sweep) == 0 {
		return
	}
	where := ""
	if f.CPUs != "" {
		where = fmt.Sprintf(", every job pinned to the pinned server's CPUs %s", f.CPUs)
		if f.Mems != "" {
			where += " and memory node(s) " + f.Mems
		}
	}
	if f.Registered {
		where += ", files and buffers registered with the ring"
	}
	switch {
	case f.Batched:
		where += fmt.Sprintf(", up to %d reads submitted and reaped per call", fio.BatchReads)
	case f.Registered:
		where += ", up to 32 reads per submission"
	}
	fmt.Fprintf(b, "fio depth curve (%s, %s, 512 B random read, O_DIRECT, %d s per step%s) over %s, up to the server's %d reads in flight.\n\n",
		f.Version, f.Engine, f.RuntimeSeconds, where, footprintPhrase(f, c), f.MaxDepth)
	// The driver's column only where the sweep sampled it (bundles from
	// before it, and hosts without /sys/block/*/inflight, have none).
	driver := slices.ContainsFunc(f.Sweep, func(p hostcheck.FIOPoint) bool { return p.DriverDepth > 0 })
	head, align := "| reads in flight |", "|--:|"
	if driver {
		head, align = head+" at the disk's driver |", align+"--:|"
	}
	b.WriteString(head + " jobs × iodepth | IOPS | MiB/s | clat p50 µs | clat p99 µs | fio CPU µs/read | fio CPU | |\n" + align + "--:|--:|--:|--:|--:|--:|--:|:--|\n")
	best, _ := f.Best()
	for _, p := range f.Sweep {
		var marks []string
		if p.Depth == best.Depth && p.IOPS == best.IOPS {
			marks = append(marks, "ceiling")
		}
		cpu := f.PointCPU(p)
		if cpu.Bound {
			marks = append(marks, "cpu-bound")
		}
		fmt.Fprintf(b, "| %d |", p.Depth)
		if driver {
			fmt.Fprintf(b, " %s |", driverCell(p.DriverDepth))
		}
		fmt.Fprintf(b, " %d × %d | %s | %.1f | %.0f | %.0f | %s | %s | %s |\n", p.Jobs, p.IODepth, human.Ops(p.IOPS),
			p.BandwidthKiBps/1024, p.ClatUs.P50, p.ClatUs.P99, cpuPerRead(cpu), cpuShare(cpu), strings.Join(marks, ", "))
	}
	b.WriteString("\n")
	if f.StoppedEarly {
		fmt.Fprintf(b, "The sweep %s (the quick profile's early stop; the reference profile measures every depth).\n\n", f.SweepNote)
	} else if last := f.Sweep[len(f.Sweep)-1].Depth; last < f.MaxDepth {
		fmt.Fprintf(b, "**The sweep ended at %d reads in flight, below the server's %d.**\n\n", last, f.MaxDepth)
	}
	if s := f.StealShare; s != nil {
		fmt.Fprintf(b, "While the sweep ran, the hypervisor took %s of the host's CPU time (steal, /proc/stat).", human.SharePercent(s))
		if *s >= results.NoticeableSteal {
			b.WriteString(" **The host was not quiet**: points measured while it took CPU time read low, and the ceiling with them.")
		}
		b.WriteString("\n\n")
	}
	if cpu := f.PointCPU(best); cpu.Bound {
		fmt.Fprintf(b, "**This ceiling is fio's CPU, not the disk's**: at its best point fio's %d job(s) used %.0f %% of the CPUs they could run on, %.1f µs of CPU per read. The disk may do more, and a server that spends less CPU per read than fio can pass it.\n\n",
			best.Jobs, 100*cpu.Share, cpu.MicrosPerRead)
	}
}

// driverCell is a step's FIOPoint.DriverDepth, "—" where not read.
func driverCell(n int) string {
	if n <= 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

func cpuPerRead(c fio.CPU) string {
	if c.MicrosPerRead <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", c.MicrosPerRead)
}

func cpuShare(c fio.CPU) string {
	if c.MicrosPerRead <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", 100*c.Share)
}

// renderCeilings writes the ceilings the cells are held against: the
// host's curve and, when preflight measured it, the curve on the pinned
// server's own CPUs, with which rows each one holds.
func renderCeilings(b *strings.Builder, res results.Results, preRaw []byte) {
	c := res.Plan.Workload
	fmt.Fprintf(b, "fio random-read ceiling at 512 B on the data dir's mount: %s IOPS. ", human.Ops(res.FioIOPS512))
	var rep hostcheck.Report // read once for the curves and the depth note
	if json.Unmarshal(preRaw, &rep) != nil {
		rep = hostcheck.Report{}
	}
	host, pinned := rep.FIO, rep.FIOPinned
	renderCurve(b, host, c)
	hasPinned := slices.ContainsFunc(res.Plan.Rows, func(r results.Row) bool { return r.Pin == results.PinPinned })
	switch {
	case pinned != nil && len(pinned.Results) > 0:
		fmt.Fprintf(b, "A pinned row's server runs on CPUs %s alone, so fio ran the sweep again on those CPUs: %s IOPS. Pinned rows are held against that ceiling (the same CPU budget), the others against the host's %s; a pinned row's share of the host ceiling is shown beside it.\n\n",
			pinned.CPUs, human.Ops(pinned.Results[0].IOPS), human.Ops(res.FioIOPS512))
		renderCurve(b, pinned, c)
	case hasPinned:
		b.WriteString("There is no fio ceiling on the pinned server's own CPUs (not measured, or a bundle from before it): pinned rows are held against the host's, a larger CPU budget than their server had.\n\n")
	}
	b.WriteString(depthNote(res, rep.Fingerprint.Storage, driverLimit(host, pinned)))
}

// span is the range of xs scaled by scale, "lo-hi" or one figure when
// they are equal as printed by format (one verb).
func span(xs []float64, scale float64, format string) string {
	lo, hi := fmt.Sprintf(format, scale*slices.Min(xs)), fmt.Sprintf(format, scale*slices.Max(xs))
	if lo == hi {
		return lo
	}
	if strings.HasSuffix(format, " %%") {
		lo = strings.TrimSuffix(lo, " %")
	}
	return lo + "-" + hi
}

// depthNote is a paragraph for cells that kept the data disks deeper than
// they take requests at once: their tags (hostcheck.BlockDevice.QueueTags),
// or what their drivers held under fio's sweep (driver, from driverLimit)
// where that is fewer. The reads past it wait in the kernel's queue, and
// fio run at the cells' own depths after their rows (fioAfter) says what
// the disk reads there, as a share of the ceiling the cells are held
// against. "" where the tags were not read, or no cell's depth passed
// what the disk takes.
//
// Why: on the test VM (one queue of 128 tags) the ceiling is fio's best
// depth, at the tags, where the pinned server's pipelined batches keep far
// more in flight; fio at the server's depths read less than its ceiling,
// and the cells nearly all of that fio, so most of the cells' shortfall
// against the ceiling was the depth
// (docs/notes/2026-12-07-comment-figures.md has the figures).
func depthNote(res results.Results, st hostcheck.Storage, driver int) string {
	tags := 0
	for _, d := range st.Disks {
		tags += d.QueueTags
	}
	if tags == 0 {
		return ""
	}
	takes := tags
	if driver > 0 && driver < tags {
		takes = driver
	}
	var depths, fioShares []float64
	for _, c := range res.Cells {
		if c.Excluded != "" || c.DiskQueueDepth <= float64(takes) || c.FioShare <= 0 {
			continue
		}
		depths = append(depths, c.DiskQueueDepth)
		if after := fioAfter(res, c); after.IOPS > 0 && after.Depth > takes {
			fioShares = append(fioShares, after.IOPS*c.FioShare/c.Median)
		}
	}
	if len(depths) == 0 {
		return ""
	}
	var s string
	if takes == tags {
		s = fmt.Sprintf("The data disk takes %d requests at once (its hardware queues' tags, /sys/block/*/mq/*/nr_tags), and %d of the cells kept more in flight at it (disk depth %s): the reads past its tags wait in the kernel's queue.",
			tags, len(depths), span(depths, 1, "%.0f"))
	} else {
		s = fmt.Sprintf("The data disk has %d tags (/sys/block/*/mq/*/nr_tags), but its driver held no more than %d requests at once while fio's sweep kept more in flight (/sys/block/*/inflight, the column above): that is what the disk takes at once. %d of the cells kept more in flight at it (disk depth %s): the reads past %d wait in the kernel's queue.",
			tags, takes, len(depths), span(depths, 1, "%.0f"), takes)
	}
	if len(fioShares) > 0 {
		s += fmt.Sprintf(" fio run at those cells' own depths right after their rows read %s of the ceiling they are held against (fio's best depth): at those depths fio itself scores that share, and the rest of the way to the ceiling is the depth the server's batches keep the disk at, which fio pays as well, not the server's path.",
			span(fioShares, 100, "%.0f %%"))
	}
	return s + "\n\n"
}

// driverLimit is what the disk's driver takes at once, as the sweeps saw
// it: the most a step's driver held (FIOPoint.DriverDepth), where a step
// kept at least a quarter more in flight and the driver held no more
// than that. 0 where the sweeps sampled no driver, or never went deeper
// than it held: then nothing limited it that they could see.
func driverLimit(sweeps ...*hostcheck.FIOBaseline) int {
	most, deepest := 0, 0
	for _, f := range sweeps {
		if f == nil {
			continue
		}
		for _, p := range f.Sweep {
			if p.DriverDepth > 0 {
				most, deepest = max(most, p.DriverDepth), max(deepest, p.Depth)
			}
		}
	}
	if most == 0 || 4*deepest < 5*most {
		return 0
	}
	return most
}

// shareText is a cell's share of its ceiling with its marks; host is
// the host ceiling, shown beside a share taken against another, diskThen
// what the disk read right before the row's passes when it had not come
// back to its ceiling (0: it had, or was not probed), and after fio at the
// cell's own depth right after the row (fioAfter; IOPS 0: not measured).
// The cell's share of fio side by side (Cell.BesideShare) comes first.
func shareText(c results.Cell, host, diskThen float64, after results.FioCPURecord) string {
	s := fmt.Sprintf("%.1f %%", 100*c.FioShare)
	if c.CeilingPinned && host > 0 {
		s += fmt.Sprintf(" (host: %.1f %%)", 100*c.Median/host)
	}
	if diskThen > 0 {
		s += fmt.Sprintf(" (disk then: %.1f %%)", 100*c.Median/diskThen)
	}
	if c.BesideShare > 0 {
		s += fmt.Sprintf(" (beside: %.1f %%)", 100*c.BesideShare)
	}
	if after.IOPS > 0 {
		s += fmt.Sprintf(" (fio %s at %d after: %.1f %%)", after.Engine, after.Depth, 100*c.Median/after.IOPS)
	}
	if m := evidenceMarks(c); m != "" {
		s += " (" + m + ")"
	}
	if stealMarked(c) {
		s += fmt.Sprintf(" (steal %.1f %%)", 100**c.Steal())
	}
	return s
}

// stealMarked reports whether a cell's passes had steal enough to mark in
// the share table: those passes ran on fewer CPU cycles than the
// ceiling's fio may have had.
func stealMarked(c results.Cell) bool {
	s := c.Steal()
	return s != nil && *s >= results.CellStealMark
}

// renderRemeasures lists the fio re-measurements under the share table.
func renderRemeasures(b *strings.Builder, res results.Results) {
	if len(res.Ceilings) == 0 {
		fmt.Fprintf(b, "No cell exceeded %.0f %% of the ceiling, so fio was not measured again.\n\n", 100*results.AboveCeilingTolerance)
		return
	}
	fmt.Fprintf(b, "fio measured again right after the rows of the cells above %.0f %% of the ceiling, at each cell's disk depth; each is divided by the higher of the two:\n\n", 100*results.AboveCeilingTolerance)
	for _, c := range res.Ceilings {
		fmt.Fprintf(b, "- %s %s t=%d (%s ops/s, %.1f %% of %s): ", rowName(c.Row), c.Row.Label, c.Threads, human.Ops(c.CellOpsPerSec),
			100*c.CellOpsPerSec/c.BaseIOPS, human.Ops(c.BaseIOPS))
		if c.Error != "" {
			fmt.Fprintf(b, "fio failed: %s\n", c.Error)
			continue
		}
		on := ""
		if c.CPUs != "" {
			on = " on the server's CPUs " + c.CPUs
		}
		fmt.Fprintf(b, "fio %s%s at %d reads in flight (%s; %d jobs × %d, %d B, %d s) over the server's %d files (%s, %s): %s IOPS, clat p50 %.0f µs p99 %.0f µs",
			c.Engine, on, c.Depth, c.DepthSource, c.Jobs, c.IODepth, c.BlockBytes, c.RuntimeSeconds, c.Files, c.Footprint, human.Bytes(c.FootprintBytes),
			human.Ops(c.IOPS), c.ClatP50Us, c.ClatP99Us)
		if c.CPUMicrosPerRead > 0 {
			fmt.Fprintf(b, ", fio %.1f CPU µs per read (%.0f %% of its CPUs%s)", c.CPUMicrosPerRead, 100*c.CPUShare, map[bool]string{true: ", cpu-bound"}[c.CPUBound])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// heldAgainst names the ceiling a row's cells are divided by.
func heldAgainst(res results.Results, row results.Row) string {
	var ce results.Ceilings
	if res.FioCeilings != nil {
		ce = *res.FioCeilings
	} else {
		ce.Host.IOPS = res.FioIOPS512
	}
	fc, pinned := ce.For(row)
	s := "host, " + human.Ops(fc.IOPS)
	if pinned {
		s = fmt.Sprintf("fio on CPUs %s, %s", fc.CPUs, human.Ops(fc.IOPS))
	}
	if fc.Bound {
		s += " (fio cpu-bound)"
	}
	if then := diskThen(res, row); then > 0 {
		s += fmt.Sprintf("; the disk read at most %s right before the passes", human.Ops(then))
	}
	return s
}

// fioAfter is fio run right after c's row, its server idle, on the row's
// CPUs, through the row's interface, at the cell's own disk depth (the
// run measures it for the CPU per read, fio-cpu.jsonl): the same disk at
// the same depth minutes later. The ceiling is fio's best depth, on the
// day of the preflight; a cell that reads a larger share of this than of
// the ceiling lost the difference to the depth it kept the disk at, or to
// a disk slower by then (a virtual disk's speed can swing in phases of
// tens of seconds, as this host's does), not to its own path.
func fioAfter(res results.Results, c results.Cell) results.FioCPURecord {
	if r, ok := results.FioCPUFor(res.FioCPU, c.Row, c.Threads); ok && r.IOPS > 0 {
		return r
	}
	return results.FioCPURecord{}
}

// diskThen is the fastest fio probe over the row's files after its load
// when the disk had not come back to its ceiling before the passes (0 when
// it had, or was not probed). A disk may drift within minutes (a pinned
// row's probes here read well under the preflight ceiling), and a share of
// that ceiling alone then reads as the server's shortfall; beside it, the
// share of what the disk read at the time. The fastest probe is the figure
// kindest to the disk.
func diskThen(res results.Results, row results.Row) float64 {
	for _, l := range res.Loads {
		if l.Row == row && l.Settle != nil && !l.Settle.Settled && len(l.Settle.ProbeIOPS) > 0 {
			return slices.Max(l.Settle.ProbeIOPS)
		}
	}
	return 0
}

package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tierbench/tierbench/hostcheck"
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

// renderCurve writes the fio depth curve of the preflight baseline.
func renderCurve(b *strings.Builder, f *hostcheck.FIOBaseline, c results.Workload) {
	if f == nil || len(f.Sweep) == 0 {
		return
	}
	fmt.Fprintf(b, "fio depth curve (%s, %s, 512 B random read, O_DIRECT, %d s per step) over %s. The ceiling is the highest IOPS of the sweep; the server keeps up to %d reads in flight.\n\n",
		f.Version, f.Engine, f.RuntimeSeconds, footprintPhrase(f, c), f.MaxDepth)
	b.WriteString("| reads in flight | jobs × iodepth | IOPS | MiB/s | clat p50 µs | clat p99 µs | |\n|--:|--:|--:|--:|--:|--:|:--|\n")
	best := 0
	for i, p := range f.Sweep {
		if p.IOPS > f.Sweep[best].IOPS {
			best = i
		}
	}
	for i, p := range f.Sweep {
		mark := ""
		if i == best {
			mark = "ceiling"
		}
		fmt.Fprintf(b, "| %d | %d × %d | %s | %.1f | %.0f | %.0f | %s |\n", p.Depth, p.Jobs, p.IODepth, human.Ops(p.IOPS),
			p.BandwidthKiBps/1024, p.ClatUs.P50, p.ClatUs.P99, mark)
	}
	b.WriteString("\n")
	if f.StoppedEarly {
		fmt.Fprintf(b, "The sweep %s (the quick profile's early stop; the reference profile measures every depth).\n\n", f.SweepNote)
	} else if last := f.Sweep[len(f.Sweep)-1].Depth; last < f.MaxDepth {
		fmt.Fprintf(b, "**The sweep ended at %d reads in flight, below the server's %d.**\n\n", last, f.MaxDepth)
	}
}

// shareText is a cell's share of its ceiling with its marks.
func shareText(c results.Cell) string {
	s := fmt.Sprintf("%.1f %%", 100*c.FioShare)
	if m := evidenceMarks(c); m != "" {
		s += " (" + m + ")"
	}
	return s
}

// renderRemeasures lists the fio re-measurements under the share table.
func renderRemeasures(b *strings.Builder, res results.Results) {
	if len(res.Ceilings) == 0 {
		fmt.Fprintf(b, "No cell exceeded %.0f %% of the ceiling, so fio was not measured again.\n\n", 100*results.AboveCeilingTolerance)
		return
	}
	fmt.Fprintf(b, "A cell above %.0f %% of the ceiling makes fio measure again right after its row, with the server idle, at the cell's observed disk depth over the server's own files (read-only: tierbench's segment files, or an external server's files below --data); the cell is then divided by the higher of the two:\n\n", 100*results.AboveCeilingTolerance)
	for _, c := range res.Ceilings {
		fmt.Fprintf(b, "- %s %s t=%d (%s ops/s, %.1f %% of %s): ", rowName(c.Row), c.Row.Label, c.Threads, human.Ops(c.CellOpsPerSec),
			100*c.CellOpsPerSec/c.BaseIOPS, human.Ops(c.BaseIOPS))
		if c.Error != "" {
			fmt.Fprintf(b, "fio failed: %s\n", c.Error)
			continue
		}
		fmt.Fprintf(b, "fio %s at %d reads in flight (%s; %d jobs × %d, %d B, %d s) over the server's %d files (%s, %s): %s IOPS, clat p50 %.0f µs p99 %.0f µs\n",
			c.Engine, c.Depth, c.DepthSource, c.Jobs, c.IODepth, c.BlockBytes, c.RuntimeSeconds, c.Files, c.Footprint, human.Bytes(c.FootprintBytes),
			human.Ops(c.IOPS), c.ClatP50Us, c.ClatP99Us)
	}
	b.WriteString("\n")
}

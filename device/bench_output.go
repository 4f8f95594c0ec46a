package device

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tierbench/tierbench/internal/cpustat"
	"github.com/tierbench/tierbench/internal/human"
)

// How a benchmark result is printed: one JSON document, or the human
// lines.

// RunBench runs Bench and prints its result on stdout: the human lines, or
// with cfg.JSON one JSON document. Progress goes to stderr.
func RunBench(ctx context.Context, cfg BenchConfig, stdout, stderr io.Writer) error {
	res, err := Bench(ctx, cfg, stderr)
	if err != nil && len(res.Passes) == 0 {
		return err
	}
	// A failure after a pass (fio missing, interrupted) still prints what
	// was measured, then reports the failure.
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(res); jerr != nil {
			return jerr
		}
	} else {
		res.WriteText(stdout)
	}
	return err
}

// WriteText prints the result as the familiar human lines.
func (r BenchResult) WriteText(w io.Writer) {
	fmt.Fprintf(w, "[Device]: %s\n", r.Device)
	fmt.Fprintf(w, "[Shape]: %d B random reads, %d threads × QD %d, %d files × %d MiB\n", r.Block, r.Threads, r.QD, r.Files, r.FileBytes>>20)
	fmt.Fprintf(w, "[Total time]: %.2f s for %d ops (%d errors", r.Seconds, r.Ops, r.Errors)
	if r.Verify {
		fmt.Fprintf(w, ", %d failed verification", r.VerifyFailures)
	}
	fmt.Fprintln(w, ")")
	if r.FirstError != "" {
		fmt.Fprintf(w, "[First error]: %s\n", r.FirstError)
	}
	fmt.Fprintf(w, "[Throughput]: %s IOPS, %.1f MB/s (CPU usr %.0f%% sys %.0f%%, %.2f CPU µs per op, max in flight %d)\n",
		groupThousands(r.IOPS), r.MBPerSec, r.UsrCPU, r.SysCPU, r.CPUMicrosPerOp, r.MaxInFlight)
	fmt.Fprintf(w, "[Latency µs]: min %.1f  p50 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n",
		r.LatencyUs.Min, r.LatencyUs.P50, r.LatencyUs.P99, r.LatencyUs.P999, r.LatencyUs.Max)
	if len(r.Passes) > 1 {
		fmt.Fprintf(w, "[Passes]: %d, median shown; IOPS per pass:", len(r.Passes))
		for _, p := range r.Passes {
			fmt.Fprintf(w, " %s", groupThousands(p.IOPS))
			if p.FioIOPS > 0 {
				fmt.Fprintf(w, " (fio %s, %.3f)", groupThousands(p.FioIOPS), p.Ratio)
			}
			if p.StealShare != nil || p.FioStealShare != nil {
				fmt.Fprintf(w, " [steal %s", human.SharePercent(p.StealShare))
				if p.FioIOPS > 0 {
					fmt.Fprintf(w, " / fio %s", human.SharePercent(p.FioStealShare))
				}
				fmt.Fprint(w, "]")
			}
		}
		fmt.Fprintln(w)
	}
	if r.Fio != nil {
		fmt.Fprintf(w, "[fio %s %s]: %s IOPS, %.1f MB/s (CPU usr %.0f%% sys %.0f%%, %.2f CPU µs per op), clat µs p50 %.1f  p99 %.1f  p99.9 %.1f\n",
			r.Fio.Version, r.Fio.Engine, groupThousands(r.Fio.IOPS), r.Fio.MBPerSec, r.Fio.UsrCPU, r.Fio.SysCPU, r.Fio.CPUMicrosPerOp,
			r.Fio.ClatP50Us, r.Fio.ClatP99Us, r.Fio.ClatP999Us)
		if r.FioAlongside {
			fmt.Fprintf(w, "[Ratio tierbench/fio]: %.3f (run at the same time on the same disk: 1.0 means both paths won an equal share)\n", r.RatioToFio)
		} else {
			fmt.Fprintf(w, "[Ratio tierbench/fio]: %.3f\n", r.RatioToFio)
		}
	}
}

// groupThousands formats a rate with thousands separators: 123,456.
func groupThousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var out strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out.WriteByte(',')
		}
		out.WriteRune(c)
	}
	return out.String()
}

// stealNote is a progress line's steal, said only from
// cpustat.NoticeableSteal on: a pass the host did not leave alone.
func stealNote(s *float64) string {
	if s == nil || *s < cpustat.NoticeableSteal {
		return ""
	}
	return fmt.Sprintf(" (host steal %s)", human.SharePercent(s))
}

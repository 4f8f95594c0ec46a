package orchestrator

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tierbench/tierbench/device"
	"github.com/tierbench/tierbench/hostcheck"
)

// fioFiles is how many files the preflight ceiling spreads the dataset's
// footprint over, as the reference's fio does (8 files shared by all jobs).
const fioFiles = 8

// fioFootprintBytes is what the server reads: every record of the dataset
// on the device. The ceiling is measured over as much: on a smaller file
// set the disk's and the hypervisor's caches serve a larger share, which
// made the reference run here reach only 72–93 % of a ceiling measured on
// 8 × 64 MiB.
func (c Config) fioFootprintBytes() int64 {
	return c.DBSize * int64(recordBytes(c.KeyLength, c.ValueLength))
}

// fioArgs are preflight's fio flags for this run: files as large as the
// dataset in total, a sweep up to the server's throttle limit, every depth
// for the reference profile and an early stop otherwise.
func (r *runner) fioArgs() []string {
	per := (r.cfg.fioFootprintBytes() + fioFiles - 1) / fioFiles
	per = max((per+(1<<20)-1)&^((1<<20)-1), 1<<20) // whole MiB
	args := []string{"--fio", "--fio-files", strconv.Itoa(fioFiles), "--fio-size", strconv.FormatInt(per, 10),
		"--fio-max-depth", strconv.Itoa(device.DefaultThrottleLimit)}
	if r.cfg.FioSeconds > 0 {
		args = append(args, "--fio-runtime", strconv.Itoa(r.cfg.FioSeconds))
	}
	if r.cfg.Profile == ProfileReference {
		args = append(args, "--fio-full-sweep")
	}
	return args
}

// preflightBaseline is the fio baseline of a bundle's preflight.json; nil
// when preflight ran without fio or failed.
func preflightBaseline(preRaw []byte) *hostcheck.FIOBaseline {
	var rep hostcheck.Report
	if len(preRaw) == 0 || json.Unmarshal(preRaw, &rep) != nil {
		return nil
	}
	return rep.FIO
}

// footprintPhrase says what fio read, for the report.
func footprintPhrase(f *hostcheck.FIOBaseline, c Config) string {
	if f.Footprint == hostcheck.FootprintFioFiles || f.Footprint == "" {
		s := fmt.Sprintf("%d fio files × %s = %s", f.Files, humanBytes(f.FileBytes), humanBytes(int64(f.Files)*f.FileBytes))
		data := c.fioFootprintBytes()
		switch {
		case int64(f.Files)*f.FileBytes >= data:
			s += fmt.Sprintf(", as large as the dataset (%d × %d B = %s)", c.DBSize, recordBytes(c.KeyLength, c.ValueLength), humanBytes(data))
		default:
			s += fmt.Sprintf(", **smaller than the dataset** (%s): caches may serve part of fio's reads, so the ceiling may be too high", humanBytes(data))
		}
		return s
	}
	return fmt.Sprintf("%s (%s)", f.Footprint, humanBytes(f.FootprintBytes))
}

// renderCurve writes the fio depth curve of the preflight baseline.
func renderCurve(b *strings.Builder, f *hostcheck.FIOBaseline, c Config) {
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
		fmt.Fprintf(b, "| %d | %d × %d | %s | %.1f | %.0f | %.0f | %s |\n", p.Depth, p.Jobs, p.IODepth, FormatOps(p.IOPS),
			p.BandwidthKiBps/1024, p.ClatUs.P50, p.ClatUs.P99, mark)
	}
	b.WriteString("\n")
	if f.StoppedEarly {
		fmt.Fprintf(b, "The sweep %s (the quick profile's early stop; the reference profile measures every depth).\n\n", f.SweepNote)
	} else if last := f.Sweep[len(f.Sweep)-1].Depth; last < f.MaxDepth {
		fmt.Fprintf(b, "**The sweep ended at %d reads in flight, below the server's %d.**\n\n", last, f.MaxDepth)
	}
}

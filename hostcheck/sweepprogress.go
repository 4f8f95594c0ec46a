package hostcheck

import (
	"fmt"
	"io"
	"time"

	"github.com/tierbench/tierbench/internal/fio"
)

// stepPrinter returns the sweep's Done: one line on w per finished step
// with its depth, IOPS, the time since start and at most how long the
// steps still ahead take (the sweep may stop earlier when IOPS stop
// growing). Nil w prints nothing. The pinned sweep says where it runs.
func stepPrinter(w io.Writer, job fio.Job, steps []fio.Step, start time.Time) func(int, fio.Point) {
	if w == nil {
		return nil
	}
	where := ""
	if job.CPUs != "" {
		where = " on CPUs " + job.CPUs
	}
	return func(i int, p fio.Point) {
		fmt.Fprintln(w, stepLine(job.Engine+where, i, len(steps), p, time.Since(start), job.RuntimeSeconds))
	}
}

// layoutLine says fio's files are being laid out before the sweep.
func layoutLine(job fio.Job) string {
	return fmt.Sprintf("preflight: fio lays out its %d file(s) of %s (%s in all) in %s before the first step",
		job.Files, humanBytes(job.FileBytes), humanBytes(job.FileBytes*int64(job.Files)), job.Dir)
}

// stepLine is one step's progress line: step i (from 0) of n, each of
// runtimeSeconds.
func stepLine(what string, i, n int, p fio.Point, elapsed time.Duration, runtimeSeconds int) string {
	ahead := n - 1 - i + 1 // and the 4 KiB read at the best depth
	return fmt.Sprintf("preflight: fio %s 512 B sweep, step %d/%d: %d in flight (%d job(s) × QD%d): %s IOPS; %s elapsed, ≤ %ds left (%d step(s), the 4 KiB read included, of %d s each)",
		what, i+1, n, p.Depth(), p.Jobs, p.IODepth, countLabel(p.Result.IOPS), elapsed.Round(time.Second), ahead*runtimeSeconds, ahead, runtimeSeconds)
}
